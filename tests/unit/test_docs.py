"""The README is a quickstart that links into docs/: its commands are the ones CI runs, its rules
table is the registry's, its pre-commit snippet is the one the pre-commit tests install, and every
relative link in it and in docs/ leads to a file and heading that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from lintloader.rules.registry import all_rules

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

README = REPO / "README.md"
CI_RUN = REPO / ".ci" / "run"
DOC_FILES = sorted([README, REPO / "CONTRIBUTING.md", *(REPO / "docs").rglob("*.md")])
LINK = re.compile(r"\[[^\]]*\]\((?!https?://|mailto:)(?P<target>[^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def readme() -> str:
    return README.read_text(encoding="utf-8")


def ci_commands() -> list[str]:
    """The shell lines of .ci/run that set up a fresh machine (each starts with a venv)."""
    lines = CI_RUN.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.startswith("python3 -m venv")]


def test_the_readme_quickstart_holds_the_commands_ci_runs() -> None:
    commands = ci_commands()
    assert any(c.endswith('-e ".[test]" && pytest -n 2') for c in commands), commands
    for command in commands:
        assert f"```bash\n{command}\n```" in readme(), f"README lacks CI's command {command!r}"
    main_job = (
        "python3 -m venv .venv && . .venv/bin/activate && pip install -c constraints.txt -e . "
        "&& lintloader check --site-packages"
    )
    assert f"```bash\n{main_job}\n```" in readme()
    assert "lintloader check --site-packages" in CI_RUN.read_text(encoding="utf-8")


def test_the_readme_stays_a_quickstart() -> None:
    size = len(readme().encode())
    assert size < 10_000, f"README.md is {size} bytes: move reference material to docs/"
    pinned = r'pip install "lintloader @ git\+https://github\.com/\S+@<commit-sha>"'
    assert re.search(pinned, readme())
    for command in ("lintloader check src/", "lintloader fix src/ --diff"):
        assert command in readme()


@pytest.mark.enumerates_rules
def test_the_readme_rules_table_is_generated_from_the_registry() -> None:
    """The table between the markers is what the generator makes: code, page, name, severity,
    summary and the declared fix strategies with their safety, for every registered rule."""
    from lintloader.dev.rule_docs import COMMAND, readme_table, with_readme_table
    from lintloader.fixers.registry import all_strategies

    safe = {strategy.name: strategy.safe for strategy in all_strategies()}
    table = readme_table(all_rules(), lambda name: safe[name])
    assert with_readme_table(readme(), table) == readme(), f"run `{COMMAND}`"
    for rule in all_rules():
        assert f"| [{rule.code}](docs/rules/{rule.code}.md) | {rule.name} |" in table


def test_the_readme_pre_commit_snippet_is_the_tested_one() -> None:
    def config(text: str) -> dict:
        block = next(b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "repos:" in b)
        return yaml.safe_load(block)

    ours = config(readme())
    tested = config((REPO / "docs" / "pre-commit.md").read_text(encoding="utf-8"))
    assert ours == tested
    assert ours["repos"][0]["rev"] == "<commit-sha>"


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    headings = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_lead_somewhere(doc: Path) -> None:
    text = FENCE.sub("", doc.read_text(encoding="utf-8"))
    for match in LINK.finditer(text):
        target, _, anchor = match.group("target").partition("#")
        path = (doc.parent / target).resolve() if target else doc
        assert path.exists(), f"{doc.relative_to(REPO)}: {target} does not exist"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{doc.relative_to(REPO)}: no heading #{anchor}"

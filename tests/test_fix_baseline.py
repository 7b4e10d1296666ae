"""Every fix path honours the baseline (issue 43): ``fix``, ``check --fix``, ``check --diff``, the
``lintloader-fix`` pre-commit hook (real pre-commit from a real ``git commit``) and the
editor's quick fixes and fix-all (a real LSP client) leave a finding the baseline accepts
alone; ``--no-baseline`` fixes everything. A legacy file's accepted LL201 findings stay while a
new file's finding is fixed."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli
from test_precommit import commit, env, hook_repo, make_project  # noqa: F401  (fixtures)

LEGACY = FIXTURES / "rules" / "LL201" / "fix_before.py"
NEW = """\
from torch.utils.data import DataLoader


def build(dataset, workers):
    return DataLoader(dataset, num_workers=workers, persistent_workers=True)
"""


def write_accepted_project(root: Path) -> Path:
    """legacy.py's two LL201 findings in the baseline, then new.py with a third."""
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0"\n\n[tool.lintloader]\n'
        'baseline = "lintloader-baseline.json"\n'
    )
    shutil.copy(LEGACY, root / "legacy.py")
    written = run_cli(
        "check", "--no-cache", "--write-baseline", str(root / "lintloader-baseline.json"),
        "legacy.py", cwd=root,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    (root / "new.py").write_text(NEW)
    return root


@pytest.fixture(scope="module")
def accepted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`write_accepted_project` once (one ``--write-baseline`` run); each test copies it
    (the baseline names its files relative to the project, so a copy holds the same)."""
    return write_accepted_project(tmp_path_factory.mktemp("accepted") / "project")


def accepted_project(template: Path, root: Path) -> Path:
    """A copy of the accepted project ``template`` into ``root`` (over what it holds)."""
    shutil.copytree(template, root, dirs_exist_ok=True)
    return root


@pytest.fixture
def project(tmp_path: Path, accepted: Path) -> Path:
    return accepted_project(accepted, tmp_path / "project")


def test_check_counts_only_the_fixes_of_findings_it_reports(project: Path) -> None:
    done = run_cli("check", "--no-cache", ".", cwd=project)
    assert "2 baselined" in done.stderr
    assert "[*] 1 fixable with `--fix`." in done.stderr
    everything = run_cli("check", "--no-cache", "--no-baseline", ".", cwd=project)
    assert "baselined" not in everything.stderr
    assert "[*] 3 fixable with `--fix`." in everything.stderr


@pytest.mark.parametrize("command", [("fix",), ("check", "--fix")], ids=["fix", "check-fix"])
def test_fixing_leaves_accepted_findings_alone(project: Path, command: tuple[str, ...]) -> None:
    done = run_cli(*command, "--no-cache", ".", cwd=project)
    assert done.returncode == 0, done.stderr  # the only finding reported was fixed
    assert (project / "legacy.py").read_bytes() == LEGACY.read_bytes()
    assert "persistent_workers=workers > 0" in (project / "new.py").read_text()
    assert "legacy.py" not in done.stderr  # no fix, and no note: the baseline accepts them


@pytest.mark.parametrize("command", [("fix", "--diff"), ("check", "--diff")], ids=["fix", "check"])
def test_the_diff_shows_only_unaccepted_findings(project: Path, command: tuple[str, ...]) -> None:
    done = run_cli(*command, "--no-cache", ".", cwd=project)
    assert done.returncode == 1
    assert re.findall(r"^\+\+\+ b/(\S+)$", done.stdout, re.M) == ["new.py"]


def test_no_baseline_fixes_everything(project: Path) -> None:
    done = run_cli("fix", "--no-cache", "--no-baseline", ".", cwd=project)
    assert done.returncode == 0, done.stderr
    assert (project / "legacy.py").read_bytes() == (
        FIXTURES / "rules" / "LL201" / "fix_after.py"
    ).read_bytes()


def test_fix_hook_commits_a_docstring_change_to_a_legacy_file(
    tmp_path: Path,
    env: dict[str, str],  # noqa: F811
    hook_repo: tuple[str, str],  # noqa: F811
    accepted: Path,
) -> None:
    """The commit that the hook used to block: it rewrote a finding the baseline accepts."""
    root = make_project(tmp_path / "project", env, hook_repo, ["lintloader-fix"])
    accepted_project(accepted, root)
    (root / "new.py").unlink()
    assert commit(root, env, ".").returncode == 0  # clean: the baseline accepts legacy.py's
    legacy = root / "legacy.py"
    legacy.write_text(legacy.read_text().replace("crashes.", "crashes (see the issue)."))
    done = commit(root, env, "legacy.py")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"lintloader \(fix\)\.+Passed", output), output
    assert "persistent_workers=True" in legacy.read_text()
    (root / "new.py").write_text(NEW)
    blocked = commit(root, env, "new.py")  # a new finding is still fixed, and the commit stops
    assert blocked.returncode != 0
    assert "persistent_workers=workers > 0" in (root / "new.py").read_text()
    assert legacy.read_text().count("persistent_workers=True") == 2


@pytest.mark.asyncio
async def test_the_editor_offers_no_fix_for_an_accepted_finding(
    tmp_path: Path, accepted: Path
) -> None:
    from lsp_support import answer, codes, lsp_session, open_document, types

    root = accepted_project(accepted, tmp_path / "project")
    documents = {name: (root / name).as_uri() for name in ("legacy.py", "new.py")}
    titles: dict[str, list[str]] = {}
    edited: dict[str, list[str]] = {}  # what fix-all on each document edits
    async with lsp_session(root, tmp_path / "cache") as client:
        for name, document in documents.items():
            open_document(client, root / name)
            await until_codes(client, document, codes)
            diagnostic = client.diagnostics[document][0]
            actions = await answer(
                client.text_document_code_action_async(
                    types.CodeActionParams(
                        text_document=types.TextDocumentIdentifier(uri=document),
                        range=diagnostic.range,
                        context=types.CodeActionContext(diagnostics=[diagnostic]),
                    )
                )
            )
            titles[name] = [a.title.split(":")[0] for a in actions]
            for fix_all in (a for a in actions if a.kind == "source.fixAll.lintloader"):
                resolved = await answer(client.code_action_resolve_async(fix_all))
                edited[name] = sorted((resolved.edit.changes or {}) if resolved.edit else {})
    assert "Fix LL201 (safe, persistent-workers-guard)" in titles["new.py"]
    assert not any(t.startswith("Fix ") for t in titles["legacy.py"]), titles
    assert any(t.startswith("Add `# noqa") for t in titles["legacy.py"]), titles
    assert edited.get("legacy.py", []) == []
    assert edited["new.py"] == [documents["new.py"]]


async def until_codes(client, document: str, codes) -> None:
    from lsp_support import until

    await until(lambda: "LL201" in codes(client, document), f"LL201 in {document}")

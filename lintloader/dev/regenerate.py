"""``python -m lintloader.dev regenerate``: every file of the checkout that is generated from
the code, written in one go (as ruff's ``generate_all``).

- ``docs/rules/LLNNN.md`` and ``docs/rules/README.md`` from the rule modules, and no page left
  for a rule that is gone (:mod:`lintloader.dev.rule_docs`);
- the rules table of ``README.md`` (:func:`lintloader.dev.rule_docs.readme_table`);
- the option tables of ``docs/*.md`` from the click commands (:mod:`lintloader.dev.option_docs`).

A new rule is one module plus one fixtures folder and then this command: nothing else of the
repository names the rules. ``--check`` writes nothing and exits 1 when a file is out of date.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from lintloader.dev.option_docs import with_tables
from lintloader.dev.rule_docs import readme_table, rule_pages, stale_pages, with_readme_table
from lintloader.trust.safe_file import write_atomic


class Output(NamedTuple):
    """One generated file: its path under the checkout, and its text (None: remove it)."""

    path: Path
    text: str | None


def outputs(root: Path) -> list[Output]:
    """Every generated file of the checkout at ``root``, as the code makes it today."""
    return [*_rule_pages(root), _readme(root), *_option_tables(root)]


def out_of_date(root: Path) -> list[Output]:
    """The outputs whose committed file differs from what :func:`outputs` makes."""
    return [output for output in outputs(root) if _current(root / output.path) != output.text]


def regenerate(root: Path) -> list[Output]:
    """Write (or remove) each out-of-date file under ``root``; return what changed."""
    changed = out_of_date(root)
    for output in changed:
        target = root / output.path
        if output.text is None:
            target.unlink()
        else:
            write_atomic(target, output.text.encode("utf-8"), make_parents=True)
    return changed


def _current(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _rule_pages(root: Path) -> Iterator[Output]:
    from lintloader.fixers.registry import fix_safety
    from lintloader.rules.registry import all_rules

    folder = Path("docs", "rules")
    pages = rule_pages(all_rules(), fix_safety)
    for name in stale_pages(root / folder, pages):
        yield Output(folder / name, None)
    for name, text in pages.items():
        yield Output(folder / name, text)


def _readme(root: Path) -> Output:
    from lintloader.fixers.registry import all_strategies
    from lintloader.rules.registry import all_rules

    safe = {strategy.name: strategy.safe for strategy in all_strategies()}
    path = Path("README.md")
    table = readme_table(all_rules(), lambda name: safe[name])
    try:
        text = with_readme_table((root / path).read_text(encoding="utf-8"), table)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return Output(path, text)


def _option_tables(root: Path) -> Iterator[Output]:
    for path in sorted((root / "docs").glob("*.md")):
        yield Output(path.relative_to(root), with_tables(path.read_text(encoding="utf-8")))

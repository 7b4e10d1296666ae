"""The rule reference under ``docs/rules/``, generated from the rule modules.

Each rule's page is its module docstring (ruff's sections) plus what ``RULE`` declares (code,
name, severity, and the fix safety derived from its declared strategies) and the inline
``VALID``/``INVALID`` examples the test-suite runs.
``docs/rules/README.md`` is the index, and the README holds a table of the rules.
``python -m lintloader.dev regenerate`` writes them (:mod:`lintloader.dev.regenerate`);
``tests/test_rule_docs.py`` and ``tests/unit/test_docs.py`` fail when the committed files differ.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

from lintloader.rules.base import Rule

INDEX = "README.md"
COMMAND = "python -m lintloader.dev regenerate"
_GENERATED = f"<!-- Generated from {{source}} by `{COMMAND}`. Do not edit. -->"
_PAGE_NAME = re.compile(r"^LL\d{3}\.md$")


FixText = Callable[[Rule], str]


def rule_pages(rules: Iterable[Rule], fix_text: FixText) -> dict[str, str]:
    """File name -> Markdown text: one ``LLNNN.md`` page per rule plus the ``README.md`` index.
    ``fix_text`` says what a rule's fixes are (``lintloader.fixers.registry.fix_safety``)."""
    ordered = sorted(rules, key=lambda rule: rule.code)
    pages = {f"{rule.code}.md": rule_page(rule, fix_text(rule)) for rule in ordered}
    pages[INDEX] = index_page(ordered, fix_text)
    return pages


def stale_pages(directory: Path, pages: dict[str, str]) -> list[str]:
    """``LLNNN.md`` files in ``directory`` that no registered rule generates."""
    if not directory.is_dir():
        return []
    return sorted(
        p.name for p in directory.iterdir() if _PAGE_NAME.match(p.name) and p.name not in pages
    )


def rule_page(rule: Rule, fixes: str) -> str:
    source = module_path(rule)
    parts = [
        _GENERATED.format(source=f"`{source}`"),
        f"# {rule.code}: {rule.name}",
        f"{rule.summary.rstrip('.')}.",
        facts_table(rule, fixes, source),
        with_applicability(docstring_body(rule.doc), rule),
        examples("Valid: no finding", rule.valid),
        examples(f"Invalid: reported as {rule.code}", rule.invalid),
        "[All rules](README.md)",
    ]
    return "\n\n".join(part for part in parts if part) + "\n"


def facts_table(rule: Rule, fixes: str, source: str) -> str:
    rows = (
        ("Code", rule.code),
        ("Name", f"`{rule.name}`"),
        ("Default severity", rule.severity.label),
        ("Fix", fixes),
        ("Source", f"[`{source}`](../../{source})"),
    )
    lines = ["| | |", "| --- | --- |", *(f"| {key} | {cell(value)} |" for key, value in rows)]
    return "\n".join(lines)


def docstring_body(doc: str) -> str:
    """The docstring without its ``## name (code)`` title, its ``###`` sections one level up."""
    lines = textwrap.dedent(doc).strip().splitlines()
    if lines and lines[0].startswith("## "):
        lines = lines[1:]
    fenced = False
    out = []
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        out.append(line[1:] if not fenced and line.startswith("### ") else line)
    return "\n".join(out).strip()


def applicability(rule: Rule) -> str:
    """The generated part of a page's Fix safety section: each fix the rule declares, safe or
    unsafe and why, from :mod:`lintloader.finding.fix_safety` (the data reports carry too)."""
    from lintloader.finding.fix_safety import safety_of  # plain data: no strategy is imported

    entries = safety_of(rule.fixes)
    if not entries:
        return "Applicability: no fix."
    lines = ["Applicability (as `json`, `sarif` and `rdjson` output report it):", ""]
    for entry in entries:
        why = f": {entry.why}" if entry.why else " (`--fix`)"
        extra = " (`--fix --unsafe-fixes`)" if not entry.safe else ""
        lines.append(f"- `{entry.name}`: {entry.applicability}{extra}{why}")
    return "\n".join(lines)


def with_applicability(body: str, rule: Rule) -> str:
    """``body`` with :func:`applicability` at the end of its ``## Fix safety`` section."""
    match = re.search(r"^## Fix safety\n.*?(?=^## |\Z)", body, re.S | re.M)
    if match is None:
        return body
    section = match.group(0).rstrip("\n")
    return body[: match.start()] + f"{section}\n\n{applicability(rule)}\n\n" + body[match.end() :]


def examples(title: str, sources: tuple[str, ...]) -> str:
    if not sources:
        return ""
    blocks = [f"```python\n{textwrap.dedent(source).strip()}\n```" for source in sources]
    return f"## {title}\n\n" + "\n\n".join(blocks)


def index_page(rules: list[Rule], fix_text: FixText) -> str:
    header = [
        _GENERATED.format(source="the rule modules in `lintloader/rules/`"),
        "# Rules",
        "One page per rule, generated from the rule's module: its docstring, what `RULE` "
        "declares, and the inline examples the test-suite runs. `lintloader rule LLNNN` prints "
        "the same documentation in a terminal. **LL000** (error, no module) is a file that "
        "cannot be read or parsed; the run goes on (see [guarantees](../guarantees.md)).",
        "| Code | Name | Severity | What it finds | Fix |\n| --- | --- | --- | --- | --- |",
    ]
    rows = [
        f"| [{r.code}]({r.code}.md) | `{r.name}` | {r.severity.label} | {cell(r.summary)} "
        f"| {cell(fix_text(r))} |"
        for r in rules
    ]
    return "\n\n".join(header) + "\n" + "\n".join(rows) + "\n"


def cell(text: str) -> str:
    """Text for a Markdown table cell."""
    return text.replace("|", "\\|")


def module_path(rule: Rule) -> str:
    """The rule module's path relative to the repository root, with ``/`` separators."""
    return rule.check.__module__.replace(".", "/") + ".py"


# -- the README's rules table -----------------------------------------------------------------
README_BEGIN = f"<!-- rules-table: generated by `{COMMAND}` -->"
README_END = "<!-- rules-table: end -->"
_LL000_ROW = (
    "| [LL000](docs/guarantees.md#a-bad-file-never-stops-a-run) | \u2014 | error | a file that "
    "cannot be read or parsed (syntax error, undecodable bytes, broken symlink, ...); the run "
    "goes on | \u2014 |"
)


def readme_table(rules: Iterable[Rule], safe: Callable[[str], bool]) -> str:
    """The README's table of rules (``safe``: whether a fix strategy is safe), between the
    markers that :func:`with_readme_table` replaces."""
    rows = [
        f"| [{r.code}](docs/rules/{r.code}.md) | {r.name} | {r.severity.label} | "
        f"{cell(r.summary)} | {_fix_cell(r, safe)} |"
        for r in sorted(rules, key=lambda rule: rule.code)
    ]
    lines = [
        README_BEGIN,
        "| Code | Name | Severity | What it finds | Fix (safety) |",
        "| --- | --- | --- | --- | --- |",
        _LL000_ROW,
        *rows,
        README_END,
    ]
    return "\n".join(lines)


def _fix_cell(rule: Rule, safe: Callable[[str], bool]) -> str:
    names = [f"`{name}` ({'safe' if safe(name) else 'unsafe'})" for name in rule.fixes]
    return ", ".join(names) or "\u2014"


def with_readme_table(readme: str, table: str) -> str:
    """``readme`` with the block between the markers replaced by ``table``."""
    start, end = readme.find(README_BEGIN.partition(" by ")[0]), readme.find(README_END)
    if start < 0 or end < start:
        raise ValueError("the README has no rules-table markers")
    return readme[:start] + table + readme[end + len(README_END) :]

"""A finding's safe fix as replacement text, for formats that offer it as a one-click
suggestion (``rdjson``): the strategy's edit worked out in memory, nothing is written.

Only a fix whose edits all lie in the finding's own file is offered (a suggestion applies to
one file); an edit becomes the smallest run of whole lines that changes.
"""

from __future__ import annotations

from lintloader.finding.findings import Finding
from lintloader.fixers.base import FixError, FixRequest, Parsed, Registry
from lintloader.fixers.registry import load_registry
from lintloader.fixers.runner import FixOutcome, Sources
from lintloader.pipeline.engine import CheckResult
from lintloader.report.context import Replacement, SortKey


def replacements(result: CheckResult) -> dict[SortKey, tuple[Replacement, ...]]:
    """Finding sort key -> the first safe fix that applies, as line replacements."""
    registry = load_registry()
    sources = Sources(FixOutcome())
    displays = {file.display: file.path for file in result.files}
    found = {}
    parsed: dict[str, Parsed] = {}  # one libcst parse per file for all its findings
    for finding in result.findings:
        if finding.chain and not finding.cell and finding.path in displays:
            request = FixRequest(finding, result.program, sources, displays, parsed)
            edit = _safe_edit(finding, request, registry, displays[finding.path])
            if edit:
                found[finding.sort_key] = edit
    return found


def _safe_edit(
    finding: Finding, request: FixRequest, registry: Registry, path: str
) -> tuple[Replacement, ...]:
    for name in finding.fixes:
        strategy = registry.get(name)
        if strategy is None or not strategy.safe:
            continue
        try:
            edits = strategy.apply(request)
        except (FixError, OSError):
            continue
        changed = {p: data for p, data in (edits or {}).items() if data != request.sources[p]}
        if set(changed) == {path}:
            return (line_replacement(request.sources[path], changed[path]),)
    return ()


def line_replacement(old: bytes, new: bytes) -> Replacement:
    """The whole lines of ``old`` that differ from ``new``, and what replaces them."""
    before = old.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    after = new.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(before), len(after)) - head
        and before[len(before) - 1 - tail] == after[len(after) - 1 - tail]
    ):
        tail += 1
    text = "".join(after[head : len(after) - tail])
    return Replacement(head + 1, len(before) - tail + 1, text)

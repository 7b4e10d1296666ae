"""Where a finding is placed when its chain crosses distributions.

A finding sits where its root starts the chain. Two exceptions, both about code of one
distribution (B) built on another's (A):

- an override: A's loop calls ``self.get_eval_dataloader()`` and B's subclass overrides it to
  build a DataLoader every time. The chain enters B through dispatch to the override, not
  through a call A's code wrote to B: the defect is B's, so the finding moves to the chain's
  last hop in B, the construction or reset that B's code does (the chain still starts in A's
  loop);
- context files (:mod:`lintloader.scan.environment.locate`): with ``--site-packages B``, A's
  modules are parsed only because B builds on them. A finding located in one moves to the last
  hop of its chain in a scanned file; one with no such hop is dropped.

A moved finding offers no fix: the fixers edit the function its chain starts in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from lintloader.finding.findings import Finding, Hop
from lintloader.link.program import Program, symbol_key
from lintloader.scan.read.tokens import top_package


def moved_to(finding: Finding, hop: Hop) -> Finding:
    return replace(
        finding, path=hop.path, line=hop.line, column=hop.column, end_line=0, end_column=0,
        fixes=(),
    )  # fmt: skip


def located_in_scanned(findings: Iterable[Finding], context: set[str]) -> Iterator[Finding]:
    """``findings`` with those in ``context`` (display paths) moved or dropped."""
    for finding in findings:
        if finding.path not in context:
            yield finding
            continue
        hop = next((h for h in reversed(finding.chain) if h.path not in context), None)
        if hop is not None:
            yield moved_to(finding, hop)


def placed_at_overrides(
    findings: Iterable[Finding], program: Program, modules: dict[str, str]
) -> Iterator[Finding]:
    """``findings`` whose chain enters an override in another distribution, moved to its last
    hop in that distribution (``modules``: display path -> module name of every linked file)."""
    for finding in findings:
        index = _override_entry(finding.chain, program, modules)
        if index is None:
            yield finding
            continue
        entered = top_package(modules[finding.chain[index].path])
        last = max(
            i
            for i, hop in enumerate(finding.chain)
            if top_package(modules.get(hop.path, "")) == entered
        )
        yield moved_to(finding, finding.chain[last])


def _override_entry(
    chain: tuple[Hop, ...], program: Program, modules: dict[str, str]
) -> int | None:
    """The first hop that is a method of another top-level package than the hop before it,
    overriding a method that a class of that earlier package defines. (Modules of a package
    only: top-level modules side by side, a script directory, are one project.)"""
    for index in range(1, len(chain)):
        caller, callee = modules.get(chain[index - 1].path), modules.get(chain[index].path)
        if caller is None or callee is None or "." not in caller or "." not in callee:
            continue
        if top_package(caller) == top_package(callee):
            continue
        info = program.functions.get(symbol_key(callee, chain[index].function))
        if info is None or info.class_key is None:
            continue
        for ancestor in program.mro(info.class_key)[1:]:
            klass = program.classes[ancestor]
            if (
                top_package(klass.file.module) == top_package(caller)
                and info.function.name in klass.klass.methods
            ):
                return index
    return None

"""Whether a fix ended the respawn it is named for: after the fix rounds, the runner checks the
fixed sources once more with every rule at every severity, and a finding that still says the
worker pool is rebuilt, on the same loader or the same chain as a fix, makes that fix incomplete
(the command then does not call it fixed).

"The same loader" is the DataLoader construction a finding's chain points at, named by its file,
its function and the target it is assigned to (``loader``, ``self.loader``): that survives a fix
that moves the statement (hoist-dataloader) or rewrites the call (add-persistent-workers). A chain
with no construction on it (LL1xx, LL203 on a typed parameter) is named by its root: the file and
the function where it starts (``Fetcher.__iter__``).
"""

from __future__ import annotations

from collections.abc import Mapping

from lintloader.finding.findings import Finding
from lintloader.fixers.edit.persistence import site_at
from lintloader.link.program import Program
from lintloader.rules.registry import rules_by_code

Key = tuple[str, ...]


def says_rebuilt(finding: Finding) -> bool:
    """The finding says a worker pool is shut down and started again: its rule says from which
    severity on (``Rule.rebuilds_from``)."""
    rule = rules_by_code().get(finding.code)
    threshold = rule.rebuilds_from if rule is not None else None
    return threshold is not None and finding.severity >= threshold


def keys_of(finding: Finding, program: Program, displays: Mapping[str, str]) -> frozenset[Key]:
    """The loaders a finding is about (see the module docstring), else its chain's root."""
    keys: set[Key] = set()
    for hop in finding.chain:
        found = site_at(program, displays.get(hop.path, hop.path), hop.line, hop.column)
        if found is not None:
            bound = found.call.bound_to or ("@line", str(found.call.site.line))
            keys.add(("loader", hop.path, found.info.function.qualname, *bound))
    if not keys and finding.chain:
        root = finding.chain[0]
        keys.add(("chain", root.path, root.function))
    return frozenset(keys)


def residual(
    keys: frozenset[Key],
    findings: list[Finding],
    program: Program,
    displays: Mapping[str, str],
) -> tuple[Finding, ...]:
    """The findings that still say the pool is rebuilt on one of ``keys``."""
    return tuple(f for f in findings if says_rebuilt(f) and keys & keys_of(f, program, displays))

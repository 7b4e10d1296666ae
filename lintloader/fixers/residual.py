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

from lintloader.findings import Finding, Severity
from lintloader.fixers.edit.persistence import site_at
from lintloader.link.program import Program

Key = tuple[str, ...]

# Codes whose findings say that a worker pool is shut down and started again (LL203 only above
# info: its info finding is the persistent loader whose pool survives each ``iter()``).
REBUILT = frozenset({"LL101", "LL102", "LL104", "LL105", "LL202", "LL203", "LL204", "LL205"})
# Codes that never do, and why (every rule is in exactly one of the two: a test checks it).
NOT_REBUILT = {
    "LL103": "an inventory of resets that no __iter__ or per-epoch path reaches",
    "LL201": "a ValueError at construction, not a respawn",
}


def says_rebuilt(finding: Finding) -> bool:
    if finding.code == "LL203":
        return finding.severity > Severity.INFO
    return finding.code in REBUILT


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

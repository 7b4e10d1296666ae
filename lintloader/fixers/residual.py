"""Whether a fix ended the respawn it is named for: after the fix rounds, the runner checks the
fixed sources once more with every rule at every severity, and a finding that still says the
worker pool is rebuilt, on the same loader or the same chain as a fix, makes that fix incomplete
(the command then does not call it fixed).

"The same loader" is the DataLoader construction a finding's chain points at, named by its file,
its function and the target it is assigned to (``loader``, ``self.loader``): that survives a fix
that moves the statement (hoist-dataloader) or rewrites the call (add-persistent-workers). A chain
with no construction on it (LL1xx, LL203 on a typed parameter) is named by its root: the file and
the function where it starts (``Fetcher.__iter__``).

A finding left at a place the fixed finding listed as also reaching its loader, or at the loop
over items inside its own chain (a builder's ``for dataset in datasets``, one loader per item,
that its callers ran again), which says that its loader is built from what its loop changes
(LL202's "a new loader may be intended"), is a loader per item over other data, not the
rebuild the fix ended (:func:`over_other_data`): it is reported still, but not held against
the fix, unless its loop comes around again over the same items (nested in a loop that does
not draw them anew, or in a hook).
"""

from __future__ import annotations

from collections.abc import Mapping

from lintloader.analysis.repetition import comes_around
from lintloader.finding.findings import Finding, Hop
from lintloader.fixers.base import function_at
from lintloader.fixers.edit.persistence import site_at
from lintloader.link.program import Program
from lintloader.rules.ll202_dataloader_in_loop import DEPENDENT_NOTE
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


def over_other_data(
    left: Finding, fixed: Finding, program: Program, displays: Mapping[str, str]
) -> bool:
    """``left`` is the build of another place the fixed finding listed as "also reached from",
    and says its loader is built from what its loop changes (a new loader may be intended);
    the fixed finding did not say so of itself, ``left`` lists no other place (one that might
    rebuild over the same data), and its loop does not come around again over the same items
    (:func:`~lintloader.analysis.repetition.comes_around`)."""
    if left.code != fixed.code or not left.chain or left.also:
        return False
    if not _from_the_loop(left) or _from_the_loop(fixed):
        return False
    root = left.chain[0]
    if not (_listed_also(root, fixed) or _its_item_loop(root, fixed)):
        return False
    call = left.chain[1] if len(left.chain) > 1 else None
    info = function_at(program, displays, root)
    return (
        call is not None
        and info is not None
        and not comes_around(program, info, call.line, call.column)
    )


def _listed_also(root: Hop, fixed: Finding) -> bool:
    """``root`` is a place the fixed finding listed as also reaching its loader."""
    return any((hop.path, hop.function) == (root.path, root.function) for hop in fixed.also)


def _its_item_loop(root: Hop, fixed: Finding) -> bool:
    """``root`` is a loop inside the fixed finding's own chain (not where it starts): the loop
    over items it named as one loader per item, rebuilt because callers ran it again (LL202's
    "one per item of `...`, the same items each call"), which the fix made run once."""
    place = (root.path, root.function, root.verb, root.action)  # lines move with the fix
    return root.verb == "loop" and any(
        (hop.path, hop.function, hop.verb, hop.action) == place for hop in fixed.chain[1:-1]
    )


def _from_the_loop(finding: Finding) -> bool:
    return finding.code == "LL202" and finding.message.endswith(DEPENDENT_NOTE)

"""Which fix strategies exist and whether each is safe, from :mod:`lintloader.finding.fix_safety`.

Reporting needs to know which findings a fix would act on (ruff's ``[*]`` and "N fixable"), but
a check must not import the fixers (libcst and the linker: a replayed run imports neither). So
fix safety is plain data there; a test checks that it agrees with the imported strategies.
"""

from __future__ import annotations

from lintloader.finding.fix_safety import FIX_SAFETY


def strategy_safety() -> dict[str, bool]:
    """Strategy name -> safe, for every strategy."""
    return {name: entry.safe for name, entry in FIX_SAFETY.items()}


def fix_kind(fixes: tuple[str, ...]) -> str:
    """``safe`` when a safe strategy is named, ``unsafe`` when only unsafe ones are, else ``""``."""
    named = [FIX_SAFETY[name].safe for name in fixes if name in FIX_SAFETY]
    if any(named):
        return "safe"
    return "unsafe" if named else ""

"""What the server says about code actions before any is made: the kinds it offers, which
findings a range touches, and the fix-all action whose edit is worked out on resolve. Kept
apart from ``actions.py``, which imports the fixers (and libcst) only when an action is made,
so that a server starts and shows its first diagnostics without them.
"""

from __future__ import annotations

from collections.abc import Iterable

from lsprotocol import types

from lintloader.finding.findings import Finding

FIX_ALL = "source.fixAll.lintloader"
KINDS = [types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL]


def wanted(kind: str, only: Iterable[str] | None) -> bool:
    """Whether a client that asked for ``only`` kinds wants an action of ``kind``."""
    return only is None or any(kind == o or kind.startswith(f"{o}.") for o in only)


def touching(findings: Iterable[Finding], first: int, last: int) -> list[Finding]:
    """The findings whose lines (1-based) meet ``first``..``last``."""
    return [f for f in findings if f.line <= last and max(f.end_line, f.line) >= first]


def fix_all_action() -> types.CodeAction:
    """The fix-all action, its edit worked out on resolve (:func:`fix_all_edit`)."""
    return types.CodeAction(title="lintloader: fix all (safe fixes)", kind=FIX_ALL)

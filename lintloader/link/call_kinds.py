"""The kinds of call an analysis reads a function's calls for, as written.

An analysis that needs a function's calls themselves, not where they land, asks
``Program.calls_of(key, kind)`` and sees only the calls of that kind. The program records which
kinds of whose calls were read, so a later run knows that a call of no kind read there (a
``print()`` added next to a reset) changes nothing those analyses computed
(``incremental/reads.py``). A kind is known by its name, which a stored run keeps; a name
this module does not define is read as :data:`EVERY_CALL`.

A new kind is one constant here, added to :data:`KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from lintloader.domain.torch_api import RESET_LIKE
from lintloader.summary.model import CallSite, FunctionSummary


class CallKind(NamedTuple):
    name: str
    matches: Callable[[FunctionSummary, CallSite], bool]  # (the calling function, its call)


def _any(function: FunctionSummary, call: CallSite) -> bool:
    return True


def _reset_like(function: FunctionSummary, call: CallSite) -> bool:
    return bool(RESET_LIKE.match(call.target[-1]))


def _builds_a_local(function: FunctionSummary, call: CallSite) -> bool:
    return call.target in function.local_types.values()


def _none_guarded(function: FunctionSummary, call: CallSite) -> bool:
    return bool(call.none_guard)


EVERY_CALL = CallKind("every", _any)
# ``self.reset_state()``, ``_reset()``: LL104 asks whether scanned code defines them
RESET_LIKE_CALLS = CallKind("reset-like", _reset_like)
# a call whose result a local is typed by (``ds = FileDataset(files)``): LL202's value flow
LOCAL_BUILDERS = CallKind("local-builders", _builds_a_local)

# a call that runs only while a parameter is None (``if loader is None: loader = make()``):
# LL202 asks whether the construction it reaches is one
NONE_GUARDED = CallKind("none-guarded", _none_guarded)

KINDS = {kind.name: kind for kind in (EVERY_CALL, RESET_LIKE_CALLS, LOCAL_BUILDERS, NONE_GUARDED)}


def kind_named(name: str) -> CallKind:
    """The kind a stored run names; :data:`EVERY_CALL` for a name not defined here."""
    return KINDS.get(name, EVERY_CALL)

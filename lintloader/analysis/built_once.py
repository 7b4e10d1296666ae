"""Built once: a call that runs once and whose value is kept, not on every pass around it.

The one home of the concept for the analyses; every one of them asks here. The summary finds
built-once guards with one test (``summary/guards.py``'s ``built_once``: a one-shot test of the
value its branch keeps) and records what it found in :class:`FunctionFacts`:

* ``Condition.once``: an ``if`` around a recorded call is such a guard (``CallContext.cached``:
  the call's value is kept some other way, ``cache.setdefault(key, DataLoader(...))``);
* ``kept_blocks``: the bodies of such guards that keep a value beyond the call, for any call in
  them (``if self._loader is None: self._loader = self._build()``);
* ``cached`` and ``cached_after``: the function returns the kept value early
  (``if self._loader is not None: return self._loader``), so what it calls after that runs once.
"""

from __future__ import annotations

from lintloader.summary.model import CallContext, FunctionFacts


def guarded(facts: FunctionFacts, context: CallContext) -> bool:
    """A recorded call (a construction, an ``iter()``) runs once: under a built-once guard
    inside its innermost loop, or its value is kept (a function that returns it early,
    ``setdefault``)."""
    if context.cached:
        return True
    depth = len(facts.loop_chain(context.loop)) if context.loop >= 0 else 0
    return any(c.once and c.loop_depth >= depth for c in context.conditions)


def kept_result(facts: FunctionFacts | None) -> bool:
    """The function keeps its result (returns the kept value early): what it calls runs once."""
    return facts is not None and facts.cached


def kept_after(facts: FunctionFacts | None, line: int) -> bool:
    """A call at ``line`` runs once: the function keeps its result, or the call comes after an
    early return of the kept value (``if key in self._cache: return self._cache[key]``)."""
    if facts is None:
        return False
    after = facts.cached_after
    return facts.cached or (after > 0 and line > after)


def in_kept_block(facts: FunctionFacts, line: int, loop: int) -> bool:
    """A call at ``line`` sits in the body of a built-once guard that keeps the value beyond
    the call, inside loop ``loop`` if that is one (-1: anywhere in the function)."""
    start = facts.loops[loop].body_line if loop >= 0 else 0
    return any(start <= first <= line <= last for first, last in facts.kept_blocks)

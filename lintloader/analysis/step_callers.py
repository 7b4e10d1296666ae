"""Where a helper runs once per step: a call of it inside a step loop, found up the call graph.

``next(iter(loader))`` written outside any loop runs once per call of its function. When a step
loop calls that function (``for i, batch in enumerate(loader): ... sample_images(i)``), or calls
a function that calls it, the helper takes one batch and drops a new iterator every step (or
every N-th step, under ``if i % k == 0``). Only sure call edges are climbed; the climb stops at
the first loop, and a call in an epoch's body (a loop with an inner loop, or named after
epochs) is once per epoch, the normal way to start one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import NamedTuple

from lintloader.analysis import built_once
from lintloader.analysis.loaders import facts_of
from lintloader.finding.findings import Confidence
from lintloader.link.program import Edge, FunctionInfo, Program
from lintloader.summary.model import LoopInfo

STEP_CALL_DEPTH = 3  # call levels climbed above the helper


class StepCaller(NamedTuple):
    """A step loop that calls the helper: ``edges`` from the loop's function down to it."""

    caller: FunctionInfo
    loop: LoopInfo
    edges: tuple[Edge, ...]

    @property
    def periodic(self) -> str:
        """The test that lets a call on the way run only every N-th pass, or empty."""
        return next((edge.call.periodic for edge in self.edges if edge.call.periodic), "")


def step_caller(program: Program, key: str) -> StepCaller | None:
    """The step loop that calls function ``key`` most often (directly or through up to
    :data:`STEP_CALL_DEPTH` levels of sure calls; every pass before every N-th pass, then
    the nearest), or None."""
    found = list(_step_callers(program, key))
    return min(found, key=lambda s: (bool(s.periodic), len(s.edges))) if found else None


def _step_callers(program: Program, key: str) -> Iterator[StepCaller]:
    queue: deque[tuple[str, tuple[Edge, ...]]] = deque([(key, ())])
    seen = {key}
    while queue:
        callee, path = queue.popleft()
        for edge in program.edges_into(callee, Confidence.HIGH):
            if edge.call.is_reference:
                continue  # passed on as a value: how often it runs is up to the receiver
            chain = (edge, *path)
            caller = program.functions[edge.caller]
            loop = _loop_around(caller, edge)
            if loop is not None:
                if _per_step(caller, loop):
                    yield StepCaller(caller, loop, chain)
                continue
            if (
                edge.caller not in seen
                and len(chain) < STEP_CALL_DEPTH
                and not built_once.kept_result(facts_of(caller))
            ):
                seen.add(edge.caller)
                queue.append((edge.caller, chain))


def _loop_around(caller: FunctionInfo, edge: Edge) -> LoopInfo | None:
    """The innermost loop of ``caller`` whose body holds the call ``edge`` makes."""
    site = edge.call.site
    facts = facts_of(caller)
    if facts is not None:
        index = facts.innermost_loop_at(site.line, site.column)
        return facts.loops[index] if index >= 0 else None
    loops = caller.function.loops
    return loops[edge.call.loop] if 0 <= edge.call.loop < len(loops) else None


def _per_step(caller: FunctionInfo, loop: LoopInfo) -> bool:
    """An innermost loop not named after epochs: each pass is one step."""
    facts = facts_of(caller)
    loops = facts.loops if facts is not None else caller.function.loops
    if loop not in loops:
        return False
    index = loops.index(loop)
    return not loop.epoch_like and not any(other.parent == index for other in loops)

"""move-reset-after-loop (safe), for LL105: a shutdown helper called at the end of each epoch
(the last statement of the loop's body) moves to just after the loop, so it runs once.

Safe where the helper does nothing but the reset (as ``remove-reset-call`` decides: resets, bare
calls of functions that only reset, ``if``s that only read): the loop no longer throws its
worker pool away each pass, and the pool is still shut down when the loop ends. Refused, with
the reason, when the call is not the loop body's last statement, reads a name the loop binds,
is the body's only statement, or the helper does more.
"""

from __future__ import annotations

import libcst as cst

from lintloader.analysis.reachability import Reachability
from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.cst_edit import (
    Edit,
    body_of,
    comment_lines,
    located_in,
    walk_statements,
)
from lintloader.fixers.edit.names import collect
from lintloader.fixers.strategies.remove_reset_call import does_more, is_plain_call

Loop = cst.For | cst.While


def apply(request: FixRequest) -> Edits | None:
    chain = request.finding.chain
    if len(chain) < 3 or chain[0].verb != "loop":
        raise FixError("the reset is written in the loop itself: no helper call to move")
    loop_hop, call_hop = chain[0], chain[1]
    helper = request.function_at(chain[2])
    if helper is None:
        raise FixError(f"`{chain[2].function}` is not a function the analysis knows")
    why = does_more(request, Reachability(request.program), helper, set())
    if why:
        raise FixError(f"`{helper.display_name}` does more than the reset: {why}")
    path = request.path_of(loop_hop)
    located = located_in(request, path)
    function = located.functions.get(loop_hop.function)
    if function is None:
        raise FixError(f"cannot find `{loop_hop.function}` in {loop_hop.path}")
    loop = next(
        (
            s
            for s in walk_statements(function.body)
            if isinstance(s, Loop) and located.start(s) == loop_hop.line
        ),
        None,
    )
    if loop is None:
        raise FixError(f"{loop_hop.path}:{loop_hop.line}: no loop there")
    body = list(body_of(loop))
    last = body[-1]
    if (
        not isinstance(last, cst.SimpleStatementLine)
        or not _is_call_line(last, located.module)
        or located.start(last) != call_hop.line
    ):
        raise FixError(f"`{call_hop.action}` is not the last statement of the loop's body")
    if len(body) == 1:
        raise FixError(f"`{call_hop.action}` is all the loop does: moving it leaves nothing")
    bound = collect([loop]).bound
    read = collect([last]).used & bound
    if read:
        names = ", ".join(f"`{n}`" for n in sorted(read))
        raise FixError(f"`{call_hop.action}` reads {names}, which the loop binds")
    moved = last.with_changes(leading_lines=comment_lines(last.leading_lines))
    edit = Edit(remove={last}, insert_after={loop: [moved]})
    return {path: edit.apply(located.module).bytes}


def _is_call_line(statement: cst.SimpleStatementLine, module: cst.Module) -> bool:
    return len(statement.body) == 1 and is_plain_call(statement.body[0], module)


STRATEGY = FixStrategy(
    name="move-reset-after-loop",
    safe=True,
    description="move a reset-only helper called at the end of each pass to after the loop (LL105)",
    apply=apply,
    leaves=("LL103",),
)

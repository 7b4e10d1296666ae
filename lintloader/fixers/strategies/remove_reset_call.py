"""remove-reset-call (safe), for LL101/LL102: delete the call in ``__iter__`` (or the per-epoch
hook) that starts the chain, when the function it calls does nothing but the reset.

``remove-call`` is unsafe because the callee usually also resets per-iteration state; here it
cannot: every statement of the callee is a reset (``loader._iterator = None``,
``loader._iterator._shutdown_workers()``, ...) or a bare call of a function that itself does
nothing but resets, with arguments that only read names and attributes. Deleting the call then
removes the reset and nothing else. Refused, with the reason, when a scanned subclass overrides
the callee (it may do more), when the callee does anything else, or when the call is not a bare
statement.
"""

from __future__ import annotations

import libcst as cst

from lintloader.analysis.reachability import Reachability
from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.cst_edit import Located, body_of, located_in
from lintloader.fixers.edit.statements import remove_statement_at
from lintloader.link.program import FunctionInfo, Program

_READS = (cst.Name, cst.Attribute, cst.Integer, cst.SimpleString)


def apply(request: FixRequest) -> Edits | None:
    chain = request.finding.chain
    if len(chain) < 2:
        raise FixError("the reset is written in the root itself: no call to remove")
    callee = request.function_at(chain[1])
    if callee is None:
        raise FixError(f"`{chain[1].function}` is not a function the analysis knows")
    overridden = overriders(request.program, callee)
    if overridden:
        raise FixError(
            f"`{callee.display_name}` is overridden in `{overridden[0]}`, which may do more"
        )
    why = does_more(request, Reachability(request.program), callee, set())
    if why:
        raise FixError(f"`{callee.display_name}` does more than the reset: {why}")
    return remove_statement_at(request, chain[0], is_plain_call, "bare call")


def is_plain_call(small: cst.BaseSmallStatement, module: cst.Module) -> bool:
    """``self.reset()`` on its own, its arguments only reading names and attributes."""
    return isinstance(small, cst.Expr) and _plain(small.value)


def _plain(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and all(
        isinstance(arg.value, _READS) and not arg.star for arg in node.args
    )


def overriders(program: Program, callee: FunctionInfo) -> list[str]:
    """Scanned subclasses of the callee's class that define a method of the same name."""
    owner = callee.class_key
    if owner is None:
        return []
    name = callee.function.name
    return [
        program.classes[key].klass.qualname
        for key in program.classes
        if key != owner and owner in program.mro(key) and name in program.classes[key].klass.methods
    ]


def does_more(
    request: FixRequest, reach: Reachability, info: FunctionInfo, seen: set[str]
) -> str | None:
    """What ``info`` does besides resetting (a statement, shown), or None."""
    seen.add(info.key)
    located = located_in(request, info.file.path)
    node = located.functions.get(info.function.qualname)
    if node is None:
        return f"cannot find it in {info.file.path}"
    body = list(body_of(node))
    if body and _docstring(body[0]):
        body = body[1:]
    check = _Statements(request, reach, info, located, seen)
    return next((why for why in map(check.more, body) if why), None)


class _Statements:
    """Whether each statement of a function is a reset: a reset itself, a bare call of a
    function that only resets, or an ``if`` (a test that only reads, no ``else``) of those."""

    def __init__(
        self,
        request: FixRequest,
        reach: Reachability,
        info: FunctionInfo,
        located: Located,
        seen: set[str],
    ) -> None:
        self.request, self.reach, self.info, self.located, self.seen = (
            request, reach, info, located, seen,
        )  # fmt: skip
        self.sinks = {ref.sink.site.line for ref in reach.sinks.get(info.key, ())}
        self.edges = request.program.edges_from(info.key)

    def more(self, statement: cst.CSTNode) -> str | None:
        line = self.located.start(statement)
        shown = f"line {line}: `{_code(self.located.module, statement)}`"
        if isinstance(statement, cst.If):
            if statement.orelse is not None or not _reads(statement.test):
                return shown
            return next((w for w in map(self.more, body_of(statement)) if w), None)
        if line in self.sinks:
            return None
        called = [e for e in self.edges if (e.call.site.statement_line or e.call.site.line) == line]
        if not _bare_call(statement) or not called:
            return shown
        for edge in called:
            callee = self.request.program.functions.get(edge.callee)
            if callee is None or edge.callee in self.seen:
                return shown
            why = does_more(self.request, self.reach, callee, self.seen)
            if why:
                return why
        return None


def _reads(test: cst.BaseExpression) -> bool:
    """A test that only reads: names, attributes, constants, compared or negated."""
    if isinstance(test, cst.Comparison):
        return _reads(test.left) and all(_reads(t.comparator) for t in test.comparisons)
    if isinstance(test, cst.UnaryOperation):
        return _reads(test.expression)
    return isinstance(test, _READS)


def _bare_call(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and _plain(statement.body[0].value)
    )


def _docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString)
    )


def _code(module: cst.Module, statement: cst.CSTNode) -> str:
    return module.code_for_node(statement).strip().splitlines()[0]


STRATEGY = FixStrategy(
    name="remove-reset-call",
    safe=True,
    description="delete the call in __iter__ whose callee does nothing but the reset",
    apply=apply,
    leaves=("LL103",),
)

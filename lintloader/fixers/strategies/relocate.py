"""relocate (safe): move the statements that lead to the iterator reset out of the per-epoch
path into the class's teardown path, keeping every other statement where it is.

The chain runs ``Root.__iter__ -> self.F() -> ... -> loader._iterator = None``. ``F`` is the
first function on the chain that the root's class owns (itself or through a base); its
body-level statements whose calls reach a reset (or that are a reset) move into the method of
``F``'s class named ``teardown``/``close``/``shutdown``/``__del__``/``__exit__`` that calls
``self.F()``, right after that call, so teardown still resets the state first and then shuts the
workers down. When the class has no teardown method anywhere in its hierarchy but clearly has a
lifecycle (``setup``, ``__enter__``, ``start``, ``open``, ``connect``), a new ``teardown`` that
calls ``self.F()`` is added after the class's last statement.

Applied to Lightning 1.5.0's ``AbstractDataFetcher`` this is the 1.5.1 fix: ``reset()`` keeps
``batches``/``fetched``/``done``, ``teardown()`` calls ``reset()`` and then shuts the loaders down.

It refuses (with the reason) when moving would change what the statements mean: they use a
parameter or a local variable of ``F``, contain ``return``/``yield``, or the teardown lives in
another module.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from lintloader.analysis.reachability import Reachability
from lintloader.domain.torch_api import LIFECYCLE_NAMES, TEARDOWN_NAMES, WORK_NAMES
from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.cst_edit import (
    Edit,
    Located,
    Statement,
    body_of,
    comment_lines,
    located_in,
    top_statement_at,
    walk_statements,
)
from lintloader.fixers.edit.names import has_flow_exit, name_conflicts
from lintloader.link.program import FunctionInfo, Program

# Statement kinds that may move: a reset, a call, a branch or a loop over a collection.
MOVABLE = (cst.SimpleStatementLine, cst.If, cst.For)


@dataclass(frozen=True)
class Target:
    """Where the statements come from (``owner``) and where they go."""

    owner: FunctionInfo
    lines: tuple[int, ...]  # lines in ``owner`` that lead to a reset
    teardown: FunctionInfo | None  # None: add a new ``teardown`` to the owner's class
    anchor_line: int = 0  # the statement of ``teardown`` that calls ``self.F()``


def apply(request: FixRequest) -> Edits | None:
    target = find_target(request)
    path = target.owner.file.path
    located = located_in(request, path)
    owner_node = located.functions.get(target.owner.function.qualname)
    if owner_node is None:
        raise FixError(f"cannot find `{target.owner.display_name}` in {path}")
    moved = statements_to_move(located, owner_node, target.lines)
    check_movable(owner_node, moved, target)
    edit = Edit(remove=set(moved))
    if target.teardown is not None:
        anchor = anchor_statement(located, target)
        edit.insert_after[anchor] = [_fresh(s) for s in moved]
    else:
        class_node = class_body_end(located, target.owner)
        edit.insert_after[class_node] = [new_teardown(located.module, target.owner, moved)]
    return {path: edit.apply(located.module).bytes}


# -- choosing where from and where to ---------------------------------------------------------
def find_target(request: FixRequest) -> Target:
    """Where to move from and to, or FixError saying why there is no such place."""
    hops = request.finding.chain
    root = request.function_at(hops[0]) if hops else None
    if root is None:
        raise FixError("the chain's root is not a function the analysis knows")
    if len(hops) < 2:
        raise FixError(f"the reset is written in `{root.display_name}` itself: nothing to move")
    if root.class_key is None:
        raise FixError(f"`{root.display_name}` is not a method: its class has no teardown")
    program = request.program
    family = set(program.mro(root.class_key))
    for hop in hops[1:]:
        owner = request.function_at(hop)
        if owner is None or owner.class_key not in family or owner.key == root.key:
            continue
        if owner.function.name in TEARDOWN_NAMES:
            raise FixError(f"the chain runs through the teardown `{owner.display_name}` itself")
        if owner.function.name in WORK_NAMES:
            raise FixError(f"`{owner.display_name}` does the work itself; not moving from it")
        lines = reset_lines(program, owner, hop.line)
        return Target(owner, lines, *teardown_for(program, owner))
    called = request.function_at(hops[1])
    name = f"`{called.display_name}`" if called is not None else f"`{hops[1].function}`"
    raise FixError(
        f"the reset is in {name}, not in a method of `{root.display_name}`'s class: "
        "no method of the class to move it out of"
    )


def reset_lines(program: Program, owner: FunctionInfo, hop_line: int) -> tuple[int, ...]:
    """Lines of ``owner`` with a call that reaches a reset (any confidence) or a reset itself."""
    reach = Reachability(program)
    lines = {hop_line}
    for edge in program.edges_from(owner.key):
        if edge.callee != owner.key and reach.chains_from(edge.callee):
            lines.add(edge.call.site.line)
    lines.update(ref.sink.site.line for ref in reach.sinks.get(owner.key, ()))
    return tuple(sorted(lines))


def teardown_for(program: Program, owner: FunctionInfo) -> tuple[FunctionInfo | None, int]:
    """The owner class's teardown method that calls ``self.F()``, and that call's line."""
    class_key = owner.class_key
    assert class_key is not None
    klass = program.classes[class_key]
    for name in TEARDOWN_NAMES:
        if name not in klass.klass.methods:
            continue
        info = program.functions.get(f"{class_key}.{name}")
        line = call_line(info, owner.function.name) if info else 0
        if info is not None and line:
            return info, line
    existing = teardown_methods(program, class_key)
    if existing:
        raise FixError(
            f"`{existing[0]}` exists but does not call `self.{owner.function.name}()`; "
            "move the reset there by hand"
        )
    if not has_lifecycle(program, class_key):
        raise FixError(
            f"`{klass.klass.qualname}` has no teardown method and no lifecycle "
            f"({', '.join(sorted(LIFECYCLE_NAMES))}) to hang a new one on"
        )
    return None, 0


def call_line(info: FunctionInfo, name: str) -> int:
    self_name = info.function.self_name
    for call in info.function.calls:
        if not call.is_reference and call.target == (self_name, name):
            return call.site.statement_line or call.site.line
    return 0


def teardown_methods(program: Program, class_key: str) -> list[str]:
    return [
        f"{program.classes[k].klass.qualname}.{name}"
        for k in program.mro(class_key)
        for name in TEARDOWN_NAMES
        if name in program.classes[k].klass.methods
    ]


def has_lifecycle(program: Program, class_key: str) -> bool:
    return any(
        LIFECYCLE_NAMES & set(program.classes[k].klass.methods) for k in program.mro(class_key)
    )


# -- the CST side -----------------------------------------------------------------------------
def statements_to_move(
    located: Located, owner: cst.FunctionDef, lines: tuple[int, ...]
) -> list[Statement]:
    found: list[Statement] = []
    for line in lines:
        statement = top_statement_at(located, owner, line)
        if statement is not None and statement not in found:
            found.append(statement)
    order = {id(s): i for i, s in enumerate(body_of(owner))}
    return sorted(found, key=lambda s: order[id(s)])


def check_movable(owner: cst.FunctionDef, moved: list[Statement], target: Target) -> None:
    name = target.owner.display_name
    if not moved:
        raise FixError(f"no statement of `{name}` leads to the reset")
    if not all(is_movable(s) for s in moved):
        raise FixError(f"a statement to move out of `{name}` is a while/try/with block")
    if any(has_flow_exit(s) for s in moved):
        raise FixError(f"a statement to move out of `{name}` contains return/yield")
    self_name = target.owner.function.self_name or "self"
    if target.teardown is not None and target.teardown.function.self_name != self_name:
        raise FixError(f"`{target.teardown.display_name}` names its first parameter differently")
    conflicts = name_conflicts(owner, moved, self_name)
    if conflicts:
        names = ", ".join(f"`{n}`" for n in sorted(conflicts))
        raise FixError(f"the statements to move use local names of `{name}`: {names}")


def is_movable(statement: cst.CSTNode) -> bool:
    """Simple statements, ``if``/``for`` made of movable statements (``else`` included)."""
    if isinstance(statement, cst.SimpleStatementLine):
        return True
    if not isinstance(statement, MOVABLE):
        return False
    parts: list[cst.CSTNode] = list(body_of(statement))
    orelse = getattr(statement, "orelse", None)
    if orelse is not None:
        parts.append(orelse if isinstance(orelse, cst.If) else orelse.body)
    return all(_movable_part(p) for p in parts)


def _movable_part(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.IndentedBlock):
        return all(is_movable(s) for s in node.body)
    if isinstance(node, cst.SimpleStatementSuite):
        return True
    return is_movable(node)


def anchor_statement(located: Located, target: Target) -> cst.CSTNode:
    assert target.teardown is not None
    node = located.functions.get(target.teardown.function.qualname)
    if node is not None:
        for statement in walk_statements(node.body):
            if located.start(statement) == target.anchor_line:
                return statement
    raise FixError(f"cannot find the call in `{target.teardown.display_name}`")


def class_body_end(located: Located, owner: FunctionInfo) -> cst.CSTNode:
    """The last statement of the owner's class body: the new teardown goes after it."""
    qualname = owner.function.class_qualname or ""
    node = located.classes.get(qualname)
    body = body_of(node) if node is not None else ()
    if not body:
        raise FixError(f"cannot find the body of class `{qualname}`")
    return body[-1]


def new_teardown(module: cst.Module, owner: FunctionInfo, moved: list[Statement]) -> Statement:
    self_name = owner.function.self_name or "self"
    code = f"def teardown({self_name}):\n    {self_name}.{owner.function.name}()\n"
    function = cst.parse_statement(code, config=module.config_for_parsing)
    assert isinstance(function, cst.FunctionDef)
    assert isinstance(function.body, cst.IndentedBlock)
    body = [*function.body.body, *(_fresh(s) for s in moved)]
    return function.with_changes(
        leading_lines=[cst.EmptyLine(indent=False)], body=function.body.with_changes(body=body)
    )


def _fresh(statement: Statement) -> Statement:
    """A moved statement keeps its comments but not the blank lines above it."""
    return statement.with_changes(
        leading_lines=comment_lines(getattr(statement, "leading_lines", ()))
    )


STRATEGY = FixStrategy(
    name="relocate",
    safe=True,
    description="move the statements that reset the iterator into the class's teardown method",
    apply=apply,
    leaves=("LL103",),
)

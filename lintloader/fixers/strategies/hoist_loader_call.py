"""hoist-loader-call (safe), for LL202: a loader built at every iteration of a loop, by a
construction or through a helper or a method that returns it, is built once before the loop
and made persistent.

Two shapes of the statement in the loop body:

* ``loader = make_loader(args)`` (or ``loader = DataLoader(...)``): the statement moves to just
  before the loop, with the comment lines above it;
* ``for batch in make_loader(args):`` (or ``for batch in DataLoader(...):``, a loader bound to no
  name): ``loader = make_loader(args)`` is written before the loop and the inner loop iterates
  ``loader``.

The statement may also sit in the body of an ``if`` of the loop body (a periodic evaluation:
``if step % 500 == 0: test_loader = DataLoader(...)``): it moves before the loop all the same,
since building a DataLoader starts no worker (iterating it does). Then nothing of the function
outside that ``if``'s body may read or bind the name (after the loop, or in an ``else``, it would
be bound where the ``if`` never ran), and the ``if`` tests and branches count as the loop body.

The construction at the end of the chain gets ``persistent_workers`` (``True``, or
``<num_workers> > 0`` when it may be 0; see :mod:`lintloader.fixers.edit.persistence`): one
loader iterated at every iteration keeps one pool. Each function between the call and the
construction must return what it calls (``return DataLoader(...)``, or the name bound to it), so
the value hoisted is the loader.

Safe, because it is refused (with the reason) whenever the loader built once could differ from
the one built at each iteration: an argument reads a name the loop binds or assigns; or the
loop sets per-epoch state on what the construction reads (``set_epoch``, an attribute assigned,
a method of it called: see :mod:`lintloader.fixers.edit.epoch_state`), which persistent workers
would not see. The hoisted call runs once even when the loop runs zero times.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from lintloader.finding.findings import Hop
from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.cst_edit import (
    located_in,
    nodes_of,
    small_statement_at,
    walk_statements,
)
from lintloader.fixers.edit.draws import refuse_draws
from lintloader.fixers.edit.epoch_state import reads, state_set
from lintloader.fixers.edit.loader_calls import Loop, Target, target_call
from lintloader.fixers.edit.names import collect, first_free
from lintloader.fixers.edit.persistence import build_of
from lintloader.fixers.edit.rewrite import EditFn, moved_before, rewritten

NAMES = ("loader", "data_loader", "train_loader")


def apply(request: FixRequest) -> Edits | None:
    target = target_call(request)
    statement, loop, guards = statement_in_loop(target)
    check_loop(request, target, loop)
    name = _bound_name(target, statement)
    iterated = name is None
    if iterated and not _iterates(target, statement):
        raise FixError(
            "the loader is neither bound to a name nor iterated by a loop in the loop body"
        )
    _check_unchanged(request, target, Place(statement, loop, guards), name)
    if guards and name is not None:
        _check_kept_in(target, guards[0], name)
    for hop in request.finding.chain[2:]:
        check_returns(request, hop)
    moved = isinstance(statement, cst.SimpleStatementLine) and not iterated
    refuse_draws(request, target.path, [statement if moved else target.call])  # what is hoisted
    build = build_of(request, target)
    edits: dict[cst.CSTNode, EditFn] = {}
    if build.target is target:
        edits[build.call] = build.persistent
    if isinstance(statement, cst.SimpleStatementLine) and not iterated:
        edits.update(moved_before([statement], loop))
    else:
        edits.update(_bind_before(target, loop, fresh_name(target, loop)))
    result = target.result(rewritten(target.module, edits))
    if build.target is not target:
        result.update(build.made_persistent_alone())
    return result


@dataclass(frozen=True)
class Place:
    """Where the call is: the statement that holds it, the loop whose body holds that statement
    (directly or inside ``guards``), and the ``if`` blocks in between, innermost first."""

    statement: cst.BaseStatement
    loop: Loop
    guards: tuple[cst.If, ...]

    def around(self) -> list[cst.CSTNode]:
        """Everything of the loop body but the statement: what runs at each iteration besides
        it (the ``if`` tests and ``else`` branches included)."""
        nodes: list[cst.CSTNode] = []
        inner: cst.BaseStatement = self.statement
        for guard in self.guards:
            nodes.extend(s for s in _statements(guard.body) if s is not inner)
            nodes.append(guard.test)
            if guard.orelse is not None:
                nodes.append(guard.orelse)
            inner = guard
        nodes.extend(s for s in _statements(self.loop.body) if s is not inner)
        return nodes


def _statements(block: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    return block.body if isinstance(block, cst.IndentedBlock) else ()


def statement_in_loop(target: Target) -> tuple[cst.BaseStatement, Loop, tuple[cst.If, ...]]:
    """The statement that holds the call, the loop whose body holds it (directly, or in the
    body of ``if`` blocks: a periodic evaluation), and those ``if`` blocks, innermost first."""
    node: cst.CSTNode = target.call
    child: cst.CSTNode | None = None
    statement: cst.BaseStatement | None = None
    guards: list[cst.If] = []
    while True:
        parent = target.parent(node)
        if parent is None or isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            raise FixError("the call is not in a loop of its function")
        grand = target.parent(parent)
        if isinstance(node, cst.BaseStatement) and statement is None:
            if not (isinstance(node, cst.SimpleStatementLine) or _iterates(target, node)):
                raise FixError("the call is inside a block of the loop body (`with`, ...)")
            statement = node
        elif isinstance(node, cst.If) and statement is not None:
            if child is not node.body or not isinstance(node.body, cst.IndentedBlock):
                raise FixError("the call is in the `else` branch or the test of an `if`")
            guards.append(node)
        elif isinstance(node, cst.BaseStatement) and statement is not None:
            raise FixError("the call is inside a block of the loop body (`with`, ...)")
        if (
            statement is not None
            and isinstance(node, cst.BaseStatement)
            and isinstance(grand, (cst.For, cst.While))
            and grand.body is parent
        ):
            return statement, grand, tuple(guards)
        child, node = node, parent


def check_loop(request: FixRequest, target: Target, loop: Loop) -> None:
    """The loop around the call is the one the finding names (not a loop inside it)."""
    hop = request.finding.chain[0]
    where = target.positions.get(loop)
    if hop.verb != "loop" or where is None or where.start.line != hop.line:
        raise FixError(f"the call is not directly in the loop at line {hop.line}")


def _inside(target: Target, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
    current: cst.CSTNode | None = node
    while current is not None and current is not ancestor:
        current = target.parent(current)
    return current is ancestor


def _bound_name(target: Target, statement: cst.BaseStatement) -> str | None:
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    assignment = target.assignment(statement)
    if assignment is None or not isinstance(assignment.targets[0].target, cst.Name):
        return None
    return assignment.targets[0].target.value


def _iterates(target: Target, statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.For) and _inside(target, target.call, statement.iter)


def _check_unchanged(request: FixRequest, target: Target, place: Place, name: str | None) -> None:
    """FixError when the loader built once could differ from the one built per iteration."""
    loop = place.loop
    rest = collect([loop.target] if isinstance(loop, cst.For) else [])
    around = place.around()
    others = collect(around)
    changed = (rest.bound | others.bound) & collect([target.call]).used
    if changed:
        raise FixError(f"its arguments read `{sorted(changed)[0]}`, which the loop assigns")
    if name is not None and name in others.bound:
        raise FixError(f"the loop assigns `{name}` again")
    if name is not None and name in _deleted(around):
        raise FixError(f"the loop deletes `{name}`: the next iteration would not find it")
    if name is not None and name not in others.used:
        raise FixError(f"the loop does not use `{name}`: nothing iterates the loader there")
    watched = reads(target.call) | _self_reads(request, target)
    skip = place.statement if name is not None else target.call
    found = state_set(loop.body, watched, skip=skip)
    if found is not None:
        code = target.module.code_for_node(found).strip()
        raise FixError(
            f"the loop sets per-epoch state (`{code}`), which persistent workers would not see"
        )


def _deleted(nodes: list[cst.CSTNode]) -> set[str]:
    """The names a ``del`` in ``nodes`` unbinds."""
    found: set[str] = set()
    for node in nodes:
        for deleted in nodes_of(node, cst.Del):
            found.update(collect([deleted.target]).used)
    return found


def _check_kept_in(target: Target, guard: cst.If, name: str) -> None:
    """A loader bound inside an ``if``: nothing of its function outside that ``if``'s body
    reads or binds ``name`` (after the loop, or in an ``else``, it would be the loader
    built before the loop even where the ``if`` never ran)."""
    function, top = _enclosing(target, guard)
    found: list[cst.Name] = []

    class _Uses(cst.CSTVisitor):
        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
            return node is not guard.body

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                found.append(node)

    (function or top).visit(_Uses())
    if found:
        raise FixError(f"`{name}` is used outside the `if` that builds it")


def _self_reads(request: FixRequest, target: Target) -> set[str]:
    """``self.x`` read by the functions of the chain below the loop, when the call in the loop
    is a method of ``self``: the attributes the loader is built from."""
    func = target.call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return set()
    if func.value.value != "self":
        return set()
    found: set[str] = set()
    for hop in request.finding.chain[2:]:
        function = located_in(request, request.path_of(hop)).functions.get(hop.function)
        if function is not None:
            found |= {r for r in reads(function.body) if r.startswith("self.")}
    return found


def check_returns(request: FixRequest, hop: Hop) -> None:
    """The function ``hop`` is in returns the value of the call at ``hop`` (directly or through
    the name it binds): else what the loop gets is not the loader."""
    located = located_in(request, request.path_of(hop))
    function = located.functions.get(hop.function)
    found = small_statement_at(located, function, hop.line) if function is not None else None
    small = found[1] if found is not None else None
    if isinstance(small, cst.Return) and isinstance(small.value, cst.Call):
        return
    if isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Name):
        bound = small.targets[0].target.value
        once = function is not None and _binds(function, bound) == 1
        if once and function is not None and bound in _returned(function):
            return
    raise FixError(f"`{hop.function}` does not return the one loader it builds (line {hop.line})")


def _binds(function: cst.FunctionDef, name: str) -> int:
    """How many statements of ``function`` bind ``name`` (two branches that each build a
    loader: only one of them is on the chain)."""
    simple = (s for s in walk_statements(function.body) if isinstance(s, cst.SimpleStatementLine))
    loops = (s.target for s in walk_statements(function.body) if isinstance(s, cst.For))
    return sum(name in collect([node]).bound for node in (*simple, *loops))


def _returned(function: cst.FunctionDef) -> set[str]:
    names: set[str] = set()

    class _Returns(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            if isinstance(node.value, cst.Name):
                names.add(node.value.value)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

    function.visit(_Returns())
    return names


def fresh_name(target: Target, loop: Loop) -> str:
    """A name for the loader that nothing around the loop uses yet."""
    function, top = _enclosing(target, loop)
    taken = collect([function.params, function.body] if function is not None else [top])
    return first_free(NAMES, (taken.used | taken.bound).__contains__, stem="loader")


def _enclosing(target: Target, node: cst.CSTNode) -> tuple[cst.FunctionDef | None, cst.CSTNode]:
    """The function that holds ``node`` (None at module level), and the top of the tree."""
    scope, parent = node, target.parent(node)
    while parent is not None and not isinstance(parent, cst.FunctionDef):
        scope, parent = parent, target.parent(parent)
    return parent, scope


def _bind_before(target: Target, loop: Loop, name: str) -> dict[cst.CSTNode, EditFn]:
    """``name = <the call>`` before ``loop``; the call in the loop becomes ``name`` (the sole
    argument of a call laid out over lines, ``enumerate(\n  DataLoader(...)\n)``, closes up)."""
    hoisted: list[cst.BaseExpression] = []

    def take(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.BaseExpression)
        hoisted.append(updated)
        return cst.Name(name)

    def before(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        bind = cst.Assign([cst.AssignTarget(cst.Name(name))], hoisted[0])
        return cst.FlattenSentinel([cst.SimpleStatementLine([bind]), updated])

    edits: dict[cst.CSTNode, EditFn] = {target.call: take, loop: before}
    arg = target.parent(target.call)
    outer = target.parent(arg) if arg is not None else None
    if isinstance(arg, cst.Arg) and isinstance(outer, cst.Call) and len(outer.args) == 1:
        edits[arg] = lambda node: node.with_changes(whitespace_after_arg=_NONE, comma=_NO_COMMA)
        edits[outer] = lambda node: node.with_changes(whitespace_before_args=_NONE)
    return edits


_NONE = cst.SimpleWhitespace("")
_NO_COMMA = cst.MaybeSentinel.DEFAULT


STRATEGY = FixStrategy(
    name="hoist-loader-call",
    safe=True,
    description="build a loader made at every iteration (directly, through a helper or a "
    "method, or bound to no name) once before the loop, persistent, when nothing it is built "
    "from changes in the loop (LL202)",
    apply=apply,
)

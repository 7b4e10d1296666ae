r"""pass-loader-in (safe), for LL202: a function called from a loop builds a loader and consumes it
itself (``validate(model, valset, ...)`` every N steps builds ``val_loader = DataLoader(valset,
...)`` and iterates it; ``self.train_epoch()`` builds ``DataLoader(self.train_set, ...)``; or it
asks a getter, ``loader = get_eval_loader(valset, bs)``): the loader is built once in the caller,
before its loops, persistent, and passed in; the function builds its own only when none is
given::

    def validate(model, valset, batch_size, val_loader=None):
        if val_loader is None:
            val_loader = DataLoader(valset, batch_size=batch_size, num_workers=1)
        ...

    val_loader = DataLoader(valset, batch_size=args.bs, num_workers=1, persistent_workers=True)
    for epoch in range(epochs):
        ...
            validate(model, valset, args.bs, val_loader=val_loader)

The construction is copied to the caller with the function's parameters replaced by what the
call passes, together with the simple assignments of locals it reads (``val_sampler =
DistributedSampler(valset) if distributed else None``); those the function uses for nothing
else move under the ``if``. The caller's statements go before the outermost loop around the call
that binds nothing they read (one loader for the whole run, not one per epoch).

Safe, because it is refused (with the reason) wherever the loader built once could differ from
the one built at each call: what the copy reads is bound in the loops; a statement of the
function before the construction sets state on what it reads, unless it sets an attribute to
the same value at every call (``args.eval_batch_size = args.per_gpu_eval_batch_size * max(1,
args.n_gpu)``, which the copy then sets too, in order); the call runs under an ``if`` whose test
the loops do not change (a switch that may be off for the whole run); the loops set per-epoch
state on it (:mod:`lintloader.fixers.edit.epoch_state`); for a method,
another method of its class sets such state on what it reads from ``self``. What the functions
below it on the chain read (a getter's attributes) counts as read. Also refused when the
function is not a module-level function of the caller's file called by name or an undecorated
method of the caller's class called on ``self`` that no other class defines, takes ``**kwargs``
or already has a parameter of the loader's name, or when the construction is inside an ``if``,
loop or ``try`` of the function; but an ``if`` (with its ``elif``\ s and an ``else``) whose every
branch is ``name = ...`` alone builds the loader one way or the other, and is copied whole
(``if args.data_num == -1: loader = DataLoader(..., num_workers=4)`` / ``else: loader =
DataLoader(...)``: the branch on the chain is made persistent). A method called in the loop on
what the copy does not read (``model.load_state_dict(...)`` when the loader reads the test set)
does not count as state set on it (:mod:`lintloader.fixers.edit.epoch_state`). A local the
copy binds that the caller already uses is renamed after the function in the copy
(``collate_fn`` of ``validate`` becomes ``validate_collate_fn``); refused when that name is
taken too. Refused when the copy builds a class or function of the project that draws randomness
(:mod:`lintloader.fixers.edit.draws`): built once, every call would read the same draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from lintloader.finding.findings import Hop
from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.cst_edit import located_in
from lintloader.fixers.edit.draws import refuse_draws
from lintloader.fixers.edit.epoch_state import below as is_below
from lintloader.fixers.edit.epoch_state import (
    changed_by_methods,
    dotted,
    reads,
    related,
    state_set,
)
from lintloader.fixers.edit.loader_calls import Loop, Node, Target, target_call
from lintloader.fixers.edit.names import collect, parameters
from lintloader.fixers.edit.persistence import build_of, tight_equal, with_keyword
from lintloader.fixers.edit.replace import replaced
from lintloader.fixers.edit.rewrite import EditFn, rewritten
from lintloader.fixers.strategies.hoist_loader_call import check_returns

# ``name = DataLoader(...)``, or an ``if`` whose every branch is ``name = ...`` (the loader
# built one way or another: ``if args.data_num == -1: loader = DataLoader(..., num_workers=4)``)
Construction = cst.SimpleStatementLine | cst.If


@dataclass(frozen=True)
class Callee:
    """The function called from the loop, the construction statement in it and the statements
    of its locals that the construction needs, in order."""

    function: cst.FunctionDef
    statement: Construction
    name: str  # what the loader is bound to
    needed: tuple[cst.SimpleStatementLine, ...]  # earlier assignments the construction reads


def apply(request: FixRequest) -> Edits | None:
    chain = request.finding.chain
    if len(chain) < 3 or chain[0].verb != "loop":
        raise FixError("the loader is not built by the function the loop calls")
    target = target_call(request)
    if request.path_of(chain[2]) != target.path:
        raise FixError("the function that builds the loader is in another file")
    build = build_of(request, target)
    made = target.call_at(chain[2].line, chain[2].column)
    if made is None:
        raise FixError(f"{chain[2].path}:{chain[2].line}: no call there")
    for hop in chain[3:]:
        check_returns(request, hop)
    called = _called(request, target, chain[0].function, chain[2].function)
    callee = _callee(target, made, called)
    construction = callee.statement
    if made is build.call:  # the copy builds it persistent (in its branch of an `if`)
        construction = replaced(construction, made, build.persistent(made))
    bindings = _arguments(target.call, callee.function, called.method)
    below = _read_below(request, chain)
    moved = _in_order(callee, [*_settings(target, callee, below), *callee.needed])
    renames = _renames(target, callee, moved)
    built = [construction if s is callee.statement else s for s in moved]
    refuse_draws(request, target.path, built)
    copies = [_substituted(_renamed(s, renames), bindings) for s in built]
    value = _name_of(renames.get(callee.name)) or callee.name
    loop = _outermost(target, copies)
    switch = _switch(target, loop)
    _check_caller(target, loop, moved, callee.function, copies, bindings, below | switch.reads)
    if called.method:
        _check_class(target, callee, below)
    edits: dict[cst.CSTNode, EditFn] = {
        loop: lambda node: cst.FlattenSentinel([*switch.around(copies), node]),
        target.call: lambda node: _passing(node, callee.name, value),
        **_guarded(callee),
    }
    if made is not build.call and build.target is target:
        edits[build.call] = build.persistent
    result = target.result(rewritten(target.module, edits))
    if made is not build.call and build.target is not target:
        result.update(build.made_persistent_alone())
    return result


def _read_below(request: FixRequest, chain: Sequence[Hop]) -> set[str]:
    """What the functions between the one the loop calls and the construction read (a getter's
    ``self.eval_dataset``, a helper's globals): the loader the copy builds reads them too."""
    found: set[str] = set()
    for hop in chain[3:]:
        function = located_in(request, request.path_of(hop)).functions.get(hop.function)
        if function is not None:
            found |= reads(function.body)
    return found


@dataclass(frozen=True)
class Called:
    """The function the loop calls: a module-level function called by name, or a method of the
    caller's own class called on ``self`` (``owner`` its class)."""

    qualname: str
    name: str
    owner: str = ""

    @property
    def method(self) -> bool:
        return bool(self.owner)


def _called(request: FixRequest, target: Target, caller: str, qualname: str) -> Called:
    func = target.call.func
    if "." not in qualname and isinstance(func, cst.Name):
        return Called(qualname, qualname)
    owner, _, name = qualname.rpartition(".")
    on_self = (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value == "self"
        and func.attr.value == name
    )
    if not on_self or "." in owner or caller.rpartition(".")[0] != owner:
        raise FixError(
            f"`{qualname}` is neither a module-level function called by name nor a method of "
            "the caller's class called on `self`"
        )
    others = sorted(
        info.function.qualname
        for info in request.program.functions.values()
        if info.function.qualname.endswith(f".{name}") and info.function.qualname != qualname
    )
    if others:  # an override would be called with a parameter it does not take
        raise FixError(f"`{others[0]}` defines `{name}` too: an override would not take the loader")
    return Called(qualname, name, owner)


def _callee(target: Target, made: cst.Call, called: Called) -> Callee:
    """``made`` is the call in the function whose value is the loader: the construction, or the
    getter that returns it."""
    qualname = called.qualname
    function = _around(target, made, cst.FunctionDef)
    if function is None or function.name.value != called.name:
        raise FixError(f"cannot find `{qualname}` around the construction")
    if called.method and not _plain_method(target, function, called.owner):
        raise FixError(f"`{qualname}` is decorated or takes no `self` first")
    line = _around(target, made, cst.SimpleStatementLine)
    if line is None:
        raise FixError(f"the construction in `{qualname}` is not a statement of its own line")
    name = _single_binding(line)
    small = line.body[0]
    if name is None or not (isinstance(small, cst.Assign) and small.value is made):
        raise FixError(f"the construction in `{qualname}` is not `name = DataLoader(...)`")
    statement = _branches(target, line, name) or line
    _check_block(target, statement, function)
    if isinstance(function.params.star_kwarg, cst.Param) or name in parameters(function):
        raise FixError(f"`{qualname}` takes `**kwargs` or a parameter named `{name}` already")
    return Callee(function, statement, name, tuple(_needed(function, statement)))


def _branches(target: Target, line: cst.SimpleStatementLine, name: str) -> cst.If | None:
    """The ``if`` whose branches are each ``name = ...`` alone, ``line`` one of them, with an
    ``else``: the loader is built one way or the other (None when ``line`` is in no such
    ``if``)."""
    block = target.parent(line)
    top = target.parent(block) if block is not None else None
    outer = target.parent(top) if top is not None else None
    while isinstance(outer, cst.If) and outer.orelse is top:  # an `else` or an `elif`
        top, outer = outer, target.parent(outer)
    if not isinstance(top, cst.If):
        return None
    branch: cst.If | cst.Else | None = top
    while isinstance(branch, cst.If):
        if not _binds_only(branch.body, name):
            return None
        branch = branch.orelse
    return top if branch is not None and _binds_only(branch.body, name) else None


def _binds_only(block: cst.BaseSuite, name: str) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else ()
    line = body[0] if len(body) == 1 else None
    return isinstance(line, cst.SimpleStatementLine) and _single_binding(line) == name


def _around(target: Target, node: cst.CSTNode, kind: type[Node]) -> Node | None:
    found: cst.CSTNode | None = node
    while found is not None and not isinstance(found, kind):
        found = target.parent(found)
    return found


def _check_block(target: Target, statement: cst.CSTNode, function: cst.FunctionDef) -> None:
    """The construction runs at every call: only ``with`` blocks lie between it and the body."""
    node = target.parent(statement)
    while node is not None and node is not function:
        if isinstance(node, (cst.If, cst.For, cst.While, cst.Try, cst.Else, cst.ExceptHandler)):
            raise FixError("the construction is inside an `if`, a loop or a `try` of the function")
        node = target.parent(node)


def _body(node: cst.FunctionDef | cst.With) -> Sequence[cst.BaseStatement]:
    return node.body.body if isinstance(node.body, cst.IndentedBlock) else ()


def _before(body: Sequence[cst.BaseStatement], statement: Construction) -> list[cst.BaseStatement]:
    """The statements that run before ``statement``: those before it in its block and in the
    blocks around it (``with`` bodies), up to the function's body."""
    found: list[cst.BaseStatement] = []
    for item in body:
        if item is statement:
            return found
        if isinstance(item, cst.With) and _contains(item, statement):
            return found + _before(_body(item), statement)
        found.append(item)
    return found


def _contains(node: cst.CSTNode, wanted: cst.CSTNode) -> bool:
    hits: list[bool] = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, other: cst.CSTNode) -> bool:
            if other is wanted:
                hits.append(True)
            return not hits

    node.visit(_Find())
    return bool(hits)


def _needed(function: cst.FunctionDef, statement: Construction) -> list[cst.SimpleStatementLine]:
    """The assignments of locals the construction reads, transitively, in order: each a single
    ``name = ...`` bound nowhere else in the function."""
    before = _before(_body(function), statement)
    local = collect([function.body]).bound - parameters(function)
    wanted = _reads_of(statement) & local
    needed: list[cst.SimpleStatementLine] = []
    for earlier in reversed(before):
        bound = _single_binding(earlier) if isinstance(earlier, cst.SimpleStatementLine) else None
        if bound is None or bound not in wanted:
            continue
        assert isinstance(earlier, cst.SimpleStatementLine)
        needed.insert(0, earlier)
        wanted = (wanted - {bound}) | (_reads_of(earlier) & local)
    mine = [*needed, statement]
    others = [s for s in _every_statement(function, statement) if all(s is not n for n in mine)]
    rebound = collect(others).bound & {_single_binding(s) for s in mine}
    missing = wanted - {_single_binding(s) for s in needed}
    if missing or rebound:
        culprit = sorted(missing | rebound)[0]
        raise FixError(f"the construction reads `{culprit}`, a local bound more than once")
    return needed


def _reads_of(statement: Construction) -> set[str]:
    """The names the value of ``name = <value>`` reads (of each branch and the tests of an
    ``if`` that builds it one way or another)."""
    if isinstance(statement, cst.If):
        tests = [node.test for node in _chain_of(statement)]
        return collect(tests).used.union(*(_reads_of(line) for line in _lines_of(statement)))
    small = statement.body[0]
    assert isinstance(small, cst.Assign)
    return collect([small.value]).used


def _chain_of(statement: cst.If) -> list[cst.If]:
    """The ``if`` and its ``elif`` branches."""
    found = [statement]
    while isinstance(found[-1].orelse, cst.If):
        found.append(found[-1].orelse)
    return found


def _lines_of(statement: cst.If) -> list[cst.SimpleStatementLine]:
    """The one line of each branch (:func:`_branches` checked there is one)."""
    blocks = [node.body for node in _chain_of(statement)]
    last = _chain_of(statement)[-1].orelse
    blocks += [last.body] if last is not None else []
    return [
        line
        for block in blocks
        if isinstance(block, cst.IndentedBlock)
        for line in block.body
        if isinstance(line, cst.SimpleStatementLine)
    ]


def _every_statement(
    function: cst.FunctionDef, construction: Construction
) -> list[cst.SimpleStatementLine]:
    """The simple statements of ``function`` (but those of an ``if`` that is the
    construction: its branches bind the loader one way or the other)."""
    found: list[cst.SimpleStatementLine] = []

    class _Walk(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
            found.append(node)
            return False

        def visit_If(self, node: cst.If) -> bool:
            return node is not construction

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

    function.visit(_Walk())
    return found


def _single_binding(statement: cst.BaseStatement) -> str | None:
    if isinstance(statement, cst.If):  # a construction: each branch binds the same name
        lines = _lines_of(statement)
        return _single_binding(lines[0]) if lines else None
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    small = statement.body[0] if len(statement.body) == 1 else None
    if (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
    ):
        return small.targets[0].target.value
    return None


def _plain_method(target: Target, function: cst.FunctionDef, owner: str) -> bool:
    """``function`` is an undecorated method of the class ``owner`` whose first parameter is
    ``self``."""
    block = target.parent(function)
    cls = target.parent(block) if block is not None else None
    first = function.params.params[0].name.value if function.params.params else None
    return (
        isinstance(cls, cst.ClassDef)
        and cls.name.value == owner
        and not function.decorators
        and first == "self"
        and _around(target, target.parent(cls) or cls, cst.FunctionDef) is None
    )


def _arguments(
    call: cst.Call, function: cst.FunctionDef, method: bool
) -> dict[str, cst.BaseExpression]:
    """Each parameter of ``function`` and the expression ``call`` passes for it (or its
    default, when that is a name or a literal); a method's ``self`` is the caller's."""
    params = function.params
    if params.posonly_params or isinstance(params.star_arg, cst.Param):
        raise FixError(f"`{function.name.value}` takes positional-only or `*args` parameters")
    bound: dict[str, cst.BaseExpression] = {"self": cst.Name("self")} if method else {}
    positional = params.params[1:] if method else params.params
    for index, arg in enumerate(call.args):
        if arg.star:
            raise FixError("the call passes `*args` or `**kwargs`")
        if arg.keyword is not None:
            bound[arg.keyword.value] = arg.value
        elif index < len(positional):
            bound[positional[index].name.value] = arg.value
    for param in (*params.params, *params.kwonly_params):
        literal = (cst.Name, cst.Integer, cst.Float, cst.SimpleString)
        if param.name.value not in bound and isinstance(param.default, literal):
            bound[param.name.value] = param.default
    return bound


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.SimpleString)


class _Substitute(cst.CSTTransformer):
    """Each parameter read becomes what the call passes for it (attribute names and keywords
    are left alone)."""

    def __init__(self, bindings: dict[str, cst.BaseExpression]) -> None:
        super().__init__()
        self.bindings = bindings

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        value = self.bindings.get(original_node.value)
        if value is None:
            return updated_node
        if isinstance(value, _ATOMS):
            return value.deep_clone()
        return value.deep_clone().with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.Attribute:
        return updated_node.with_changes(attr=original_node.attr)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)

    def leave_AssignTarget(
        self, original_node: cst.AssignTarget, updated_node: cst.AssignTarget
    ) -> cst.AssignTarget:
        return updated_node.with_changes(target=original_node.target)


def _substituted(statement: Construction, bindings: dict[str, cst.BaseExpression]) -> Construction:
    copy = statement.visit(_Substitute(bindings))
    assert isinstance(copy, (cst.SimpleStatementLine, cst.If))
    return copy.with_changes(leading_lines=())


def _outermost(target: Target, copies: list[Construction]) -> Loop:
    """The outermost loop around the call whose loops bind nothing the copies read."""
    used = collect(copies).used
    found: Loop | None = None
    node = target.parent(target.call)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        if isinstance(node, (cst.For, cst.While)):
            bound = collect([node.target] if isinstance(node, cst.For) else []).bound
            if (bound | collect([node.body]).bound) & used:
                break
            found = node
        node = target.parent(node)
    if found is None:
        raise FixError("what the construction reads is bound in the loop around the call")
    return found


class _Rename(_Substitute):
    """The function's own locals renamed, where they are bound too."""

    def leave_AssignTarget(
        self, original_node: cst.AssignTarget, updated_node: cst.AssignTarget
    ) -> cst.AssignTarget:
        return updated_node


def _renames(
    target: Target, callee: Callee, moved: list[Construction]
) -> dict[str, cst.BaseExpression]:
    """A new name, after the function, for each local the moved statements bind that the
    caller already uses (``collator`` of ``evaluate`` becomes ``evaluate_collator``); refused
    when that name is taken too."""
    scope = _around(target, target.call, cst.FunctionDef)
    names = collect([scope.body if scope is not None else target.module])
    taken = names.used | names.bound
    introduced = {name for s in moved if (name := _single_binding(s)) is not None}
    prefix = callee.function.name.value
    renames = {name: f"{prefix}_{name}" for name in introduced & taken}
    clash = sorted(set(renames.values()) & (taken | introduced))
    if clash:
        raise FixError(f"the caller already uses `{clash[0]}`")
    return {old: cst.Name(new) for old, new in renames.items()}


def _renamed(statement: Construction, renames: dict[str, cst.BaseExpression]) -> Construction:
    copy = statement.visit(_Rename(renames))
    assert isinstance(copy, (cst.SimpleStatementLine, cst.If))
    return copy


def _name_of(node: cst.BaseExpression | None) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


@dataclass(frozen=True)
class Switch:
    """The tests of the ``if`` blocks around the call in the loops that the loops do not change
    (``if args.evaluate_during_training:``): the switches under which the run evaluates."""

    tests: tuple[cst.BaseExpression, ...] = ()

    @property
    def reads(self) -> set[str]:
        return set().union(*(reads(test) for test in self.tests))

    def around(self, copies: list[Construction]) -> list[cst.BaseStatement]:
        """The copies, under the same switches (a loader the run uses, or none)."""
        if not self.tests:
            return list(copies)
        parts = [
            t.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) for t in self.tests
        ]
        test = parts[0] if len(parts) > 1 else self.tests[0]
        for part in parts[1:]:
            test = cst.BooleanOperation(test, cst.And(), part)
        return [cst.If(test, cst.IndentedBlock(list(copies)))]


def _switch(target: Target, loop: Loop) -> Switch:
    """The tests of the ``if`` blocks around the call inside ``loop`` that read nothing the loops
    bind: a switch that may be off for the whole run, under which the copy is built too, so that
    it builds no loader (and reads no data) that the run never uses. Refused when the call is
    in the ``else`` of one, or a switch calls anything but a builtin."""
    tests: list[cst.BaseExpression] = []
    changed: set[str] = set()
    child: cst.CSTNode = target.call
    node = target.parent(child)
    while node is not None and node is not target.parent(loop):
        if isinstance(node, cst.If):
            if child is not node.body:
                raise FixError("the call is in the `else` of an `if` in the loop")
            tests.append(node.test)
        if isinstance(node, (cst.For, cst.While)):
            bound = [node.target, node.body] if isinstance(node, cst.For) else [node.body]
            changed |= collect(bound).bound
        child, node = node, target.parent(node)
    switches = [t for t in tests if not collect([t]).used & changed]
    for test in switches:
        called = _called_names(test)
        if called is None or not called <= _PURE:
            code = target.module.code_for_node(test).strip()
            raise FixError(f"the call runs only when `{code}`, which calls more than builtins")
    return Switch(tuple(reversed(switches)))


def _check_caller(
    target: Target,
    loop: Loop,
    originals: list[Construction],
    function: cst.FunctionDef,
    copies: list[Construction],
    bindings: dict[str, cst.BaseExpression],
    below: set[str],
) -> None:
    """The copies fit the caller: every parameter they read is passed, nothing else in it
    touches an attribute they set, and the loops set no per-epoch state on what they read
    (what they bind is renamed where taken: ``_renames``)."""
    unpassed = collect(originals).used & (parameters(function) - set(bindings))
    if unpassed:
        raise FixError(f"the call passes nothing usable for `{sorted(unpassed)[0]}`")
    scope = _around(target, loop, cst.FunctionDef)
    used = reads(scope.body if scope is not None else target.module)
    for copy in copies:
        small = copy.body[0] if isinstance(copy, cst.SimpleStatementLine) else None
        name = dotted(small.targets[0].target) if isinstance(small, cst.Assign) else None
        if name is not None and "." in name and any(is_below(r, {name}) for r in used):
            raise FixError(f"the caller uses `{name}`, which the copy would set earlier")
    watched = reads(cst.Module(body=list(copies))) | below
    found = state_set(loop.body, watched, fresh=True)
    if found is not None:
        code = target.module.code_for_node(found).strip()
        raise FixError(
            f"the loop sets per-epoch state (`{code}`), which a persistent loader would not see"
        )


def _in_order(callee: Callee, earlier: list[cst.SimpleStatementLine]) -> list[Construction]:
    """``earlier`` as the function runs them, then the construction."""
    before = _before(_body(callee.function), callee.statement)
    ordered = [s for s in before if any(s is e for e in earlier)]
    return [*(s for s in ordered if isinstance(s, cst.SimpleStatementLine)), callee.statement]


_PURE = frozenset({"max", "min", "int", "float", "bool", "str", "abs", "round", "len"})


def _settings(target: Target, callee: Callee, below: set[str]) -> list[cst.SimpleStatementLine]:
    """The statements of the function before the construction that set an attribute it reads
    to the same value at every call (``args.eval_batch_size = args.per_gpu_eval_batch_size *
    max(1, args.n_gpu)``: read from the parameters only, not from what it sets, calling only
    builtins like ``max``): the copy sets it too, before the loader. Refused for any other
    statement that sets state on what the construction reads."""
    moved = [*callee.needed, callee.statement]
    watched = reads(cst.Module(body=list(moved))) | below
    local = collect([callee.function.body]).bound - parameters(callee.function)
    found: list[cst.SimpleStatementLine] = []
    for statement in _before(_body(callee.function), callee.statement):
        if any(statement is m for m in moved) or state_set(statement, watched) is None:
            continue
        if isinstance(statement, cst.SimpleStatementLine) and _same_value(statement, local):
            found.append(statement)
            continue
        code = target.module.code_for_node(statement).strip()
        raise FixError(f"`{callee.function.name.value}` sets `{code}` before it builds the loader")
    return found


def _same_value(statement: cst.SimpleStatementLine, local: set[str]) -> bool:
    """``a.b = value`` whose value reads no local, not what it sets, and calls only builtins."""
    small = statement.body[0] if len(statement.body) == 1 else None
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return False
    name = dotted(small.targets[0].target)
    read = reads(small.value)
    called = _called_names(small.value)
    return (
        name is not None
        and "." in name
        and not (collect([small.value]).used & local)
        and not related(name, read)
        and called is not None
        and called <= _PURE
    )


def _called_names(node: cst.CSTNode) -> set[str] | None:
    """The names of the functions called in ``node``; None when one is not a plain name."""
    found: set[str] = set()
    other: list[cst.Call] = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if isinstance(call.func, cst.Name):
                found.add(call.func.value)
            else:
                other.append(call)

    node.visit(_Calls())
    return None if other else found


def _check_class(target: Target, callee: Callee, below: set[str]) -> None:
    """No method of the class changes what the construction reads from ``self`` (the caller's
    loop may call any of them between two calls)."""
    cls = _around(target, callee.function, cst.ClassDef)
    assert cls is not None  # a method of the caller's class (_plain_method)
    moved = [*callee.needed, callee.statement]
    watched = reads(cst.Module(body=list(moved))) | below
    why = changed_by_methods(target.module, cls, {r for r in watched if r.startswith("self.")})
    if why is not None:
        raise FixError(f"{why}: a loader built once would not see it")


def _passing(node: cst.CSTNode, name: str, value: str) -> cst.CSTNode:
    """The call in the loop, also passing ``name=value``."""
    assert isinstance(node, cst.Call)
    return with_keyword(node, name, cst.Name(value))


def _guarded(callee: Callee) -> dict[cst.CSTNode, EditFn]:
    """In the function: a ``name=None`` parameter, and the construction (with the locals only it
    reads) under ``if name is None:``."""
    name = callee.name
    moved: list[cst.SimpleStatementLine] = []

    def params(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Parameters)
        new = cst.Param(cst.Name(name), default=cst.Name("None"), equal=tight_equal())
        if node.kwonly_params or isinstance(node.star_arg, cst.ParamStar):
            return node.with_changes(kwonly_params=[*node.kwonly_params, new])
        return node.with_changes(params=_with_param(list(node.params), new))

    def take(node: cst.CSTNode) -> cst.RemovalSentinel:
        assert isinstance(node, cst.SimpleStatementLine)
        comments = [line for line in node.leading_lines if line.comment is not None]
        moved.append(node.with_changes(leading_lines=comments))
        return cst.RemovalSentinel.REMOVE

    def guard(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, (cst.SimpleStatementLine, cst.If))
        body = [*moved, node.with_changes(leading_lines=())]
        test = cst.parse_expression(f"{name} is None")
        return cst.If(test, cst.IndentedBlock(body), leading_lines=node.leading_lines)

    edits: dict[cst.CSTNode, EditFn] = {callee.function.params: params, callee.statement: guard}
    edits.update({s: take for s in _only_for_construction(callee)})
    return edits


def _with_param(params: list[cst.Param], new: cst.Param) -> list[cst.Param]:
    """``params`` plus ``new`` at the end, laid out as :func:`appended` lays out arguments."""
    if params and not isinstance(params[-1].comma, cst.Comma):
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return [*params[:-1], params[-1].with_changes(comma=comma), new]
    if params:
        last = params[-1]
        between = params[-2].comma if len(params) > 1 else cst.MaybeSentinel.DEFAULT
        if not isinstance(between, cst.Comma):
            between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return [*params[:-1], last.with_changes(comma=between), new.with_changes(comma=last.comma)]
    return [new]


def _only_for_construction(callee: Callee) -> list[cst.SimpleStatementLine]:
    """The needed statements in the construction's block whose local nothing that stays reads:
    they move under the ``if``."""
    block = [s for s in callee.needed if _same_block(callee, s)]
    moving = list(block)
    changed = True
    while changed:
        changed = False
        staying = _names_outside(callee.function, [*moving, callee.statement])
        for statement in list(moving):
            if _single_binding(statement) in staying:
                moving.remove(statement)
                changed = True
    return moving


def _same_block(callee: Callee, statement: cst.SimpleStatementLine) -> bool:
    def block_of(node: cst.CSTNode) -> cst.CSTNode | None:
        items: list[cst.FunctionDef | cst.With] = [callee.function, *_withs(callee.function)]
        for item in items:
            if any(s is node for s in _body(item)):
                return item
        return None

    return block_of(statement) is block_of(callee.statement)


def _withs(node: cst.CSTNode) -> list[cst.With]:
    found: list[cst.With] = []

    class _Walk(cst.CSTVisitor):
        def visit_With(self, with_node: cst.With) -> None:
            found.append(with_node)

    node.visit(_Walk())
    return found


def _names_outside(function: cst.FunctionDef, skipped: list[cst.BaseStatement]) -> set[str]:
    """Every name read in ``function`` outside the ``skipped`` statements."""
    found: set[str] = set()

    class _Walk(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if any(node is s for s in skipped):
                return False
            if isinstance(node, cst.Name):
                found.add(node.value)
            return True

    function.body.visit(_Walk())
    return found


STRATEGY = FixStrategy(
    name="pass-loader-in",
    safe=True,
    description="build the loader that a function called from a loop builds and consumes once "
    "in the caller, persistent, and pass it in (LL202)",
    apply=apply,
)

"""hoist-loader-sampler (safe), for LL202: a loader built at every pass of a loop from a sampler
or batch sampler the loop also builds, and whose per-pass state the loop sets on that sampler
(DeBERTa's trainer: ``batch_sampler = BatchSampler(...)``, ``batch_sampler.next =
self.trainer_state.next_batch``, ``train_dataloader = DataLoader(..., batch_sampler=batch_sampler,
num_workers=num_workers)`` at each epoch), is built once before the loop, persistent, with the
statements that build what it reads; the statements that set the sampler's state stay in the loop.

Why a persistent loader still sees that state: torch iterates the sampler and the batch sampler
in the main process, and sends the workers indices only (``_try_put_index`` takes
``self._next_index()``, ``next(self._sampler_iter)``); a persistent loader's ``__iter__`` calls
``self._iterator._reset(self)``, which takes ``iter(self._index_sampler)`` again, so each pass
iterates the very sampler object the loader was built with, as its state is then. The dataset
and ``collate_fn``, by contrast, are the workers' copies: state set on them is refused. A sampler
built anew at each pass and handed to a kept loader would not be seen (``DataLoader`` refuses
``batch_sampler`` and ``sampler`` once built): the statements that build it move with the loader,
so the loader and the sampler the loop sets state on are one object each, for the run.

Refused, with the reason, when the one sampler kept could differ from the one built at each pass:
a statement that binds what the loader reads is not a plain ``name = value`` of the loop body
before the loader, reads the loop's variable or what the loop changes otherwise, or is read before
it runs; a class of the project it builds changes its own state outside ``__init__`` (a sampler
that counts its passes); it seeds or makes a random generator (``torch.Generator().manual_seed``:
built once, its stream would go on instead of starting again); it draws at each build
(:mod:`lintloader.fixers.edit.draws`); the loop sets state on anything else the loader reads (the
dataset, ``collate_fn``), which persistent workers would not see.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.cst_edit import located_in, nodes_of
from lintloader.fixers.edit.draws import refuse_draws
from lintloader.fixers.edit.epoch_state import changed_by_methods, dotted, reads, state_set
from lintloader.fixers.edit.loader_calls import Loop, Target, target_call
from lintloader.fixers.edit.names import collect
from lintloader.fixers.edit.persistence import build_of
from lintloader.fixers.edit.rewrite import moved_before, rewritten
from lintloader.fixers.strategies.hoist_loader_call import check_loop, statement_in_loop

# DataLoader's parameters iterated in the main process, by keyword and position
SAMPLERS = {"sampler": 3, "batch_sampler": 4}
# calls that seed or make a random generator: built once, its stream goes on across passes
SEEDING = frozenset({"manual_seed", "seed", "Generator", "RandomState", "default_rng"})


def apply(request: FixRequest) -> Edits | None:
    target = target_call(request)
    statement, loop, guards = statement_in_loop(target)
    check_loop(request, target, loop)
    if guards or not isinstance(statement, cst.SimpleStatementLine):
        raise FixError("the loader is not bound by a statement of the loop body itself")
    assignment = target.assignment(statement)
    if assignment is None or not isinstance(assignment.targets[0].target, cst.Name):
        raise FixError("not a plain `name = DataLoader(...)` statement")
    build = build_of(request, target)
    if build.target is not target or build.call is not target.call:
        raise FixError("the loader is not built by the statement in the loop")
    body = _body(loop)
    moved = [*_feeders(target, loop, body, statement), statement]
    _check_kept(request, target, body, moved, assignment.targets[0].target.value)
    refuse_draws(request, target.path, moved)
    edits = moved_before(moved, loop)
    edits[target.call] = build.persistent
    return target.result(rewritten(target.module, edits))


def _body(loop: Loop) -> Sequence[cst.BaseStatement]:
    return loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()


def _loop_names(loop: Loop) -> set[str]:
    """The names a ``for`` binds at each pass (its target)."""
    return collect([loop.target]).used if isinstance(loop, cst.For) else set()


def _bound(node: cst.CSTNode) -> set[str]:
    return collect([node]).bound


def _feeders(
    target: Target, loop: Loop, body: Sequence[cst.BaseStatement], statement: cst.BaseStatement
) -> list[cst.SimpleStatementLine]:
    """The statements of the loop body before the loader's that bind what it reads, and what
    those read in turn, in their order (FixError when one cannot move with it)."""
    changed = collect(body).bound | _loop_names(loop)
    before = list(body[: list(body).index(statement)])
    needed = collect([target.call]).used & changed
    if not needed:
        raise FixError("nothing the loader reads is bound in the loop (hoist-loader-call's shape)")
    chosen: list[cst.SimpleStatementLine] = []
    for line in reversed(before):
        if _bound(line) & needed:
            chosen.insert(0, _plain(target, line))
            needed |= collect([line]).used & changed
    missing = needed - {name for line in chosen for name in _bound(line)}
    if missing:
        name = sorted(missing)[0]
        raise FixError(f"what it is built from reads `{name}`, which the loop changes")
    return chosen


def _plain(target: Target, line: cst.BaseStatement) -> cst.SimpleStatementLine:
    """``line`` when it is ``name = value``, one name bound, nothing else in it."""
    small = line.body if isinstance(line, cst.SimpleStatementLine) else ()
    if len(small) != 1 or not isinstance(small[0], cst.Assign) or len(small[0].targets) != 1:
        code = target.module.code_for_node(line).strip().splitlines()[0]
        raise FixError(f"`{code}` binds what the loader reads and is not `name = value`")
    if not isinstance(small[0].targets[0].target, cst.Name):
        code = target.module.code_for_node(line).strip()
        raise FixError(f"`{code}` binds more than one name")
    assert isinstance(line, cst.SimpleStatementLine)
    return line


def _check_kept(
    request: FixRequest,
    target: Target,
    body: Sequence[cst.BaseStatement],
    moved: list[cst.SimpleStatementLine],
    name: str,
) -> None:
    """FixError when the loader and samplers built once could differ from those built at each
    pass (see the module's text)."""
    rest = [line for line in body if all(line is not m for m in moved)]
    hoisted = {bound for line in moved for bound in _bound(line)}
    again = collect(rest).bound & hoisted
    if again:
        raise FixError(f"the loop binds `{sorted(again)[0]}` again at each pass")
    for line in moved:
        before = [s for s in body[: list(body).index(line)] if any(s is r for r in rest)]
        early = collect(before).used & _bound(line)
        if early:
            read = sorted(early)[0]
            raise FixError(f"the loop reads `{read}` before the statement that binds it")
    if name not in collect(rest).used:
        raise FixError(f"the loop does not use `{name}`: nothing iterates the loader there")
    _check_seeding(target, moved)
    _check_classes(request, target, moved)
    watched = _watched(target, moved)
    for kept in rest:
        found = state_set(kept, watched, fresh=True)
        if found is not None:
            code = target.module.code_for_node(found).strip()
            raise FixError(
                f"the loop sets per-epoch state (`{code}`) on what the workers read, which "
                "persistent workers would not see"
            )


def _watched(target: Target, moved: list[cst.SimpleStatementLine]) -> set[str]:
    """What the workers read: every argument of the loader but its samplers, and what the
    moved statements that bind those read (a sampler's own arguments are iterated in the main
    process with it)."""
    name = dotted(target.call.func) or ""
    torch_order = name.split(".")[-1] == "DataLoader"  # a subclass may order them otherwise
    others = [
        arg.value
        for index, arg in enumerate(target.call.args)
        if arg.star or not _is_sampler(arg, index if torch_order else -1)
    ]
    watched = {found for value in others for found in reads(value)}
    for line in reversed(moved[:-1]):
        if _bound(line) & watched:
            watched |= reads(_value_of(line))
    return watched


def _is_sampler(arg: cst.Arg, index: int) -> bool:
    if arg.keyword is not None:
        return arg.keyword.value in SAMPLERS
    return index in SAMPLERS.values()


def _value_of(line: cst.SimpleStatementLine) -> cst.BaseExpression:
    small = line.body[0]
    assert isinstance(small, cst.Assign)
    return small.value


def _check_seeding(target: Target, moved: list[cst.SimpleStatementLine]) -> None:
    for line in moved:
        for call in _calls(line):
            name = dotted(call.func)
            if name is not None and name.split(".")[-1] in SEEDING:
                code = target.module.code_for_node(call).strip()
                raise FixError(
                    f"`{code}` seeds at each pass: built once, its random stream would go on "
                    "instead of starting again"
                )


def _check_classes(
    request: FixRequest, target: Target, moved: list[cst.SimpleStatementLine]
) -> None:
    """FixError when a moved statement builds an object of a project class one of whose
    methods (other than ``__init__``) changes its own state: built once, the state would carry
    over from one pass to the next."""
    program = request.program
    summary = next((s for s in program.files.values() if s.path == target.path), None)
    if summary is None:
        return
    for line in moved[:-1]:
        for call in _calls(line):
            name = dotted(call.func)
            symbol = program.resolve(summary.module, tuple(name.split("."))) if name else None
            klass = program.classes.get(symbol.key) if symbol and symbol.kind == "class" else None
            if klass is None:
                continue
            located = located_in(request, klass.file.path)
            node = located.classes.get(klass.klass.qualname)
            why = changed_by_methods(located.module, node, {"self"}) if node else None
            if why is not None:
                raise FixError(f"`{name}(...)` keeps state between passes: {why}")


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    return nodes_of(node, cst.Call)


STRATEGY = FixStrategy(
    name="hoist-loader-sampler",
    safe=True,
    description="build a loader made at every pass from a sampler the loop also builds once "
    "before the loop, persistent, with that sampler; the per-pass state the loop sets on the "
    "sampler stays in the loop (the main process iterates it at each pass) (LL202)",
    apply=apply,
)

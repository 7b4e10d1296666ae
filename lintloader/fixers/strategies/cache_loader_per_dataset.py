"""cache-loader-per-dataset (unsafe), for LL202: an evaluation function builds one loader per
evaluation set at every call (``for item in eval_sets: loader = DataLoader(item.data, ...)``),
or one over the dataset it is given (``def evaluate(args, eval_data): loader =
DataLoader(eval_data, ...)``, called every epoch with a dataset the caller keeps in a dict or a
module global): the function keeps each loader in a dict of its module, keyed by the dataset's
identity, built persistent on first use and reused::

    # the loaders of `evaluate`, one per dataset, kept with their workers for the run
    _evaluate_loaders = {}


    def evaluate(args, eval_data):
        if id(eval_data) not in _evaluate_loaders:
            sampler = SequentialSampler(eval_data)
            _evaluate_loaders[id(eval_data)] = DataLoader(
                eval_data, sampler=sampler, num_workers=4, persistent_workers=True
            )
        loader = _evaluate_loaders[id(eval_data)]

The statements just before the construction that only prepare its arguments (a sampler) move
into the ``if``. The key is the dataset's identity, unique while the kept loader holds the
dataset. The shape of transformers 4.55's and sentence-transformers 5.7's evaluation loaders,
kept per dataset with persistent workers; a module function has no instance, so its module holds
the dict.

Unsafe (``--unsafe-fixes``), for a reviewer to judge: every dataset's loader keeps its workers and
their memory for the rest of the run; a dataset changed in place afterwards, or other arguments of
a later call (a batch size, a sampler), are not seen, the first call's loader is reused. Refused
when the dataset is plainly new at each call (bound in the function, made by a call at every
pass of the caller's loop, or an item of sets the function binds: each would keep a pool of its
own), when the construction is not
``name = DataLoader(...)`` directly in the function's body (or, one per set, directly in a loop
over the sets whose target the dataset comes from), and when the loader cannot be made
persistent.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from lintloader.finding.findings import Hop
from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.draws import refuse_draws
from lintloader.fixers.edit.kept import check_sets_given, keep_in_module
from lintloader.fixers.edit.loader_calls import Target, call_at
from lintloader.fixers.edit.names import bound_at_each_call, collect, parameters
from lintloader.fixers.edit.persistence import build_of
from lintloader.fixers.edit.rewrite import EditFn, rewritten
from lintloader.fixers.strategies.keep_eval_loader import dataset_of, passed_for

Statement = cst.SimpleStatementLine


def apply(request: FixRequest) -> Edits | None:
    chain = request.finding.chain
    if len(chain) < 2 or chain[0].verb != "loop":
        raise FixError("the loader is not rebuilt by a loop")
    built = chain[-1]
    target = call_at(request, request.path_of(built), built.line, built.column)
    function = target.enclosing(cst.FunctionDef, "a function")
    statement = target.statement()
    assign = target.assignment(statement)
    if assign is None or not isinstance(assign.targets[0].target, cst.Name):
        raise FixError("the construction is not `name = DataLoader(...)`")
    dataset = dataset_of(target.call)
    root = dataset.split(".")[0]
    block = target.parent(statement)
    if chain[-2].verb == "loop":
        _check_per_set(target, statement, root, function)
    else:
        if block is not function.body:
            raise FixError(f"the construction is not in `{function.name.value}`'s own body")
        _check_given(function, root)
        _check_caller(request, chain, root, function)
    assert isinstance(block, cst.IndentedBlock)
    moved = _prelude(function, block, statement, target.call)
    refuse_draws(request, target.path, [statement, *moved])
    build = build_of(request, target)
    # a name of the module, never mangled in a class: no leading double underscore
    _, edits = keep_in_module(target, function, statement, f"id({dataset})", moved)
    take = edits[target.call]
    edits[target.call] = lambda node: take(build.persistent(node))
    return target.result(rewritten(target.module, edits))


def _check_per_set(
    target: Target, statement: Statement, root: str, function: cst.FunctionDef
) -> None:
    """One loader per set: directly in a ``for`` over the sets whose target the dataset is, and
    the sets come from outside the call (``datasets = build_dataset(...)`` in the function makes
    new ones at each call: their loaders, kept by identity, would pile up, a pool each)."""
    loop = target.loop_of(statement)
    if not isinstance(loop, cst.For) or root not in collect([loop.target]).used:
        raise FixError("the loader's dataset is not an item of the loop it is built in")
    check_sets_given(loop, function)


def _check_given(function: cst.FunctionDef, root: str) -> None:
    """The dataset comes from outside the call: a parameter or a global, not a local that the
    function binds at each call (a new dataset each time, each kept with its pool)."""
    if root in bound_at_each_call(function):
        raise FixError(
            f"`{root}` is bound in `{function.name.value}` at each call: a new dataset each time "
            "would keep a pool of its own"
        )


def _check_caller(
    request: FixRequest, chain: Sequence[Hop], root: str, function: cst.FunctionDef
) -> None:
    """A dataset passed in is not made by a call at every pass of the caller's loop: bound by
    ``name = <call>`` before the call in its block or in a block around it, up to the loop."""
    if root not in parameters(function) or len(chain) != 3:
        return
    hop = chain[1]
    caller = call_at(request, request.path_of(hop), hop.line, hop.column)
    passed = passed_for(caller.call, function, root)
    if not isinstance(passed, cst.Name):
        return
    node: cst.CSTNode | None = caller.statement()
    while node is not None and not isinstance(node, (cst.For, cst.While, cst.FunctionDef)):
        block = caller.parent(node)
        if isinstance(block, cst.IndentedBlock) and any(
            _made_by_call(earlier, passed.value) for earlier in _before(block, node)
        ):
            raise FixError(
                f"`{passed.value}` is made at every pass of the loop: each dataset would keep a "
                "pool of its own"
            )
        node = block


def _before(block: cst.IndentedBlock, statement: cst.CSTNode) -> Sequence[cst.BaseStatement]:
    """The statements of ``block`` before ``statement``."""
    index = next((i for i, s in enumerate(block.body) if s is statement), 0)
    return block.body[:index]


def _made_by_call(statement: cst.BaseStatement, name: str) -> bool:
    """``name = <call>`` (a new object at each pass)."""
    smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else ()
    return any(
        isinstance(small, cst.Assign)
        and isinstance(small.value, cst.Call)
        and name in collect([small]).bound
        for small in smalls
    )


def _prelude(
    function: cst.FunctionDef, block: cst.IndentedBlock, statement: Statement, call: cst.Call
) -> list[Statement]:
    """The statements just before the construction that only prepare its arguments (``sampler =
    SequentialSampler(data)``): plain assignments to names nothing else in the function reads."""
    body = list(block.body)
    index = next(i for i, s in enumerate(body) if s is statement)
    moved: list[Statement] = []
    needed = collect([call]).used
    for earlier in reversed(body[:index]):
        if not (
            isinstance(earlier, cst.SimpleStatementLine)
            and len(earlier.body) == 1
            and isinstance(earlier.body[0], cst.Assign)
            and all(isinstance(t.target, cst.Name) for t in earlier.body[0].targets)
        ):
            break
        bound = collect([earlier]).bound
        if not bound & needed or bound & _read_elsewhere(function, [earlier, *moved, statement]):
            break
        moved.insert(0, earlier)
        needed |= collect([earlier.body[0].value]).used
    return moved


def _read_elsewhere(function: cst.FunctionDef, left_out: list[Statement]) -> set[str]:
    """The names the function reads outside ``left_out``."""
    drop: dict[cst.CSTNode, EditFn] = {s: lambda _: cst.RemovalSentinel.REMOVE for s in left_out}
    rest = rewritten(cst.Module([function]), drop).body[0]
    assert isinstance(rest, cst.FunctionDef)
    return collect([rest.params, rest.body]).used


STRATEGY = FixStrategy(
    name="cache-loader-per-dataset",
    safe=False,
    description="keep the loader an evaluation function builds for each dataset in a dict of its "
    "module, keyed by the dataset, persistent; every dataset's workers stay up for the run "
    "(LL202)",
    apply=apply,
)

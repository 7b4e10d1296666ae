"""persistent-sample-loader (safe), for LL203: a sample batch taken from a fresh iterator
(``batch = next(iter(loader))`` in a step loop, or in a helper such as ``sample_images`` that a
step loop calls every K steps) stops starting a worker pool: the loader's construction gets
persistent workers (``persistent_workers=True``, or ``<num_workers> > 0`` when it may be 0).
``iter()`` on a persistent loader resets the workers it already has instead of starting new
ones, so each sample still begins a fresh pass (shuffled again when it shuffles): the code that
takes the sample is left as it is.

Safe where persistence changes nothing the sample sees (:mod:`lintloader.fixers.edit.epoch_state`):
refused, naming the statement, when a function on the finding's chain sets state on what the
loader is built from (``dataset.x = ...``, ``sampler.set_epoch(...)``: persistent workers would
keep the first copy), and when a loop on the chain iterates the same loader (its own iterator
would be reset under it). What persistence leaves is the info finding that each ``iter()``
restarts the pass and drops the batches prefetched for it (the workers survive).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from lintloader.finding.findings import Hop
from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.cst_edit import Located, located_in, nodes_of
from lintloader.fixers.edit.epoch_state import reads, state_set
from lintloader.fixers.edit.loader_calls import call_at, next_of_iter, target_call
from lintloader.fixers.edit.names import collect
from lintloader.fixers.strategies.reuse_iterator import persistent_loader

MODULE_LEVEL = "<module>"


def apply(request: FixRequest) -> Edits | None:
    sampled = reads(sampled_loader(target_call(request).call))
    arguments, bound = built_from(request)
    chain = request.finding.chain
    built, iterating = chain[0], (chain[-1].path, chain[-1].function)
    for hop, located in _functions(request, chain):
        # the loader's names: where it is built, and where it is sampled
        names = (arguments | bound if hop is built else set()) | (
            sampled if (hop.path, hop.function) == iterating else set()
        )
        construction = _statement_at(located, built.line) if hop is built else None
        for body in _bodies(located, hop.function):
            _refuse_state(located, body, names - _imported(located.module), construction)
            _refuse_loop_over(located, body, hop, names - arguments)
    return persistent_loader(request) or None


def sampled_loader(call: cst.Call) -> cst.BaseExpression:
    """``loader`` of ``next(iter(loader))``; else FixError."""
    loader = next_of_iter(call)
    if loader is None:
        raise FixError("not a `next(iter(loader))` sample: another iterator may still be in use")
    return loader


def built_from(request: FixRequest) -> tuple[set[str], set[str]]:
    """The names the loader's construction reads (its dataset, sampler, ...), and the name it
    is assigned to (``loader = DataLoader(...)``), if any."""
    built = request.finding.chain[0]
    if built.verb != "builds":
        raise FixError("the DataLoader is built where the analysis cannot see it")
    target = call_at(request, request.path_of(built), built.line, built.column)
    assignment = target.assignment(target.statement())
    bound = reads(assignment.targets[0].target) if assignment is not None else set()
    return collect([arg.value for arg in target.call.args]).used, bound


def _functions(request: FixRequest, chain: Sequence[Hop]) -> Iterator[tuple[Hop, Located]]:
    """Each function on the chain once, with its parsed file."""
    parsed: dict[str, Located] = {}
    seen: set[tuple[str, str]] = set()
    for hop in chain:
        path = request.path_of(hop)
        if (path, hop.function) in seen:
            continue
        seen.add((path, hop.function))
        if path not in parsed:
            parsed[path] = located_in(request, path)
        yield hop, parsed[path]


def _bodies(located: Located, function: str) -> list[cst.CSTNode]:
    """The statements of ``function``: a module's own, less its definitions, at ``<module>``."""
    if function == MODULE_LEVEL:
        defined = (cst.FunctionDef, cst.ClassDef)
        return [s for s in located.module.body if not isinstance(s, defined)]
    node = located.functions.get(function)
    if node is None:
        raise FixError(f"cannot find the body of `{function}`")
    return [node.body]


def _refuse_state(
    located: Located, body: cst.CSTNode, watched: set[str], construction: cst.CSTNode | None
) -> None:
    found = state_set(body, watched, skip=construction)
    if found is not None:
        code = located.module.code_for_node(found).strip()
        raise FixError(
            f"line {located.start(found)}: `{code}` sets state on what the loader is built "
            "from, which persistent workers would not see"
        )


def _statement_at(located: Located, line: int) -> cst.CSTNode | None:
    """The simple statement that holds ``line`` (the construction: ``self.loader = ...``
    assigns the loader, it sets no state)."""
    around = [
        node
        for node, where in located.positions.items()
        if isinstance(node, cst.SimpleStatementLine) and where.start.line <= line <= where.end.line
    ]
    return min(around, key=lambda node: located.end(node) - located.start(node), default=None)


def _imported(module: cst.Module) -> set[str]:
    """The names the module's own imports bind (``torch`` is read by a construction, but
    ``torch.cuda.set_device(...)`` sets nothing on the loader)."""
    names: set[str] = set()
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import | cst.ImportFrom) and not isinstance(
                small.names, cst.ImportStar
            ):
                names.update(
                    a.evaluated_alias or a.evaluated_name.split(".")[0] for a in small.names
                )
    return names


def _refuse_loop_over(located: Located, body: cst.CSTNode, hop: Hop, loader: set[str]) -> None:
    """A loop of ``body`` that iterates the sampled loader: ``iter()`` on a persistent loader
    would reset the iterator that loop is walking."""
    for loop in _loops(body):
        if reads(loop.iter) & loader:
            raise FixError(
                f"line {located.start(loop)}: the loop in `{hop.function}` iterates the same "
                "loader, whose iterator a persistent `iter()` would reset"
            )


def _loops(node: cst.CSTNode) -> list[cst.For]:
    return nodes_of(node, cst.For)


STRATEGY = FixStrategy(
    name="persistent-sample-loader",
    safe=True,
    description="make the loader of a `next(iter(loader))` sample persistent, so each sample "
    "resets its workers instead of starting new ones, when nothing sets state on what it is "
    "built from (LL203)",
    apply=apply,
    leaves=("LL203",),
)

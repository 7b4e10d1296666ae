"""keep-builder-loader (unsafe), for LL202: an evaluation function builds one loader per
evaluation set at every call through a builder in another file (detectron2's ``do_test``: ``for
dataset_name in cfg.DATASETS.TEST: data_loader = build_detection_test_loader(cfg,
dataset_name)``). A dict at the call site alone is no fix: the builder's loader is not
persistent, and ``DataLoader`` refuses ``persistent_workers`` once built. So the fix edits two
files: the builder gains ``persistent_workers=False`` and hands it to its ``DataLoader(...)``
when it has workers (:mod:`lintloader.fixers.edit.builder`; its other callers keep what they
got), and the caller keeps each loader in a dict of its module, keyed by the loop's item that it
passes (the set's name), built persistent on first use::

    # the loaders of `do_test`, one per dataset, kept with their workers for the run
    _do_test_loaders = {}


    def do_test(cfg, model):
        for dataset_name in cfg.DATASETS.TEST:
            if dataset_name not in _do_test_loaders:
                _do_test_loaders[dataset_name] = build_detection_test_loader(
                    cfg, dataset_name, persistent_workers=True
                )
            data_loader = _do_test_loaders[dataset_name]

Unsafe (``--unsafe-fixes``): a kept loader's workers keep their copy of the dataset and their
memory for the run (a set changed afterwards, or other arguments of a later call, are not seen),
and the builder's signature changes. Refused where the kept loader could differ from the one
built at each call: the loop over the sets is the loop that repeats (a key per epoch), the
call's other arguments are bound in the loop, the sets are bound in the function at each call,
the builder draws at each build (:mod:`lintloader.fixers.edit.draws`); and where the builder
cannot be made persistent (see the builder module).
"""

from __future__ import annotations

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.builder import KEYWORD, builder_of
from lintloader.fixers.edit.draws import refuse_draws
from lintloader.fixers.edit.kept import check_sets_given
from lintloader.fixers.edit.loader_calls import Target, call_at, keyword_arg
from lintloader.fixers.edit.names import collect
from lintloader.fixers.edit.persistence import construction_of


def apply(request: FixRequest) -> Edits | None:
    chain = request.finding.chain
    if len(chain) < 3 or chain[0].verb != "loop":
        raise FixError("the loader is not built through a builder called from a loop")
    built = chain[-1]
    called = next((hop for hop in reversed(chain) if hop.verb == "calls"), None)
    if called is None:
        raise FixError("the loader is not built through a builder called from a loop")
    target = call_at(request, request.path_of(called), called.line, called.column)
    build = construction_of(request, target)
    info = request.function_at(built)
    if info is None:
        raise FixError(f"`{built.function}` is not a function the analysis linked")
    builder = builder_of(request, build, info.file)
    if request.path_of(built) == request.path_of(called):
        raise FixError("the builder is in the caller's file: no two-file edit needed")
    function = target.enclosing(cst.FunctionDef, "a function")
    statement = target.statement()
    assign = target.assignment(statement)
    if assign is None or not isinstance(assign.targets[0].target, cst.Name):
        raise FixError(f"the call of `{builder.name}` is not `name = {builder.name}(...)`")
    key = _key(target, statement, function)
    _check_not_repeating(request, target, statement)
    if keyword_arg(target.call, KEYWORD) is not None or any(a.star for a in target.call.args):
        raise FixError(f"the call of `{builder.name}` may already pass `{KEYWORD}`")
    refuse_draws(request, target.path, [statement])
    return builder.kept_by(target, function, statement, key)


def _key(target: Target, statement: cst.SimpleStatementLine, function: cst.FunctionDef) -> str:
    """The loop's item the call passes (``dataset_name``): what the kept loaders are keyed by.
    Refused when another argument is bound in the loop (the kept loader would not see it) or
    the sets are bound in the function at each call (new sets each time)."""
    try:
        loop = target.loop_of(statement)
    except FixError:
        raise FixError(
            "the builder's call is not directly in a `for` over the evaluation sets (under an "
            "`if` of it, or outside a loop): nothing to key a kept loader by"
        ) from None
    if not isinstance(loop, cst.For):
        raise FixError("the builder is not called in a `for` over the evaluation sets")
    items = collect([loop.target]).used  # the names the item binds
    passed = {a.value.value for a in target.call.args if isinstance(a.value, cst.Name)}
    keys = sorted(items & passed)
    if len(keys) != 1:
        raise FixError("the call does not pass the loop's item itself: nothing to key by")
    in_loop = collect([loop.body]).bound | items
    changing = sorted(collect([target.call]).used & in_loop - {keys[0]})
    if changing:
        raise FixError(f"`{changing[0]}` changes with the loop: a kept loader would not see it")
    check_sets_given(loop, function)
    return keys[0]


def _check_not_repeating(
    request: FixRequest, target: Target, statement: cst.SimpleStatementLine
) -> None:
    """The loop over the sets is not the loop the finding repeats (``for epoch in ...:
    make(ds, epoch)``): a loader kept per pass would keep a pool per pass."""
    root = request.finding.chain[0]
    loop = target.loop_of(statement)
    place = target.positions.get(loop)
    if place is not None and (request.path_of(root), root.line) == (target.path, place.start.line):
        raise FixError(
            f"the builder is called in the loop that repeats (`{root.action}`): a loader kept "
            "per pass would keep a pool per pass"
        )


STRATEGY = FixStrategy(
    name="keep-builder-loader",
    safe=False,
    description="keep the loader a builder in another file returns for each evaluation set, in "
    "a dict of the caller's module keyed by the set, with the builder given a "
    "persistent_workers keyword (LL202)",
    apply=apply,
)

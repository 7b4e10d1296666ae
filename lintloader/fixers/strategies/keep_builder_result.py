"""keep-builder-result (unsafe), for LL202: a function called at every evaluation asks a builder
in another file for its loaders, once per call and outside any loop of its own (lufficc/SSD
68dc0a2, ``ssd/engine/inference.py:76``: ``do_evaluation`` calls ``data_loaders_val =
make_data_loader(cfg, is_train=False, distributed=distributed)``, and ``make_data_loader``
builds one loader per test set in a loop and returns the list). keep-builder-loader keys one
loader per set by the caller's loop; here the caller has no loop, so what the builder returns
(one loader or a list of them) is kept whole, in a dict of the caller's module keyed by the
identity of the call's arguments that come from the caller, built on first use with the builder
asked for persistent loaders (the builder gains ``persistent_workers=False``, handed to each of
its ``DataLoader(...)`` only when it has workers: :mod:`lintloader.fixers.edit.builder`)::

    # the loaders of `do_evaluation`, one result per argument, kept with their workers for the run
    _do_evaluation_loaders = {}


    def do_evaluation(cfg, model, distributed, **kwargs):
        if (id(cfg), id(distributed)) not in _do_evaluation_loaders:
            _do_evaluation_loaders[(id(cfg), id(distributed))] = make_data_loader(
                cfg, is_train=False, distributed=distributed, persistent_workers=True
            )
        data_loaders_val = _do_evaluation_loaders[(id(cfg), id(distributed))]

Unsafe (``--unsafe-fixes``): the kept loaders' workers keep their copy of the data and their
memory for the run; the loaders being found by the arguments' identity, an argument changed in
place (a config edited between evaluations) is not seen, and one freed then made anew at the
same address would find the first one's loaders; and the builder's signature changes.
Refused where the kept result could differ from the one built at each call: an argument that is
not a parameter of the caller or a literal (bound in the caller at each call, or an expression
that makes a new object: a new key, and a pool kept, each time), a call in a loop of the caller
(keep-builder-loader's shape) or in the function of the loop that repeats (hoist-loader-call's),
a builder that draws at each build (:mod:`lintloader.fixers.edit.draws`); and where the builder
cannot be made persistent.
"""

from __future__ import annotations

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.builder import KEYWORD, builder_of
from lintloader.fixers.edit.draws import refuse_draws
from lintloader.fixers.edit.loader_calls import Target, call_at, keyword_arg
from lintloader.fixers.edit.names import bound_at_each_call, parameters
from lintloader.fixers.edit.persistence import construction_of

_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)
_CONSTANTS = ("True", "False", "None")


def apply(request: FixRequest) -> Edits | None:
    chain = request.finding.chain
    calls = [hop for hop in chain if hop.verb == "calls"]
    if chain[0].verb != "loop" or len(calls) < 2:
        raise FixError("the loader is not built through a builder called from a called function")
    called = calls[-1]
    if called.function == chain[0].function:
        raise FixError("the builder is called in the function of the loop that repeats")
    target = call_at(request, request.path_of(called), called.line, called.column)
    build = construction_of(request, target)
    info = request.function_at(chain[-1])
    if info is None:
        raise FixError(f"`{chain[-1].function}` is not a function the analysis linked")
    builder = builder_of(request, build, info.file, looped=True)
    if request.path_of(chain[-1]) == target.path:
        raise FixError("the builder is in the caller's file: no two-file edit needed")
    function = _caller(target)
    statement = target.statement()
    assign = target.assignment(statement)
    if assign is None or not isinstance(assign.targets[0].target, cst.Name):
        raise FixError(f"the call of `{builder.name}` is not `name = {builder.name}(...)`")
    if keyword_arg(target.call, KEYWORD) is not None or any(a.star for a in target.call.args):
        raise FixError(f"the call of `{builder.name}` may already pass `{KEYWORD}`")
    key = _key(target.call, function)
    refuse_draws(request, target.path, [statement])
    return builder.kept_by(target, function, statement, key, per="one result per argument")


def _caller(target: Target) -> cst.FunctionDef:
    """The function around the call, refused when a loop of it holds the call (one result per
    pass of that loop: keep-builder-loader keys those by the loop's item)."""
    node = target.parent(target.call)
    while node is not None and not isinstance(node, cst.FunctionDef):
        if isinstance(node, (cst.For, cst.While, cst.CompFor, cst.Lambda)):
            raise FixError("the builder is called in a loop of its caller: not one result per call")
        node = target.parent(node)
    if node is None:
        raise FixError("the builder is not called in a function")
    return node


def _key(call: cst.Call, function: cst.FunctionDef) -> str:
    """``id(cfg)``, or ``(id(cfg), id(distributed))``: the identity of each argument the
    caller is given. Literals are the same at every call; anything else is refused (a name the
    caller binds, or an expression, is a new object at each call: a new key, a new pool)."""
    given = parameters(function) - bound_at_each_call(function)
    names: list[str] = []
    for arg in call.args:
        value = arg.value
        if isinstance(value, _LITERALS) or (
            isinstance(value, cst.Name) and value.value in _CONSTANTS
        ):
            continue
        if not (isinstance(value, cst.Name) and value.value in given):
            shown = cst.Module([]).code_for_node(value)
            raise FixError(
                f"`{shown}` is not a parameter of `{function.name.value}` or a literal: a new "
                "object at each call would keep a pool each"
            )
        names.append(f"id({value.value})")
    if not names:
        raise FixError("the call passes nothing of its caller's: nothing to key a kept result by")
    return names[0] if len(names) == 1 else f"({', '.join(names)})"


STRATEGY = FixStrategy(
    name="keep-builder-result",
    safe=False,
    description="keep what a builder in another file returns (its loaders, built in a loop of "
    "its own or not), asked once per call of the caller, in a dict of the caller's module keyed "
    "by the identity of the arguments, with the builder given a persistent_workers keyword "
    "(LL202)",
    apply=apply,
)

"""keep-eval-loader (safe), for LL202: a getter method rebuilds its loader at every call (a
trainer's ``get_eval_dataloader(eval_dataset=None)``, called from ``evaluate()`` at every
evaluation): the getter keeps the loader it builds on the instance, keyed by its dataset,
persistent, and returns the kept one when there is one for this dataset::

    def get_eval_dataloader(self, eval_dataset=None):
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        if id(dataset) not in self._eval_loaders:
            self._eval_loaders[id(dataset)] = DataLoader(
                dataset, batch_size=8, num_workers=self.workers, persistent_workers=self.workers > 0
            )
        return self._eval_loaders[id(dataset)]

with ``self._eval_loaders = {}`` at the end of the class's ``__init__`` (``self._eval_loader =
None`` and ``if self._eval_loader is None:`` when the loader reads no parameter of the getter). The
key is the dataset's identity, which stays unique while the kept loader holds the dataset. The
shape of transformers 4.55's ``_eval_dataloaders`` (kept per dataset, persistent workers).

Safe, because it is refused (with the reason) wherever the kept loader could differ from the one
built at each call: the loader reads a parameter or a local of the getter other than its dataset (a
batch size passed in); the dataset is built in the getter (a new one at each call, which no key
would find again); a call on the way passes a dataset that may be new at each call (bound in the
loop, built in the call), or a method of the class asks the getter for one; a method of the class
other than ``__init__`` assigns what the loader reads (``self.eval_dataset = ...``, ``self.collate
= ...``), calls a method of it or calls ``set_epoch`` (:mod:`lintloader.fixers.edit.epoch_state`).
Also refused when the getter is not a method of a class with an ``__init__`` of its own, or the
construction is not the value of ``return`` or of ``name = ...`` in the getter's own body, or the
getter does not return it.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from lintloader.finding.findings import Hop
from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.cst_edit import body_of, located_in, nodes_of, walk_statements
from lintloader.fixers.edit.draws import refuse_draws
from lintloader.fixers.edit.epoch_state import changed_by_methods, dotted, reads
from lintloader.fixers.edit.kept import Slot, free_attribute, keep, method_of, start
from lintloader.fixers.edit.loader_calls import Target, call_at
from lintloader.fixers.edit.names import collect, parameters
from lintloader.fixers.edit.persistence import build_of
from lintloader.fixers.edit.rewrite import rewritten
from lintloader.fixers.strategies.hoist_loader_call import check_returns

ONE = ("_eval_loader", "_kept_eval_loader")
PER_DATASET = ("_eval_loaders", "_kept_eval_loaders")
_PLAIN = (cst.Name, cst.Attribute, cst.IfExp, cst.BooleanOperation, cst.Comparison)


def apply(request: FixRequest) -> Edits | None:
    chain = request.finding.chain
    if len(chain) < 4 or chain[0].verb != "loop":
        raise FixError("the loader is not built by a getter that a function of the loop calls")
    built = chain[-1]
    target = call_at(request, request.path_of(built), built.line, built.column)
    getter = target.enclosing(cst.FunctionDef, "a function")
    owner = built.function.rpartition(".")[0]
    cls = _class_of(target, getter)
    if cls is None or cls.name.value != owner or "." in owner:
        raise FixError(f"`{built.function}` is not a method of a top-level class")
    init = method_of(cls, "__init__")
    if init is None:
        raise FixError(f"`{owner}` has no `__init__` of its own to start the kept loaders in")
    statement = _statement(target, getter)
    check_returns(request, built)
    refuse_draws(request, target.path, [statement])
    dataset = dataset_of(target.call)
    local = (collect([getter.body]).bound | parameters(getter)) - {"self"}
    key_root = dataset.split(".")[0]
    _check_reads(target, local, key_root)
    watched = {r for r in reads(target.call) if r.startswith("self.")}
    if key_root in local:
        passed = _dataset_parameter(target, getter, statement, key_root, watched)
        if passed is not None:
            watched |= _passed_along(request, chain, passed)
            watched |= _passed_in_class(target, cls, getter, passed, set())
    why = changed_by_methods(target.module, cls, watched)
    if why is not None:
        raise FixError(f"{why}: a kept, persistent loader would not see it")
    build = build_of(request, target)
    names = PER_DATASET if key_root in local else ONE
    slot = Slot(free_attribute(cls, names), f"id({dataset})" if key_root in local else None)
    edits = keep(target.call, statement, slot)
    take = edits[target.call]
    edits[target.call] = lambda node: take(build.persistent(node))
    edits.update(start(init, target.module, slot))
    return target.result(rewritten(target.module, edits))


def _class_of(target: Target, function: cst.FunctionDef) -> cst.ClassDef | None:
    block = target.parent(function)
    cls = target.parent(block) if block is not None else None
    return cls if isinstance(cls, cst.ClassDef) and not function.decorators else None


def _statement(target: Target, getter: cst.FunctionDef) -> cst.SimpleStatementLine:
    """``return <call>`` or ``name = <call>``, a statement of the getter's own body."""
    statement = target.statement()
    small = statement.body[0] if len(statement.body) == 1 else None
    direct = any(s is statement for s in _body(getter))
    value = small.value if isinstance(small, (cst.Return, cst.Assign)) else None
    if isinstance(small, cst.Assign) and not (
        len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
    ):
        value = None
    if not direct or value is not target.call:
        raise FixError(
            f"the construction in `{getter.name.value}` is not `return DataLoader(...)` or "
            "`name = DataLoader(...)` in its own body"
        )
    return statement


def _body(function: cst.FunctionDef) -> Sequence[cst.BaseStatement]:
    return function.body.body if isinstance(function.body, cst.IndentedBlock) else ()


def dataset_of(call: cst.Call) -> str:
    """The dataset argument, a name or a chain of attributes."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    arg = next((a for a in call.args if a.keyword and a.keyword.value == "dataset"), None)
    arg = arg or (positional[0] if positional else None)
    name = dotted(arg.value) if arg is not None else None
    if name is None:
        raise FixError("the loader's dataset is not a name or an attribute")
    return name


def _check_reads(target: Target, local: set[str], key_root: str) -> None:
    """The loader reads no parameter or local of the getter but its dataset."""
    others = collect([target.call]).used & local - {key_root}
    if others:
        raise FixError(
            f"the loader reads `{sorted(others)[0]}`, which may change between calls: "
            "it is kept by its dataset only"
        )


def _dataset_parameter(
    target: Target,
    getter: cst.FunctionDef,
    statement: cst.SimpleStatementLine,
    key_root: str,
    watched: set[str],
) -> str | None:
    """The getter's parameter the dataset comes from (None: from ``self`` only), through at
    most one local bound once, before the construction, to names and attributes only."""
    if key_root in parameters(getter):
        return key_root
    simple = (s for s in walk_statements(getter.body) if isinstance(s, cst.SimpleStatementLine))
    bindings = [s for s in simple if key_root in collect([s]).bound]
    only = bindings[0] if len(bindings) == 1 else None
    small = only.body[0] if only is not None and len(only.body) == 1 else None
    if not (
        only is not None
        and isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.value, _PLAIN)
        and not _has_call(small.value)
        and _before(getter, only, statement)
    ):
        raise FixError(
            f"`{key_root}` is bound in `{getter.name.value}` to what may be a new dataset at "
            "each call"
        )
    watched |= {r for r in reads(small.value) if r.startswith("self.")}
    params = collect([small.value]).used & parameters(getter) - {"self"}
    if len(params) > 1:
        raise FixError(f"`{key_root}` is chosen from more than one parameter")
    return next(iter(params), None)


def _has_call(node: cst.CSTNode) -> bool:
    return bool(nodes_of(node, cst.Call))


def _before(
    getter: cst.FunctionDef, first: cst.SimpleStatementLine, then: cst.SimpleStatementLine
) -> bool:
    body = list(_body(getter))
    indices = [i for i, s in enumerate(body) if s is first or s is then]
    return len(indices) == 2 and body[indices[0]] is first


def _passed_along(request: FixRequest, chain: Sequence[Hop], wanted: str) -> set[str]:
    """Walk the calls of the chain from the getter's caller up to the loop: what each passes for
    the dataset parameter must be the same object at each call (nothing, ``None``, a parameter
    of its own passed on, ``self.<attribute>``, or in the loop's function a name the loops
    around the call do not bind). The ``self.`` attributes found, to be watched."""
    watched: set[str] = set()
    for index in range(len(chain) - 2, 0, -1):
        hop = chain[index]
        target = call_at(request, request.path_of(hop), hop.line, hop.column)
        callee = chain[index + 1]
        function = located_in(request, request.path_of(callee)).functions.get(callee.function)
        if function is None:
            raise FixError(f"cannot find `{callee.function}`")
        value = passed_for(target.call, function, wanted)
        if value is None or (isinstance(value, cst.Name) and value.value == "None"):
            return watched
        name = dotted(value)
        if name is not None and name.startswith("self."):
            return watched | {name}
        caller = target.enclosing(cst.FunctionDef, "a function")
        if not isinstance(value, cst.Name):
            raise FixError(f"`{hop.action}` passes a dataset that may be new at each call")
        if index == 1:
            _check_loops(target, value.value, hop)
            return watched
        if value.value not in parameters(caller) or value.value in collect([caller.body]).bound:
            raise FixError(f"`{hop.action}` passes `{value.value}`, a local of its function")
        wanted = value.value
    return watched


def passed_for(call: cst.Call, function: cst.FunctionDef, wanted: str) -> cst.BaseExpression | None:
    """What ``call`` passes for the parameter ``wanted`` of ``function`` (None: nothing)."""
    for arg in call.args:
        if arg.star:
            raise FixError("a call on the way passes `*args` or `**kwargs`")
        if arg.keyword is not None and arg.keyword.value == wanted:
            return arg.value
    names = [p.name.value for p in function.params.params]
    positional = [a for a in call.args if a.keyword is None]
    offset = 1 if isinstance(call.func, cst.Attribute) and names[:1] == ["self"] else 0
    index = names.index(wanted) - offset if wanted in names else -1
    return positional[index].value if 0 <= index < len(positional) else None


def _passed_in_class(
    target: Target, cls: cst.ClassDef, method: cst.FunctionDef, wanted: str, seen: set[str]
) -> set[str]:
    """Every call of ``self.<method>`` in the class passes for ``wanted`` the same dataset at
    each call: nothing, ``None``, ``self.<attribute>`` (returned, to be watched), or a parameter
    of its own method passed on (whose callers in the class are checked the same way). A kept
    loader per dataset must not be asked for a new dataset at each call."""
    seen.add(method.name.value)
    watched: set[str] = set()
    for caller in body_of(cls):
        if not isinstance(caller, cst.FunctionDef):
            continue
        for call in _self_calls(caller, method.name.value):
            value = passed_for(call, method, wanted)
            name = dotted(value) if value is not None else None
            if value is None or name == "None":
                continue
            if name is not None and name.startswith("self."):
                watched.add(name)
                continue
            rebound = collect([caller.body]).bound
            if name not in parameters(caller) or name in rebound:
                code = target.module.code_for_node(call)
                raise FixError(f"`{code}` passes a dataset that may be new at each call")
            if caller.name.value not in seen:
                watched |= _passed_in_class(target, cls, caller, name, seen)
    return watched


def _self_calls(function: cst.FunctionDef, name: str) -> list[cst.Call]:
    return [
        call
        for call in nodes_of(function.body, cst.Call)
        if isinstance(call.func, cst.Attribute)
        and dotted(call.func.value) == "self"
        and call.func.attr.value == name
    ]


def _check_loops(target: Target, name: str, hop: Hop) -> None:
    node = target.parent(target.call)
    while node is not None and not isinstance(node, cst.FunctionDef):
        if isinstance(node, (cst.For, cst.While)) and name in collect([node]).bound:
            raise FixError(f"`{hop.action}` passes `{name}`, which the loop around it binds")
        node = target.parent(node)


STRATEGY = FixStrategy(
    name="keep-eval-loader",
    safe=True,
    description="keep the loader a getter builds at every call on the instance, keyed by its "
    "dataset, persistent, when it depends only on the dataset and on attributes no method "
    "changes (LL202)",
    apply=apply,
)

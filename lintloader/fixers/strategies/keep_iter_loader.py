"""keep-iter-loader (safe), for LL202: a wrapper whose ``__iter__`` builds a new loader (directly
or through a helper) on every pass builds it once and keeps it, persistent::

    def __iter__(self):
        if self._loader is None:
            self._loader = DataLoader(self.dataset, num_workers=2, persistent_workers=True)
        return iter(self._loader)

with ``self._loader = None`` at the end of the class's ``__init__`` (another attribute name when
the class uses ``_loader`` already). The construction at the end of the chain gets
``persistent_workers`` (see :mod:`lintloader.fixers.edit.persistence`), so the kept loader keeps
one pool across passes.

Safe, because it is refused (with the reason) whenever the kept loader could differ from the one
built at each pass: the call reads a local or a parameter of ``__iter__``; a method of the
class other than ``__init__`` assigns what the construction reads (``self.dataset = ...``), calls
one of its methods or calls ``set_epoch`` (per-epoch state persistent workers would not see:
:mod:`lintloader.fixers.edit.epoch_state`); the call is inside a block of ``__iter__``; the
class has no ``__init__`` of its own to start the attribute in.
"""

from __future__ import annotations

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.cst_edit import located_in
from lintloader.fixers.edit.epoch_state import changed_by_methods, reads
from lintloader.fixers.edit.kept import Slot, free_attribute, keep, method_of, start
from lintloader.fixers.edit.loader_calls import Target, target_call
from lintloader.fixers.edit.names import collect, parameters
from lintloader.fixers.edit.persistence import build_of
from lintloader.fixers.edit.rewrite import EditFn, rewritten

ITER = "__iter__"
NAMES = ("_loader", "_kept_loader")


def apply(request: FixRequest) -> Edits | None:
    hop = request.finding.chain[0]
    owner, _, method = hop.function.rpartition(".")
    if method != ITER:
        raise FixError("the loader is not built in `__iter__`")
    target = target_call(request)
    function = target.enclosing(cst.FunctionDef, "a function")
    cls = target.parent(target.parent(function) or function)
    if function.name.value != ITER or not isinstance(cls, cst.ClassDef):
        raise FixError("the call is not in the `__iter__` of a class")
    init = method_of(cls, "__init__")
    if init is None:
        raise FixError(f"`{owner}` has no `__init__` of its own to start the kept loader in")
    statement = _statement_of(target, function)
    local = (collect([function.body]).bound | parameters(function)) - {"self"}
    used = collect([target.call]).used & local
    if used:
        raise FixError(f"the call reads `{sorted(used)[0]}`, a local of `__iter__`")
    _check_kept(request, target, cls)
    build = build_of(request, target)
    slot = Slot(free_attribute(cls, NAMES))
    edits: dict[cst.CSTNode, EditFn] = {}
    if build.target is target:
        edits[build.call] = build.persistent
    edits.update(keep(target.call, statement, slot))
    edits.update(start(init, target.module, slot))
    result = target.result(rewritten(target.module, edits))
    if build.target is not target:
        result.update(build.made_persistent_alone())
    return result


def _statement_of(target: Target, function: cst.FunctionDef) -> cst.SimpleStatementLine:
    """The statement of ``__iter__``'s body that holds the call, not inside a block of it."""
    node: cst.CSTNode = target.call
    while True:
        parent = target.parent(node)
        if parent is None:
            raise FixError("the call is not in `__iter__`")
        if isinstance(node, cst.BaseStatement):
            if parent is function.body:
                if isinstance(node, cst.SimpleStatementLine):
                    return node
                break
            raise FixError("the call is inside a block of `__iter__` (`if`, `for`, ...)")
        node = parent
    raise FixError("the call is in the header of a block of `__iter__`")


def _check_kept(request: FixRequest, target: Target, cls: cst.ClassDef) -> None:
    """FixError when a method of the class changes what the kept loader is built from."""
    watched = {r for r in reads(target.call) if r.startswith("self.")}
    for hop in request.finding.chain[1:]:
        located = located_in(request, request.path_of(hop))
        function = located.functions.get(hop.function)
        if function is not None:
            watched |= {r for r in reads(function.body) if r.startswith("self.")}
    why = changed_by_methods(target.module, cls, watched)
    if why is not None:
        raise FixError(f"{why}: a kept, persistent loader would not see it")


STRATEGY = FixStrategy(
    name="keep-iter-loader",
    safe=True,
    description="build the loader a wrapper's __iter__ makes on every pass once, keep it on "
    "the instance, persistent, when nothing the class does changes what it is built from (LL202)",
    apply=apply,
)

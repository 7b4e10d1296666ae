"""Per-epoch state: what a loader made persistent (or built once and kept) would no longer see.

Persistent workers keep the copy of the dataset they started with, so state the main process
sets between passes (``sampler.set_epoch(epoch)``, ``dataset.difficulty = ...``,
``dataset.resample()``) no longer reaches them. The fixes that turn persistence on, or keep one
loader where there was one per pass, are safe only where no such statement is written where the
passes run; they are refused naming the first one found.

A *watched* value is a dotted name (``dataset``, ``self.train_set``): the values the loader's
construction reads. A statement sets state on it when it assigns to it or to anything below it
(``dataset.x = ...``, ``self.train_set[i] = ...``, ``self.train_set = ...``), or calls a method
of it (``dataset.shuffle()``) other than one that only reads it (:data:`READ_ONLY`:
``tokenizer.save_pretrained(dir)``, ``model.state_dict()``); any ``set_epoch`` call counts,
whatever its receiver, but where the fix builds a new loader whose sampler is its own
(``fresh``): there a ``set_epoch`` on a plain name that is not watched
(``train_sampler.set_epoch(epoch)``) is another loader's.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

# methods that read their object and change nothing of it: torch's module walks and state_dict,
# transformers' save_pretrained (it writes files from the object), a dict's or list's readers
READ_ONLY = frozenset(
    {
        *("save_pretrained", "save_vocabulary", "state_dict"),
        *("parameters", "named_parameters", "buffers", "named_buffers"),
        *("modules", "named_modules", "children", "named_children"),
        *("keys", "values", "items", "get", "copy", "count", "index"),
    }
)


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a name or a chain of attributes, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


def below(name: str, watched: Iterable[str]) -> bool:
    """``name`` is a watched value or something below one."""
    return any(name == w or name.startswith(f"{w}.") for w in watched)


def related(name: str, watched: Iterable[str]) -> bool:
    """``name`` is a watched value, something below one, or something one is below."""
    return below(name, watched) or any(w.startswith(f"{name}.") for w in watched)


class StateFinder(cst.CSTVisitor):
    """The first statement that sets per-epoch state on a watched value, outside ``skip``."""

    def __init__(
        self, watched: set[str], skip: cst.CSTNode | None = None, fresh: bool = False
    ) -> None:
        super().__init__()
        self.watched = watched
        self.skip = skip
        self.fresh = fresh
        self.found: cst.CSTNode | None = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node is not self.skip and super().on_visit(node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        receiver = dotted(func.value)
        watched = receiver is not None and below(receiver, self.watched)
        watched = watched and func.attr.value not in READ_ONLY
        others = self.fresh and isinstance(func.value, cst.Name)
        if watched or (func.attr.value == "set_epoch" and not others):
            self.found = self.found or node

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target, node)

    def _target(self, target: cst.BaseExpression, node: cst.CSTNode) -> None:
        base = target
        while isinstance(base, cst.Subscript):
            base = base.value
        name = dotted(base)
        if isinstance(target, cst.Name) and base is target:
            return  # a local rebound: the callers check the names they read themselves
        if name is not None and related(name, self.watched):
            self.found = self.found or node


def state_set(
    node: cst.CSTNode, watched: set[str], skip: cst.CSTNode | None = None, fresh: bool = False
) -> cst.CSTNode | None:
    """The first statement in ``node`` (outside ``skip``) that sets state on ``watched``
    (``fresh``: on a new loader whose sampler is its own, see the module's text)."""
    finder = StateFinder(watched, skip, fresh)
    node.visit(finder)
    return finder.found


def reads(node: cst.CSTNode) -> set[str]:
    """The dotted values an expression reads (``dataset``, ``args.workers``, ``self.train_set``):
    the longest chain of each attribute access, and every bare name."""
    found: set[str] = set()

    class _Reads(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            name = dotted(node)
            if name is None:
                return True
            found.add(name)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)
            return False

    node.visit(_Reads())
    return found


def changed_by_methods(
    module: cst.Module, cls: cst.ClassDef, watched: set[str], keep: tuple[str, ...] = ("__init__",)
) -> str | None:
    """Why a loader built once and kept would differ from one built at each call: the first
    method of ``cls`` (outside ``keep``) that sets state on ``watched``, with the statement."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for method in body:
        if not isinstance(method, cst.FunctionDef) or method.name.value in keep:
            continue
        found = state_set(method.body, watched)
        if found is not None:
            code = module.code_for_node(found).strip()
            return f"`{method.name.value}` changes what the loader is built from (`{code}`)"
    return None

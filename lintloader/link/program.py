"""Link per-file summaries into one program: symbols, class hierarchy and call edges.

Names are resolved the way Python would at import time, without importing anything: through
``import``/``from`` bindings (relative ones already made absolute by the summarizer), re-exports
in ``__init__`` modules and star imports. Symbols are keyed ``module:qualname``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from typing import NamedTuple, TypeVar, cast

from lintloader.findings import Confidence
from lintloader.link.call_kinds import EVERY_CALL, CallKind
from lintloader.link.fixed_sets import fixed_set_value
from lintloader.link.linkable import defined_names
from lintloader.link.receiver_names import agreement, is_distinctive, words
from lintloader.summary.model import (
    MODULE_SCOPE,
    CallSite,
    ClassSummary,
    Dotted,
    FileSummary,
    FunctionSummary,
)
from lintloader.torch_api import DATALOADER_ITER_MARKERS, DATALOADER_PATHS

# Prefix of a type that names a class of unscanned code: "<foreign>torch.utils.data.Dataset".
FOREIGN = "<foreign>"
# Types that say nothing about an object's class: any class can be one.
_PROTOCOL_MODULES = ("typing.", "typing_extensions.", "collections.abc.", "abc.", "builtins.")
Derived = TypeVar("Derived")
MEGAMORPHIC_DISPATCH = 4  # more possible targets than this: overrides become low-confidence
_MAX_DEPTH = 12  # import-chain hops followed before giving up (cycles, long re-export chains)


def symbol_key(module: str, qualname: str) -> str:
    return f"{module}:{qualname}"


class Symbol(NamedTuple):
    """What a name resolves to: ``kind`` is function, class, module or external."""

    kind: str
    key: str  # "module:qualname" for function/class, dotted path for module/external


class Edge(NamedTuple):
    """``caller`` calls (or passes along) ``callee`` at ``call``."""

    caller: str
    callee: str
    call: CallSite
    confidence: Confidence


class FunctionInfo(NamedTuple):
    key: str
    file: FileSummary
    function: FunctionSummary

    @property
    def class_key(self) -> str | None:
        qualname = self.function.class_qualname
        return symbol_key(self.file.module, qualname) if qualname else None

    @property
    def display_name(self) -> str:
        return self.function.qualname


class ClassInfo(NamedTuple):
    key: str
    file: FileSummary
    klass: ClassSummary


class Program:
    """The whole scanned code as one linked program."""

    def __init__(self, summaries: Iterable[FileSummary]) -> None:
        self.files: dict[str, FileSummary] = {}
        self.functions: dict[str, FunctionInfo] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.methods_by_name: dict[str, list[str]] = {}
        # function keys by every name their calls end in (``self.loader.reset()`` -> reset)
        self._calls_by_name: dict[str, set[str]] = {}
        self._renames: set[tuple[str, str]] = set()
        self._edges: dict[str, list[Edge]] = {}
        self._call_edges: dict[tuple[str, int], list[Edge]] = {}  # (caller, call index)
        self._mro: dict[str, tuple[str, ...]] = {}
        self._guesses: dict[tuple[str, str], list[tuple[str, Confidence]]] = {}
        self._resolved: dict[tuple[str, Dotted], Symbol | None] = {}  # resolve() at depth 0
        self._bases: dict[str, list[Symbol]] = {}
        # what analyses work out from the whole program, by the function that works it out
        # (derived): forgotten on extend
        self._derived: dict[Callable[[Program], object], object] = {}
        # Calls are read only through edges_from, edges_into, calls_named and calls_of, none
        # of which records anything: what the analysis read of them is recorded, when a run
        # is stored, by a program that wraps these (incremental/reads.py).
        self.extend(summaries)

    def extend(self, summaries: Iterable[FileSummary]) -> None:
        """Link more files in (demand selection adds each round's files to one program).
        Everything worked out from the files so far is forgotten: a newly linked module can
        change how a name resolves, a class's MRO, its subclasses."""
        for summary in summaries:
            if summary.ok:
                self._add(summary)
        self._edges, self._call_edges, self._mro, self._derived = {}, {}, {}, {}
        self._resolved, self._bases, self._guesses = {}, {}, {}
        for name, value in vars(Program).items():  # worked out once from all the files
            if isinstance(value, cached_property):
                self.__dict__.pop(name, None)

    def derived(self, work_out: Callable[[Program], Derived]) -> Derived:
        """``work_out(self)``, worked out once for the files linked so far: what analyses and
        fixers share (``loader_sites``), typed by the function that works it out."""
        if work_out not in self._derived:
            self._derived[work_out] = work_out(self)
        return cast(Derived, self._derived[work_out])

    def _add(self, summary: FileSummary) -> None:
        # Two files claiming one module (a src/ copy and an installed one): the first wins.
        if summary.module in self.files:
            return
        self.files[summary.module] = summary
        for qualname, function in summary.functions.items():
            key = symbol_key(summary.module, qualname)
            self.functions[key] = FunctionInfo(key, summary, function)
            if function.class_qualname is not None:
                self.methods_by_name.setdefault(function.name, []).append(key)
            for call in function.calls:
                self._calls_by_name.setdefault(call.target[-1], set()).add(key)
        for qualname, klass in summary.classes.items():
            key = symbol_key(summary.module, qualname)
            self.classes[key] = ClassInfo(key, summary, klass)
        self._renames.update(
            (binding.name, local)
            for local, binding in summary.imports.items()
            if binding.name and binding.name != local
        )

    # -- name resolution ---------------------------------------------------------------------
    def resolve(self, module: str, name: Dotted, depth: int = 0) -> Symbol | None:
        """Resolve a dotted name as written in ``module`` (at module scope). Answers from the
        top (depth 0) are remembered until more files are linked in."""
        if depth == 0:
            key = (module, name)
            if key not in self._resolved:
                self._resolved[key] = self._resolve(module, name, 0)
            return self._resolved[key]
        return self._resolve(module, name, depth)

    def _resolve(self, module: str, name: Dotted, depth: int) -> Symbol | None:
        if depth > _MAX_DEPTH or not name:
            return None
        head, rest = name[0], name[1:]
        summary = self.files.get(module)
        if summary is None:
            return None
        base = self._resolve_head(summary, head, depth)
        return self._descend(base, rest, depth) if base else None

    def _resolve_head(self, summary: FileSummary, head: str, depth: int) -> Symbol | None:
        if head in summary.classes:
            return Symbol("class", symbol_key(summary.module, head))
        if head in summary.functions and head != MODULE_SCOPE:
            return Symbol("function", symbol_key(summary.module, head))
        binding = summary.imports.get(head)
        if binding is not None:
            if binding.name is None:
                return self._module_or_external(binding.module)
            return self.resolve_path(f"{binding.module}.{binding.name}", depth + 1)
        if summary.is_package and f"{summary.module}.{head}" in self.files:
            return Symbol("module", f"{summary.module}.{head}")
        for star in summary.star_imports:
            found = self.resolve(star, (head,), depth + 1)
            if found is not None:
                return found
        return None

    def _module_or_external(self, path: str) -> Symbol:
        return Symbol("module" if path in self.files else "external", path)

    def resolve_path(self, path: str, depth: int = 0) -> Symbol | None:
        """Resolve an absolute dotted path such as ``pkg.mod.Class.method``."""
        parts = tuple(path.split("."))
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            if module in self.files:
                symbol = Symbol("module", module)
                return self._descend(symbol, parts[cut:], depth)
        return Symbol("external", path)

    def _descend(self, symbol: Symbol, rest: Dotted, depth: int) -> Symbol | None:
        for index, part in enumerate(rest):
            if symbol.kind == "module":
                found = self.resolve(symbol.key, (part,), depth + 1)
                if found is None:
                    return Symbol("external", ".".join((symbol.key, *rest[index:])))
                symbol = found
            elif symbol.kind == "class":
                method = self.lookup_method(symbol.key, part)
                nested = f"{symbol.key}.{part}"
                if method is not None:
                    symbol = Symbol("function", method)
                elif nested in self.classes:
                    symbol = Symbol("class", nested)
                else:
                    return None
            elif symbol.kind == "external":
                symbol = Symbol("external", f"{symbol.key}.{part}")
            else:
                return None
        return symbol

    # -- class hierarchy ---------------------------------------------------------------------
    def bases(self, class_key: str) -> list[Symbol]:
        found = self._bases.get(class_key)
        if found is None:
            info = self.classes[class_key]
            found = self._bases[class_key] = [
                symbol
                for base in info.klass.bases
                if (symbol := self._resolve_in_scope(info.file, info.klass.qualname, base))
                is not None
            ]
        return list(found)

    def _resolve_in_scope(self, file: FileSummary, qualname: str, name: Dotted) -> Symbol | None:
        # A class nested in another class or function can name its siblings directly.
        owner = qualname.rsplit(".", 1)[0] if "." in qualname else ""
        if owner and f"{owner}.{name[0]}" in file.classes:
            return self._descend(
                Symbol("class", symbol_key(file.module, f"{owner}.{name[0]}")), name[1:], 0
            )
        return self.resolve(file.module, name)

    def mro(self, class_key: str) -> tuple[str, ...]:
        """Linearized class keys (C3 where it succeeds, depth-first otherwise). Worked out
        bases first, with a stack of its own: a hierarchy thousands of classes deep is
        valid, and must not exhaust Python's recursion limit."""
        if class_key in self._mro:
            return self._mro[class_key]
        self._mro[class_key] = (class_key,)  # guards against cycles while computing
        parents = {class_key: [b.key for b in self.bases(class_key) if b.kind == "class"]}
        stack = [class_key]
        while stack:
            key = stack[-1]
            missing = next((p for p in parents[key] if p not in self._mro), None)
            if missing is not None:
                self._mro[missing] = (missing,)
                parents[missing] = [b.key for b in self.bases(missing) if b.kind == "class"]
                stack.append(missing)
                continue
            stack.pop()
            own = parents[key]
            self._mro[key] = _c3(key, [self._mro[p] for p in own], own)
        return self._mro[class_key]

    def external_bases(self, class_key: str) -> set[str]:
        """Dotted paths of every unscanned base anywhere in the hierarchy."""
        found: set[str] = set()
        for key in self.mro(class_key):
            found.update(b.key for b in self.bases(key) if b.kind == "external")
        return found

    @cached_property
    def subclasses(self) -> dict[str, set[str]]:
        direct: dict[str, set[str]] = {}
        for key in self.classes:
            for base in self.mro(key)[1:]:
                direct.setdefault(base, set()).add(key)
        return direct

    def lookup_method(self, class_key: str, name: str, skip_self: bool = False) -> str | None:
        """First definition of ``name`` along the MRO of ``class_key``."""
        chain = self.mro(class_key)
        for key in chain[1:] if skip_self else chain:
            info = self.classes[key]
            if name in info.klass.methods:
                return symbol_key(info.file.module, f"{info.klass.qualname}.{name}")
        return None

    def dispatch(self, class_key: str, name: str) -> list[str]:
        """Every method ``obj.name()`` can land in when ``obj`` is a ``class_key`` instance:
        the MRO definition plus overrides in scanned subclasses (class-hierarchy analysis)."""
        targets = []
        inherited = self.lookup_method(class_key, name)
        if inherited:
            targets.append(inherited)
        for sub in sorted(self.subclasses.get(class_key, ())):
            info = self.classes[sub]
            if name in info.klass.methods:
                targets.append(symbol_key(info.file.module, f"{info.klass.qualname}.{name}"))
        return targets

    def is_dataloader_class(self, class_key: str) -> bool:
        if any(
            key.endswith(":DataLoader") and key.startswith("torch.utils.data")
            for key in self.mro(class_key)
        ):
            return True
        return bool(self.external_bases(class_key) & DATALOADER_PATHS)

    def is_dataloader_iterator_class(self, class_key: str) -> bool:
        names = [self.classes[k].klass.name for k in self.mro(class_key)]
        names += [path.rsplit(".", 1)[-1] for path in self.external_bases(class_key)]
        return any(marker in name for name in names for marker in DATALOADER_ITER_MARKERS)

    def class_of_type(self, info: FunctionInfo, type_: Dotted) -> str | None:
        """The scanned class a recorded type names, :data:`FOREIGN` and its path for a class of
        unscanned code, None when the type says nothing (a factory function's result, a
        builtin, a protocol such as ``Iterable``)."""
        return _typed(self.resolve(info.file.module, type_))

    def attribute_type(self, class_key: str, attribute: str) -> str | None:
        """The scanned class held in ``self.<attribute>`` of a ``class_key`` instance."""
        held = self.attribute_class(class_key, attribute)
        return None if held is None or held.startswith(FOREIGN) else held

    def attribute_class(self, class_key: str, attribute: str) -> str | None:
        """Like :meth:`attribute_type`, but :data:`FOREIGN` and its path when the attribute
        holds a class of unscanned code."""
        for key in self.mro(class_key):
            info = self.classes[key]
            type_ = info.klass.attr_types.get(attribute)
            if type_:
                return _typed(self._resolve_in_scope(info.file, info.klass.qualname, type_))
        return None

    # -- call edges --------------------------------------------------------------------------
    def edges_from(self, key: str) -> list[Edge]:
        if key not in self._edges:
            info = self.functions[key]
            calls = range(len(info.function.calls))
            self._edges[key] = [edge for index in calls for edge in self._edges_at(info, index)]
        return self._edges[key]

    def _edges_at(self, info: FunctionInfo, index: int) -> list[Edge]:
        """The edges of the ``index``-th call of a function."""
        at = (info.key, index)
        found = self._call_edges.get(at)
        if found is None:
            call = info.function.calls[index]
            landing = self.callees(info, call)
            found = self._call_edges[at] = [Edge(info.key, key, call, c) for key, c in landing]
        return found

    def edges_into(self, key: str, confidence: Confidence | None = None) -> list[Edge]:
        """Edges into function ``key`` (of at least ``confidence``, if given), callers in
        scan order.
        Only the calls that could name ``key`` are linked, not every call of the program:
        a call lands only in a function that bears its name, or that an import gives its
        name (``link/linkable.py``; ``tests/test_rule_contract.py`` checks every edge)."""
        names = self._with_renames(self.called_names(key))  # names_landing_in(key)
        found = []
        for caller in self.callers_named(names):
            info = self.functions[caller]
            found += [
                edge
                for index, call in enumerate(info.function.calls)
                if call.target[-1] in names
                for edge in self._edges_at(info, index)
                if edge.callee == key and (confidence is None or edge.confidence >= confidence)
            ]
        return found

    def callers_named(self, names: Iterable[str]) -> list[str]:
        """The functions making a call that ends in one of ``names``, in scan order."""
        callers = set().union(*(self._calls_by_name.get(name, set()) for name in names))
        return sorted(callers, key=self._scan_order.__getitem__)

    @cached_property
    def _scan_order(self) -> dict[str, int]:
        return {key: index for index, key in enumerate(self.functions)}

    def _with_renames(self, names: Iterable[str]) -> set[str]:
        """``names`` and every local name an import gives one of them, to any depth."""
        found, frontier = set(names), list(names)
        renamed = self._renamed_to
        while frontier:
            for local in renamed.get(frontier.pop(), ()):
                if local not in found:
                    found.add(local)
                    frontier.append(local)
        return found

    @cached_property
    def _renamed_to(self) -> dict[str, set[str]]:
        """The local names each imported name is given (``from m import f as g``: f -> g)."""
        index: dict[str, set[str]] = {}
        for original, local in self._renames:
            index.setdefault(original, set()).add(local)
        return index

    def calls_named(self, names: Iterable[str]) -> Iterator[tuple[FunctionInfo, CallSite]]:
        """Every call whose target ends in one of ``names`` (``self.loader.reset()`` ends in
        ``reset``), with the function that makes it; each function's calls in order."""
        for name in names:
            for key in sorted(self._calls_by_name.get(name, ()), key=self._scan_order.__getitem__):
                info = self.functions[key]
                yield from ((info, call) for call in info.function.calls if call.target[-1] == name)

    def calls_of(self, key: str, kind: CallKind = EVERY_CALL) -> list[CallSite]:
        """The calls of function ``key`` of one ``kind``, for an analysis that reads them as
        written (where they land: :meth:`edges_from`)."""
        function = self.functions[key].function
        if kind is EVERY_CALL:
            return function.calls
        return [call for call in function.calls if kind.matches(function, call)]

    def linkable_names(self, bare: bool = False) -> set[str]:
        """The names a call must end in to land in scanned code: those of its functions and
        classes, and every local name an import gives one (``from m import f as g``); with
        ``bare``, those a bare name call (``f()``) must bear: no method's. A call ending in
        another name links nowhere, whatever files are linked with these or without some
        of them."""
        files = self.files.values()
        return set().union(*(defined_names(summary, bare) for summary in files))

    def called_names(self, key: str) -> set[str]:
        """The names a call that lands in ``key`` is made by: its own, or for a constructor,
        its class's or a subclass's that inherits it (before imports rename them)."""
        info = self.functions[key]
        names = {info.function.name}
        class_key = info.class_key
        if info.function.name == "__init__" and class_key is not None:
            for holder in {class_key, *self.subclasses.get(class_key, ())}:
                names.add(self.classes[holder].klass.name)
        return names

    def names_landing_in(self, key: str) -> set[str]:
        """The names a call that lands in ``key`` can end in: :meth:`called_names`, and
        every local name an import gives one of them, to any depth."""
        return self._with_renames(self.called_names(key))

    def callees(self, info: FunctionInfo, call: CallSite) -> Iterator[tuple[str, Confidence]]:
        """Functions a call site can land in, each with how sure the link is."""
        target = call.target
        resolved = self._resolve_call(info, target)
        if resolved is not None:
            # A call that many subclass overrides could answer (a megamorphic dispatch) is only
            # sure of the definition it inherits: which override runs depends on the object.
            megamorphic = len(resolved) > MEGAMORPHIC_DISPATCH
            for index, key in enumerate(resolved):
                sure = not megamorphic or index == 0
                yield key, Confidence.HIGH if sure else Confidence.LOW
            return
        if call.is_reference or len(target) < 2:
            return
        if len(target) == 2 and fixed_set_value(info.function.loops, call.loop, target[0]):
            return  # one of the items written in the loop: its class is no guess by name
        yield from self.guess(target[-2], target[-1])

    def guess(self, receiver: str, method: str) -> list[tuple[str, Confidence]]:
        """Methods ``receiver.method()`` may land in when nothing types ``receiver``: the
        definitions of ``method`` in the classes the receiver's name agrees with best
        (:mod:`lintloader.link.receiver_names`), or, for a distinctive method name called
        on a receiver whose name says nothing (``x``, ``obj``), in the classes that define it.
        One hierarchy: MEDIUM (a guess that may carry a warning); several: LOW. A receiver
        whose name agrees with none of them is left unlinked: its name says it is another
        kind of object."""
        memo = self._guesses
        key = (receiver, method)
        if key not in memo:
            memo[key] = self._guess(receiver, method)
        return memo[key]

    def _guess(self, receiver: str, method: str) -> list[tuple[str, Confidence]]:
        owners: dict[str, str] = {}  # class key -> its definition of the method
        for key in self.methods_by_name.get(method, ()):
            owner = self.functions[key].class_key
            if owner is not None and owner in self.classes:
                owners[owner] = key
        scores = {owner: agreement(receiver, self._lineage_names(owner)) for owner in owners}
        best = max(scores.values(), default=0)
        if best > 0:
            chosen = [owner for owner, score in scores.items() if score == best]
        elif is_distinctive(method) and not words(receiver):
            chosen = list(owners)  # `x.next_epoch_itr()`: the name says nothing either way
        else:
            return []  # `self.model.load_state_dict()`: the name says it is something else
        confidence = Confidence.MEDIUM if self._one_hierarchy(chosen) else Confidence.LOW
        return [(owners[owner], confidence) for owner in chosen]

    def _lineage_names(self, class_key: str) -> list[str]:
        """The class's name and its ancestors' (scanned or not)."""
        names = [self.classes[k].klass.name for k in self.mro(class_key)]
        names += [path.rsplit(".", 1)[-1] for path in self.external_bases(class_key)]
        return names

    def _one_hierarchy(self, owners: list[str]) -> bool:
        """One of the classes is an ancestor of (or is) every other one."""
        return any(all(root in self.mro(other) for other in owners) for root in owners)

    def _resolve_call(self, info: FunctionInfo, target: Dotted) -> list[str] | None:
        """The functions a call resolves to; ``[]`` when it is known to land outside the
        scanned code (or nowhere), None when its receiver's type is unknown."""
        function, class_key = info.function, info.class_key
        head, rest = target[0], target[1:]
        if head == "super()" and class_key and len(rest) == 1:
            found = self.lookup_method(class_key, rest[0], skip_self=True)
            return [found] if found else []
        if head == function.self_name and class_key and rest:
            return self._dispatch_through(class_key, rest)
        if head in function.local_types and rest:
            typed = self.class_of_type(info, function.local_types[head])
            if typed is None:  # a factory function's result, a builtin: unknown
                return None
            return self._dispatch_through(typed, rest)
        nested = symbol_key(info.file.module, f"{function.qualname}.<locals>.{head}")
        if not rest and nested in self.functions:
            return [nested]
        symbol = self.resolve(info.file.module, target)
        if symbol is None:
            return None
        if symbol.kind == "function":
            return [symbol.key]
        if symbol.kind == "class":
            init = self.lookup_method(symbol.key, "__init__")
            return [init] if init else []
        return [] if symbol.kind == "external" else None

    def _dispatch_through(self, type_: str, rest: Dotted) -> list[str] | None:
        """``obj.a.b.method()`` with ``obj`` of type ``type_``: follow the recorded attribute
        types; an attribute nothing types (or one of an unscanned class) makes the receiver
        unknown (None). A receiver of an unscanned class lands in the scanned subclasses of it
        that define the method, or outside the scanned code ([])."""
        for attribute in rest[:-1]:
            held = None if type_.startswith(FOREIGN) else self.attribute_class(type_, attribute)
            if held is None:
                return None
            type_ = held
        if type_.startswith(FOREIGN):
            return self._external_dispatch(type_[len(FOREIGN) :], rest[-1])
        return self.dispatch(type_, rest[-1])

    def _external_dispatch(self, path: str, name: str) -> list[str]:
        """Methods ``name`` of the scanned subclasses of the unscanned class ``path``."""
        found = (self.lookup_method(key, name) for key in self._external_subclasses.get(path, ()))
        return sorted({key for key in found if key is not None})

    @cached_property
    def _external_subclasses(self) -> dict[str, set[str]]:
        """Scanned classes by the dotted path of every unscanned class they derive from."""
        index: dict[str, set[str]] = {}
        for key in self.classes:
            for path in self.external_bases(key):
                index.setdefault(path, set()).add(key)
        return index


def _typed(symbol: Symbol | None) -> str | None:
    if symbol is None or symbol.kind in ("function", "module"):
        return None
    if symbol.kind == "class":
        return symbol.key
    if symbol.key.startswith(_PROTOCOL_MODULES) or symbol.key == "object":
        return None
    return FOREIGN + symbol.key


def _c3(head: str, parent_mros: list[tuple[str, ...]], parents: list[str]) -> tuple[str, ...]:
    sequences = [list(m) for m in parent_mros] + [list(parents)]
    result = [head]
    while any(sequences):
        for sequence in sequences:
            if not sequence:
                continue
            candidate = sequence[0]
            if not any(candidate in s[1:] for s in sequences):
                break
        else:  # inconsistent hierarchy: fall back to depth-first, first occurrence wins
            seen = dict.fromkeys(result + [k for m in parent_mros for k in m])
            return tuple(seen)
        result.append(candidate)
        sequences = [s[1:] if s and s[0] == candidate else s for s in sequences]
    return tuple(result)

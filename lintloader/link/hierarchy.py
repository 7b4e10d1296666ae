"""The class hierarchy of a linked program: each class's bases, its MRO (C3), its scanned
subclasses, where a method or an attribute's type is found along it, and which classes a
recorded type names.

Worked out with stacks of its own, never by recursion that the input's depth controls: a
hierarchy thousands of classes deep is valid, and must not exhaust Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from lintloader.link.symbols import ClassInfo, FunctionInfo, Symbol, SymbolTable, symbol_key
from lintloader.summary.model import Dotted

# Prefix of a type that names a class of unscanned code: "<foreign>torch.utils.data.Dataset".
FOREIGN = "<foreign>"
# Types that say nothing about an object's class: any class can be one.
_PROTOCOL_MODULES = ("typing.", "typing_extensions.", "collections.abc.", "abc.", "builtins.")


class Hierarchy(SymbolTable):
    """The symbol table, with the classes' hierarchy worked out on demand."""

    _mro: dict[str, tuple[str, ...]]
    _bases: dict[str, list[Symbol]]
    _external: dict[str, frozenset[str]]
    _lineage_tests: dict[Callable[[ClassInfo], bool], dict[str, bool]]
    _lookups: dict[tuple[str, str, bool], str | None]  # lookup_method's answers
    _dispatches: dict[tuple[str, str], tuple[str, ...]]  # dispatch's answers

    def _forget(self) -> None:
        super()._forget()
        self._mro, self._bases, self._external, self._lineage_tests = {}, {}, {}, {}
        self._lookups, self._dispatches = {}, {}

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

    def mro(self, class_key: str) -> tuple[str, ...]:
        """Linearized class keys (C3 where it succeeds, depth-first otherwise). Worked out
        bases first (see the module docstring); a base still being worked out (a cycle)
        counts as itself alone."""
        found = self._mro.get(class_key)
        if found is not None:
            return found
        for key in self._bases_first(class_key, self._mro):
            own = self._class_bases(key)
            self._mro[key] = _c3(key, [self._mro.get(p, (p,)) for p in own], own)
        return self._mro[class_key]

    def _bases_first(self, class_key: str, done: Container[str]) -> Iterator[str]:
        """``class_key`` and its scanned ancestors that are not ``done``, each after its bases
        (the caller marks each done before the next), a cycle cut where it closes: a stack,
        no recursion."""
        if class_key in done:
            return
        visiting = {class_key}
        stack = [(class_key, iter(self._class_bases(class_key)))]
        while stack:
            key, parents = stack[-1]
            parent = next((p for p in parents if p not in done and p not in visiting), None)
            if parent is None:
                stack.pop()
                yield key
                continue
            visiting.add(parent)
            stack.append((parent, iter(self._class_bases(parent))))

    def lineage_any(self, class_key: str, test: Callable[[ClassInfo], bool]) -> bool:
        """Whether ``class_key`` or a scanned ancestor passes ``test`` (a function of the
        module's level: answers are kept per test and class, worked out bases first)."""
        memo = self._lineage_tests.setdefault(test, {})
        for key in self._bases_first(class_key, memo):
            memo[key] = test(self.classes[key]) or any(
                memo.get(p, False) for p in self._class_bases(key)
            )
        return memo[class_key]

    def _class_bases(self, class_key: str) -> list[str]:
        """The keys of the scanned classes among the bases of ``class_key``."""
        return [b.key for b in self.bases(class_key) if b.kind == "class"]

    def external_bases(self, class_key: str) -> frozenset[str]:
        """Dotted paths of every unscanned base anywhere in the hierarchy."""
        for key in self._bases_first(class_key, self._external):
            found = {b.key for b in self.bases(key) if b.kind == "external"}
            for parent in self._class_bases(key):
                found.update(self._external.get(parent, ()))
            self._external[key] = frozenset(found)
        return self._external[class_key]

    def lineage_names(self, class_key: str) -> list[str]:
        """The class's name and its ancestors' (scanned or not)."""
        names = [self.classes[k].klass.name for k in self.mro(class_key)]
        names += [path.rsplit(".", 1)[-1] for path in self.external_bases(class_key)]
        return names

    @cached_property
    def subclasses(self) -> Descendants:
        """The scanned subclasses of each class, direct or not (``.get(key, default)``)."""
        direct: dict[str, list[str]] = {}
        for key in self.classes:
            for base in dict.fromkeys(self._class_bases(key)):
                direct.setdefault(base, []).append(key)
        return Descendants(direct)

    @cached_property
    def _external_subclasses(self) -> dict[str, set[str]]:
        """Scanned classes by the dotted path of every unscanned class they derive from."""
        index: dict[str, set[str]] = {}
        for key in self.classes:
            for path in self.external_bases(key):
                index.setdefault(path, set()).add(key)
        return index

    def lookup_method(self, class_key: str, name: str, skip_self: bool = False) -> str | None:
        """First definition of ``name`` along the MRO of ``class_key``."""
        asked = (class_key, name, skip_self)
        if asked not in self._lookups:
            self._lookups[asked] = self._lookup_method(class_key, name, skip_self)
        return self._lookups[asked]

    def _lookup_method(self, class_key: str, name: str, skip_self: bool) -> str | None:
        chain = self.mro(class_key)
        for key in chain[1:] if skip_self else chain:
            info = self.classes[key]
            if name in info.klass.methods:
                return symbol_key(info.file.module, f"{info.klass.qualname}.{name}")
        return None

    def dispatch(self, class_key: str, name: str) -> list[str]:
        """Every method ``obj.name()`` can land in when ``obj`` is a ``class_key`` instance:
        the MRO definition plus overrides in scanned subclasses (class-hierarchy analysis)."""
        asked = (class_key, name)
        if asked not in self._dispatches:
            self._dispatches[asked] = tuple(self._dispatch(class_key, name))
        return list(self._dispatches[asked])

    def _dispatch(self, class_key: str, name: str) -> list[str]:
        targets = []
        inherited = self.lookup_method(class_key, name)
        if inherited:
            targets.append(inherited)
        for sub in sorted(self.subclasses.get(class_key, ())):
            info = self.classes[sub]
            if name in info.klass.methods:
                targets.append(symbol_key(info.file.module, f"{info.klass.qualname}.{name}"))
        return targets

    def _external_dispatch(self, path: str, name: str) -> list[str]:
        """Methods ``name`` of the scanned subclasses of the unscanned class ``path``."""
        found = (self.lookup_method(key, name) for key in self._external_subclasses.get(path, ()))
        return sorted({key for key in found if key is not None})

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

    def one_hierarchy(self, owners: list[str]) -> bool:
        """One of the classes is an ancestor of (or is) every other one."""
        return any(all(root in self.mro(other) for other in owners) for root in owners)


@dataclass(eq=False, repr=False)
class Descendants:
    """Each class's scanned subclasses, direct or not, worked out when first asked for from
    the direct ones (a stack): a chain N classes deep costs what is asked, not N squared."""

    direct: dict[str, list[str]]
    known: dict[str, frozenset[str]] = field(default_factory=dict)

    def get(self, class_key: str, default: Collection[str] = ()) -> Collection[str]:
        found = self.known.get(class_key)
        if found is None:
            seen: set[str] = set()
            stack = list(self.direct.get(class_key, ()))
            while stack:
                key = stack.pop()
                if key not in seen:
                    seen.add(key)
                    stack += self.direct.get(key, ())
            seen.discard(class_key)  # a cycle back to it
            found = self.known[class_key] = frozenset(seen)
        return found or default


def _typed(symbol: Symbol | None) -> str | None:
    if symbol is None or symbol.kind in ("function", "module"):
        return None
    if symbol.kind == "class":
        return symbol.key
    if symbol.key.startswith(_PROTOCOL_MODULES) or symbol.key == "object":
        return None
    return FOREIGN + symbol.key


def _c3(head: str, parent_mros: list[tuple[str, ...]], parents: list[str]) -> tuple[str, ...]:
    """C3 of ``head`` from its parents' MROs, in time linear in their total length: each
    sequence is read through a cursor, and a candidate is good while no sequence holds it
    past its cursor (a count per class). One parent: its MRO after ``head``."""
    if len(parents) == 1 and parent_mros[0][:1] == (parents[0],):
        return (head, *parent_mros[0])
    sequences = [*parent_mros, tuple(parents)]
    in_tails: dict[str, int] = {}
    for sequence in sequences:
        for key in sequence[1:]:
            in_tails[key] = in_tails.get(key, 0) + 1
    cursors = [0] * len(sequences)
    result = [head]
    while True:
        candidate = None
        for index, sequence in enumerate(sequences):
            if cursors[index] < len(sequence) and not in_tails.get(sequence[cursors[index]]):
                candidate = sequence[cursors[index]]
                break
        if candidate is None:
            break
        result.append(candidate)
        for index, sequence in enumerate(sequences):
            if cursors[index] < len(sequence) and sequence[cursors[index]] == candidate:
                cursors[index] += 1
                if cursors[index] < len(sequence):
                    in_tails[sequence[cursors[index]]] -= 1
    if any(cursor < len(sequence) for cursor, sequence in zip(cursors, sequences, strict=True)):
        # inconsistent hierarchy: fall back to depth-first, first occurrence wins
        return tuple(dict.fromkeys(result + [k for m in parent_mros for k in m]))
    return tuple(result)

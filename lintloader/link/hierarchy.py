"""The class hierarchy of a linked program: each class's bases, its MRO (C3), its scanned
subclasses, where a method or an attribute's type is found along it, and which classes a
recorded type names.

Worked out with stacks of its own, never by recursion that the input's depth controls: a
hierarchy thousands of classes deep is valid, and must not exhaust Python's recursion limit.
"""

from __future__ import annotations

from functools import cached_property

from lintloader.link.symbols import FunctionInfo, Symbol, SymbolTable, symbol_key
from lintloader.summary.model import Dotted

# Prefix of a type that names a class of unscanned code: "<foreign>torch.utils.data.Dataset".
FOREIGN = "<foreign>"
# Types that say nothing about an object's class: any class can be one.
_PROTOCOL_MODULES = ("typing.", "typing_extensions.", "collections.abc.", "abc.", "builtins.")


class Hierarchy(SymbolTable):
    """The symbol table, with the classes' hierarchy worked out on demand."""

    _mro: dict[str, tuple[str, ...]]
    _bases: dict[str, list[Symbol]]

    def _forget(self) -> None:
        super()._forget()
        self._mro, self._bases = {}, {}

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
        bases first, with a stack of its own (see the module docstring)."""
        if class_key in self._mro:
            return self._mro[class_key]
        self._mro[class_key] = (class_key,)  # guards against cycles while computing
        parents = {class_key: self._class_bases(class_key)}
        stack = [class_key]
        while stack:
            key = stack[-1]
            missing = next((p for p in parents[key] if p not in self._mro), None)
            if missing is not None:
                self._mro[missing] = (missing,)
                parents[missing] = self._class_bases(missing)
                stack.append(missing)
                continue
            stack.pop()
            own = parents[key]
            self._mro[key] = _c3(key, [self._mro[p] for p in own], own)
        return self._mro[class_key]

    def _class_bases(self, class_key: str) -> list[str]:
        """The keys of the scanned classes among the bases of ``class_key``."""
        return [b.key for b in self.bases(class_key) if b.kind == "class"]

    def external_bases(self, class_key: str) -> set[str]:
        """Dotted paths of every unscanned base anywhere in the hierarchy."""
        found: set[str] = set()
        for key in self.mro(class_key):
            found.update(b.key for b in self.bases(key) if b.kind == "external")
        return found

    def lineage_names(self, class_key: str) -> list[str]:
        """The class's name and its ancestors' (scanned or not)."""
        names = [self.classes[k].klass.name for k in self.mro(class_key)]
        names += [path.rsplit(".", 1)[-1] for path in self.external_bases(class_key)]
        return names

    @cached_property
    def subclasses(self) -> dict[str, set[str]]:
        direct: dict[str, set[str]] = {}
        for key in self.classes:
            for base in self.mro(key)[1:]:
                direct.setdefault(base, set()).add(key)
        return direct

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

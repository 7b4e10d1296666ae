"""The symbol table of a linked program: its modules, functions and classes by key, the calls
each function makes by the name they end in, and how a dotted name resolves.

Names are resolved the way Python would at import time, without importing anything: through
``import``/``from`` bindings (relative ones already made absolute by the summarizer), re-exports
in ``__init__`` modules and star imports. Symbols are keyed ``module:qualname``. A name that
goes through a class (``Class.method``) is looked up along its MRO, which the class hierarchy
answers (``link/hierarchy.py``).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Iterable
from functools import cached_property
from typing import NamedTuple

from lintloader.link.folder_modules import FolderFiles, own_name, package_root
from lintloader.link.linkable import defined_names
from lintloader.summary.model import (
    MODULE_SCOPE,
    ClassSummary,
    Dotted,
    FileSummary,
    FunctionSummary,
)

_MAX_DEPTH = 12  # import-chain hops followed before giving up (cycles, long re-export chains)


def symbol_key(module: str, qualname: str) -> str:
    return f"{module}:{qualname}"


class Symbol(NamedTuple):
    """What a name resolves to: ``kind`` is function, class, module or external."""

    kind: str
    key: str  # "module:qualname" for function/class, dotted path for module/external


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


class SymbolTable(ABC):
    """What the linked files define, by key and by name, and name resolution over them.
    Everything worked out from the files is forgotten when more are linked (:meth:`_forget`)."""

    _resolved: dict[tuple[str, Dotted], Symbol | None]  # resolve() at depth 0

    def __init__(self) -> None:
        self.files: dict[str, FileSummary] = {}
        self.functions: dict[str, FunctionInfo] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.methods_by_name: dict[str, list[str]] = {}
        # by every name calls end in (``self.loader.reset()`` -> reset): the functions making
        # such calls, in scan order, each with the indexes of those calls (in order)
        self._calls_by_name: dict[str, dict[str, list[int]]] = {}
        self._renames: set[tuple[str, str]] = set()
        # a module several projects in the tree define: its key in each (package root -> key)
        self._copies: dict[str, dict[str, str]] = {}
        # each linked file's package root, by its module key: a file's alone, kept over _forget
        self._roots: dict[str, str] = {}
        self._forget()

    def _forget(self) -> None:
        """Forget what was worked out from the files linked so far (each layer its own)."""
        self._resolved = {}
        for klass in type(self).__mro__:  # worked out once from all the files
            for name, value in vars(klass).items():
                if isinstance(value, cached_property):
                    self.__dict__.pop(name, None)

    def _add(self, summary: FileSummary) -> None:
        if summary.module in self.files:
            copy = self._copy(summary)
            if copy is None:
                return
            summary = copy
        self.files[summary.module] = summary
        for qualname, function in summary.functions.items():
            key = symbol_key(summary.module, qualname)
            self.functions[key] = FunctionInfo(key, summary, function)
            if function.class_qualname is not None:
                self.methods_by_name.setdefault(function.name, []).append(key)
            self._index_calls(key, function)
        for qualname, klass in summary.classes.items():
            key = symbol_key(summary.module, qualname)
            self.classes[key] = ClassInfo(key, summary, klass)
        self._renames.update(
            (binding.name, local)
            for local, binding in summary.imports.items()
            if binding.name and binding.name != local
        )

    def _index_calls(self, key: str, function: FunctionSummary) -> None:
        """Function ``key``'s calls in the index by the name they end in."""
        named: dict[str, list[int]] = {}
        for index, call in enumerate(function.calls):
            named.setdefault(call.target[-1], []).append(index)
        for name, indexes in named.items():
            self._calls_by_name.setdefault(name, {})[key] = indexes

    def _copy(self, summary: FileSummary) -> FileSummary | None:
        """A file claiming a module another linked file has: from another package root (two
        projects in one tree, each with ``src/pkg/``), the module of that project, linked as
        ``module@@N``; from the same root (the file twice), nothing."""
        module = summary.module
        first = self.files[module]
        copies = self._copies.setdefault(module, {package_root(first): module})
        root = package_root(summary)
        if root in copies:
            return None
        copies[root] = f"{module}@@{len(copies) + 1}"
        return dataclasses.replace(summary, module=copies[root])

    def _in_project(self, module: str, importer: FileSummary | None) -> str:
        """``module`` as the project of ``importer`` has it: its own copy when several
        projects in the tree define the module."""
        copies = self._copies.get(module)
        if not copies or importer is None:
            return module
        return copies.get(self._root_of(importer), module)

    def _root_of(self, importer: FileSummary) -> str:
        """The package root of a linked file (``folder_modules.package_root``), worked out
        once: every look-up through a module several projects define asks it."""
        if self.files.get(importer.module) is not importer:
            return package_root(importer)  # not linked (never so far): not kept
        root = self._roots.get(importer.module)
        if root is None:
            root = self._roots[importer.module] = package_root(importer)
        return root

    @abstractmethod
    def lookup_method(self, class_key: str, name: str, skip_self: bool = False) -> str | None:
        """First definition of ``name`` along the MRO of ``class_key`` (``link/hierarchy.py``)."""

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
        return self._descend(base, rest, depth, summary) if base else None

    def _resolve_head(self, summary: FileSummary, head: str, depth: int) -> Symbol | None:
        if head in summary.classes:
            return Symbol("class", symbol_key(summary.module, head))
        if head in summary.functions and head != MODULE_SCOPE:
            return Symbol("function", symbol_key(summary.module, head))
        binding = summary.imports.get(head)
        if binding is not None:
            if binding.name is None:
                return self._module_or_external(binding.module, summary)
            return self.resolve_path(f"{binding.module}.{binding.name}", depth + 1, summary)
        submodule = self._in_project(f"{own_name(summary.module)}.{head}", summary)
        if summary.is_package and submodule in self.files:
            return Symbol("module", submodule)
        for star in summary.star_imports:
            star = self._in_project(star, summary)
            star = star if star in self.files else self._folder_module(star, summary) or star
            found = self.resolve(star, (head,), depth + 1)
            if found is not None:
                return found
        return None

    def _module_or_external(self, path: str, importer: FileSummary | None = None) -> Symbol:
        path = self._in_project(path, importer)
        if path in self.files:
            return Symbol("module", path)
        folder = self._folder_module(path, importer)
        return Symbol("module", folder) if folder else Symbol("external", path)

    def resolve_path(
        self, path: str, depth: int = 0, importer: FileSummary | None = None
    ) -> Symbol | None:
        """Resolve an absolute dotted path such as ``pkg.mod.Class.method`` (as written in
        ``importer``, which may name a module through folders that are no package)."""
        parts = tuple(path.split("."))
        for cut in range(len(parts), 0, -1):
            module = self._in_project(".".join(parts[:cut]), importer)
            if module in self.files:
                symbol = Symbol("module", module)
                return self._descend(symbol, parts[cut:], depth)
        for cut in range(len(parts), 1, -1) if importer is not None else ():
            folder = self._folder_module(".".join(parts[:cut]), importer)
            if folder is not None:
                return self._descend(Symbol("module", folder), parts[cut:], depth)
        return Symbol("external", path)

    def _folder_module(self, dotted: str, importer: FileSummary | None) -> str | None:
        """The linked module ``importer`` imports as ``dotted`` through folders that are no
        package (``link/folder_modules.py``), if any."""
        if importer is None:
            return None
        file = self._folder_files.nearest(dotted, importer.path)
        return file.module if file is not None else None

    @cached_property
    def _folder_files(self) -> FolderFiles[FileSummary]:
        return FolderFiles(self.files.values())

    def _descend(
        self, symbol: Symbol, rest: Dotted, depth: int, importer: FileSummary | None = None
    ) -> Symbol | None:
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
                dotted = f"{symbol.key}.{part}"
                folder = self._folder_module(dotted, importer)  # import models; models.net
                symbol = Symbol("module", folder) if folder else Symbol("external", dotted)
            else:
                return None
        return symbol

    def _resolve_in_scope(self, file: FileSummary, qualname: str, name: Dotted) -> Symbol | None:
        """``name`` as written in class ``qualname`` of ``file``: a class nested in another
        class or function can name its siblings directly."""
        owner = qualname.rsplit(".", 1)[0] if "." in qualname else ""
        if owner and f"{owner}.{name[0]}" in file.classes:
            return self._descend(
                Symbol("class", symbol_key(file.module, f"{owner}.{name[0]}")), name[1:], 0
            )
        return self.resolve(file.module, name)

    # -- functions by the names of their calls -----------------------------------------------
    def callers_named(self, names: Iterable[str]) -> list[str]:
        """The functions making a call that ends in one of ``names``, in scan order."""
        return [caller for caller, _ in self._named_calls(names)]

    def _named_calls(self, names: Iterable[str]) -> list[tuple[str, list[int]]]:
        """:meth:`callers_named`, each with the indexes of its calls that end in one of
        ``names``, in order (read them, not the lists: they are the index's own)."""
        asked = dict.fromkeys(names)  # each name once
        by_name = [found for name in asked if (found := self._calls_by_name.get(name))]
        if len(by_name) == 1:  # its callers were added in scan order (_add: linked in turn)
            return list(by_name[0].items())
        order = self._scan_order.__getitem__
        merged: dict[str, list[int]] = {}
        for calls in by_name:
            for caller, indexes in calls.items():
                merged.setdefault(caller, []).extend(indexes)
        return [(caller, sorted(merged[caller])) for caller in sorted(merged, key=order)]

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

    def linkable_names(self, bare: bool = False) -> set[str]:
        """The names a call must end in to land in scanned code: those of its functions and
        classes, and every local name an import gives one (``from m import f as g``); with
        ``bare``, those a bare name call (``f()``) must bear: no method's. A call ending in
        another name links nowhere, whatever files are linked with these or without some
        of them."""
        files = self.files.values()
        return set().union(*(defined_names(summary, bare) for summary in files))

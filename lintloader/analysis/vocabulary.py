"""A team's own resets, roots and loader factories, declared in ``[tool.lintloader]``
(``extend-resets``, ``extend-roots``, ``extend-loaders``; issue 29, shape 10): dotted paths of
functions or methods (``mypkg.data.Loader.restart``) that no analysis can know.

* a reset: calling it shuts the worker pool down (a sink of LL101-LL105);
* a root: it runs once per epoch (an LL102 root, and an LL202 "per-epoch hook");
* a loader: it returns a DataLoader with workers (a construction for LL202).

A declared name is resolved in the linked program; one whose module is not linked means
nothing for this run (a scan of a few files).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the analysis context imports this module on the replay path
    from lintloader.link.program import Program

DECLARED_RESET = "declared-reset"  # the kind of sink a declared reset is


@dataclass(frozen=True)
class Vocabulary:
    resets: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()
    loaders: tuple[str, ...] = ()

    @property
    def modules(self) -> frozenset[str]:
        """Every declared path, for selection to parse their modules."""
        return frozenset((*self.resets, *self.roots, *self.loaders))


def function_keys(program: Program, paths: tuple[str, ...]) -> list[str]:
    """The program keys of the declared functions that the program defines."""
    found: list[str] = []
    for path in paths:
        symbol = program.resolve_path(path)
        if symbol is not None and symbol.kind == "function" and symbol.key in program.functions:
            found.append(symbol.key)
    return found


def unknown_names(program: Program, vocabulary: Vocabulary) -> list[str]:
    """One line for each declared name whose module the program linked but which names no
    function or method there (a typo); a name of a module not linked says nothing."""
    found: list[str] = []
    for key, paths in (
        ("extend-resets", vocabulary.resets),
        ("extend-roots", vocabulary.roots),
        ("extend-loaders", vocabulary.loaders),
    ):
        for path in paths:
            module = _linked_module(program, path)
            if module is None:
                continue
            symbol = program.resolve_path(path)
            if symbol is None or symbol.kind != "function" or symbol.key not in program.functions:
                found.append(f"{key}: {path!r} names no function or method of module {module}")
    return found


def _linked_module(program: Program, path: str) -> str | None:
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        if module in program.files:
            return module
    return None

"""Summarize per definition: walk the bodies of only the functions a demand round can name.

A round takes a file because its bytes hold the tokens the round asked for (``select/``).
Those tokens are names: a call, a definition or a sink can only be named by a query of the
round when its source holds one of them (a function's own name is in its span). So the
summary of a file taken for some tokens walks everything but the bodies of its functions
(at module level, and the methods of its classes) whose span holds none of the tokens asked
so far: of those, the walk sees the signature and decorators and, of a method, the
statements that bind an attribute of the instance (what the class's summary records). Every
function, class, method and base the linker counts (the guesses by name of
``link/calls.py``) is still there; a function that defines a class is walked whole.

The summary records each such function's lines and whether its body was walked
(``FileSummary.narrowed``): a later round whose tokens fall in a cut one summarizes the
file again (``select/rounds.py``), and a summary read back is valid for a question only if
it walks exactly the functions the question's tokens pick (:func:`fits`).

Nesting deeper than the walk allows is still found in a narrow body (:func:`check_depth`):
such a file is an LL000 finding, whichever of its definitions a round needs.
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TypeVar

from lintloader.limits import MAX_NESTING
from lintloader.scan.read.tokens import WORD_MARK
from lintloader.summary.model import MODULE_SCOPE, FileSummary, Narrowed
from lintloader.summary.source_text import split_lines
from lintloader.summary.walk import _SCALARS as SCALARS
from lintloader.summary.walk import LEAVES, TooDeep

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
Function = ast.FunctionDef | ast.AsyncFunctionDef


def first_line(node: ast.stmt) -> int:
    """The first line of a definition: its first decorator's, else its own."""
    lines: list[int] = [node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))]
    return min(lines)


@contextmanager
def narrowed(
    tree: ast.Module, walked: Callable[[int, int], bool], check: bool = True
) -> Iterator[Narrowed]:
    """Within the ``with``, the functions of ``tree`` (at module level, and the methods of its
    classes) for whose span (first line, last line) ``walked`` says no have a cut body
    (:func:`_cut_body`); yields each such function's (first line, last line, walked whole).
    The bodies are put back on leaving, so that what reads the tree after the walk reads all
    of it. Raises :class:`TooDeep` when a cut body nests deeper than the walk allows (unless
    not ``check``: a summary that grows was checked when made)."""
    found: list[tuple[int, int, bool]] = []
    cut: list[tuple[Function, list[ast.stmt]]] = []
    for node, depth, method in _functions(tree.body, 1, False):
        first, last = first_line(node), node.end_lineno or node.lineno
        whole = walked(first, last)
        body = None if whole else _cut_body(node, method)
        if body is None and not whole:
            continue  # a class inside: walked whole, whatever the tokens
        found.append((first, last, whole))
        if body is not None:
            if check:
                check_depth(node.body, depth + 1)
            cut.append((node, node.body))
            node.body = body
    try:
        yield tuple(found)
    finally:
        for node, body in cut:
            node.body = body


def holding(source: bytes, texts: Sequence[bytes]) -> Callable[[int, int], bool]:
    """Whether lines first..last (1-based, inclusive) of ``source`` hold one of ``texts``
    (tokens of ``scan/read/tokens.py``: plain or whole-word), worked out in one search of the
    file for all of them (for :func:`narrowed`)."""
    hits = _lines_holding(source, texts)
    return lambda first, last: bisect_left(hits, first) < bisect_right(hits, last)


def _lines_holding(source: bytes, texts: Sequence[bytes]) -> list[int]:
    """The numbers of the lines where one of ``texts`` starts, ascending (no token holds a
    line break)."""
    starts, offset = [], 0
    for line in split_lines(source):
        starts.append(offset)
        offset += len(line)
    found = set()
    for text in texts:
        word = text.startswith(WORD_MARK)
        needle = text[len(WORD_MARK) :] if word else text
        at = source.find(needle)
        while at != -1:
            if not word or _whole(source, at, len(needle)):
                found.add(bisect_right(starts, at))
            at = source.find(needle, at + 1)
    return sorted(found)


def _whole(data: bytes, start: int, size: int) -> bool:
    """Whether ``data[start:start + size]`` has no identifier byte (``\\w``) right before
    or after it, as ``tokens.whole_word_in`` reads a whole-word token."""
    before, after = data[start - 1 : start] if start else b"", data[start + size : start + size + 1]
    return not any(b.isalnum() or b == b"_" for b in (before, after))


def _functions(
    body: Sequence[ast.stmt], depth: int, in_class: bool
) -> Iterator[tuple[Function, int, bool]]:
    """The functions of a module or class ``body`` (a class's nested classes' too), each with
    the levels the walk has open around it (``depth``: around ``body``'s statements) and
    whether it is a method."""
    for node in body:
        if isinstance(node, _FUNCTIONS):
            yield node, depth, in_class
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node.body, depth + 1, True)


def _cut_body(node: Function, method: bool) -> list[ast.stmt] | None:
    """What the walk visits of a function no token names: what the summary records for the
    whole file from inside it, in order: its imports (at any depth: ``summary.imports`` is
    the file's) and, of a method, the statements of its own body that bind an attribute of
    the instance (``self.loader = None``, ``self.x: T = make()``: its class's summary records
    them); else a ``pass``. None when a class is defined in it (its methods are names the
    linker counts)."""
    kept: list[ast.stmt] = []
    positional = [*node.args.posonlyargs, *node.args.args]
    self_name = positional[0].arg if method and positional else None
    stack: list[tuple[ast.stmt, bool]] = [(s, True) for s in reversed(node.body)]
    while stack:
        statement, own = stack.pop()
        if isinstance(statement, ast.ClassDef):
            return None
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            kept.append(statement)
            continue
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            if own and self_name and _binds_attribute(statement, self_name):
                kept.append(statement)
            continue
        own = own and not isinstance(statement, _FUNCTIONS)  # a nested def binds its own
        stack.extend((child, own) for child in reversed(list(_child_statements(statement))))
    return kept or [ast.copy_location(ast.Pass(), node.body[0])]


def _binds_attribute(statement: ast.Assign | ast.AnnAssign, self_name: str) -> bool:
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return any(
        isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == self_name
        for t in targets
    )


def _child_statements(statement: ast.stmt) -> Iterator[ast.stmt]:
    """The statements directly inside a compound statement (a nested function's too)."""
    for name in ("body", "orelse", "finalbody", "handlers", "cases"):
        for child in getattr(statement, name, ()) or ():
            if isinstance(child, ast.stmt):
                yield child
            elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                yield from child.body


def merged(summary: FileSummary, grown: FileSummary, wanted: set[tuple[int, int]]) -> FileSummary:
    """``summary`` with the functions whose span is in ``wanted`` (cut in it) as ``grown``
    walked them, their nested functions right after each, as one walk puts them; the rest
    (imports, classes, what the cut bodies record for the file) is the same in both."""
    tops = {
        name
        for name, function in grown.functions.items()
        if name != MODULE_SCOPE
        and "<locals>" not in name
        and any(first <= function.line <= last for first, last in wanted)
    }
    functions = _spliced(summary.functions, grown.functions, tops)
    loaders = summary.loaders
    if loaders is not None and grown.loaders is not None:
        facts = _spliced(loaders.functions, grown.loaders.functions, tops)
        loaders = replace(loaders, functions=facts)
    flags = tuple((f, last, whole or (f, last) in wanted) for f, last, whole in summary.narrowed)
    return replace(summary, functions=functions, loaders=loaders, narrowed=flags)


Entry = TypeVar("Entry")


def _spliced(old: dict[str, Entry], new: dict[str, Entry], tops: set[str]) -> dict[str, Entry]:
    """``old`` with each key of ``tops`` taken from ``new``, followed by its nested ones."""
    spliced: dict[str, Entry] = {}
    for name, entry in old.items():
        if name not in tops:
            spliced[name] = entry
            continue
        spliced[name] = new[name]
        inside = name + ".<locals>."
        spliced.update((key, value) for key, value in new.items() if key.startswith(inside))
    return spliced


def check_depth(nodes: Sequence[ast.AST], depth: int) -> None:
    """Raise :class:`TooDeep` when ``nodes``, with ``depth`` levels open above them, nest
    deeper than :data:`MAX_NESTING` levels as the walk counts them (``a and b and c``: one
    level per operand; names, constants and operators are no level: ``walk.LEAVES``)."""
    stack: list[tuple[ast.AST, int]] = [(node, depth) for node in nodes]
    pop, push = stack.pop, stack.append
    fields: dict[type, tuple[str, ...]] = {}  # per node class: the fields that may hold one
    while stack:
        node, depth = pop()
        kind = type(node)
        depth += len(node.values) if kind is ast.BoolOp else 1  # type: ignore[attr-defined]
        if depth > MAX_NESTING:
            raise TooDeep
        names = fields.get(kind)
        if names is None:
            names = fields[kind] = tuple(f for f in kind._fields if f not in SCALARS)
        for name in names:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST) and not isinstance(item, LEAVES):
                        push((item, depth))
            elif isinstance(value, ast.AST) and not isinstance(value, LEAVES):
                push((value, depth))


def fits(summary: FileSummary, source: bytes, texts: Sequence[bytes] | None) -> bool:
    """Whether ``summary`` (read back from a cache) walks what a summary of ``source`` for
    ``texts`` walks: everything (``texts`` None), or exactly the top-level definitions that
    hold one of them."""
    if not summary.ok:
        return True  # what cannot be read (or walked) is so whatever a round asks
    if texts is None:
        return all(whole for _, _, whole in summary.narrowed)
    if not summary.narrowed:  # made whole: fits only a file with no function to leave out
        return all(name == MODULE_SCOPE or "<locals>" in name for name in summary.functions)
    holds = holding(source, texts)
    return all(holds(first, last) == whole for first, last, whole in summary.narrowed)


def grows(summary: FileSummary, source: bytes, texts: Sequence[bytes]) -> bool:
    """Whether a function whose body ``summary`` cut holds one of ``texts``."""
    narrow_ones = [(first, last) for first, last, whole in summary.narrowed if not whole]
    if not narrow_ones:
        return False
    holds = holding(source, texts)
    return any(holds(first, last) for first, last in narrow_ones)

"""The ``ast`` tree of lowered source, turned into the tree a new enough interpreter builds.

:mod:`lintloader.summary.lowering` keeps every character column, but ``ast`` counts columns in
UTF-8 bytes, and a blanked ``é`` is one byte shorter than it was: columns on such lines are
mapped back to the original bytes first. Then the lowered constructs are put back, found by
position: a lowered string's tuple becomes a ``JoinedStr`` of ``FormattedValue`` nodes (its
elements are their values, in order), the assignment ``_=   X[T, B, D], V`` a
``TypeAlias`` with ``TypeVar``/``ParamSpec``/``TypeVarTuple`` parameters, and a ``Try`` that was
``except*`` a ``TryStar``. Where the running ``ast`` has no such class (3.11 has no
``TypeAlias``; 3.12's ``TypeVar`` has no ``default_value``), a stand-in with the same name and
fields is used: the summary visitors dispatch on the class name and walk ``_fields``.

The summary reads every expression and statement node; those get exact positions. Only the
positions of the parts of an f-string (``Constant``, ``FormattedValue``) are approximated: no
visitor reads them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from typing import Any, cast

from lintloader.summary.lowering import (
    AliasShape,
    Lowered,
    ParamShape,
    Part,
    Position,
    StringShape,
    Text,
)
from lintloader.summary.source_text import split_lines


def _node_class(name: str, base: type[ast.AST], fields: tuple[str, ...]) -> Any:
    """The class ``ast`` has by this name, else one made with these fields (typed Any: the
    running Python's stubs may not know it)."""
    real = getattr(ast, name, None)
    if isinstance(real, type) and issubclass(real, ast.AST) and set(fields) <= set(real._fields):
        return real
    return type(name, (base,), {"_fields": fields, "__module__": __name__})


_param_base = getattr(ast, "type_param", ast.AST)
TypeAlias = _node_class("TypeAlias", ast.stmt, ("name", "type_params", "value"))
TryStar = _node_class("TryStar", ast.stmt, ("body", "handlers", "orelse", "finalbody"))
TypeVar = _node_class("TypeVar", _param_base, ("name", "bound", "default_value"))
TypeVarTuple = _node_class("TypeVarTuple", _param_base, ("name", "default_value"))
ParamSpec = _node_class("ParamSpec", _param_base, ("name", "default_value"))
_PARAMS = {"TypeVar": TypeVar, "TypeVarTuple": TypeVarTuple, "ParamSpec": ParamSpec}


class RestoreError(Exception):
    """The lowered tree does not have the shape the lowering recorded (a bug, reported)."""


def restore(tree: ast.Module, lowered: Lowered, original: Sequence[bytes]) -> ast.Module:
    """Map ``tree``'s columns to ``original``'s bytes and put the lowered constructs back."""
    _map_columns(tree, split_lines(lowered.text.encode("utf-8", "surrogatepass")), original)
    restorer = _Restorer(lowered, _ByteColumns(original))
    restored: ast.Module = restorer.visit(tree)
    restorer.check_done()
    return restored


def _map_columns(tree: ast.AST, lowered: list[bytes], original: Sequence[bytes]) -> None:
    # blanking writes ASCII only: a line is shorter in bytes iff a wider character was blanked
    changed = {
        number
        for number, (new, old) in enumerate(zip(lowered, original, strict=True), start=1)
        if len(new) != len(old)
    }
    if not changed:
        return

    def mapped(line: int, column: int) -> int:
        characters = len(lowered[line - 1][:column].decode("utf-8", "surrogatepass"))
        return len(original[line - 1].decode("utf-8", "surrogatepass")[:characters].encode())

    for node in ast.walk(tree):
        line = getattr(node, "lineno", None)
        if line in changed:
            node.col_offset = mapped(line, node.col_offset)  # type: ignore[attr-defined]
        end = getattr(node, "end_lineno", None)
        if end in changed and node.end_col_offset is not None:  # type: ignore[attr-defined]
            node.end_col_offset = mapped(end, node.end_col_offset)  # type: ignore[attr-defined]


class _ByteColumns:
    """libcst's character positions as ``ast`` positions (UTF-8 byte columns)."""

    def __init__(self, lines: Sequence[bytes]) -> None:
        self.lines = lines

    def __call__(self, position: Position) -> tuple[int, int]:
        line, column = position
        raw = self.lines[line - 1]
        if raw.isascii():
            return line, column
        return line, len(raw.decode("utf-8", "surrogatepass")[:column].encode())

    def place(self, node: ast.AST, start: Position, end: Position) -> ast.AST:
        node.lineno, node.col_offset = self(start)  # type: ignore[attr-defined]
        node.end_lineno, node.end_col_offset = self(end)  # type: ignore[attr-defined]
        return node


def _span(node: ast.AST) -> tuple[int, int, int, int]:
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


class _Restorer(ast.NodeTransformer):
    def __init__(self, lowered: Lowered, at: _ByteColumns) -> None:
        self.at = at
        self.strings: dict[tuple[int, int, int, int], StringShape] = {
            (*at(s.start), *at(s.end)): s for s in lowered.strings
        }
        self.aliases: dict[tuple[int, int], AliasShape] = {at(a.start): a for a in lowered.aliases}
        self.try_stars = {at(p) for p in lowered.try_stars}

    def visit_Tuple(self, node: ast.Tuple) -> ast.AST:
        self.generic_visit(node)
        shape = self.strings.pop(_span(node), None)
        if shape is None:
            return node
        elements = iter(node.elts)
        joined = ast.JoinedStr(values=self._values(shape.parts, elements))
        if next(elements, None) is not None:
            raise RestoreError(f"a lowered string at {shape.start} has more elements than fields")
        return ast.copy_location(joined, node)

    def _values(self, parts: tuple[Part, ...], elements: Iterator[ast.expr]) -> list[ast.expr]:
        values: list[ast.expr] = []
        for part in parts:
            if isinstance(part, Text):
                self._text(values, part.value, part.start, part.end)
                continue
            if part.debug:
                self._text(values, part.debug, part.start, part.end)
            value = next(elements, None)
            if value is None:
                raise RestoreError(f"a lowered string at {part.start} lacks a field's value")
            spec = None
            if part.spec is not None:
                spec = ast.JoinedStr(values=self._values(part.spec, elements))
                self.at.place(spec, part.spec[0].start if part.spec else part.end, part.end)
            formatted = ast.FormattedValue(value, part.conversion, spec)
            values.append(self.at.place(formatted, part.start, part.end))  # type: ignore[arg-type]
        return values

    def _text(self, values: list[ast.expr], text: str, start: Position, end: Position) -> None:
        if not text:
            return
        last = values[-1] if values else None
        if isinstance(last, ast.Constant):  # adjacent literal parts are one constant
            last.value = cast(str, last.value) + text
            last.end_lineno, last.end_col_offset = self.at(end)
        else:
            values.append(self.at.place(ast.Constant(value=text), start, end))  # type: ignore[arg-type]

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        self.generic_visit(node)
        shape = self.aliases.pop((node.lineno, node.col_offset), None)
        if shape is None:
            return node
        if not isinstance(node.value, ast.Tuple) or len(node.value.elts) != 2:
            raise RestoreError(f"the type alias at {shape.start} was not lowered to `_= X, V`")
        target, value = node.value.elts
        elements: list[ast.expr] = []
        if isinstance(target, ast.Subscript):
            index = target.slice
            elements = list(index.elts) if isinstance(index, ast.Tuple) else [index]
            target = target.value
        if not isinstance(target, ast.Name):
            raise RestoreError(f"the type alias at {shape.start} names no plain name")
        name = ast.copy_location(ast.Name(id=target.id, ctx=ast.Store()), target)
        params = self._params(shape.params, iter(elements))
        alias: ast.stmt = TypeAlias(name=name, type_params=params, value=value)
        alias.lineno, alias.col_offset = self.at(shape.start)
        alias.end_lineno, alias.end_col_offset = value.end_lineno, value.end_col_offset
        return alias

    def _params(
        self, shapes: tuple[ParamShape, ...], elements: Iterator[ast.expr]
    ) -> list[ast.AST]:
        params: list[ast.AST] = []
        for shape in shapes:
            next(elements)  # the parameter's name
            fields: dict[str, ast.expr | None] = {"default_value": None}
            if shape.kind == "TypeVar":
                fields["bound"] = next(elements) if shape.bound else None
            if shape.default:
                fields["default_value"] = next(elements)
            param = _PARAMS[shape.kind](name=shape.name, **fields)
            params.append(self.at.place(param, shape.start, shape.end))
        return params

    def visit_Try(self, node: ast.Try) -> ast.AST:
        self.generic_visit(node)
        if (node.lineno, node.col_offset) not in self.try_stars:
            return node
        star: ast.stmt = TryStar(
            body=node.body, handlers=node.handlers, orelse=node.orelse, finalbody=node.finalbody
        )
        return ast.copy_location(star, node)

    def check_done(self) -> None:
        left = [s.start for s in self.strings.values()] + [a.start for a in self.aliases.values()]
        if left:
            raise RestoreError(f"lowered constructs at {left} were not found in the tree")

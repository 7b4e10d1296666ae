"""Source written for a newer Python, lowered through libcst to text the running ``ast`` parses.

Used only when ``ast.parse`` rejected a file (:mod:`lintloader.summary.newer`): libcst's parser
reads newer grammars whatever interpreter runs it. Each construct the running ``ast`` may not
know is rewritten in place, **keeping every line and every character column**, so each node the
running ``ast`` builds from the lowered text sits exactly where a new enough interpreter puts it:

* PEP 695/696 type parameters of a ``def`` or ``class`` (``[T: int = str]``) become spaces (the
  summary never reads them; a list over several lines gets a ``\\`` before each line break);
* ``type X[T: B = D] = V`` becomes ``_=   X[T, B, D], V`` (``type`` turned into ``_=``, the
  ``:`` and ``=`` into commas), so ``X``, ``B``, ``D`` and ``V`` keep their columns and the
  statement its indentation;
* ``except*`` becomes ``except`` and a space;
* an f-string (PEP 701 lets it nest quotes, backslashes and comments), or an implicit
  concatenation holding one, becomes a parenthesized tuple of its replacement fields'
  expressions: quotes, literal text, braces, ``!r`` and ``:spec`` become spaces, a comma follows
  each expression, nested f-strings are lowered the same way.

What was lowered is recorded (:class:`Lowered`), so that :mod:`lintloader.summary.restore` can
put the nodes a new interpreter builds (``JoinedStr``, ``TypeAlias``, ``TryStar``) back into the
tree before the unchanged summary visitors walk it. Python 3.14 syntax (template strings,
``except A, B:``) and 3.15 lazy imports raise :class:`~lintloader.summary.grammar.NewerGrammar`.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from lintloader.summary.grammar import (
    LIBCST_GRAMMAR,
    NEWER_NODES,
    NewerGrammar,
    needs_newer_interpreter,
)

Position = tuple[int, int]  # 1-based line, 0-based character column (libcst's convention)

_STAR_SUBSCRIPTS = (3, 11)  # `X[*Ts]`, `*args: *Ts` (PEP 646): kept as they are, so 3.10 fails
_PEP_646 = "star unpacking in a subscript or annotation, PEP 646"
_BREAK = re.compile(r"\r\n|\r|\n")
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class CannotLower(Exception):
    """libcst read the file, but this construct cannot be lowered keeping its columns."""


@dataclass(frozen=True)
class Text:
    """A literal part of a lowered string, with its value as Python reads it."""

    value: str
    start: Position
    end: Position


@dataclass(frozen=True)
class Field:
    """A replacement field ``{expression!c:spec}``: one element of the lowered tuple, followed
    (in the tuple) by the fields of its format spec."""

    conversion: int  # -1, or ord("r"), ord("s"), ord("a")
    spec: tuple[Part, ...] | None
    debug: str  # ``{x=}``: the text ``x=`` a new interpreter puts before the value
    start: Position
    end: Position


Part = Text | Field


@dataclass(frozen=True)
class StringShape:
    """An f-string, or an implicit concatenation holding one, lowered to a tuple."""

    start: Position
    end: Position
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class ParamShape:
    kind: str  # "TypeVar", "TypeVarTuple" or "ParamSpec"
    name: str
    start: Position
    end: Position
    bound: bool
    default: bool


@dataclass(frozen=True)
class AliasShape:
    """``type X[...] = V`` at ``start``, lowered to the assignment ``_=   X[...], V``."""

    start: Position
    params: tuple[ParamShape, ...]


@dataclass
class Lowered:
    text: str
    strings: list[StringShape] = field(default_factory=list)
    aliases: list[AliasShape] = field(default_factory=list)
    try_stars: list[Position] = field(default_factory=list)


def parser_config() -> cst.PartialParserConfig:
    """libcst told to read the newest grammar it knows, up to :data:`LIBCST_GRAMMAR`."""
    known = [v for v in cst.KNOWN_PYTHON_VERSION_STRINGS if _version(v) <= _version(LIBCST_GRAMMAR)]
    return cst.PartialParserConfig(python_version=max(known, key=_version))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def lower(text: str) -> Lowered:
    """Lower ``text``. Raises ``cst.ParserSyntaxError`` when libcst cannot read it either,
    NewerGrammar for Python 3.14 and 3.15 syntax, CannotLower for a construct out of reach."""
    wrapper = MetadataWrapper(cst.parse_module(text, parser_config()), unsafe_skip_copy=True)
    lines = _LINES.findall(text)
    lowerer = _Lowerer(wrapper.module, wrapper.resolve(PositionProvider), list(lines))
    wrapper.module.visit(lowerer)
    for start, replacement in lowerer.edits:
        _overwrite(lines, start, replacement)
    lowered = lowerer.result
    lowered.text = "".join(lines)
    return lowered


def _overwrite(lines: list[str], start: Position, replacement: str) -> None:
    """Put ``replacement`` (same length and line breaks as what it replaces) at ``start``."""
    line, column = start[0] - 1, start[1]
    for index, piece in enumerate(_LINES.findall(replacement)):
        at = column if index == 0 else 0
        old = lines[line + index]
        lines[line + index] = old[:at] + piece + old[at + len(piece) :]


def _advance(position: Position, code: str) -> Position:
    breaks = list(_BREAK.finditer(code))
    if not breaks:
        return position[0], position[1] + len(code)
    return position[0] + len(breaks), len(code) - breaks[-1].end()


def _blank(code: str) -> str:
    return "".join(c if c in "\r\n" else " " for c in code)


class _Group:
    """The lowered text of one string group: all blank, then the expressions put back."""

    def __init__(self, start: Position, text: str) -> None:
        self.start = start
        self.text = text
        self.chars = list(_blank(text))
        self.line_starts = [0]
        for line in _LINES.findall(text)[:-1]:
            self.line_starts.append(self.line_starts[-1] + len(line))

    def offset(self, position: Position) -> int:
        line = position[0] - self.start[0]
        column = position[1] - self.start[1] if line == 0 else position[1]
        return self.line_starts[line] + column

    def keep(self, start: Position, end: Position) -> None:
        first, last = self.offset(start), self.offset(end)
        self.chars[first:last] = self.text[first:last]

    def comma_after(self, position: Position) -> None:
        """A comma on the first character after ``position`` that is not a line break."""
        index = self.offset(position)
        while self.text[index] in "\r\n":
            index += 1
        self.chars[index] = ","

    def lowered(self) -> str:
        self.chars[0], self.chars[-1] = "(", ")"
        return "".join(self.chars)


def _literal(prefix: str, quote: str, raw: str) -> str:
    """The value of a literal part of an f-string (best effort: the raw text if it cannot be
    evaluated; nothing in a summary reads it)."""
    text = raw.replace("{{", "{").replace("}}", "}")
    try:
        value = ast.literal_eval(f"{prefix}{quote}{text}{quote}")
    except (SyntaxError, ValueError):
        return text
    return value if isinstance(value, str) else text


class _Lowerer(cst.CSTVisitor):
    def __init__(
        self, module: cst.Module, positions: Mapping[cst.CSTNode, CodeRange], lines: list[str]
    ) -> None:
        super().__init__()
        self.module = module
        self.positions = positions
        self.lines = lines  # the source's lines, as libcst counts them
        self.edits: list[tuple[Position, str]] = []
        self.result = Lowered("")
        self.covered: set[int] = set()  # string nodes lowered as part of a larger group
        self.hidden: set[int] = set()  # blanked type parameter lists: nothing inside is lowered

    # -- positions and text --------------------------------------------------------------------
    def start(self, node: cst.CSTNode) -> Position:
        where = self.positions[node].start
        return where.line, where.column

    def end(self, node: cst.CSTNode) -> Position:
        where = self.positions[node].end
        return where.line, where.column

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def text(self, node: cst.CSTNode) -> str:
        """The source text of ``node`` without its leading lines or parentheses."""
        return self.between(self.start(node), self.end(node))

    def between(self, start: Position, end: Position) -> str:
        return _between(self.lines, start, end)

    def replace_operator(self, start: Position, end: Position, operator: str) -> None:
        """Turn the ``operator`` between ``start`` and ``end`` (outside comments) into a comma."""
        region = self.between(start, end)
        offset = _find_outside_comments(region, operator)
        if offset < 0:
            raise CannotLower(f"no {operator!r} where one was expected")
        self.edits.append((_advance(start, region[:offset]), ","))

    # -- 3.14 and 3.15 syntax: beyond what is lowered ------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        newer = NEWER_NODES.get(type(node).__name__)
        if newer:
            raise NewerGrammar(*newer, *self._one_based(node))
        return super().on_visit(node)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._check_except(node)

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> None:
        self._check_except(node)

    def _check_except(self, node: cst.ExceptHandler | cst.ExceptStarHandler) -> None:
        if isinstance(node.type, cst.Tuple) and not node.type.lpar:
            feature = "several exceptions without parentheses, PEP 758"
            raise NewerGrammar((3, 14), feature, *self._one_based(node))

    def _one_based(self, node: cst.CSTNode) -> tuple[int, int]:
        line, column = self.start(node)
        return line, column + 1

    # -- PEP 646 (3.11): kept as written --------------------------------------------------------
    def visit_Index(self, node: cst.Index) -> None:
        if node.star and sys.version_info < _STAR_SUBSCRIPTS:
            raise needs_newer_interpreter(_STAR_SUBSCRIPTS, _PEP_646, *self._one_based(node))

    def visit_Annotation(self, node: cst.Annotation) -> None:
        starred = isinstance(node.annotation, cst.StarredElement)
        if starred and sys.version_info < _STAR_SUBSCRIPTS:
            raise needs_newer_interpreter(_STAR_SUBSCRIPTS, _PEP_646, *self._one_based(node))

    # -- except* -------------------------------------------------------------------------------
    def visit_TryStar(self, node: cst.TryStar) -> None:
        self.result.try_stars.append(self.start(node))
        for handler in node.handlers:
            start = self.start(handler)
            region = self.between(start, self.start(handler.type))
            offset = _find_outside_comments(region, "*")
            if offset < 0:
                raise CannotLower("an except* without its star")
            self.edits.append((_advance(start, region[:offset]), " "))

    # -- type parameters -----------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._hide(node.type_parameters)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._hide(node.type_parameters)

    def visit_TypeParameters(self, node: cst.TypeParameters) -> bool:
        return id(node) not in self.hidden

    def _hide(self, params: cst.TypeParameters | None) -> None:
        if params is None:
            return
        self.hidden.add(id(params))
        pieces = _LINES.findall(_blank(self.text(params)))
        for index, piece in enumerate(pieces[:-1]):
            body = piece.rstrip("\r\n")
            if not body:
                raise CannotLower("an empty line inside a type parameter list")
            pieces[index] = body[:-1] + "\\" + piece[len(body) :]
        self.edits.append((self.start(params), "".join(pieces)))

    def visit_TypeAlias(self, node: cst.TypeAlias) -> None:
        start = self.start(node)
        self.edits.append((start, "_=  "))  # the `type` keyword
        after = self.end(node.name)
        params: list[ParamShape] = []
        if node.type_parameters is not None:
            params = [self._lower_param(p) for p in node.type_parameters.params]
            after = self.end(node.type_parameters)
        self.replace_operator(after, self.start(node.value), "=")
        self.result.aliases.append(AliasShape(start, tuple(params)))

    def _lower_param(self, param: cst.TypeParam) -> ParamShape:
        inner = param.param
        name_start, last = self.start(inner.name), self.end(inner.name)
        if name_start != self.start(param):  # `*Ts`, `**P`: the stars become spaces
            stars = self.between(self.start(param), name_start)
            self.edits.append((self.start(param), _blank(stars)))
        bound = isinstance(inner, cst.TypeVar) and inner.bound is not None
        if isinstance(inner, cst.TypeVar) and inner.bound is not None:
            self.replace_operator(last, self.start(inner.bound), ":")
            last = self.end(inner.bound)
        if param.star and sys.version_info < _STAR_SUBSCRIPTS:  # `*Ts = *tuple[int]`
            raise needs_newer_interpreter(_STAR_SUBSCRIPTS, _PEP_646, *self._one_based(param))
        if param.default is not None:
            self.replace_operator(last, self.start(param.default), "=")
            last = self.end(param.default)
        kind, name = type(inner).__name__, inner.name.value
        return ParamShape(kind, name, self.start(param), last, bound, param.default is not None)

    # -- f-strings -----------------------------------------------------------------------------
    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> None:
        if id(node) in self.covered:
            return
        parts = list(_string_parts(node))
        if any(isinstance(p, (cst.FormattedString, cst.TemplatedString)) for p in parts):
            self.covered.update(id(p) for p in _string_nodes(node))
            self._lower_string(node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        if id(node) not in self.covered:
            self._lower_string(node)

    def _lower_string(self, node: cst.ConcatenatedString | cst.FormattedString) -> None:
        start, end = self.start(node), self.end(node)
        group = _Group(start, self.between(start, end))
        parts: list[Part] = []
        for string in _string_parts(node):
            self._string(string, group, parts)
        self.edits.append((start, group.lowered()))
        self.result.strings.append(StringShape(start, end, tuple(parts)))

    def _string(self, node: cst.BaseExpression, group: _Group, parts: list[Part]) -> None:
        if isinstance(node, cst.SimpleString):
            value = node.evaluated_value
            if isinstance(value, bytes):
                line, column = self._one_based(node)
                raise SyntaxError("cannot mix bytes and nonbytes literals", ("", line, column, ""))
            parts.append(Text(value, self.start(node), self.end(node)))
        elif isinstance(node, cst.FormattedString):
            position = _advance(self.start(node), node.start)
            prefix = node.prefix.replace("f", "").replace("F", "")
            for part in node.parts:
                if isinstance(part, cst.FormattedStringText):
                    end = _advance(position, part.value)
                    parts.append(Text(_literal(prefix, node.quote, part.value), position, end))
                    position = end
                else:
                    assert isinstance(part, cst.FormattedStringExpression)
                    parts.append(self._field(part, group))
                    position = self.end(part)
        elif isinstance(node, cst.TemplatedString):
            raise NewerGrammar((3, 14), "template strings, PEP 750", *self._one_based(node))
        else:
            raise CannotLower(f"a {type(node).__name__} among implicitly concatenated strings")

    def _field(self, part: cst.FormattedStringExpression, group: _Group) -> Field:
        """Keep the field's expression (with its parentheses), a comma after it, and the
        fields of its format spec; everything else of ``{...}`` stays blank."""
        start, end = self.start(part), self.end(part)
        expression = part.expression
        first, last = self.start(expression), self.end(expression)
        if expression.lpar:
            region = self.between(_advance(start, "{"), first)
            opening = _offsets_outside_comments(region, "(")
            first = _advance(_advance(start, "{"), region[: opening[0]])
        if expression.rpar:
            region = self.between(last, end)
            closing = _offsets_outside_comments(region, ")")[: len(expression.rpar)]
            if len(closing) < len(expression.rpar):
                raise CannotLower("a parenthesized f-string field without its parentheses")
            last = _advance(last, region[: closing[-1] + 1])
        group.keep(first, last)
        group.comma_after(last)
        debug = ""
        if part.equal is not None:
            region = self.between(last, end)
            equal = region.index("=") + 1
            equal += len(region[equal:]) - len(region[equal:].lstrip(" \t"))
            debug = self.between(_advance(start, "{"), last) + region[:equal]
        spec: tuple[Part, ...] | None = None
        if part.format_spec is not None:
            spec = tuple(self._spec(part.format_spec, group, last))
        conversion = ord(part.conversion) if part.conversion else -1
        if debug and conversion < 0 and spec is None:
            conversion = ord("r")
        return Field(conversion, spec, debug, start, end)

    def _spec(
        self, specs: Sequence[cst.BaseFormattedStringContent], group: _Group, position: Position
    ) -> list[Part]:
        """A format spec's parts: its fields exactly, its text at approximate positions."""
        parts: list[Part] = []
        for spec in specs:
            if isinstance(spec, cst.FormattedStringText):
                parts.append(Text(spec.value, position, _advance(position, spec.value)))
            else:
                assert isinstance(spec, cst.FormattedStringExpression)
                parts.append(self._field(spec, group))
                position = self.end(spec)
        return parts


def _string_parts(node: cst.BaseExpression) -> Sequence[cst.BaseExpression]:
    """The strings of an implicit concatenation, left to right."""
    if isinstance(node, cst.ConcatenatedString):
        return [*_string_parts(node.left), *_string_parts(node.right)]
    return [node]


def _string_nodes(node: cst.BaseExpression) -> Sequence[cst.BaseExpression]:
    """Every node of a concatenation chain (the nested concatenations included)."""
    if isinstance(node, cst.ConcatenatedString):
        return [node, *_string_nodes(node.left), *_string_nodes(node.right)]
    return [node]


def _between(lines: list[str], start: Position, end: Position) -> str:
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1] : end[1]]
    middle = lines[start[0] : end[0] - 1]
    return "".join((lines[start[0] - 1][start[1] :], *middle, lines[end[0] - 1][: end[1]]))


def _offsets_outside_comments(region: str, wanted: str) -> list[int]:
    """Offsets of the character ``wanted`` in ``region`` outside ``#`` comments."""
    found: list[int] = []
    in_comment = False
    for offset, char in enumerate(region):
        if in_comment:
            in_comment = char not in "\r\n"
        elif char == "#":
            in_comment = True
        elif char == wanted:
            found.append(offset)
    return found


def _find_outside_comments(region: str, operator: str) -> int:
    """Offset of the first ``operator`` in ``region`` that is not inside a ``#`` comment."""
    found = _offsets_outside_comments(region, operator)
    return found[0] if found else -1

"""A notebook's JSON edited in place: the ``source`` of chosen cells replaced, every other byte
kept (other cells, their line endings and ids, outputs, metadata, the file's indentation).

:func:`source_spans` finds where each cell's ``source`` value is in the text (with the json
module's own scanner, so what it finds is what ``json.loads`` reads); :func:`source_json`
writes a new value in the style of the old one (a list of lines, one a line at the old
indentation, or a single string).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import NamedTuple

_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"


class Span(NamedTuple):
    start: int  # the first character of the value
    end: int  # one past its last character


def source_spans(text: str) -> list[Span | None]:
    """For each cell of the notebook ``text`` in order, where its ``source`` value is (``None``
    for a cell without one). Raises ValueError when ``text`` is not a notebook's JSON."""
    spans: list[Span | None] = []
    for key, start, _ in _members(text, _expect(text, 0, "{")):
        if key == "cells":
            spans = _cells(text, start)
    return spans


def _cells(text: str, index: int) -> list[Span | None]:
    index = _skip(text, _expect(text, index, "["))
    spans: list[Span | None] = []
    if text[index] == "]":
        return spans
    while True:
        index = _skip(text, index)
        spans.append(_source_of_cell(text, index))
        _, index = _DECODER.raw_decode(text, index)
        index = _skip(text, index)
        if text[index] == "]":
            return spans
        index = _expect(text, index, ",")


def _source_of_cell(text: str, index: int) -> Span | None:
    found = None
    for key, start, end in _members(text, _expect(text, index, "{")):
        if key == "source":
            found = Span(start, end)
    return found


def _members(text: str, index: int) -> Iterator[tuple[str, int, int]]:
    """Each ``key, start, end`` of a value of the object whose ``{`` ends at ``index``."""
    index = _skip(text, index)
    if text[index] == "}":
        return
    while True:
        key, index = json.decoder.scanstring(text, _expect(text, index, '"'))  # type: ignore[attr-defined]
        start = _skip(text, _expect(text, _skip(text, index), ":"))
        _, index = _DECODER.raw_decode(text, start)
        yield key, start, index
        index = _skip(text, index)
        if text[index] == "}":
            return
        index = _expect(text, index, ",")


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _SPACE:
        index += 1
    if index >= len(text):
        raise ValueError("the notebook's JSON ends too early")
    return index


def _expect(text: str, index: int, char: str) -> int:
    index = _skip(text, index)
    if text[index] != char:
        raise ValueError(f"expected {char!r} at character {index} of the notebook")
    return index + 1


def source_json(old: str, new: str, column: int) -> str:
    """The JSON for source ``new`` in the style of ``old`` (the old value's JSON text), which
    starts at ``column`` of its line."""
    if old.startswith('"'):
        return json.dumps(new, ensure_ascii=False)
    lines = new.splitlines(keepends=True)
    if not lines:
        return "[]"
    items = [json.dumps(line, ensure_ascii=False) for line in lines]
    opening, separator, closing = _list_style(old, column)
    return "[" + opening + separator.join(items) + closing + "]"


def _list_style(old: str, column: int) -> tuple[str, str, str]:
    """The whitespace after ``[``, between two items, and before ``]`` of the list ``old``."""
    inner = old[1:-1]
    stripped = inner.strip(_SPACE)
    if not stripped:  # no item to copy the style from: nbformat's (one space deeper)
        return "\n" + " " * (column + 1), ",\n" + " " * (column + 1), "\n" + " " * column
    opening = inner[: len(inner) - len(inner.lstrip(_SPACE))]
    closing = inner[len(inner.rstrip(_SPACE)) :]
    first_end = _DECODER.raw_decode(stripped, 0)[1]
    rest = stripped[first_end:]
    if rest.lstrip(_SPACE).startswith(","):
        after = rest.lstrip(_SPACE)[1:]
        separator = (
            rest[: len(rest) - len(rest.lstrip(_SPACE))]
            + ","
            + after[: len(after) - len(after.lstrip(_SPACE))]
        )
    else:
        separator = "," + opening
    return opening, separator, closing

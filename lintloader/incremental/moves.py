"""Whether a file's new summary is its old one with lines moved, and nothing else changed.

Lines inserted or removed around what a summary records (a comment above a function, a blank
line, an import that names nothing a rule reads) change every line number below them, so the
summary differs, but not what it says: the same calls, sinks, loops and conditions, in the same
order, with the same text and columns. The linker and the demand hooks of selection compare
positions only with each other, within one file (is this call inside that loop's body? after
that early return?); they never do arithmetic on a line. So when one strictly increasing map
takes every old line number to the new one, every such comparison answers as before, and the
selection asks and takes what it did before (``incremental/revisit.py`` relies on this). The rules
still run again: their findings print the new lines, and a rule may compute with lines (a
function's length).

When the map moves every line by one offset (:data:`SHIFTED`: lines inserted or removed above
everything the summary records, as a new first line does), even a difference of two lines of the
file answers as before: only a finding that shows a line of the file can change, so revisit
keeps the stored findings when none does. Any other map (:data:`MOVED`) changes differences
(a line inserted inside a function lengthens it): the rules run again.

Fields are recognized by name. A position field not named in :data:`LINE_FIELDS` (or a column)
must be equal, which only ever makes the comparison stricter.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

# Fields holding a 1-based line number (0 where a field means "none": it stays 0).
LINE_FIELDS = frozenset(
    {"line", "end_line", "statement_line", "body_line", "error_line", "cached_after"}
)
LINE_COLUMN_FIELDS = frozenset({"header_end"})  # (line, column) pairs
LINE_KEYED_FIELDS = frozenset({"noqa"})  # dicts keyed by line number
LINE_RANGE_FIELDS = frozenset({"kept_blocks"})  # lists of (first line, last line) pairs
# Line fields that hold 1 as a placeholder, not as a place: those of the module scope (a
# FunctionSummary of kind "module", which starts and ends nowhere) and a parsed file's error line
MODULE_SCOPE_FIELDS = frozenset({"line", "end_line"})
PARSED_FILE_FIELDS = frozenset({"error_line"})


# How a summary's lines moved (line_moves): every line by one offset; by another increasing map.
SHIFTED, MOVED = "shifted", "moved"


class _Differs(Exception):
    """The summaries differ in more than line numbers."""


def moved_only(before: object, after: object) -> bool:
    """Whether ``after`` equals ``before`` once each line number of ``before`` is replaced by
    the image of one strictly increasing map (with 0 kept for 0)."""
    return line_moves(before, after) is not None


def line_moves(before: object, after: object) -> str | None:
    """:data:`SHIFTED` when ``after`` equals ``before`` with every (nonzero) line number moved
    by one offset (by none, when they are equal), :data:`MOVED` when by another strictly
    increasing map; None when they differ in more."""
    pairs: list[tuple[int, int]] = []
    try:
        _walk(before, after, pairs)
    except _Differs:
        return None
    if not _increasing(pairs):
        return None
    return SHIFTED if len({new - old for old, new in pairs if old}) <= 1 else MOVED


def _walk(before: object, after: object, pairs: list[tuple[int, int]]) -> None:
    if type(before) is not type(after):
        raise _Differs
    fields = getattr(before, "__dataclass_fields__", None)  # dataclasses.fields(), cheaply
    if fields is not None:
        placeholders = _placeholders(before)
        for name in fields:
            old, new = getattr(before, name), getattr(after, name)
            if name in placeholders:
                _walk(old, new, pairs)  # a 1 that is no place: equal, moved by nothing
            else:
                _field(name, old, new, pairs)
    elif isinstance(before, tuple) and hasattr(before, "_fields"):  # a NamedTuple record
        assert isinstance(after, tuple)
        for name, old, new in zip(before._fields, before, after, strict=True):
            _field(name, old, new, pairs)
    elif isinstance(before, (list, tuple)):
        _sequence(before, after, pairs)  # type: ignore[arg-type]
    elif isinstance(before, dict):
        assert isinstance(after, dict)
        if before.keys() != after.keys():
            raise _Differs
        for key, value in before.items():
            _walk(value, after[key], pairs)
    elif before != after:  # str, int, bool, None, frozensets of names
        raise _Differs


def _placeholders(record: object) -> frozenset[str]:
    """The fields of ``record`` that hold a placeholder line (see :data:`MODULE_SCOPE_FIELDS`)."""
    if getattr(record, "kind", None) == "module":
        return MODULE_SCOPE_FIELDS
    if getattr(record, "error", True) is None:  # a FileSummary that parsed
        return PARSED_FILE_FIELDS
    return frozenset()


def _field(name: str, before: object, after: object, pairs: list[tuple[int, int]]) -> None:
    if name in LINE_FIELDS:
        _line(before, after, pairs)
    elif name in LINE_COLUMN_FIELDS:
        if not (isinstance(before, tuple) and isinstance(after, tuple)):
            raise _Differs
        if len(before) != 2 or len(after) != 2 or before[1] != after[1]:
            raise _Differs
        _line(before[0], after[0], pairs)
    elif name in LINE_RANGE_FIELDS:
        if not (isinstance(before, list) and isinstance(after, list)) or len(before) != len(after):
            raise _Differs
        for old_range, new_range in zip(before, after, strict=True):
            if not (isinstance(old_range, tuple) and isinstance(new_range, tuple)):
                raise _Differs
            if len(old_range) != 2 or len(new_range) != 2:
                raise _Differs
            _line(old_range[0], new_range[0], pairs)
            _line(old_range[1], new_range[1], pairs)
    elif name in LINE_KEYED_FIELDS:
        if not (isinstance(before, dict) and isinstance(after, dict)):
            raise _Differs
        old, new = sorted(before.items()), sorted(after.items())
        if len(old) != len(new):
            raise _Differs
        for (old_line, old_value), (new_line, new_value) in zip(old, new, strict=True):
            _line(old_line, new_line, pairs)
            _walk(old_value, new_value, pairs)
    else:
        _walk(before, after, pairs)


def _sequence(
    before: Iterable[object], after: Iterable[object], pairs: list[tuple[int, int]]
) -> None:
    old, new = list(before), list(after)
    if len(old) != len(new):
        raise _Differs
    for item, other in zip(old, new, strict=True):
        _walk(item, other, pairs)


def _line(before: object, after: object, pairs: list[tuple[int, int]]) -> None:
    if type(before) is not int or type(after) is not int:
        raise _Differs
    if (before == 0) != (after == 0):
        raise _Differs
    pairs.append((before, after))


def _increasing(pairs: list[tuple[int, int]]) -> bool:
    """Whether the pairs are one function, and strictly increasing."""
    mapped: dict[int, int] = {}
    for old, new in pairs:
        if mapped.setdefault(old, new) != new:
            return False
    images = [mapped[old] for old in sorted(mapped)]
    return all(a < b for a, b in itertools.pairwise(images))

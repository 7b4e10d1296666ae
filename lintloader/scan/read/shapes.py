"""Shape tokens: named checks of a file's bytes that a seed group may hold beside its plain
tokens (see ``scan/read/tokens.py``), for what one byte string cannot say. They are asked only
of files that hold every plain token of the group, and their answers are remembered in the stat
index like any token's.

Each shape is a superset, in bytes, of what the summarizer records from the tree, so a file it
rejects holds none of it; written on one line (a statement split over lines is left to the
groups that need no shape):

* ``iterator-reset``: a spelling of an iterator reset that ``summary/calls.py`` records as a
  sink: ``x._iterator = None`` (also in a tuple target), ``del x._iterator``,
  ``setattr(x, "_iterator", None)`` or ``delattr(x, "_iterator")``. Not a class's own iterator
  (``self._iterator = iter(xs)``, ``next(self._iterator)`` in ``jinja2`` and
  ``more_itertools``), nor an annotated ``self._iterator: T = None``, which is how a class
  declares its own attribute (Lightning's batch sampler wrapper), never how a loader's is reset;
* ``iter-reset``: a ``def __iter__`` whose body (up to the next ``def``, ``class`` or decorator
  written no deeper) holds ``.reset`` or ``._reset``: what LL104 reports on (an ``__iter__``
  elsewhere in a file that resets in another method is none of its business).
"""

from __future__ import annotations

import re
from collections.abc import Callable

# `x._iterator = None`, `a._iterator, b = None, x`, `b, a._iterator = x, None` (no `:` before
# the `=`: an annotation; no `==`: a test)
_ASSIGN_NONE = re.compile(rb"\._iterator\b[^\n=:]*=(?!=)[^\n]*\bNone\b")
_DELETE = re.compile(rb"\bdel\b[^\n]*\._iterator\b")
_BY_NAME = re.compile(rb"\b(?:set|del)attr\s*\([^\n]*[\"']_iterator[\"']")
_ITER_DEF = re.compile(rb"^([ \t]*)(?:async[ \t]+)?def[ \t]+__iter__\b", re.M)
_BLOCK_START = re.compile(rb"^([ \t]*)(?:async[ \t]+def|def|class|@)\b", re.M)


def iterator_reset(data: bytes) -> bool:
    return any(pattern.search(data) for pattern in (_ASSIGN_NONE, _DELETE, _BY_NAME))


def iter_reset(data: bytes) -> bool:
    for match in _ITER_DEF.finditer(data):
        depth = len(match.group(1))
        end = len(data)
        for block in _BLOCK_START.finditer(data, match.end()):
            if len(block.group(1)) <= depth:
                end = block.start()
                break
        body = data[match.end() : end]
        if b".reset" in body or b"._reset" in body:
            return True
    return False


# by name; a check whose meaning changes gets a new name (the stat index keeps old answers)
SHAPES: dict[bytes, Callable[[bytes], bool]] = {
    b"iterator-reset": iterator_reset,
    b"iter-reset": iter_reset,
}


def shape_in(data: bytes, name: bytes) -> bool:
    """Whether ``data`` has the shape ``name``; an unknown name never matches."""
    check = SHAPES.get(name)
    return check is not None and check(data)

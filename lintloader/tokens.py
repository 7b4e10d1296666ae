"""Byte tokens that decide which files are worth parsing (see demand.py).

A plain token matches anywhere in a file's bytes (``._iterator``, ``oader``). A token made by
:func:`whole_word` matches only as a whole identifier: the name of a function or class that the
analysis wants callers of (``dataloader`` must not match ``train_dataloader``).
"""

from __future__ import annotations

import re

WORD_MARK = b"\b"  # never part of Python source text we search for


def whole_word(name: str | bytes) -> bytes:
    raw = name.encode() if isinstance(name, str) else name
    return WORD_MARK + raw


def found_in(data: bytes, token: bytes) -> bool:
    if not token.startswith(WORD_MARK):
        return token in data
    word = token[len(WORD_MARK) :]
    if word not in data:
        return False
    return re.search(rb"(?<!\w)" + re.escape(word) + rb"(?!\w)", data) is not None


def function_groups(name: str, module: str) -> set[tuple[bytes, ...]]:
    """Token groups of the files that can call module-level function ``name`` of ``module``:
    they import it, so they name its module (``from .helpers import f``, ``helpers.f()``) or,
    through a re-export, its package."""
    parts = module.split(".")
    anchors = {parts[-1]} if len(parts) < 2 else {parts[-1], parts[-2]}
    return {(whole_word(name), whole_word(anchor)) for anchor in anchors}

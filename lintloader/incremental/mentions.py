"""How often a file names some identifiers, anywhere: in code, a string or a comment alike.

A byte search, so it over-counts (a word in a comment, ``x.name`` for a global ``name``) and
never under-counts: Python reads identifiers after NFKC normalization (a fullwidth ``f`` is
``f``), so a file with any byte beyond ASCII is decoded as PEP 263 says and normalized first,
and one that cannot be decoded counts as naming everything (None).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Collection
from typing import AnyStr

from lintloader.summary.source_text import DecodeError, decode_source


def mentions(names: Collection[str], source: bytes) -> Counter[str] | None:
    """How many times each of ``names`` (identifiers) occurs in ``source`` as a whole word;
    None when that cannot be known (the file cannot be decoded)."""
    counts: Counter[str] = Counter()
    if source.isascii():  # only ASCII names can be spelled in it
        for name in names:
            if name.isascii():
                counts[name] += _count(name.encode("ascii"), source)
    else:
        try:
            text = unicodedata.normalize("NFKC", decode_source(source))
        except DecodeError:
            return None
        for name in names:
            counts[name] += _count(name, text)
    return +counts  # without the names it never found


def _count(name: AnyStr, text: AnyStr) -> int:
    """Occurrences of ``name`` in ``text`` not inside a longer word (a literal search: the
    regular expression engine tries a look-behind at every position, 20 times slower)."""
    found, start, size = 0, text.find(name), len(name)
    while start >= 0:
        end = start + size
        before, after = text[start - 1 : start] if start else text[:0], text[end : end + 1]
        if not (_is_word(before) or _is_word(after)):
            found += 1
        start = text.find(name, end)
    return found


def _is_word(char: str | bytes) -> bool:
    if isinstance(char, bytes):
        char = char.decode("latin-1")
    return char.isalnum() or char == "_"

"""A file's summarized part: its bytes without the comment and blank lines that end it.

A summary is read off the tree, the source text of its nodes, the ``# noqa`` comments and one
byte test for the loader facts' tokens (``summary/summarize.py``). Comment and blank lines after
a file's last line of code hold no node, move no line above them and close nothing the code
opened (every string and bracket of a file that parses is closed before them). So two files
that parse, whose summarized parts are equal and whose trailing lines hold no ``noqa`` and none
of the loader facts' tokens, summarize alike: a comment appended to a 5,000-line file keeps its
summary, and ``incremental/revisit.py`` reuses it instead of parsing the file again.

A trailing line is kept in the summarized part (so two files compare unequal) when it could
matter: one holding a quote, a backslash, a NUL or a non-ASCII byte, ``noqa`` or a loader
token; the first two lines (an encoding declaration); all of them when the last line of code
ends in a backslash (which joins it to the next line).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from lintloader.domain.torch_api import LOADER_FACT_TOKENS

_BLANK = b" \t\f"
_UNSAFE = (b'"', b"'", b"\\", b"\0", b"noqa", *LOADER_FACT_TOKENS)
PYTHON_SUFFIXES = (".py", ".pyi")  # a notebook's bytes are JSON: no summarized part
_HEAD = 2  # lines that may declare the encoding (PEP 263): never trailing


def summarized_digest(source: bytes) -> str:
    """The sha256 of ``source``'s summarized part (see the module docstring)."""
    return hashlib.sha256(source[: summarized_length(source)]).hexdigest()


def summarized_length(source: bytes) -> int:
    """How many bytes of ``source`` its summarized part is."""
    lines = source.splitlines(keepends=True)  # bytes: breaks at \n, \r\n and \r only
    keep = len(lines)
    while keep > _HEAD and _trailing(lines[keep - 1]):
        keep -= 1
    if keep == len(lines) or lines[keep - 1].rstrip(b"\r\n").endswith(b"\\"):
        return len(source)
    return len(source) - sum(map(len, lines[keep:]))


def _trailing(line: bytes) -> bool:
    """A blank line, or a comment alone on its line that reads as nothing else."""
    text = line.lstrip(_BLANK).rstrip(b"\r\n")
    if not text:
        return True
    if not text.startswith(b"#") or not text.isascii():
        return False
    lowered = text.lower()
    return not any(token in (lowered if token == b"noqa" else text) for token in _UNSAFE)


def held_summarized(taken: Iterable[tuple[str, str]], held: Mapping[str, bytes]) -> tuple[str, ...]:
    """Per (path, content digest) of ``taken``, the digest of that file's summarized part when
    ``held`` has its bytes, those bytes have that digest and it is Python source; else ""."""
    found = []
    for path, digest in taken:
        data = held.get(path) if path.endswith(PYTHON_SUFFIXES) else None
        same = data is not None and hashlib.sha256(data).hexdigest() == digest
        found.append(summarized_digest(data) if same and data is not None else "")
    return tuple(found)

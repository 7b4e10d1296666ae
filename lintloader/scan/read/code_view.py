"""A file's bytes less its comments and docstrings: the text that can name something.

A token found only in a comment or a docstring (``# ... Trainer ...`` in ``modeling_utils.py``,
```DataLoader``` in a docstring) names nothing the summarizer records: the ``in-code`` shape
(``scan/read/shapes.py``) asks a group's tokens of this view, so such a file is not parsed for
them. Strings other than docstrings stay (``getattr(x, "_iterator")``, ``{"num_workers": 2}``,
f-strings hold code).

One regular expression finds strings and comments; a string is a docstring when it is a
statement of its own: outside brackets, first on its line (no ``\\`` continuing the line before)
and last on it (but for a comment). Anything the lexer cannot pair (a quote left open: a file
that does not parse) leaves the bytes as they are, so the view never holds less than the code.
"""

from __future__ import annotations

import re

_STRING = (
    rb'(?:"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    rb"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    rb'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    rb"|'[^'\\\n]*(?:\\.[^'\\\n]*)*')"
)
# Every lexeme starts with a quote or ``#``: the look-ahead lets ``re`` skip to the next one
# rather than try each alternative at every byte of the code (2.3x as fast on trainer.py).
_LEXEME = re.compile(
    rb"(?=[\"'#])(?:(?P<string>" + _STRING + rb")|(?P<comment>#[^\r\n]*)|(?P<open>[\"']))", re.S
)
_SPACE = b" \t\f"
_PREFIX = b"rRbBuUfF"


def code_view(data: bytes) -> bytes:
    """``data`` with each comment and docstring replaced by one space (the bytes as they are
    when a quote is left open)."""
    parts: list[bytes] = []
    depth, end, pending = 0, 0, -1  # pending: the part of a string that may be a docstring
    for match in _LEXEME.finditer(data):
        start = match.start()
        code = data[end:start]
        prefix = len(code) - len(code.rstrip(_PREFIX)) if match.lastgroup == "string" else 0
        parts.append(code[: len(code) - prefix])
        if pending >= 0 and _ends_line(code, followed=match.lastgroup == "comment"):
            parts[pending] = b" "
        pending = -1
        depth += _depth_change(code)
        kind, end = match.lastgroup, match.end()
        if kind == "open":
            return data
        if kind == "comment":
            parts.append(b" ")
            continue
        parts.append(data[start - prefix : end])
        first = len(parts) == 2 and not parts[0].strip(_SPACE)  # first in the file
        if depth == 0 and (first or _starts_line(parts[-2])) and not _formatted(data, start):
            pending = len(parts) - 1
    tail = data[end:]
    if pending >= 0 and _ends_line(tail, followed=True):
        parts[pending] = b" "
    parts.append(tail)
    return b"".join(parts)


def _formatted(data: bytes, quote: int) -> bool:
    """Whether the string that opens at ``quote`` is an f-string (it holds code)."""
    return b"f" in data[max(quote - 2, 0) : quote].lower()


def _depth_change(code: bytes) -> int:
    opened = code.count(b"(") + code.count(b"[") + code.count(b"{")
    return opened - code.count(b")") - code.count(b"]") - code.count(b"}")


def _starts_line(code: bytes) -> bool:
    """Whether a string after ``code`` (the code since the last string or comment) is first on
    its line: a line break, not continued by a backslash, then only blanks."""
    newline = code.rfind(b"\n")
    if newline < 0 or code[newline + 1 :].strip(_SPACE):
        return False
    before = code[:newline].rstrip(b"\r")
    return not before.endswith(b"\\")


def _ends_line(code: bytes, followed: bool) -> bool:
    """Whether a string before ``code`` (the code up to the next string or comment) is last
    on its line: blanks, then a line break, or nothing when ``followed`` (by a comment, or
    the end of the file)."""
    rest = code.lstrip(_SPACE)
    return rest.startswith((b"\n", b"\r")) or (followed and not rest)

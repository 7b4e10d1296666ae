"""Text that names a file, made safe to print on one line.

POSIX file names are bytes; Python carries the bytes that are not UTF-8 as lone surrogates
(``os.fsdecode``'s surrogateescape), which cannot be encoded to print, and a name may hold a
newline that would forge an extra output line. :func:`printable` shows such bytes as ``\\xNN``
and control characters as Python escapes (``\\n``, ``\\t``, ``\\x1b``).
"""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with undecodable bytes and control characters escaped (printable unchanged)."""
    if text.isprintable():
        return text
    return "".join(_escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if char.isprintable() or char == " ":
        return char
    return repr(char)[1:-1]


def for_terminal(text: str) -> str:
    """Lines of text (a diff) for a terminal: control characters escaped but tab and newline,
    so a patch still reads as one; piped elsewhere, a diff stays byte for byte."""
    if all(line.isprintable() for line in text.replace("\t", " ").splitlines()):
        return text
    return "".join(char if char in "\t\n" else _escape(char) for char in text)

"""A decoded source file and its ``ast`` tree, with exact text and character columns per node.

The summarizers read a file through this class only. ``ast`` reports positions as UTF-8 byte
offsets within a line; reports, editors and the fixers (libcst) count characters, so columns are
converted here, and a node's text is cut from the encoded lines exactly as the parser saw them
(``ast.get_source_segment`` does the same but splits the whole file again on every call).
"""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from dataclasses import dataclass, field
from typing import Any


def split_lines(data: bytes) -> list[bytes]:
    """``data``'s lines, line breaks kept, broken where Python's tokenizer breaks them: at CR
    LF, CR and LF only, where ``bytes.splitlines`` breaks (``str.splitlines`` also breaks at
    form feeds, vertical tabs, ``\\x1c``...)."""
    return data.splitlines(keepends=True)


class DecodeError(ValueError):
    """The bytes cannot be decoded as declared (bad cookie, bad BOM, invalid bytes)."""


def decode_source(source: bytes) -> str:
    """The text of a Python file, decoded as PEP 263 says (cookie, BOM, else UTF-8)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise DecodeError(" ".join(str(exc).split())) from exc


@dataclass(eq=False, repr=False)
class ParsedSource:
    """One file: its text, its tree, and its lines as the parser counted them."""

    text: str
    tree: ast.Module
    lines: list[bytes]
    # per scope (id of its node): the names only ever bound to displays, read on demand
    _fixed_names: dict[int, frozenset[str]] = field(default_factory=dict, repr=False, compare=False)
    # per statement (id of its node): what it stores into (summary/guards.py), read on demand
    stores: dict[int, frozenset[tuple[str, bool]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    # per branch of an ``if`` (id of its list of statements): whether it is built once (a
    # guards.Kept: summary/guards.py depends on this module), asked by two summarizers
    once: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, source: bytes) -> ParsedSource:
        """Decode and parse. Raises DecodeError, SyntaxError (null bytes included),
        RecursionError or MemoryError; never executes anything."""
        text = decode_source(source)
        if "\0" in text:  # ast raises ValueError for these before 3.12, SyntaxError after
            line = text.count("\n", 0, text.index("\0")) + 1
            raise SyntaxError("source code cannot contain null bytes", ("", line, 1, ""))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            tree = ast.parse(text)
        return cls.of(text, tree)

    @classmethod
    def of(cls, text: str, tree: ast.Module) -> ParsedSource:
        """``text`` with ``tree``, a tree whose columns are UTF-8 byte offsets into ``text``."""
        return cls(text, tree, split_lines(text.encode("utf-8", "surrogatepass")))

    def fixed_loop(self, node: ast.For | ast.AsyncFor | ast.While, scope: ast.AST | None) -> bool:
        """Whether ``node`` loops over a fixed set of items (``summary/fixed_loops.py``);
        ``scope``: the innermost function or class around it (None: the module)."""
        from lintloader.summary.fixed_loops import fixed_loop

        return fixed_loop(node, scope or self.tree, self._fixed_names)

    def segment(self, node: ast.AST) -> str:
        """The exact source text of ``node`` (an expression or a statement)."""
        first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
        start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        raw: bytes
        if first == last:
            raw = self.lines[first][start:end]
        else:
            raw = b"".join(
                (self.lines[first][start:], *self.lines[first + 1 : last], self.lines[last][:end])
            )
        return raw.decode("utf-8", "replace")

    def placed(self, node: ast.AST) -> tuple[str, int, int]:
        """``node``'s :meth:`segment`, :meth:`column` and :meth:`end_column` at once: a node on
        one line of ASCII (most) is cut and counted from that line alone."""
        first = node.lineno - 1  # type: ignore[attr-defined]
        line = self.lines[first]
        if first == node.end_lineno - 1 and line.isascii():  # type: ignore[attr-defined]
            start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
            return line[start:end].decode("ascii"), start + 1, end + 1
        return self.segment(node), self.column(node), self.end_column(node)

    def column(self, node: ast.AST) -> int:
        """1-based character column where ``node`` starts."""
        offset: int = node.col_offset  # type: ignore[attr-defined]
        line = self.lines[node.lineno - 1]  # type: ignore[attr-defined]
        if line.isascii():
            return offset + 1
        return len(line[:offset].decode("utf-8", "replace")) + 1

    def end_column(self, node: ast.AST) -> int:
        """1-based character column just after the last character of ``node`` (as SARIF's
        ``endColumn`` and libcst's end positions count, plus one)."""
        offset: int = node.end_col_offset  # type: ignore[attr-defined]
        line = self.lines[node.end_lineno - 1]  # type: ignore[attr-defined]
        if line.isascii():
            return offset + 1
        return len(line[:offset].decode("utf-8", "replace")) + 1

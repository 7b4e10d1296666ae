"""The fixers' one libcst parse, and the check that what they write parses.

libcst is told to read the newest grammar it knows (:func:`~lintloader.summary.lowering.
parser_config`), so a file written for a newer Python than the running one is edited like any
other. A file written for Python 3.6 or older (``async`` as a name: ``x.cuda(async=True)``) is
read as the summary reads it (:mod:`lintloader.summary.older`): each such name renamed in place
to a placeholder of the same length, parsed, and named back in the tree, so the edited module
writes ``async`` where the file had it (every position as it was). A written file must also
compile; when the running compiler rejects it, it is compiled as Python 3.6 reads it (the names
renamed) or as the summary reads it, lowered (:mod:`lintloader.summary.lowering`), so a valid
Python 3.12 file is not refused because this interpreter is 3.11, and a real mistake still is.
"""

from __future__ import annotations

import io
import tokenize
import warnings
from dataclasses import dataclass

import libcst as cst

from lintloader.fixers.base import FixError
from lintloader.summary.grammar import Unreadable
from lintloader.summary.lowering import CannotLower, lower, parser_config
from lintloader.summary.older import OldName, old_names, placeholders_for, renamed
from lintloader.summary.source_text import DecodeError, decode_source


def parse_module(source: bytes | str) -> cst.Module:
    """The file as libcst reads it, also when written for Python 3.6 or older (``async`` as a
    name); FixError when even so libcst cannot read it."""
    try:
        return cst.parse_module(source, parser_config())
    except cst.ParserSyntaxError:
        older = _older(source)
        if older is None:
            raise
        try:
            module = cst.parse_module(older.text, parser_config())
        except cst.ParserSyntaxError:
            first = older.names[0]
            raise FixError(
                f"written for Python 3.6 or older (`{first.word}` used as a name at "
                f"{first.line}:{first.column + 1}), which the fixers' parser does not read"
            ) from None
        restored = module.visit(_NamedBack(older.words))
        return restored.with_changes(encoding=older.encoding)


@dataclass(frozen=True)
class _Older:
    """A file's text with each ``async``/``await`` that Python 3.6 reads as a name renamed to a
    placeholder of the same length (``words``: placeholder to word)."""

    text: str
    names: list[OldName]
    words: dict[str, str]
    encoding: str


def _older(source: bytes | str) -> _Older | None:
    """``source`` read as Python 3.6 reads it; None when it uses no ``async``/``await`` as a
    name (or cannot be decoded or tokenized)."""
    try:
        text = source if isinstance(source, str) else decode_source(source)
        lines = io.StringIO(text).readlines()
        names = list(old_names(lines))
        placeholders = placeholders_for(text)
    except (DecodeError, SyntaxError):
        return None
    if not names:
        return None
    encoding = "utf-8"
    if isinstance(source, bytes):
        encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    words = {new: old for old, new in placeholders.items()}
    return _Older(renamed(lines, names, placeholders), names, words, encoding)


class _NamedBack(cst.CSTTransformer):
    """Each placeholder name back to the word it stands for (no string holds one: the text
    contains none)."""

    def __init__(self, words: dict[str, str]) -> None:
        super().__init__()
        self.words = words

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        word = self.words.get(updated_node.value)
        return updated_node if word is None else updated_node.with_changes(value=word)


def reparse_ok(data: bytes, path: str) -> str | None:
    """``None`` when ``data`` parses (libcst and the compiler); else why not."""
    try:
        parse_module(data)
        _compile(data, path)
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else exc}"
    return None


def _compile(data: bytes, path: str) -> None:
    with warnings.catch_warnings():
        # a SyntaxWarning (``"a"()``, an invalid escape) is the user's code, not the fix's
        warnings.simplefilter("ignore")
        try:
            compile(data, path, "exec", dont_inherit=True)
        except SyntaxError as error:
            older = _older(data)
            try:  # written for an older Python (`async` as a name) or a newer one than this?
                text = older.text if older is not None else lower(decode_source(data)).text
                compile(text, path, "exec", dont_inherit=True)
            except (cst.ParserSyntaxError, SyntaxError, CannotLower, Unreadable, DecodeError):
                raise error from None

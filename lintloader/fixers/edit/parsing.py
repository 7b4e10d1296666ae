"""The fixers' one libcst parse, and the check that what they write parses.

libcst is told to read the newest grammar it knows (:func:`~lintloader.summary.lowering.
parser_config`), so a file written for a newer Python than the running one is edited like any
other. A written file must also compile; when the running compiler rejects it, it is compiled
as the summary reads it, lowered (:mod:`lintloader.summary.lowering`), so a valid Python 3.12
file is not refused because this interpreter is 3.11, and a real mistake still is.
"""

from __future__ import annotations

import io
import warnings

import libcst as cst

from lintloader.fixers.base import FixError
from lintloader.summary.grammar import Unreadable
from lintloader.summary.lowering import CannotLower, lower, parser_config
from lintloader.summary.older import OldName, old_names
from lintloader.summary.source_text import DecodeError, decode_source


def parse_module(source: bytes | str) -> cst.Module:
    """The file as libcst reads it. A file written for Python 3.6 or older (``async`` as a
    name), which the summary reads but libcst does not, raises FixError, saying so."""
    try:
        return cst.parse_module(source, parser_config())
    except cst.ParserSyntaxError:
        older = _older_name(source)
        if older is None:
            raise
        raise FixError(
            f"written for Python 3.6 or older (`{older.word}` used as a name at "
            f"{older.line}:{older.column + 1}), which the fixers' parser does not read"
        ) from None


def _older_name(source: bytes | str) -> OldName | None:
    """The first ``async``/``await`` of the file that Python 3.6 reads as a name, if any."""
    try:
        text = source if isinstance(source, str) else decode_source(source)
        return next(old_names(io.StringIO(text).readlines()), None)
    except (DecodeError, SyntaxError):
        return None


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
            try:  # written for a newer Python than this one?
                lowered = lower(decode_source(data)).text
                compile(lowered, path, "exec", dont_inherit=True)
            except (cst.ParserSyntaxError, SyntaxError, CannotLower, Unreadable, DecodeError):
                raise error from None

"""Which Python grammars the summary reads; what LL000 says about a file written for a newer one.

The running interpreter's ``ast`` reads its own grammar. A file that only a newer Python parses
is read through libcst and lowered (:mod:`lintloader.summary.lowering`); this module holds the
limits of that path and the messages for a file beyond them. It imports nothing heavy.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

NEWEST_GRAMMAR = (3, 13)  # the newest grammar whose every construct the lowering handles
LIBCST_GRAMMAR = "3.14"  # what libcst's parser is told to read (it reads 3.14 as well)

# libcst nodes of grammars newer than the lowering handles: node class -> (version, what).
NEWER_NODES = {
    "TemplatedString": ((3, 14), "template strings, PEP 750"),
    "LazyImport": ((3, 15), "lazy imports, PEP 810"),
    "LazyImportFrom": ((3, 15), "lazy imports, PEP 810"),
}
# Constructs of grammars newer than libcst reads: (pattern on a line, Python version, what).
_TOO_NEW_FOR_LIBCST = (
    (re.compile(r"^[ \t]*lazy[ \t]+(?:import|from)[ \t]"), (3, 15), "lazy imports, PEP 810"),
)


class Unreadable(Exception):
    """A file the running ``ast`` rejects and the libcst path cannot read either, for a reason
    other than a mistake in the file; ``str()`` is the LL000 message."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line, self.column = line, column


class NewerGrammar(Unreadable):
    """Valid code for a Python newer than both the running one and what lintloader reads."""

    def __init__(self, version: tuple[int, int], feature: str, line: int = 1, column: int = 1):
        super().__init__(too_new_message(version, feature), line, column)
        self.version = version


def version_text(version: Sequence[int | str]) -> str:
    return ".".join(map(str, version[:2]))


def too_new_message(version: tuple[int, int], feature: str) -> str:
    """The LL000 message for a file that needs Python ``version`` for ``feature``."""
    return (
        f"needs Python {version_text(version)} ({feature}); lintloader ran on Python "
        f"{version_text(sys.version_info)} and reads source written for Python up to "
        f"{version_text(NEWEST_GRAMMAR)}"
    )


def stopped_earlier(error: SyntaxError, line: int, column: int) -> Unreadable:
    """The LL000 for a mistake at ``line`` that libcst found after ``ast`` had stopped at
    ``error`` on syntax that some Python reads (libcst read that far)."""
    return Unreadable(
        f"syntax error: invalid syntax (Python {version_text(sys.version_info)}'s parser "
        f"stopped earlier, at {error.lineno}:{error.offset}, on syntax of a newer Python)",
        line,
        column,
    )


def needs_newer_interpreter(
    version: tuple[int, int], feature: str, line: int = 1, column: int = 1
) -> Unreadable:
    """The LL000 for syntax lintloader reads only when it runs on Python ``version`` or later
    (the lowering keeps it as it is, and this interpreter's ``ast`` does not know it)."""
    return Unreadable(
        f"uses Python {version_text(version)} syntax ({feature}) that lintloader reads only "
        f"when it runs on Python {version_text(version)} or later; it ran on Python "
        f"{version_text(sys.version_info)}",
        line,
        column,
    )


def cannot_lower(detail: str, line: int = 1, column: int = 1) -> Unreadable:
    """The LL000 for newer syntax the lowering does not handle (a limitation, named)."""
    return Unreadable(
        f"newer Python syntax that lintloader cannot read on Python "
        f"{version_text(sys.version_info)} ({detail})",
        line,
        column,
    )


def too_new_for_libcst(text: str, lines: tuple[int, ...]) -> NewerGrammar | None:
    """A construct of a grammar newer than libcst reads on one of ``lines`` (1-based) of
    ``text``, if any: the parse error there is that, not a mistake in the file."""
    split = text.splitlines()
    for line in lines:
        if not 0 < line <= len(split):
            continue
        for pattern, version, feature in _TOO_NEW_FOR_LIBCST:
            if version > sys.version_info[:2] and pattern.search(split[line - 1]):
                return NewerGrammar(version, feature, line, 1)
    return None

"""Reading a file written for an older Python 3, and what LL000 says about one written for
Python 2.

Before Python 3.7, ``async`` and ``await`` were keywords only in ``async def`` code; anywhere
else they were names (``x.cuda(async=True)``, ``def run(async=False)``, common in research code
of 2017-2019). The running ``ast`` rejects such a file whole. Here each such name is renamed in
place to a placeholder of the same length that occurs nowhere in the file, the running ``ast``
parses the result (every line and column as they were), and the placeholders are renamed back
in the tree: the summary sees the names as written, where they were written.

Imported only after ``ast.parse`` failed. The tokens come from :mod:`tokenize`, which reads
``async`` and ``await`` as names whatever the grammar.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from lintloader.summary.grammar import Unreadable
from lintloader.summary.source_text import ParsedSource

_WORDS = ("async", "await")
_KEYWORD_AFTER_ASYNC = frozenset({"def", "for", "with"})
_SKIPPED = frozenset({tokenize.NL, tokenize.COMMENT})


@dataclass(frozen=True)
class OldName:
    """``async`` or ``await`` used as a name: 1-based line, 0-based character column."""

    word: str
    line: int
    column: int


def parse_older(text: str) -> ParsedSource | None:
    """``text``, which the running ``ast`` rejected, read as Python 3.6 reads it; None when it
    uses neither ``async`` nor ``await`` as a name (the rejection has another reason). Raises
    the SyntaxError of the renamed text: a mistake elsewhere in the file, at its place."""
    if "async" not in text and "await" not in text:
        return None
    lines = io.StringIO(text).readlines()
    try:
        names = list(old_names(lines))
    except SyntaxError:  # the tokenizer's IndentationError
        return None
    if not names:
        return None
    placeholders = placeholders_for(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences and the like
        tree = ast.parse(renamed(lines, names, placeholders))
    _rename(tree, {new: old for old, new in placeholders.items()})
    return ParsedSource.of(text, tree)


def old_names(lines: list[str]) -> Iterator[OldName]:
    """Each ``async`` and ``await`` that Python 3.6 reads as a name: ``async`` unless a
    ``def``, ``for`` or ``with`` follows it, ``await`` outside the body of an ``async def``."""
    tokens = _tokens(lines)
    depth = 0
    async_body: int | None = None  # the indentation depth of the async def's body we are in
    header = False  # inside the header (or one-line body) of an async def
    waiting = False  # its header ended: an INDENT next opens its body
    for index, token in enumerate(tokens):
        if token.type == tokenize.INDENT:
            depth += 1
            if waiting and async_body is None:
                async_body = depth
        elif token.type == tokenize.DEDENT:
            depth -= 1
            if async_body is not None and depth < async_body:
                async_body = None
        waiting = token.type == tokenize.NEWLINE and header
        if token.type == tokenize.NEWLINE:
            header = False
        if token.type != tokenize.NAME or token.string not in _WORDS:
            continue
        after = tokens[index + 1].string if index + 1 < len(tokens) else ""
        if token.string == "async" and after in _KEYWORD_AFTER_ASYNC:
            header = header or after == "def"
            continue
        if token.string == "await" and (header or async_body is not None):
            continue
        yield OldName(token.string, *token.start)


def placeholders_for(text: str) -> dict[str, str]:
    """For ``async`` and ``await``, a name as long that ``text`` does not contain."""
    return {word: _placeholder(word, text) for word in _WORDS}


def renamed(lines: list[str], names: list[OldName], placeholders: dict[str, str]) -> str:
    """``lines`` with each of ``names`` replaced in place by its placeholder."""
    lines = list(lines)
    for name in names:
        line = lines[name.line - 1]
        end = name.column + len(name.word)
        lines[name.line - 1] = line[: name.column] + placeholders[name.word] + line[end:]
    return "".join(lines)


def _tokens(lines: list[str]) -> list[tokenize.TokenInfo]:
    """The file's tokens up to where the tokenizer gives up (an unclosed bracket further on
    is a mistake there, which the parse of the renamed text reports), comments left out."""
    found: list[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(iter(lines).__next__):
            if token.type not in _SKIPPED:
                found.append(token)
    except tokenize.TokenError:
        pass
    return found


def _placeholder(word: str, text: str) -> str:
    """A name as long as ``word`` that ``text`` does not contain."""
    for number in range(100):
        candidate = f"_{word[:2]}{number:02d}"  # ``_as00``, ``_aw00``: as long as both words
        if candidate not in text:
            return candidate
    raise SyntaxError(f"no placeholder for {word!r}")  # a file holding every candidate


def _rename(tree: ast.AST, names: dict[str, str]) -> None:
    """Every identifier of the tree that is a placeholder (or, dotted, holds one) back to the
    name it stands for. No string literal holds one: the text contains none."""
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if isinstance(value, str) and not isinstance(node, ast.Constant):
                setattr(node, field, _renamed(value, names))
            elif isinstance(value, list) and value and isinstance(value[0], str):
                setattr(node, field, [_renamed(item, names) for item in value])


def _renamed(value: str, names: dict[str, str]) -> str:
    if "." not in value:
        return names.get(value, value)
    return ".".join(names.get(part, part) for part in value.split("."))


# -- Python 2: what LL000 says ------------------------------------------------------------------
# (what the line shows, the construct it is): checked on the line the parser stopped at.
_PYTHON2 = (
    (re.compile(r"^\s*print\s+(?!\s*[=(.\[,)]|\s*$|\s*#)"), "a print statement"),
    (re.compile(r"^\s*print\s*>>"), "a print statement"),
    (re.compile(r"^\s*exec\s+(?![=(.\[,)]|\s*$)"), "an exec statement"),
    (re.compile(r"^\s*raise\s+[\w.]+(?:\([^)]*\))?\s*,"), "`raise E, message`"),
    (re.compile(r"<>"), "the `<>` operator"),
    (re.compile(r"`"), "a backquoted repr"),
    (re.compile(r"(?<![\w.])0\d+(?![\w.])"), "an octal literal without `0o`"),
    (re.compile(r"(?<![\w.])\d+[lL](?!\w)"), "a long integer literal"),
)


def python2_construct(text: str, error: SyntaxError) -> Unreadable | None:
    """The LL000 for a file the parser stopped in on a construct of Python 2, naming it;
    None when the line it stopped at shows none."""
    lines = text.splitlines()
    line_number = error.lineno or 0
    if not 0 < line_number <= len(lines):
        return None
    line = _code_of(lines[line_number - 1])
    for pattern, construct in _PYTHON2:
        if pattern.search(line):
            return Unreadable(
                f"syntax error: {construct}, Python 2 syntax that no Python 3 reads; "
                "lintloader reads source written for Python 3",
                line_number,
                error.offset or 1,
            )
    return None


def _code_of(line: str) -> str:
    """The line without its string literals' contents and its comment (roughly: one line)."""
    line = re.sub(r"(?<![\w])[bBrRuUfF]{0,2}('''|\"\"\"|'|\")(?:\\.|(?!\1).)*\1", "''", line)
    return line.split("#", 1)[0]

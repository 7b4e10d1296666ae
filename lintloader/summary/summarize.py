"""The summary's one entry point: bytes in, a :class:`FileSummary` out (or its LL000 error)."""

from __future__ import annotations

from lintloader.summary.calls import Summarizer
from lintloader.summary.dataloaders import loader_rider
from lintloader.summary.grammar import Unreadable
from lintloader.summary.helpers import one_line
from lintloader.summary.limits import MAX_NESTING, parser_nesting_problem, too_deep
from lintloader.summary.model import FileSummary
from lintloader.summary.noqa import noqa_lines
from lintloader.summary.source_text import DecodeError, ParsedSource, decode_source
from lintloader.summary.walk import TooDeep


def summarize_source(
    source: bytes, path: str, module: str, is_package: bool = False
) -> FileSummary:
    """Parse ``source`` with CPython's ``ast`` (through libcst when the file is written for a
    newer Python) and summarize it; a file that cannot be decoded, parsed or analyzed gets
    ``summary.error`` (an LL000 finding) instead. Whatever else goes wrong with one file (a
    bug, a parser library without a node this code names) is that file's LL000 too, never
    the run's end."""
    try:
        return _summarize(source, path, module, is_package)
    except Exception as exc:
        error = f"internal error reading this file: {type(exc).__name__}: {one_line(str(exc))}"
        return FileSummary(path, module, is_package, error=error)


def _summarize(source: bytes, path: str, module: str, is_package: bool) -> FileSummary:
    summary = FileSummary(path=path, module=module, is_package=is_package)
    try:
        parsed = parse_source(source)
    except DecodeError as exc:
        summary.error = f"cannot decode: {exc}"
        return summary
    except SyntaxError as exc:
        summary.error = parser_nesting_problem(exc) or f"syntax error: {one_line(str(exc.msg))}"
        summary.error_line, summary.error_column = exc.lineno or 1, exc.offset or 1
        return summary
    except (RecursionError, MemoryError) as exc:
        summary.error = parser_nesting_problem(exc)
        return summary
    except Unreadable as exc:
        summary.error, summary.error_line, summary.error_column = str(exc), exc.line, exc.column
        return summary
    return summarize_parsed(parsed, source, path, module, is_package)


def summarize_parsed(
    parsed: ParsedSource, source: bytes, path: str, module: str, is_package: bool = False
) -> FileSummary:
    """The summary of a parsed file (``source``: its bytes, for the loader facts' token test)."""
    summary = FileSummary(path=path, module=module, is_package=is_package)
    try:
        summary.noqa = noqa_lines(parsed.text, parsed.tree)
        loaders = loader_rider(parsed, source)
        Summarizer(summary, parsed, loaders).visit(parsed.tree)
        summary.loaders = loaders.finish(parsed.tree) if loaders else None
    except TooDeep:
        summary.error = too_deep(f"more than {MAX_NESTING} levels")
    except RecursionError:
        summary.error = too_deep("recursion limit")
    if summary.error:  # nothing half-summarized reaches the analysis
        summary = FileSummary(path, module, is_package, error=summary.error)
    return summary


def parse_source(source: bytes) -> ParsedSource:
    """``ast.parse`` on the file; when it rejects the file, code written for an older Python 3
    (``async`` as a name) is read with those names renamed in place, and the libcst path
    (imported only then) reads code written for a newer Python than this one. Raises what
    :meth:`ParsedSource.parse` raises, and :class:`Unreadable` (Python 2 code among it)."""
    try:
        return ParsedSource.parse(source)
    except SyntaxError as exc:
        if parser_nesting_problem(exc) or "null bytes" in str(exc.msg):
            raise
        from lintloader.summary.newer import parse_newer
        from lintloader.summary.older import parse_older, python2_construct

        text = decode_source(source)
        try:
            return parse_older(text) or parse_newer(text, exc)
        except SyntaxError as final:
            raise python2_construct(text, final) or final from None

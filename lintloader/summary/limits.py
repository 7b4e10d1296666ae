"""Limits that keep one pathological file from crashing or stalling a run.

The summarizers walk CPython's ``ast`` (C code with its own depth guards, never executes
anything) recursively, and the fixers hand a file with a finding to libcst, whose parser and
visitors recurse once per level of nesting: a generated file with thousands of nested operators
can exhaust the C stack there (a segmentation fault, which no ``except`` catches) or take
minutes. So a file that nests deeper than libcst copes with (counted as libcst counts) or that is
too large becomes an LL000 finding, is never fixed, and the run goes on.
"""

from __future__ import annotations

DEFAULT_MAX_FILE_MB = 4.0  # files larger than this are not parsed (``max-file-size`` in MB)
MAX_NESTING = 400  # deeper expression/statement nesting is not analyzed (see summary/walk.py)


def size_problem(size: int, max_mb: float) -> str | None:
    """The LL000 message for a file of ``size`` bytes, or None when it is small enough."""
    if max_mb <= 0 or size <= max_mb * 1024 * 1024:
        return None
    return (
        f"too large to analyze ({size / 1024 / 1024:.1f} MB > {max_mb:g} MB; "
        "raise `max-file-size` in [tool.lintloader] to analyze it)"
    )


def parser_nesting_problem(error: BaseException) -> str | None:
    """The LL000 message when CPython's parser itself gave up on nesting, or None."""
    if isinstance(error, (RecursionError, MemoryError)):
        return too_deep("more than the parser's limit")
    text = str(getattr(error, "msg", ""))
    if "too many nested" in text or "too complex" in text:
        return too_deep(text)
    return None


def too_deep(detail: str) -> str:
    return f"too deeply nested to analyze ({detail})"

"""Limits that keep one pathological file from crashing or stalling a run.

libcst's parser and visitors recurse once per level of nesting: a generated file with thousands
of nested operators can exhaust the C stack (a segmentation fault, which no ``except`` catches)
or take minutes. Before libcst sees a file, CPython's own parser (``ast``: C code with its own
depth guards, never executes anything) measures how deep the file nests; files that are too deep
or too large become an LL000 finding instead.
"""

from __future__ import annotations

import ast
import warnings

DEFAULT_MAX_FILE_MB = 4.0  # files larger than this are not parsed (``max-file-size`` in MB)
MAX_NESTING = 400  # deeper expression/statement nesting is not parsed


def size_problem(size: int, max_mb: float) -> str | None:
    """The LL000 message for a file of ``size`` bytes, or None when it is small enough."""
    if max_mb <= 0 or size <= max_mb * 1024 * 1024:
        return None
    return (
        f"too large to analyze ({size / 1024 / 1024:.1f} MB > {max_mb:g} MB; "
        "raise `max-file-size` in [tool.lintloader] to analyze it)"
    )


def nesting_problem(source: bytes) -> str | None:
    """The LL000 message for a file nested too deeply for libcst, or None.

    Files CPython cannot parse for other reasons (Python 2, newer syntax, bad bytes) pass:
    libcst reports those itself.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (RecursionError, MemoryError):
        return _too_deep("more than the parser's limit")
    except SyntaxError as exc:
        text = str(exc.msg)
        if "too many nested" in text or "too complex" in text:
            return _too_deep(text)
        return None
    except ValueError:  # null bytes, undecodable source
        return None
    depth = nesting_depth(tree, MAX_NESTING)
    return _too_deep(f"more than {MAX_NESTING} levels") if depth > MAX_NESTING else None


def nesting_depth(tree: ast.AST, limit: int) -> int:
    """How deep ``tree`` nests, counting ``a and b and c`` as libcst does (one level per
    operator); stops early once past ``limit``. Iterative, so it never recurses itself."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.BoolOp):
            depth += len(node.values) - 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _too_deep(detail: str) -> str:
    return f"too deeply nested to analyze ({detail})"

"""The text a summary keeps for a value (``summary/written.py``): ``ast.unparse``'s, with every
f-string written as a call of ``f`` on the values it formats, so that the text does not depend
on the Python that made the summary (3.12 writes f-strings with PEP 701's quotes)."""

from __future__ import annotations

import ast

import pytest

from lintloader.summary.written import written, written_by_copy

pytestmark = pytest.mark.fast


def value(text: str) -> ast.expr:
    statement = ast.parse(text).body[0]
    assert isinstance(statement, ast.Expr)
    return statement.value


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ('f"{a!r:>{w}} b"', "f(a, w)"),
        ('load(f"{root}/{name}.pt", n=k)', "load(f(root, name), n=k)"),
        ("f\"{g(f'{x}')}\"", "f(g(f(x)), x)"),  # the inner f-string's value is the outer's too
        ('[f"{i}" for i in range(n)]', "[f(i) for i in range(n)]"),
        ('f"plain"', "f()"),
        ("self.data.loader", "self.data.loader"),
    ],
)
def test_f_strings_are_written_as_calls(source: str, text: str) -> None:
    assert written(value(source)) == text
    assert written_by_copy(value(source)) == text  # the way of a Python with no writer class


@pytest.mark.parametrize(
    "source",
    ["a + b * (c - d)", "x if y else z", "lambda q, *r: q[1:2, ...]", "{**m, 'k': (yield)}"],
)
def test_other_values_are_written_as_unparse_writes_them(source: str) -> None:
    node = value(source)
    assert written(node) == ast.unparse(node) == written_by_copy(node)

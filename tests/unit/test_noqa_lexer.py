"""One ``# noqa`` grammar: the suppressions (summary), LL001's judge and ``--add-noqa`` all
read a comment through :func:`lintloader.summary.noqa.lex`, so they cannot disagree on it."""

from __future__ import annotations

import ast

import pytest

from lintloader.fixers.add_noqa import add_noqa
from lintloader.summary.noqa import FILE_LEVEL, NoqaComment, lex, noqa_lines
from lintloader.suppress.unused_noqa import directives, without_unused

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("x = 1", None),
        ("x = 1  # noqa", NoqaComment(7, 13, None, False)),
        ("x = 1  # NOQA:ll101,LL102", NoqaComment(7, 25, ("ll101", "LL102"), False)),
        ("x = 1  # why  # noqa: LL101 LL2", NoqaComment(14, 31, ("LL101", "LL2"), False)),
        ("  # lintloader: noqa: LL201", NoqaComment(2, 27, ("LL201",), True)),
        ("x = 1  # lintloader: noqa", None),  # file level only on a line of its own
    ],
)
def test_lex(line: str, expected: NoqaComment | None) -> None:
    assert lex(line) == expected


def test_the_readers_agree_with_the_lexer() -> None:
    source = "a = 1  # noqa: ll101, E501\nb = 2  # noqa\n# lintloader: noqa: LL202\n"
    assert noqa_lines(source) == {1: {"LL101", "E501"}, 2: None, FILE_LEVEL: {"LL202"}}
    assert [(d.line, d.start, d.end, d.codes) for d in directives(source)] == [
        (1, 7, 26, ("LL101", "E501"))
    ]
    assert without_unused("a = 1  # noqa: ll101, E501", ["LL101"]) == "a = 1  # noqa: E501"
    edited, count = add_noqa(b"a = f(1)  # noqa: ll101\n", {1: {"LL203"}})
    assert (edited, count) == (b"a = f(1)  # noqa: LL101, LL203\n", 1)


SPREAD = """\
import ast


@decorate(
    x)  # noqa: LL101
def f(
    a,
):
    if a:
        g(1,
          2)  # noqa: LL202
        h(3,
          4)
    return (5,
            6); k = (7,  # noqa: LL203
                     8)
"""


def test_a_comment_spreads_over_the_lines_of_its_statement_only() -> None:
    """Over the header of a decorated def (not its body), the call it ends, and the two
    statements that share a line through ``;`` (not the call next to them)."""
    found = noqa_lines(SPREAD, ast.parse(SPREAD))
    assert found == {
        **dict.fromkeys(range(4, 9), frozenset({"LL101"})),
        10: frozenset({"LL202"}),
        11: frozenset({"LL202"}),
        14: frozenset({"LL203"}),
        15: frozenset({"LL203"}),
        16: frozenset({"LL203"}),
    }

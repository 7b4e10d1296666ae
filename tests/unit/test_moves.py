"""``incremental/moves.py``: a new summary counts as the old one with lines moved only when one
strictly increasing map takes every old line to the new one and nothing else changed. Each
case summarizes real source, before and after an edit."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import REPO

from lintloader.incremental import moves
from lintloader.incremental.moves import SHIFTED, line_moves, moved_only
from lintloader.summary.model import FileSummary
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

SOURCE = """\
from torch.utils.data import DataLoader


class Fetcher:
    def __iter__(self):
        self.reset()
        return self

    def reset(self):
        for loader in self.loaders:
            loader._iterator._shutdown_workers()
        self.done = True  # noqa: LL101


def train(dataset, epochs):
    for epoch in range(epochs):
        loader = DataLoader(dataset, num_workers=2, persistent_workers=True)
        for batch in loader:
            step(batch)
        log(epoch)
"""


def summary(source: str) -> FileSummary:
    return summarize_source(source.encode(), "pkg/fetch.py", "pkg.fetch")


def edited(old: str, new: str, count: int = 1) -> str:
    assert old in SOURCE
    return SOURCE.replace(old, new, count)


MOVED = {
    "a comment above everything": "# header\n# more\n" + SOURCE,
    "blank lines between functions": edited("\n\ndef train", "\n\n\n\n\ndef train"),
    "a statement no rule records": edited(
        "        self.reset()\n", "        self.count = 0\n\n        self.reset()\n"
    ),
    "a comment inside a loop body": edited(
        "            step(batch)\n", "            # one step\n            step(batch)\n"
    ),
    "lines removed above": SOURCE.replace(
        "from torch.utils.data import DataLoader\n\n\n", ""
    ).replace("class Fetcher", "from torch.utils.data import DataLoader\nclass Fetcher"),
}

CHANGED = {
    "a call moved out of its loop": edited("            step(batch)\n", "        step(batch)\n"),
    "a call moved into a loop": edited("        log(epoch)\n", "            log(epoch)\n"),
    "two calls swapped": edited(
        "        self.reset()\n        return self\n", "        return self\n        self.reset()\n"
    ),
    "a new call": edited("        self.done", "        self.flush()\n        self.done"),
    "an argument changed": edited("num_workers=2", "num_workers=4"),
    "a call's column": edited("            step(batch)", "            out = step(batch)"),
    "a noqa comment added": edited("        log(epoch)\n", "        log(epoch)  # noqa\n"),
    "a noqa comment dropped": edited("  # noqa: LL101", ""),
    "a loop ends a line later": edited("            step(batch)\n", "            step(\n batch)\n"),
}


@pytest.mark.parametrize("name", sorted(MOVED))
def test_only_moved_lines_count_as_moved(name: str) -> None:
    before, after = summary(SOURCE), summary(MOVED[name])
    assert before != after  # the line numbers did change
    assert moved_only(before, after)


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_any_other_change_does_not(name: str) -> None:
    assert CHANGED[name] != SOURCE
    assert not moved_only(summary(SOURCE), summary(CHANGED[name]))


def test_an_equal_summary_counts_as_moved_by_nothing() -> None:
    assert moved_only(summary(SOURCE), summary(SOURCE))


def test_blank_lines_anywhere_between_statements_only_move_lines() -> None:
    """Blank lines keep every statement where it was in the syntax tree: whatever line they
    are inserted at, the summary only moves (a property checked on random insertions)."""
    lines = SOURCE.splitlines(keepends=True)
    rng = random.Random(1203)
    for _ in range(20):
        moved = list(lines)
        for at in sorted(rng.sample(range(1, len(lines)), 3), reverse=True):
            moved.insert(at, "\n" * rng.randint(1, 3))
        assert moved_only(summary(SOURCE), summary("".join(moved)))


def test_a_function_of_lines_must_be_one_function() -> None:
    """Two facts on one old line must stay on one new line: the map is a function."""
    before = summary("def f():\n    a(); b()\n")
    after = summary("def f():\n    a()\n    b()\n")
    assert not moved_only(before, after)


# Which moves keep every difference of two lines (SHIFTED) and which do not (MOVED): a rule
# may compute with lines (a function's length), so only the first keeps the stored findings.
SHIFTS = {
    "a comment above everything": SHIFTED,
    "lines removed above": SHIFTED,  # no line it records is above the class
    "blank lines between functions": moves.MOVED,  # train moves, Fetcher does not
    "a statement no rule records": moves.MOVED,  # inside __iter__: the function grows
    "a comment inside a loop body": moves.MOVED,
}


@pytest.mark.parametrize("name", sorted(SHIFTS))
def test_one_offset_for_every_line_is_a_shift(name: str) -> None:
    assert line_moves(summary(SOURCE), summary(MOVED[name])) == SHIFTS[name]


def test_the_placeholder_lines_of_a_file_do_not_stop_a_shift() -> None:
    """The module scope and a parsed file's error line hold 1 wherever the file starts."""
    before = summary(SOURCE)
    assert (before.functions["<module>"].line, before.error_line) == (1, 1)
    assert line_moves(before, summary("\n\n" + SOURCE)) == SHIFTED
    assert line_moves(before, before) == SHIFTED  # by nothing
    broken = summary("def f(:\n"), summary("\ndef f(:\n")
    assert line_moves(*broken) == SHIFTED  # where the error is: a place, and it moved


FIXTURES = sorted((REPO / "fixtures" / "rules").rglob("*.py"))


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_line_a_fixture_records_is_declared(path: Path) -> None:
    """Lines added above a whole file only shift it: a summary field that holds a line number
    but is not named in ``moves`` (LINE_FIELDS and its kin) would make the comparison fail,
    and every such edit would run the rules again (correct, but the fast path lost)."""
    source = path.read_text(encoding="utf-8")
    before = summarize_source(source.encode(), "pkg/mod.py", "pkg.mod")
    after = summarize_source(("# moved\n\n" + source).encode(), "pkg/mod.py", "pkg.mod")
    assert line_moves(before, after) == SHIFTED

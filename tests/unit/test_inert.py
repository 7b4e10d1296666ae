"""Functions no analysis reads (``incremental/inert.py``) and the byte search that shows no file
names them (``incremental/mentions.py``), on real summaries of real source."""

from __future__ import annotations

from collections import Counter

import pytest

from lintloader.incremental.inert import edited_inert, without
from lintloader.incremental.mentions import mentions
from lintloader.incremental.moves import moved_only
from lintloader.summary.model import FileSummary
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

BASE = '''"""A module with a chain and a helper."""

from torch.utils.data import DataLoader


class Fetcher:
    def __iter__(self):
        self.reset()
        return self

    def reset(self):
        self.loader._iterator = None


def build(dataset):
    for epoch in range(3):
        loader = DataLoader(dataset, num_workers=2, persistent_workers=True)
    return loader


def helper(value):
    return value
'''


def summary(source: str) -> FileSummary:
    return summarize_source(source.encode(), "m.py", "m")


def edited(after: str, before: str = BASE) -> frozenset[str] | None:
    return edited_inert(summary(before), summary(after))


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        (BASE + "\n\ndef added(x):\n    return x\n", {"added"}),  # added
        (BASE.replace("def helper(value):\n    return value\n", ""), {"helper"}),  # removed
        (BASE.replace("return value", "return value  # same"), set()),  # nothing read changed
        (BASE.replace("def helper(value):", "def helper(value, other):"), {"helper"}),
        (BASE.replace("helper", "renamed"), {"helper", "renamed"}),
        ("# moved\n" + BASE + "\n\ndef added(x):\n    return x\n", {"added"}),
    ],
)
def test_inert_edits_are_named(after: str, expected: set[str]) -> None:
    assert edited(after) == expected


@pytest.mark.parametrize(
    "after",
    [
        BASE + "\n\ndef added(x):\n    return len(x)\n",  # calls something
        BASE + "\n\ndef added(xs):\n    for x in xs:\n        pass\n",  # holds a loop
        BASE + "\n\ndef added(d):\n    d._iterator = None\n",  # resets an iterator
        BASE + "\n\ndef added(d):\n    loader: DataLoader = d\n    return loader\n",  # types
        BASE + "\n\ndef added():\n    def inner(x):\n        return x\n    return inner\n",
        BASE + "\n\ndef __getattr__(name):\n    return name\n",  # a module dunder
        BASE.replace("    def reset(self):", "    def more(self):\n        return 1\n\n"
                     "    def reset(self):"),  # a method: the class's methods change
        BASE.replace("return value", "return len(value)"),  # the helper now calls
    ],
)  # fmt: skip
def test_edits_of_functions_an_analysis_reads_are_not_inert(after: str) -> None:
    assert edited(after) is None


def test_what_is_left_compares_as_usual() -> None:
    before = summary(BASE)
    appended = summary(BASE + "\n\ndef added(x):\n    return x\n")
    names = edited_inert(before, appended)
    assert names == {"added"}
    assert without(before, names) == without(appended, names)
    assert before.loaders is not None and appended.loaders is not None
    assert "added" in appended.loaders.functions  # it returns a name: facts were recorded
    shifted = summary("# a first line\n" + BASE + "\n\ndef added(x):\n    return x\n")
    assert without(before, names) != without(shifted, names)
    assert moved_only(without(before, names), without(shifted, names))
    # something else changed too (an import): what is left differs in more than lines
    changed = summary(BASE.replace("from torch", "import os\nfrom torch") + "\ndef added(): ...\n")
    names = edited_inert(before, changed)
    assert names == {"added"}
    assert not moved_only(without(before, names), without(changed, names))


def test_without_nothing_is_the_summary_itself() -> None:
    before = summary(BASE)
    assert without(before, frozenset()) is before


def test_mentions_count_whole_words_in_code_strings_and_comments() -> None:
    source = b"def added(x):\n    return added_more(x)  # added\n"
    source += b"s = 'added' + x.added\n_added = 1\n"
    assert mentions({"added", "absent"}, source) == Counter({"added": 4})


def test_mentions_read_identifiers_as_python_does() -> None:
    # NFKC: a fullwidth letter spells the same identifier (Python runs this as `added()`)
    assert mentions({"added"}, "\uff41dded()\n".encode()) == Counter({"added": 1})
    latin1 = "# -*- coding: latin-1 -*-\n# caf\u00e9\nadded()\n".encode("latin-1")
    assert mentions({"added"}, latin1) == Counter({"added": 1})
    assert mentions({"caf\u00e9"}, latin1) == Counter({"caf\u00e9": 1})
    assert mentions({"caf\u00e9"}, b"cafe = 1\n") == Counter()  # ASCII cannot spell it


def test_a_file_that_cannot_be_decoded_names_everything() -> None:
    assert mentions({"added"}, b"x = '\xff\xfe'\n") is None

"""LL202's one model of where a construction runs again (``analysis/repetition.py``): a loop of
its own function and a loop of a caller are both a :class:`Place`, judged by one definition of
what depends on the loop. Real summaries, linked; the rule's findings are pinned by
fixtures/rules/LL202/."""

from __future__ import annotations

import textwrap

import pytest

from lintloader.analysis.loaders import LoaderSite, loader_sites
from lintloader.analysis.repetition import Place, own_loop, places
from lintloader.link.program import Program
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

SOURCE = """
from torch.utils.data import DataLoader

def build(files):
    return DataLoader(files, num_workers=4)

def train_inline(splits, data):
    for split in splits:
        ds = load(split)
        DataLoader(ds, num_workers=4)
    for epoch in range(3):
        DataLoader(data, num_workers=4)
    for item in (data, splits):
        DataLoader(data, num_workers=4)

def train_called(splits, data):
    for split in splits:
        ds = load(split)
        build(ds)
    for epoch in range(3):
        build(data)
    for item in (data, splits):
        build(data)
"""


def program() -> tuple[Program, list[LoaderSite]]:
    summary = summarize_source(textwrap.dedent(SOURCE).encode(), "example.py", "example")
    assert summary.ok, summary.error
    linked = Program([summary])
    return linked, loader_sites(linked)


def judged(place: Place) -> tuple[str, bool, bool, int]:
    assert place.loop is not None
    return (place.loop.header, place.dependent, place.fixed, place.frequency)


def test_a_loop_of_its_own_and_a_loop_of_a_caller_are_judged_alike() -> None:
    linked, sites = program()
    inline = [judged(own_loop(linked, s)) for s in sites if s.info.function.name == "train_inline"]
    (built,) = [s for s in sites if s.info.function.name == "build"]
    called = sorted((judged(p) for p in places(linked, built)), key=lambda j: j[0])
    assert sorted(inline) == called
    assert sorted(inline) == [
        ("for epoch in range(3)", False, False, 3),
        ("for item in (data, splits)", False, True, 1),
        ("for split in splits", True, False, 1),
    ]


def test_its_own_loop_is_a_place_with_no_call_on_the_way() -> None:
    linked, sites = program()
    site = next(s for s in sites if s.info.function.name == "train_inline")
    place = own_loop(linked, site)
    assert (place.kind, place.edges, place.caller.key) == ("loop", (), site.key)

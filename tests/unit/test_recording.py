"""The linker's queries have no side effect; what the analysis read is recorded by the program
a stored run is linked as (``incremental/recording.py``), which answers every query the same."""

from __future__ import annotations

from functools import cached_property

import pytest

from lintloader.analysis.context import AnalysisContext
from lintloader.incremental.recording import RecordingProgram
from lintloader.link.call_kinds import RESET_LIKE_CALLS
from lintloader.link.program import Program
from lintloader.rules.registry import all_rules
from lintloader.summary.model import FileSummary
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

STATE = """
def shutdown(loader):
    loader._iterator = None
"""
FETCH = """
import state
from state import shutdown as halt


class Fetcher:
    def __iter__(self):
        self.reset()
        return self

    def reset(self):
        state.shutdown(self.loader)
        self.reset_state()

    def close(self):
        halt(self.loader)
"""


def summaries() -> list[FileSummary]:
    sources = {"state": STATE, "fetch": FETCH}
    return [summarize_source(text.encode(), f"/p/{m}.py", m) for m, text in sources.items()]


def _ask(program: Program) -> list[object]:
    """Every call query, on every function, and every rule's findings."""
    answers: list[object] = []
    for key in sorted(program.functions):
        answers += [program.edges_from(key), program.edges_into(key)]
        answers += [program.calls_of(key), program.calls_of(key, RESET_LIKE_CALLS)]
    answers.append(list(program.calls_named(["shutdown", "halt", "reset"])))
    context = AnalysisContext(program)
    answers += [sorted(rule.check(context), key=lambda f: f.sort_key) for rule in all_rules()]
    return answers


@pytest.mark.enumerates_rules
def test_the_linker_answers_the_same_with_or_without_recording() -> None:
    plain, recording = Program(summaries()), RecordingProgram(summaries())
    assert _ask(plain) == _ask(recording)
    assert not hasattr(plain, "read_calls") and not hasattr(plain, "asked_names")
    assert "fetch:Fetcher.reset" in recording.read_calls
    assert ("fetch:Fetcher.reset", RESET_LIKE_CALLS.name) in recording.read_kinds
    # callers of shutdown were looked up, under the name an import gives it too
    assert {"shutdown", "halt"} <= recording.looked_up_names()


@pytest.mark.enumerates_rules
def test_a_query_of_the_plain_linker_leaves_it_as_it_was() -> None:
    """Queries add no attribute but what is worked out once from the files (cached)."""
    program = Program(summaries())
    before = set(vars(program))
    _ask(program)
    worked_out = {
        name
        for layer in Program.__mro__  # link/symbols.py, hierarchy.py, calls.py, program.py
        for name, value in vars(layer).items()
        if isinstance(value, cached_property)
    }
    assert set(vars(program)) - before <= worked_out


def test_calls_named_records_only_the_names_taken() -> None:
    """A caller that stops after the first call read no more: the rest is not recorded."""
    program = RecordingProgram(summaries())
    calls = program.calls_named(["shutdown", "reset_state"])
    info, call = next(calls)
    assert call.target[-1] == "shutdown" and info.key == "fetch:Fetcher.reset"
    assert program.asked_names == {"shutdown"}
    assert program.read_calls == {"fetch:Fetcher.reset"}

"""A program linked round by round answers as one linked at once: what ``Program.gathered``
keeps over ``extend`` (only the new files' functions are worked out), the index of calls by
name that ``edges_into`` and ``calls_named`` read, and so every demand hook's answer
(``select/policy.py`` extends one program each round)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lintloader.analysis.loaders import facts_of, functions_building, functions_with_facts
from lintloader.analysis.reset_demand import demanding_sinks
from lintloader.link.program import FunctionInfo, Program
from lintloader.rules.registry import all_rules
from lintloader.select.policy import demand_hooks
from lintloader.summary.model import FileSummary, FunctionFacts
from lintloader.summary.summarize import summarize_source

# in-process (`pytest -m fast`, CONTRIBUTING.md); reads every rule's fixtures
pytestmark = [pytest.mark.fast, pytest.mark.enumerates_rules]

RULES = Path(__file__).resolve().parents[2] / "fixtures" / "rules"


@pytest.fixture(scope="module")
def summaries() -> list[FileSummary]:
    """Every rule fixture, each its own module (``LL101.positive``), in path order."""
    paths = sorted(RULES.glob("LL*/*.py"))
    return [
        summarize_source(path.read_bytes(), str(path), f"{path.parent.name}.{path.stem}")
        for path in paths
    ]


def _in_rounds(summaries: list[FileSummary], rounds: int) -> Program:
    """Linked in ``rounds`` parts, every question below asked after each part."""
    size = -(-len(summaries) // rounds)
    program = Program(summaries[:size])
    for start in range(size, len(summaries), size):
        _answers(program)
        program.extend(summaries[start : start + size])
    return program


def _answers(program: Program) -> list[object]:
    answers: list[object] = [
        [info.key for info, _ in functions_with_facts(program)],
        [info.key for info, _ in functions_building(program)],
        [info.key for info, _ in program.gathered(facts_of)],
        sorted(demanding_sinks(program)),
    ]
    for key in sorted(program.functions):
        answers.append(program.edges_into(key))
    names = sorted(
        {call.target[-1] for info in program.functions.values() for call in info.function.calls}
    )
    answers.append(list(program.calls_named(names)))
    answers.append([hook(program) for hook in demand_hooks(all_rules())])
    return answers


@pytest.mark.parametrize("rounds", [2, 5])
def test_a_program_linked_in_rounds_answers_as_one_linked_at_once(
    summaries: list[FileSummary], rounds: int
) -> None:
    at_once = _answers(Program(summaries))
    assert _answers(_in_rounds(summaries, rounds)) == at_once
    assert at_once[0] and at_once[1] and at_once[3]  # the fixtures hold facts, builders, sinks


def test_gathered_works_out_each_function_once(summaries: list[FileSummary]) -> None:
    asked: list[str] = []

    def counted(info: FunctionInfo) -> FunctionFacts | None:
        asked.append(info.key)
        return facts_of(info)

    size = len(summaries) // 3
    program = Program(summaries[:size])
    first = program.gathered(counted)
    program.extend(summaries[size:])
    kept = program.gathered(counted)
    assert program.gathered(counted) is kept  # nothing linked since: nothing worked out
    assert sorted(asked) == sorted(program.functions)  # each function once, over the rounds
    keys = [info.key for info, _ in kept]
    assert {info.key for info, _ in first} < set(keys)
    assert keys == sorted(keys)

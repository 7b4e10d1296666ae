"""``pytest -n N`` hands out the longest groups first (tests/worker_groups.py): by the seconds
the last run recorded, else by the prior figures, else by size."""

from __future__ import annotations

import pytest
from conftest import REPO
from worker_groups import NEW_RULE_PARTS, PRIOR_S, UNKNOWN_S, longest_first

pytestmark = pytest.mark.fast

# the longest part of the new-rule test (a test of its own: its module has no module-scoped
# fixture)
NEW_RULE = f"{NEW_RULE_PARTS}[console]"


def group(*tests: str) -> dict[str, bool]:
    return dict.fromkeys(tests, False)


def test_recorded_seconds_put_a_long_lone_test_before_a_bigger_group() -> None:
    queue = {
        "tests/test_a.py": group("tests/test_a.py::one", "tests/test_a.py::two"),
        "tests/test_z.py::slow": group("tests/test_z.py::slow"),
        "tests/test_b.py::quick": group("tests/test_b.py::quick"),
    }
    seconds = {
        "tests/test_a.py::one": 3.0,
        "tests/test_a.py::two": 4.0,
        "tests/test_z.py::slow": 60.0,
    }
    assert longest_first(queue, seconds) == [
        "tests/test_z.py::slow",
        "tests/test_a.py",
        "tests/test_b.py::quick",  # no record: UNKNOWN_S
    ]


def test_without_records_the_prior_comes_first_then_the_larger_groups() -> None:
    queue = {
        "tests/test_a.py::x": group("tests/test_a.py::x"),
        "tests/test_b.py": group("tests/test_b.py::x", "tests/test_b.py::y"),
        NEW_RULE: group(NEW_RULE),
    }
    assert PRIOR_S[NEW_RULE] > 2 * UNKNOWN_S
    assert longest_first(queue, {}) == [NEW_RULE, "tests/test_b.py", "tests/test_a.py::x"]


def test_a_record_overrides_the_prior() -> None:
    queue = {NEW_RULE: group(NEW_RULE), "tests/test_b.py::x": group("tests/test_b.py::x")}
    seconds = {NEW_RULE: 0.5, "tests/test_b.py::x": 2.0}
    assert longest_first(queue, seconds) == ["tests/test_b.py::x", NEW_RULE]


def test_the_prior_names_tests_that_exist() -> None:
    """A renamed module or test would silently lose its place at the front."""
    for scope in PRIOR_S:
        module, _, test = scope.partition("::")
        source = (REPO / module).read_text(encoding="utf-8")
        if test:
            assert f"def {test.split('[')[0]}(" in source, scope

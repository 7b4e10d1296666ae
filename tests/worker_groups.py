"""How ``pytest -n N`` hands the tests to its workers, unless ``--dist`` says otherwise: the
tests of a module with a module-scoped fixture go to one worker together, every other test
goes wherever a worker is free, the longest first.

With xdist's default (``--dist load``) each worker that runs one test of a module runs the
module's shared fixture again: test_trace.py's 20 traced training runs, test_trace_cost.py's,
the verify probes, twice on two workers. ``--dist loadscope`` runs them once but hands out
every module whole, and a long module handed out last keeps one worker busy alone.
(xdist's own ``loadgroup`` would do this with marks, but with pytest 9 it no longer groups.)

Longest first: each run records every test's seconds (setup, call and teardown) in pytest's
cache (``.pytest_cache``, key :data:`SECONDS_KEY`), and the next run hands out the groups by
those seconds, longest first, so that no worker is left alone with a long test at the end.
A test with no record counts :data:`UNKNOWN_S`; on a first run (no cache: CI) the groups
named in :data:`PRIOR_S` count what they took on a loaded 2-core machine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
GROUPED = pytest.StashKey[bool]()
MODULE_FIXTURE = re.compile(r"@pytest\.fixture\([^)]*scope=[\"']module[\"']")
SECONDS_KEY = "lintloader/test-seconds"
UNKNOWN_S = 1.0
# the new-rule test, one case per part of the marked modules it runs in its copy
NEW_RULE_PARTS = "tests/test_new_rule_copy.py::test_a_new_rule_is_one_module_plus_a_fixtures_folder"
# seconds the longest groups took in the last full `-n 2` run on a quiet 2-core machine (round
# 7's record; round 10's for the static groups, summed over the test ids that still exist), the
# groups rounds 8, 10 and 11 cut counted at what their cut leaves (scaled by the CPU seconds of
# a serial run before and after), for a run without a cache (CI's, and the new-rule test's
# copy); groups of 20 s and more
PRIOR_S: dict[str, float] = {
    # the new-rule test's copy runs the marked tests a new rule can change (some 100): 121 s in
    # one process; round 13: in three parts that either worker takes (tests/test_new_rule_copy.py,
    # shared out by their CPU in a serial run: 13, 12 and 12 s)
    f"{NEW_RULE_PARTS}[console]": 45.0,
    f"{NEW_RULE_PARTS}[fixtures]": 40.0,
    f"{NEW_RULE_PARTS}[rest]": 40.0,
    # round 12: its fixture checks and worker scripts forked from one process each, and with
    # them the module, one group (some 40 s)
    "tests/test_user_rules.py": 40.0,
    # round 11: torch and Lightning compiled once, not by each first traced run (151 -> 116 s CPU)
    "tests/test_trace.py": 59.0,
    # round 11: check, fix and fix --unsafe-fixes once on one tree of every rule's fixtures
    "tests/test_fix_honest.py": 26.0,  # 31 before (33.4 -> 28.2 s of CPU)
    "tests/test_rule_contract.py": 26.0,
    "tests/test_newer_grammar.py": 26.0,
    # round 11: the fix pairs' LL101 probes forked from one process (34.7 -> 30.4 s of CPU);
    # round 13: the pairs' fixes forked with them (14.0 -> 8.4 s of CPU, 1 module alone)
    "tests/test_fix.py": 14.0,
    # round 10: the runtime cases reuse the module's one fix run, verify forked (98 -> 36 s CPU)
    "tests/test_fix_proof.py": 27.0,
    "tests/test_site_packages_view.py::test_one_line_per_distribution_with_its_advisory": 60.0,
    "tests/test_loader_shapes.py": 38.0,  # 62 before: one check of its three single files
    "tests/test_trace_cost.py": 26.0,  # 33 before round 11's kept bytecode
    "tests/test_lsp_warm.py::"
    "test_after_any_series_of_unsaved_edits_diagnostics_are_a_cold_checks": 23.0,  # forked oracle
    "tests/test_real_lightning.py": 23.0,
    "tests/test_precommit.py": 23.0,
    # round 12: modules that became groups (a module-scoped fixture), estimated from round 12's
    # durations under load (divided by 1.7) scaled by their serial CPU seconds before and after
    "tests/test_trust_backup.py": 39.0,  # one patched venv copied (27.2 -> 24.2 s of CPU)
    "tests/test_trust_store.py": 36.0,  # hostile entries in 6 runs, not 30 (23.3 -> 14.0)
    "tests/test_trust_manifest.py": 35.0,  # pip installs once (16.8 -> 13.5)
}


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n N`` without ``--dist``: hand out by :func:`shared_modules` groups."""
    if getattr(config.option, "numprocesses", None) and config.option.dist == "no":
        config.option.dist = "loadscope"  # xdist then starts its workers as for loadscope
        config.stash[GROUPED] = True
        config.pluginmanager.register(TestSeconds(config), "lintloader-test-seconds")


class TestSeconds:
    """A plugin of the controller: every test's seconds this run, kept in pytest's cache."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        cache = getattr(self.config, "cache", None)  # None with -p no:cacheprovider
        if cache is not None and self.seconds:
            cache.set(SECONDS_KEY, {**recorded_seconds(self.config), **self.seconds})


def recorded_seconds(config: pytest.Config) -> dict[str, float]:
    """The seconds per test node id of the last runs, empty without a cache or a record."""
    cache = getattr(config, "cache", None)
    stored = cache.get(SECONDS_KEY, {}) if cache is not None else {}
    if not isinstance(stored, dict):
        return {}
    return {
        key: float(value)
        for key, value in stored.items()
        if isinstance(key, str) and isinstance(value, (int, float))
    }


def longest_first(
    queue: Mapping[str, Mapping[str, bool]], seconds: Mapping[str, float]
) -> list[str]:
    """The groups of ``queue`` (group -> its test node ids), longest first: a group lasts its
    tests' recorded ``seconds`` (:data:`UNKNOWN_S` each without one), or its :data:`PRIOR_S`
    when none of them has a record; ties keep the larger group, then the given order."""

    def cost(scope: str) -> float:
        tests = queue[scope]
        if scope in PRIOR_S and not any(test in seconds for test in tests):
            return PRIOR_S[scope]
        return sum(seconds.get(test, UNKNOWN_S) for test in tests)

    return sorted(queue, key=lambda scope: (-cost(scope), -len(queue[scope])))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if not config.stash.get(GROUPED, False):
        return None  # an explicit --dist: xdist's own scheduler
    from xdist.scheduler import LoadScopeScheduling

    shared = shared_modules(config.rootpath)
    seconds = recorded_seconds(config)

    class SharedFixtureScheduling(LoadScopeScheduling):  # type: ignore[misc]
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in shared else nodeid

        def _assign_work_unit(self, node: Any) -> None:
            # the whole queue is built before the first unit is handed out: order it then
            if not self.ordered:
                self.ordered = True
                queue = dict(self.workqueue)
                self.workqueue.clear()
                for scope in longest_first(queue, seconds):
                    self.workqueue[scope] = queue[scope]
            super()._assign_work_unit(node)

    return SharedFixtureScheduling(config, log)


def shared_modules(root: Path) -> set[str]:
    """The test modules (as node ids start: ``tests/test_trace.py``) that define a
    module-scoped fixture."""
    return {
        path.relative_to(root).as_posix()
        for path in TESTS.rglob("test_*.py")
        if MODULE_FIXTURE.search(path.read_text(encoding="utf-8"))
    }

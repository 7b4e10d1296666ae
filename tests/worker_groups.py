"""How ``pytest -n N`` hands the tests to its workers, unless ``--dist`` says otherwise: the
tests of a module with a module-scoped fixture go to one worker together, every other test
goes wherever a worker is free, biggest groups first.

With xdist's default (``--dist load``) each worker that runs one test of a module runs the
module's shared fixture again: test_trace.py's 20 traced training runs, test_trace_cost.py's,
the verify probes, twice on two workers. ``--dist loadscope`` runs them once but hands out
every module whole, and a long module handed out last keeps one worker busy alone.
(xdist's own ``loadgroup`` would do this with marks, but with pytest 9 it no longer groups.)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
GROUPED = pytest.StashKey[bool]()
MODULE_FIXTURE = re.compile(r"@pytest\.fixture\([^)]*scope=[\"']module[\"']")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n N`` without ``--dist``: hand out by :func:`shared_modules` groups."""
    if getattr(config.option, "numprocesses", None) and config.option.dist == "no":
        config.option.dist = "loadscope"  # xdist then starts its workers as for loadscope
        config.stash[GROUPED] = True


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if not config.stash.get(GROUPED, False):
        return None  # an explicit --dist: xdist's own scheduler
    from xdist.scheduler import LoadScopeScheduling

    shared = shared_modules(config.rootpath)

    class SharedFixtureScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in shared else nodeid

    return SharedFixtureScheduling(config, log)


def shared_modules(root: Path) -> set[str]:
    """The test modules (as node ids start: ``tests/test_trace.py``) that define a
    module-scoped fixture."""
    return {
        path.relative_to(root).as_posix()
        for path in TESTS.rglob("test_*.py")
        if MODULE_FIXTURE.search(path.read_text(encoding="utf-8"))
    }

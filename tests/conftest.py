"""Shared helpers: run the real console script, find fixtures, fetch released wheels."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from child_processes import (  # noqa: F401 (the fixtures and hooks every test shares)
    module_processes,
    processes,
    pytest_configure,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_testnodedown,
    run_once,
)
from harness import (
    drop_gone_bytecode,
    keep_bytecode,
    lintloader_command,
    run_cli,
    warm_bytecode,
)
from worker_groups import (  # noqa: F401 (how pytest -n N hands tests to its workers)
    pytest_cmdline_main,
    pytest_xdist_make_scheduler,
)

__all__ = ["lintloader_command", "run_cli"]  # the CLI runner is tests/harness.py's

# A shell starts a background job (`.ci/run &`, nohup) with SIGINT ignored, and an ignored signal
# stays ignored in every child: the Ctrl-C tests would then interrupt nothing. A handler (unlike
# SIG_IGN) is reset when a child starts, so the commands the tests run get Python's default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist starts its workers, which inherit it
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    if not hasattr(config, "workerinput"):  # the controller, or a run without workers
        # kept from run to run beside the downloaded wheels: torch and Lightning compiled once,
        # not once a run by the first traced commands at the same time (some 30 s of CPU)
        keep_bytecode(os.environ, WHEEL_CACHE / "bytecode")
        if "PYTHONPYCACHEPREFIX" in os.environ:
            drop_gone_bytecode(Path(os.environ["PYTHONPYCACHEPREFIX"]))
            warm_bytecode(Path(os.environ["PYTHONPYCACHEPREFIX"]))


REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
WHEEL_CACHE = Path(
    os.environ.get("LINTLOADER_TEST_CACHE", Path.home() / ".cache" / "lintloader-tests")
)


def load_benchmark(name: str) -> ModuleType:
    """Import ``benchmarks/<name>.py`` (a script, not a package) as the module ``name``."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def cli():
    return run_cli


def download_wheel(requirement: str) -> Path:
    """``pip download --no-deps`` a released wheel into a persistent cache; skip if impossible."""
    name, _, version = requirement.partition("==")
    target = WHEEL_CACHE / f"{name}-{version}"
    wheels = sorted(target.glob("*.whl")) if target.is_dir() else []
    if not wheels:
        target.mkdir(parents=True, exist_ok=True)
        try:
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--only-binary=:all:",
                    "--disable-pip-version-check",
                    "-q",
                    "-d",
                    str(target),
                    requirement,
                ],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"cannot download {requirement} from the package index: {exc}")
        wheels = sorted(target.glob("*.whl"))
        if result.returncode != 0 or not wheels:
            reason = (result.stderr.strip().splitlines() or ["no wheel"])[-1]
            pytest.skip(f"cannot download {requirement} from the package index: {reason}")
    return wheels[0]


def unpacked_wheel(requirement: str, into: Path) -> Path:
    """Unpack a released wheel into ``into`` (a fake site-packages) and return that directory."""
    wheel = download_wheel(requirement)
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(into)
    return into


# what makes a folder a project for `check` (lintloader/integrations/project.py)
PROJECT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


def kept_unpacked(*requirements: str) -> Path:
    """The released wheels of ``requirements`` unpacked together into one folder kept in the
    test cache beside them (named by the wheels' names and sizes), unpacked once, not by every
    run: a tree for tests that only read it (``check --no-cache``), as they would a fresh
    one. It lies in no project (no marker above it), as a fresh temporary folder does."""
    wheels = [download_wheel(requirement) for requirement in requirements]
    names = "\0".join(f"{wheel.name}:{wheel.stat().st_size}" for wheel in wheels)
    tree = WHEEL_CACHE / "unpacked" / hashlib.sha256(names.encode()).hexdigest()[:20]
    above = [d / m for d in tree.parents for m in PROJECT_MARKERS if (d / m).exists()]
    assert not above, f"{tree} lies in a project ({above[0]}): set $LINTLOADER_TEST_CACHE"
    if not tree.is_dir():
        tree.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=".building-", dir=tree.parent))
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(building)
        try:
            os.rename(building, tree)
        except OSError:  # another worker got there first
            shutil.rmtree(building, ignore_errors=True)
    return tree


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--bless",
        action="store_true",
        help="write fixtures/check/*/expected.txt from this run (then review the diff)",
    )


@pytest.fixture
def mate() -> Iterator[tuple[int, int]]:
    """(uid, gid) of a second user, created for the test and removed after it."""
    name = f"llmate{os.getpid()}"
    made = subprocess.run(["useradd", "--no-create-home", "--user-group", name], check=False)
    if made.returncode != 0:
        pytest.skip("useradd could not create a second user")
    try:
        import pwd

        entry = pwd.getpwnam(name)
        yield entry.pw_uid, entry.pw_gid
    finally:
        subprocess.run(["userdel", name], check=False)

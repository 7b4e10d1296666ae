"""What every command a test starts inherits from the harness (tests/harness.py, conftest.py):
bytecode kept where the environment turned it off, and never beside the checkout's sources."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness import (
    REPO,
    beside_the_sources,
    drop_gone_bytecode,
    keep_bytecode,
    run_python,
    warm_bytecode,
)

ASK = "import sys; print(sys.flags.dont_write_bytecode, sys.pycache_prefix)"


def test_a_command_keeps_its_bytecode_outside_the_checkout() -> None:
    """The session dropped ``PYTHONDONTWRITEBYTECODE``: a command compiles each module once,
    into a folder of its own (or Python's default, beside the sources, where nothing
    turned bytecode off), not again at each start."""
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ
    done = run_python("-c", ASK)
    assert done.returncode == 0, done.stderr
    flag, prefix = done.stdout.split()
    assert flag == "0"
    assert prefix == os.environ.get("PYTHONPYCACHEPREFIX", "None")
    if prefix != "None":
        assert not Path(prefix).resolve().is_relative_to(REPO)


def test_bytecode_goes_to_the_folder_only_where_it_was_off(tmp_path: Path) -> None:
    off = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/bin"}
    keep_bytecode(off, tmp_path)
    assert off == {"PYTHONPYCACHEPREFIX": str(tmp_path), "PATH": "/bin"}
    chosen = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/elsewhere"}
    keep_bytecode(chosen, tmp_path)
    assert chosen == {"PYTHONPYCACHEPREFIX": "/elsewhere"}
    default = {"PATH": "/bin"}
    keep_bytecode(default, tmp_path)
    assert default == {"PATH": "/bin"}


def test_a_command_can_still_write_bytecode_beside_its_source(tmp_path: Path) -> None:
    """``py_compile`` as a user runs it (a test of stale bytecode needs it there)."""
    source = tmp_path / "mod.py"
    source.write_text("x = 1\n")
    done = run_python("-m", "py_compile", str(source))  # the run's commands: not beside it
    assert done.returncode == 0, done.stderr
    assert ("PYTHONPYCACHEPREFIX" in os.environ) != any(tmp_path.rglob("*.pyc"))
    env = beside_the_sources()
    assert "PYTHONPYCACHEPREFIX" not in env
    subprocess.run([sys.executable, "-m", "py_compile", str(source)], check=True, env=env)
    assert list((tmp_path / "__pycache__").glob("mod.*.pyc"))


def test_the_bytecode_of_gone_temporary_sources_is_dropped(tmp_path: Path) -> None:
    """The kept folder mirrors absolute folders: an earlier run's copy under the temporary
    folder, now gone, loses its bytecode; a folder still there, and one elsewhere, keep it."""
    temp, kept = tmp_path / "tmp", tmp_path / "bytecode"
    for folder in ("pytest-of-me/pytest-9", "scene/pkg"):
        (temp / folder).mkdir(parents=True)
    mirror = kept / temp.relative_to(temp.anchor)
    for folder in ("pytest-of-me/pytest-8", "pytest-of-me/pytest-9", "scene/pkg", "gone/pkg"):
        (mirror / folder).mkdir(parents=True)
        (mirror / folder / "m.cpython-311.pyc").write_bytes(b"")
    elsewhere = kept / "usr" / "lib"
    elsewhere.mkdir(parents=True)
    drop_gone_bytecode(kept, temp)
    left = sorted(p.relative_to(mirror).as_posix() for p in mirror.rglob("*.pyc"))
    assert left == ["pytest-of-me/pytest-9/m.cpython-311.pyc", "scene/pkg/m.cpython-311.pyc"]
    assert elsewhere.is_dir()


def test_a_cold_folder_is_warmed_once(tmp_path: Path) -> None:
    """What importing a package compiles lands in the folder, by one real import; the next
    session finds it there and imports nothing; a module not installed is passed over."""
    wanted = ("json", "no_such_module_here")
    assert warm_bytecode(tmp_path, wanted) == ["json"]
    source = Path(json.__file__).resolve()
    kept = tmp_path / source.parent.relative_to(source.anchor)
    assert (kept / f"__init__.{sys.implementation.cache_tag}.pyc").is_file()
    assert (kept / f"decoder.{sys.implementation.cache_tag}.pyc").is_file()
    assert warm_bytecode(tmp_path, wanted) == []

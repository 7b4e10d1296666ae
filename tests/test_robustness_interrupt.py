"""Interrupting ``fix`` (issue 8): SIGKILL or SIGINT at random points leaves every file either
original or fully patched, never partial, with the backup manifest consistent (every patched
file has an entry whose backup holds the original bytes), and ``--revert`` restores everything.

Half the interrupts land at a random time in the whole run, half at a random moment just after
the first backup appears (the write phase, which is otherwise a few milliseconds long).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import lintloader_command, run_cli

FILES = 16
TRIALS = 4
SEED = int(os.environ.get("LINTLOADER_INTERRUPT_SEED", "20240915"))


def fetcher(index: int) -> str:
    return f"""\
class Fetcher{index}:
    def __iter__(self):
        self.reset()
        return self

    def reset(self):
        self.count = {index}
        self.loader._iterator = None

    def teardown(self):
        self.reset()
"""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_package(package: Path) -> dict[str, bytes]:
    if package.exists():
        shutil.rmtree(package)
    package.mkdir()
    (package / "__init__.py").write_text("")
    originals = {}
    for index in range(FILES):
        data = fetcher(index).encode()
        (package / f"fetch{index}.py").write_bytes(data)
        originals[f"fetch{index}.py"] = data
    return originals


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("interrupt") / "env"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    site_dir = next((where / "lib").glob("python3*/site-packages"))
    info = site_dir / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (info / "top_level.txt").write_text("pkg\n")
    return where / "bin" / "python", site_dir


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """What an uninterrupted ``fix`` makes of each file."""
    tree = tmp_path_factory.mktemp("reference") / "pkg"
    write_package(tree)
    result = run_cli("fix", ".", "--no-cache", cwd=tree.parent)
    assert result.returncode == 0, result.stderr
    patched = {p.name: p.read_bytes() for p in tree.glob("fetch*.py")}
    assert all(data != fetcher(int(name[5:-3])).encode() for name, data in patched.items())
    return patched


def fix_command(python: Path) -> list[str]:
    return [
        *lintloader_command(),
        "fix",
        "--site-packages",
        "pkg",
        "--python",
        str(python),
        "--no-cache",
        "-j",
        "1",
    ]


def interrupt(
    command: list[str],
    cwd: Path,
    backups: Path,
    rng: random.Random,
    in_write_phase: bool,
    sig: int,
    budget: float,
) -> int:
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    started = time.monotonic()
    if in_write_phase:
        while not backups.exists() and process.poll() is None:
            if time.monotonic() - started > 120:
                break
            time.sleep(0.0005)
        time.sleep(rng.uniform(0, 0.02))
    else:
        time.sleep(rng.uniform(0, budget))
    if process.poll() is None:
        process.send_signal(sig)
    return process.wait(timeout=120)


def assert_consistent(
    package: Path,
    backups: Path,
    originals: dict[str, bytes],
    patched: dict[str, bytes],
    site_dir: Path,
) -> int:
    """Every file original or patched; every patched file backed up. Returns how many patched."""
    entries = {}
    if (backups / "manifest.json").exists():
        manifest = json.loads((backups / "manifest.json").read_text())  # never half-written
        assert manifest["format"] == 1
        entries = manifest["files"]
        for key, entry in entries.items():
            backup = (backups / entry["backup"]).read_bytes()
            assert sha(backup) == entry["original_sha256"]
            assert backup == originals[Path(key).name]
    done = 0
    for name, original in originals.items():
        now = (package / name).read_bytes()
        assert now in (original, patched[name]), f"{name} is partial"
        if now == patched[name]:
            done += 1
            key = (package / name).relative_to(site_dir).as_posix()
            assert key in entries, f"{name} patched without a backup entry"
            assert entries[key]["patched_sha256"] == sha(now)
    leftovers = [p.name for p in package.iterdir() if p.name.endswith("tmp")]
    assert all(not name.endswith(".py") for name in leftovers)
    return done


def test_interrupted_fix_leaves_whole_files_and_a_consistent_manifest(
    tmp_path: Path, site: tuple[Path, Path], patched: dict[str, bytes]
) -> None:
    python, site_dir = site
    package = site_dir / "pkg"
    backups = site_dir / ".lintloader-backups"
    rng = random.Random(SEED)
    command = fix_command(python)

    originals = write_package(package)
    started = time.monotonic()
    subprocess.run(command, cwd=tmp_path, capture_output=True, timeout=300, check=True)
    budget = time.monotonic() - started
    assert assert_consistent(package, backups, originals, patched, site_dir) == FILES

    for trial in range(TRIALS):
        shutil.rmtree(backups, ignore_errors=True)
        originals = write_package(package)
        sig = signal.SIGKILL if trial % 2 == 0 else signal.SIGINT
        code = interrupt(command, tmp_path, backups, rng, trial >= TRIALS // 2, sig, budget)
        done = assert_consistent(package, backups, originals, patched, site_dir)
        print(f"trial {trial}: signal {sig}, exit {code}, {done}/{FILES} patched")
        if trial < TRIALS - 2:
            continue  # reverting costs a run; the last two trials check it
        revert = subprocess.run(
            [*lintloader_command(), "fix", "--site-packages", "--revert", "--python", str(python)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert revert.returncode == 0, revert.stderr
        assert "Traceback" not in revert.stderr
        for name, original in originals.items():
            assert (package / name).read_bytes() == original, f"{name} not reverted"


def test_interrupted_fix_of_a_source_tree_never_leaves_a_partial_file(
    tmp_path: Path, patched: dict[str, bytes]
) -> None:
    tree = tmp_path / "work" / "pkg"
    tree.parent.mkdir()
    rng = random.Random(SEED + 1)
    command = [*lintloader_command(), "fix", ".", "--no-cache", "-j", "1"]
    for trial in range(TRIALS // 2):
        originals = write_package(tree)
        sig = signal.SIGKILL if trial % 2 == 0 else signal.SIGINT
        interrupt(command, tree.parent, tree / "never", rng, False, sig, 1.5)
        for name, original in originals.items():
            now = (tree / name).read_bytes()
            assert now in (original, patched[name]), f"{name} is partial"

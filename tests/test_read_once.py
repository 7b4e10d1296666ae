"""Each file is read once per run (issue 45 item 1): a real ``check`` under ``strace``.

A check whose findings can be fixed runs its fix trial, which checks the files again in memory
(a check per fix round); each later demand round asks new tokens of files the first round
searched. Before ``scan/read/memo.py`` and the spare bytes of ``select/rounds.py``, the files of
this project were each opened up to 15 times by one ``check --no-cache``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURES
from harness import environment, lintloader_command

from lintloader.scan.read.stamps import RACY_NS

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")

HOISTABLE = (FIXTURES / "fix" / "hoist_call_helper.in.py").read_text()  # a fixable LL202


def project(root: Path) -> Path:
    """A fixable LL202 (the fix trial runs), its caller (found by a later demand round) and
    files no round takes, old enough for their stat to be trusted (not "racy")."""
    package = root / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(HOISTABLE)
    (package / "run.py").write_text(
        "from pkg.train import train\n\n\ndef main(dataset):\n    return train(dataset, 3)\n"
    )
    (package / "util.py").write_text("def add(a, b):\n    return a + b\n")
    (package / "config.py").write_text(
        "import json\n\n\ndef load(path):\n    with open(path) as handle:\n"
        "        return json.load(handle)\n"
    )
    time.sleep(RACY_NS / 1e9 + 0.2)  # ctime is "now": wait the racy window out
    return root


def traced_check(
    root: Path, tmp_path: Path, traced: str, *options: str, strace: tuple[str, ...] = ()
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """A ``check`` of ``root`` (every process of it) under ``strace -e TRACED``, which finds
    the project's LL202 (exit 1): the run and strace's log."""
    log = tmp_path / "strace.log"
    command = ["strace", "-f", "-qq", *strace, "-e", traced, "-o", str(log)]
    done = subprocess.run(
        [*command, *lintloader_command(), "check", *options, "."],
        cwd=root,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    return done, log


def opens_per_file(root: Path, tmp_path: Path, *options: str) -> tuple[Counter[str], str]:
    """How often each ``.py`` file under ``root`` was opened by a ``check`` (every process of
    it), and what the check printed."""
    done, log = traced_check(root, tmp_path, "trace=openat", "--min-severity", "info", *options)
    opened = re.compile(r'openat\([^"]*"([^"]+\.py)"')
    prefix = str(root.resolve())
    counts: Counter[str] = Counter()
    for line in log.read_text().splitlines():
        found = opened.search(line)
        if found and found.group(1).startswith(prefix) and "= -1" not in line:
            counts[Path(found.group(1)).name] += 1
    return counts, done.stdout + done.stderr


ALL_FILES = {"__init__.py", "train.py", "run.py", "util.py", "config.py"}


@pytest.mark.parametrize("cache", ["--no-cache", "--cache-dir"])
def test_a_check_and_its_fix_trial_read_each_file_once(tmp_path: Path, cache: str) -> None:
    root = project(tmp_path / "proj")
    options = [cache] if cache == "--no-cache" else [cache, str(tmp_path / "cache")]
    counts, printed = opens_per_file(root, tmp_path, *options)
    assert "LL202" in printed and "1 fixable with `--fix`" in printed  # the trial ran
    assert set(counts) == ALL_FILES
    assert counts == Counter(dict.fromkeys(ALL_FILES, 1))


def test_a_check_after_an_edit_reads_the_edited_file(tmp_path: Path) -> None:
    """The memo never stands in for a changed file: an edit of the same size whose mtime is
    set back to the old one (only its ctime tells) is read again by the next check."""
    from lintloader.pipeline.engine import CheckOptions, run_check
    from lintloader.scan.discover.paths import discover_paths
    from lintloader.scan.read.memo import ReadMemo

    root = project(tmp_path / "proj")
    train = root / "pkg" / "train.py"
    old = train.stat().st_mtime_ns
    memo = ReadMemo()

    def codes() -> list[str]:
        discovery = discover_paths([str(root)], ())
        return [f.code for f in run_check(discovery, CheckOptions(jobs=1, reads=memo)).findings]

    assert "LL202" in codes()
    assert any(path.endswith("train.py") for path in memo.kept)  # parsed: its bytes are kept
    # the same number of bytes, without the loop: a loader built once
    edited = HOISTABLE.replace("for epoch in range(epochs):", "if epochs:                 ")
    assert len(edited) == len(HOISTABLE)
    train.write_text(edited)
    os.utime(train, ns=(old, old))
    time.sleep(RACY_NS / 1e9 + 0.2)
    assert "LL202" not in codes()


def test_a_cold_check_reads_each_file_in_one_read_without_an_fstat(tmp_path: Path) -> None:
    """The scan's stat of each file (``SourceSet.load``) gives the size its one read asks
    for: ``open``, one ``read``, ``close``; no ``fstat`` of the descriptor
    (``safe_file.read_sized``)."""
    root = project(tmp_path / "proj")
    traced = "trace=openat,read,fstat,newfstatat,statx"
    _, log = traced_check(root, tmp_path, traced, "--no-cache", strace=("-y",))
    on_descriptor = re.compile(r"(\w+)\(\d+<([^>]+\.py)>")
    prefix = str(root.resolve())
    calls: Counter[tuple[str, str]] = Counter()
    for line in log.read_text().splitlines():
        found = on_descriptor.search(line)
        if found and found.group(2).startswith(prefix):
            calls[found.group(1), Path(found.group(2)).name] += 1
    assert calls == Counter({("read", name): 1 for name in ALL_FILES})

"""flake8's worker processes share one project check through the cache: one analyzes, the
others replay, and what flake8 reports stays what ``lintloader check`` reports, also after an
edit (a real flake8 in a subprocess, with several jobs)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MINILIGHT = REPO / "fixtures" / "check" / "lightning150" / "minilight"
FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>LL\d{3}) ")

pytest.importorskip("flake8", reason="flake8 is not installed (a test dependency)")


def run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done


def flake8_keys(project: Path, env: dict[str, str]) -> set[tuple]:
    done = run(
        [sys.executable, "-m", "flake8", "--select", "LL", "--jobs", "3", "src"], project, env
    )
    found = set()
    for line in done.stdout.splitlines():
        match = FLAKE8_LINE.match(line)
        assert match, line
        found.add((match["path"].removeprefix("./"), int(match["line"]), match["code"]))
    return found


def check_keys(project: Path, env: dict[str, str]) -> set[tuple]:
    command = [sys.executable, "-m", "lintloader", "check", "--no-cache", "--output-format"]
    done = run([*command, "json", "src"], project, env)
    return {(f["path"], f["line"], f["code"]) for f in json.loads(done.stdout)}


def test_flake8_workers_share_one_check_and_follow_edits(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(MINILIGHT, project / "src" / "minilight")
    (project / "pyproject.toml").write_text('[project]\nname = "proj"\n')
    cache = tmp_path / "cache"
    env = {**os.environ, "LINTLOADER_CACHE_DIR": str(cache)}
    expected = check_keys(project, env)
    assert ("src/minilight/utilities/fetching.py", 16, "LL101") in expected
    assert flake8_keys(project, env) == expected
    assert len(list((cache / "flake8-locks").glob("*.lock"))) == 1
    assert list(cache.rglob("*.replay")), "the project's findings were stored for replay"
    assert flake8_keys(project, env) == expected  # replayed by every worker
    fetching = project / "src" / "minilight" / "utilities" / "fetching.py"
    fetching.write_text("# moved\n# down\n" + fetching.read_text())
    moved = check_keys(project, env)
    assert ("src/minilight/utilities/fetching.py", 18, "LL101") in moved
    assert flake8_keys(project, env) == moved  # not the stale replay

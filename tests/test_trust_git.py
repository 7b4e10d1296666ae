"""A scanned tree's git metadata never runs a program: real git, a real clone of a repository
whose ``src/`` is laid out as a git directory with ``core.fsmonitor`` set, and a tree unpacked
from an archive with its ``.git/config`` setting it. ``check`` (of the folder, of one file and of
the project), ``fix`` and the flake8 plugin run; the command the repository names never does."""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from child_processes import Processes, alive
from conftest import run_cli
from harness import environment, lintloader_command

from lintloader.scan.discover.git_files import git_argv

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

CLI = [sys.executable, "-m", "lintloader"]
TRAIN = (
    "from torch.utils.data import DataLoader\n\n\n"
    "def train(dataset):\n"
    "    for epoch in range(3):\n"
    "        loader = DataLoader(dataset, num_workers=4)\n"
    "        for batch in loader:\n"
    "            print(batch)\n"
)


def git(*args: str, cwd: Path) -> None:
    identity = ("-c", "user.name=t", "-c", "user.email=t@example.com")
    subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True)


def hook(marker: Path) -> str:
    """A ``core.fsmonitor`` value: a shell command that leaves ``marker`` behind."""
    return f"touch {marker}; false"


def bare_layout_clone(tmp_path: Path, marker: Path) -> Path:
    """A plain ``git clone`` of a repository whose tracked ``src/`` is a git directory (HEAD,
    config, index, objects/, refs/) next to the code, its config naming ``hook(marker)``."""
    origin = tmp_path / "origin"
    src = origin / "src"
    for folder in ("objects", "refs"):
        (src / folder).mkdir(parents=True)
        (src / folder / ".keep").write_text("")
    (src / "HEAD").write_text("ref: refs/heads/main\n")
    (src / "train.py").write_text(TRAIN)
    (origin / "pyproject.toml").write_text('[project]\nname = "victim"\n')
    config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
    (src / "config").write_text(config)
    subprocess.run(
        ["git", "--git-dir=.", "-c", "core.fsmonitor=", "add", "train.py"], cwd=src, check=True
    )
    (src / "config").write_text(config + f'\tfsmonitor = "{hook(marker)}"\n')
    git("init", "-q", ".", cwd=origin)
    git("add", "-A", cwd=origin)
    git("commit", "-qm", "a project", cwd=origin)
    git("clone", "-q", str(origin), "clone", cwd=tmp_path)
    clone = tmp_path / "clone"
    assert (clone / "src" / "index").is_file() and (clone / "src" / "config").is_file()
    return clone


def unpacked_tree(tmp_path: Path, marker: Path) -> Path:
    """A work tree with its ``.git`` (``core.fsmonitor`` set), packed and unpacked with tar."""
    made = tmp_path / "made"
    (made / "src").mkdir(parents=True)
    (made / "src" / "train.py").write_text(TRAIN)
    (made / "pyproject.toml").write_text('[project]\nname = "victim"\n')
    git("init", "-q", ".", cwd=made)
    git("add", "-A", cwd=made)
    git("commit", "-qm", "a project", cwd=made)
    git("config", "core.fsmonitor", hook(marker), cwd=made)
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        tar.add(made, arcname="unpacked")
    archive.seek(0)
    with tarfile.open(fileobj=archive) as tar:
        tar.extractall(tmp_path, filter="tar" if hasattr(tarfile, "tar_filter") else None)
    return tmp_path / "unpacked"


TREES = {"bare-layout clone": bare_layout_clone, "unpacked .git/config": unpacked_tree}
COMMANDS = {
    "check src/": ["check", "src/"],
    "check src/train.py": ["check", "src/train.py"],
    "check .": ["check", "."],
    "check --project-root . src/train.py": ["check", "--project-root", ".", "src/train.py"],
    "fix src/": ["fix", "src/"],
    "fix .": ["fix", "."],
}


@pytest.mark.parametrize("tree", sorted(TREES))
def test_the_hostile_tree_is_real(tmp_path: Path, tree: str) -> None:
    """The trees are not harmless by accident: git itself, asked as lintloader used to ask it,
    runs the command (this holds the other tests to a real threat)."""
    marker = tmp_path / "MARKER"
    root = TREES[tree](tmp_path, marker)
    subprocess.run(["git", "ls-files", "--others"], cwd=root / "src", capture_output=True)
    assert marker.exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("tree", sorted(TREES))
def test_no_command_of_a_scanned_tree_runs(tmp_path: Path, tree: str, command: str) -> None:
    marker = tmp_path / "MARKER"
    root = TREES[tree](tmp_path, marker)
    for cache in ("--no-cache", "--cache-dir=" + str(tmp_path / "cache")):
        done = run_cli(*COMMANDS[command], cache, cwd=root, timeout=300)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode in (0, 1), done.stderr
        assert not marker.exists(), f"{command} ({cache}) ran the tree's core.fsmonitor"


@pytest.mark.parametrize("tree", sorted(TREES))
def test_the_flake8_plugin_runs_no_command_of_the_tree(tmp_path: Path, tree: str) -> None:
    pytest.importorskip("flake8", reason="flake8 is not installed (a test dependency)")
    marker = tmp_path / "MARKER"
    root = TREES[tree](tmp_path, marker)
    for target in ("src/train.py", "src/", "."):
        done = subprocess.run(
            [sys.executable, "-m", "flake8", "--select", "LL", target],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert "Traceback" not in done.stderr, done.stderr
        assert not marker.exists(), f"flake8 {target} ran the tree's core.fsmonitor"


def test_git_still_answers_in_an_honest_repository(tmp_path: Path) -> None:
    """The hardened call keeps git's answer: an ignored file stays out of the scan."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(TRAIN)
    (tmp_path / "pkg" / "ignored.py").write_text(TRAIN)
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    git("init", "-q", ".", cwd=tmp_path)
    git("add", "pkg/train.py", ".gitignore", cwd=tmp_path)
    git("commit", "-qm", "a project", cwd=tmp_path)
    done = run_cli(  # TRAIN's loader per epoch is an avoidable cost: an info finding
        "check",
        "--no-cache",
        "--min-severity",
        "info",
        "--output-format",
        "concise",
        "pkg",
        cwd=tmp_path,
    )
    assert "train.py" in done.stdout and "ignored.py" not in done.stdout, done.stdout
    asked = subprocess.run(
        [*git_argv("ls-files", "-z", "--others", "--exclude-standard")],
        cwd=tmp_path / "pkg",
        capture_output=True,
        check=True,
    )
    assert asked.stdout == b""  # ignored.py is ignored, train.py tracked


def test_every_git_call_of_the_package_goes_through_git_argv() -> None:
    """No module of lintloader names the git program but the one that builds its argv."""
    package = Path(__file__).resolve().parent.parent / "lintloader"
    callers = []
    for path in package.rglob("*.py"):
        text = path.read_text()
        if '"git"' in text or "'git'" in text:
            callers.append(path.relative_to(package).as_posix())
    assert callers == ["scan/discover/git_files.py"]
    argv = git_argv("ls-files")
    assert argv[0] == "git" and argv[-1] == "ls-files"
    for key in ("core.fsmonitor=", "safe.bareRepository=explicit", "protocol.allow=never"):
        assert key in argv
    assert os.sep not in argv[0]


def logging_git(tmp_path: Path, hold_others: Path | None = None) -> tuple[dict[str, str], Path]:
    """A ``git`` first on PATH that appends its argv to a log, then runs the real git (with
    ``hold_others``: an ask for untracked files writes its pid there and sleeps instead): the
    environment to run the CLI with, and the log."""
    bin_dir, log = tmp_path / "bin", tmp_path / "git.log"
    bin_dir.mkdir()
    real = shutil.which("git")
    assert real is not None
    hold = f'case "$*" in *--others*) echo $$ > {hold_others}; exec sleep 60;; esac\n'
    script = bin_dir / "git"
    script.write_text(
        f'#!/bin/sh\necho "$*" >> {log}\n{hold if hold_others else ""}exec {real} "$@"\n'
    )
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, log


def tracked_project(tmp_path: Path) -> Path:
    """A git project whose ``pkg/train.py`` and ``.gitignore`` (``ignored.py``) are committed."""
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "train.py").write_text(TRAIN)
    (project / ".gitignore").write_text("ignored.py\n")
    git("init", "-q", ".", cwd=project)
    git("add", "pkg/train.py", ".gitignore", cwd=project)
    git("commit", "-qm", "a project", cwd=project)
    return project


def test_the_untracked_files_are_asked_only_when_the_walk_meets_one(tmp_path: Path) -> None:
    """A project whose files are all tracked runs one git (the tracked files); an untracked
    file that is not ignored makes the walk ask for the others, and is scanned, while an
    untracked ignored one is not."""
    project = tracked_project(tmp_path)
    env, log = logging_git(tmp_path)
    args = ("check", "--no-cache", "--min-severity", "info", "--output-format", "concise", ".")
    done = run_cli(*args, cwd=project, env=env)
    asks = log.read_text().splitlines()
    assert "train.py" in done.stdout, done.stdout
    ls_files = [ask for ask in asks if "ls-files" in ask]
    assert len(ls_files) == 1 and "--cached" in ls_files[0], asks
    (project / "pkg" / "new.py").write_text(TRAIN)
    (project / "pkg" / "ignored.py").write_text(TRAIN)
    log.unlink()
    done = run_cli(*args, cwd=project, env=env)
    asks = log.read_text().splitlines()
    assert "new.py" in done.stdout and "ignored.py" not in done.stdout, done.stdout
    assert any("--others --exclude-standard" in ask for ask in asks), asks


def test_ctrl_c_while_the_walk_waits_for_untracked_files_leaves_no_git(
    tmp_path: Path, processes: Processes
) -> None:
    """The ask for untracked files, started in the middle of the walk, is killed with its
    process group when Ctrl-C comes while the walk waits for it."""
    project, marker = tracked_project(tmp_path), tmp_path / "others.pid"
    (project / "pkg" / "new.py").write_text(TRAIN)
    env, _ = logging_git(tmp_path, hold_others=marker)
    command = [*lintloader_command(), "check", "--no-cache", "."]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    checking = processes.start(command, cwd=project, env=environment(env), **pipes)
    deadline = time.monotonic() + 60
    while not (marker.exists() and marker.read_text().strip()) and checking.poll() is None:
        assert time.monotonic() < deadline, "the untracked files were never asked for"
        time.sleep(0.01)
    held = int(marker.read_text())
    assert alive(held)
    checking.send_signal(signal.SIGINT)
    _, stderr = checking.communicate(timeout=60)
    assert checking.returncode != 0, stderr
    deadline = time.monotonic() + 5
    while alive(held):
        assert time.monotonic() < deadline, "the git asking for untracked files outlived Ctrl-C"
        time.sleep(0.01)

"""Exit codes and one-line messages (issue 12, item 9) and helper processes that are never left
behind (item 6, ``--python``): Ctrl-C, unwritable standard output, ``sys.exit()`` in a verify
factory, configuration values of the wrong type, a hung interpreter and its children."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from trust_support import CLI, ORIGINAL

posix_only = pytest.mark.skipif(os.name != "posix", reason="process groups and signals: POSIX")


def project(tmp_path: Path) -> Path:
    (tmp_path / "mod.py").write_bytes(ORIGINAL)  # one LL101 finding
    return tmp_path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def hanging_python(tmp_path: Path) -> tuple[Path, Path]:
    """An 'interpreter' that never answers and starts a child of its own (whose PID it
    writes to a file)."""
    script = tmp_path / "hang-python"
    pid_file = tmp_path / "child.pid"
    script.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pid_file}\nwait\n")
    script.chmod(0o755)
    return script, pid_file


# ------------------------------------------------------------------------------------- Ctrl-C


@posix_only
@pytest.mark.parametrize("command", ["check", "fix"])
def test_ctrl_c_exits_130_and_leaves_no_process(tmp_path: Path, command: str) -> None:
    python, pid_file = hanging_python(tmp_path)
    args = [command, "--site-packages", "--python", str(python), "--no-cache"]
    interrupt_once_started(args, tmp_path, dict(os.environ), pid_file)


def interrupt_once_started(args: list[str], cwd: Path, env: dict[str, str], pid_file: Path) -> None:
    """Run ``lintloader ARGS``, send it SIGINT once the helper it runs has started a child
    (which writes its PID to ``pid_file``): exit 130, one line, and the child is gone."""
    process = subprocess.Popen(
        [*CLI, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert wait_gone(int(pid_file.read_text()))


def fake_git(tmp_path: Path, listing: str | None) -> tuple[dict[str, str], Path]:
    """A ``git`` first on PATH that starts a child of its own (whose PID it writes to a file)
    and then prints ``listing`` (NUL-separated names) and exits, or, with None, never
    answers."""
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    pid_file = tmp_path / "git-child.pid"
    then = "wait" if listing is None else f"printf '{listing}'"
    child = "sleep 300 >/dev/null 2>&1 &"  # not holding git's output open
    (folder / "git").write_text(f"#!/bin/sh\n{child}\necho $! > {pid_file}\n{then}\n")
    (folder / "git").chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}, pid_file


@posix_only
def test_ctrl_c_while_git_lists_the_project_exits_130_and_leaves_no_process(
    tmp_path: Path,
) -> None:
    (tmp_path / "proj").mkdir()
    root = project(tmp_path / "proj")
    env, pid_file = fake_git(tmp_path, None)
    interrupt_once_started(["check", ".", "--no-cache"], root, env, pid_file)


@posix_only
def test_git_s_answer_filters_the_walk_and_nothing_it_started_outlives_the_run(
    tmp_path: Path,
) -> None:
    (tmp_path / "proj").mkdir()
    root = project(tmp_path / "proj")
    (root / "ignored.py").write_bytes(ORIGINAL)  # git does not list it: not scanned
    env, pid_file = fake_git(tmp_path, "mod.py\\0")
    result = subprocess.run(
        [*CLI, "check", ".", "--no-cache", "--output-format", "concise"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert "mod.py" in result.stdout and "ignored.py" not in result.stdout
    assert "in 1 file" in result.stderr, result.stderr
    assert wait_gone(int(pid_file.read_text()), 5)


# ------------------------------------------------------------------ a hung --python interpreter


@posix_only
def test_a_hung_interpreter_and_its_children_are_killed_after_the_timeout(
    tmp_path: Path,
) -> None:
    python, pid_file = hanging_python(tmp_path)
    result = subprocess.run(
        [*CLI, "check", "--site-packages", "--python", str(python), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "LINTLOADER_INTERPRETER_TIMEOUT": "2"},
    )
    assert result.returncode == 2
    assert "did not answer within 2 s" in result.stderr
    assert wait_gone(int(pid_file.read_text()), 5)  # the interpreter's own child died too


# ------------------------------------------------------------------ standard output unwritable


OUTPUT_COMMANDS = [["check", "."], ["fix", ".", "--diff"]]


@posix_only
@pytest.mark.parametrize("args", OUTPUT_COMMANDS, ids=["check", "fix-diff"])
def test_a_closed_pipe_on_stdout_is_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # the reader left (`lintloader check | head -0`)
    try:
        result = subprocess.run(
            [*CLI, *args, "--no-cache"],
            cwd=project(tmp_path),
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(writer)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("cannot write output: ") == 1, result.stderr
    assert "internal error" not in result.stderr and "Exception ignored" not in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", OUTPUT_COMMANDS, ids=["check", "fix-diff"])
def test_a_full_stdout_is_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [*CLI, *args, "--no-cache"],
            cwd=project(tmp_path),
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2, result.stderr
    assert "cannot write output: No space left on device" in result.stderr
    assert "internal error" not in result.stderr and "Exception ignored" not in result.stderr


@posix_only
def test_a_closed_stdout_descriptor_is_one_line_and_exit_2(tmp_path: Path) -> None:
    command = " ".join([*CLI, "check", ".", "--no-cache"]) + " >&-"
    result = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=project(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert "cannot write output: standard output is closed" in result.stderr


# --------------------------------------------------------------- sys.exit() in a verify factory


@pytest.mark.parametrize("where", ["factory", "import"])
def test_sys_exit_in_a_verify_factory_is_cannot_run(tmp_path: Path, where: str) -> None:
    pytest.importorskip("torch", reason="verify needs the runtime extra (torch)")
    body = "    sys.exit(0)\n" if where == "factory" else "    pass\nsys.exit(3)\n"
    (tmp_path / "exiting.py").write_text(f"import sys\n\n\ndef make():\n{body}")
    result = subprocess.run(
        [*CLI, "verify", "--dataloader", "exiting.py:make", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert "cannot run" in result.stderr and "sys.exit" in result.stderr
    assert '"ERROR"' in result.stdout


# ---------------------------------------------------------------- configuration of wrong types

BAD_CONFIGS = [
    ('[tool.lintloader]\nexclude = [["a"]]\n', "exclude must be a list"),
    ('[tool.lintloader]\nper-file-ignores = ["x"]\n', "per-file-ignores must be a table"),
    ("tool = 5\n[project]\nname = 'x'\n# [tool.lintloader\n", "'tool' must be a table"),
    ("[tool]\nlintloader = 5\n", "[tool.lintloader] must be a table"),
    ("[tool.lintloader]\nmin-severity = 3\n", "min-severity must be a string"),
    ("[tool.lintloader]\nselect = [1]\n", "select must be a list of rule codes"),
    ('[tool.lintloader]\nper-file-ignores = {"a.py" = 5}\n', "per-file-ignores.a.py"),
    ('[tool.lintloader]\nmax-file-size = "big"\n', "max-file-size"),
]


@pytest.mark.parametrize(("text", "message"), BAD_CONFIGS, ids=range(len(BAD_CONFIGS)))
@pytest.mark.parametrize("command", ["check", "fix"])
def test_config_values_of_the_wrong_type_are_one_line(
    tmp_path: Path, text: str, message: str, command: str
) -> None:
    root = project(tmp_path)
    (root / "pyproject.toml").write_text(text)
    result = subprocess.run(
        [*CLI, command, ".", "--config", "pyproject.toml", "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lintloader: error: "), result.stderr
    assert message in lines[0] and "internal error" not in lines[0]
    assert (root / "mod.py").read_bytes() == ORIGINAL

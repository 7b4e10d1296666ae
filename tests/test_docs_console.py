"""Every console block of README.md and docs/*.md is a real run: the test runs each ``$ ``
command in the scene the block names and compares what it prints (stdout, then stderr) with the
block, so docs and behaviour cannot drift apart. A transcript (a ``$ `` line) in any other kind
of block is an error: it would not be checked.

A block is marked by an HTML comment on the line before it, ``<!-- console: SCENE -->``; a
console block without one is an error. In a block, a line ``...`` (indented or not) stands for
any number of output lines and a line ending in `` ...`` for any line that starts with what
precedes it (both mark a cut in the output); a last line ``exit N`` is the command's exit
status. Runs of two or more spaces match any run of spaces (columns widen with the numbers in
them). Placeholders are only for what changes from run to run: the scene's directory is
``<DIR>``, the environment's prefix (``sys.prefix``) ``<VENV>``, a duration (``1.2 s``,
``0.15s``) ``<TIME>``, a process id ``<PID>``, and ``<N>`` a number that follows from
durations (a count of seconds, a ratio or a share of two durations).

A few docs/trace.md and docs/verify.md blocks run a command that tests/test_trace.py,
tests/test_trace_cost.py or tests/test_verify.py runs for its own tests anyway
(:data:`CHECKED_ELSEWHERE`): that module compares its run with the block, with this matcher.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from child_processes import run_once
from conftest import download_wheel
from test_vocabulary import DATA, TRAIN, VOCABULARY
from trust_support import ORIGINAL, wheel

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(
    r"(?:<!-- console: (?P<scene>[\w-]+) -->\n)?```console\n(?P<body>.*?)^```", re.S | re.M
)
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```", re.S | re.M)
DURATION = re.compile(r"\b\d+(?:\.\d+)? ?s\b")
PLACEHOLDER = re.compile(r"(<PID>|<N>| {2,})")
PATTERNS = {"<PID>": r"\d+", "<N>": r"\d+(?:\.\d+)?"}
VENV_PYTHON = re.compile(r"<VENV>/bin/python3(?:\.\d+)?\b")
EXIT = re.compile(r"exit \d+")
ELLIPSIS = "..."


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    scene: str | None
    body: str

    @property
    def name(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks() -> Iterator[Block]:
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("body"))
            yield Block(path.relative_to(REPO).as_posix(), line, match["scene"], match["body"])


ALL_BLOCKS = list(blocks())
# docs/trace.md's blocks whose command tests/test_trace.py's module fixture runs anyway (it reads
# each run's JSON report too): that module compares what the run printed with the block, with
# this module's matcher, so that each runs once a suite. The run's name there -> the command.
TRACED_BY_TEST_TRACE = {
    "non_persistent": "lintloader trace -- python fixtures/runtime/trace/torch_loop.py "
    "--no-persistent",
    "buggy": "lintloader trace -- python fixtures/runtime/trace/fetcher_loop.py "
    "fixtures/runtime/buggy_fetcher.py",
    "fixed": "lintloader trace -- python fixtures/runtime/trace/fetcher_loop.py "
    "fixtures/runtime/fixed_fetcher.py",
    "lightning": "lintloader trace -- python fixtures/runtime/trace/lightning_fit.py",
    "warmup_ci": "lintloader trace --max-passes 2 -- python fixtures/runtime/trace/fetcher_loop.py "
    "fixtures/runtime/buggy_fetcher.py --warmup 2 --epochs 5",
    "thread_ci": "lintloader trace --max-passes 2 -- python fixtures/runtime/trace/rebuild_loop.py "
    "--thread --epochs 5",
    "injected": "lintloader trace -- python fixtures/runtime/trace/rebuild_loop.py "
    "--init-sleep 1.5",
    "ddp": "lintloader trace --max-passes 2 -- torchrun --standalone --nproc-per-node 2 "
    "fixtures/runtime/trace/ddp_loop.py",
}

# docs/verify.md's block whose probe tests/test_verify.py's module fixture runs anyway (for the
# stall tests): checked there, the same way. The run's name there -> the command.
VERIFIED_BY_TEST_VERIFY = {
    "buggy": "lintloader verify --dataloader fixtures/runtime/buggy_fetcher.py:make_loader "
    "--worker-init-delay 1.0",
}
# and docs/trace.md's block whose run tests/test_trace_cost.py's module fixture makes anyway
TRACED_BY_TEST_TRACE_COST = {
    "step": "lintloader trace -- python fixtures/runtime/trace/cost_loop.py step --epochs 2 "
    "--steps 2 --init-sleep 1.0",
}
CHECKED_ELSEWHERE = [
    *TRACED_BY_TEST_TRACE.values(),
    *VERIFIED_BY_TEST_VERIFY.values(),
    *TRACED_BY_TEST_TRACE_COST.values(),
]


def trace_parts(command: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The traced command and trace's options of a block's ``lintloader trace OPTIONS --
    COMMAND``, as the block types them (`python` from ``PATH``, paths relative to the
    checkout)."""
    words = shlex.split(command)
    assert words[:2] == ["lintloader", "trace"], words
    split = words.index("--")
    return tuple(words[split + 1 :]), tuple(words[2:split])


def block_of(command: str) -> Block:
    """The one block whose one command is ``command``."""
    (block,) = [b for b in ALL_BLOCKS if [c for c, _ in commands(b.body)] == [command]]
    return block


def assert_block_printed(command: str, done: subprocess.CompletedProcess[str]) -> None:
    """The docs block whose one command is ``command`` shows what ``done`` (that command's
    run, made in the checkout by the module that checks the block: :data:`CHECKED_ELSEWHERE`)
    printed, stdout then stderr, by :func:`matches`."""
    block = block_of(command)
    ((_, expected),) = commands(block.body)
    actual = printed(done, REPO, expected)
    assert matches(expected, actual), f"{block.name}: the run printed:\n" + "\n".join(actual)


def run_here(block: Block) -> bool:
    """Whether this module runs ``block`` (not one of :data:`CHECKED_ELSEWHERE`)."""
    return [c for c, _ in commands(block.body)] not in ([c] for c in CHECKED_ELSEWHERE)


# a block that runs the analyzer (check, fix, rule, flake8) prints what the set of rules decides:
# tests/test_new_rule_copy.py runs it again with a throwaway rule added (the enumerates_rules mark)
ANALYZER = re.compile(r"^\$ .*\b(?:lintloader (?:check|fix|rule)|flake8)\b", re.M)


def marked(block: Block) -> object:
    """``block`` as a parameter, marked ``enumerates_rules`` where it runs the analyzer."""
    marks = [pytest.mark.enumerates_rules] if ANALYZER.search(block.body) else []
    return pytest.param(block, marks=marks, id=block.name)


def lightning150_wheel(into: Path) -> None:
    """The released pytorch-lightning 1.5.0 wheel, unpacked (its package, tests, dist-info)."""
    with zipfile.ZipFile(download_wheel("pytorch-lightning==1.5.0")) as wheel_file:
        wheel_file.extractall(into)


def torchio121_wheel(into: Path) -> None:
    """The released torchio 1.2.1 wheel, unpacked (docs/ecosystem.md's true positive)."""
    with zipfile.ZipFile(download_wheel("torchio==1.2.1")) as wheel_file:
        wheel_file.extractall(into)


def lightning150_fixture(into: Path) -> None:
    """fixtures/check/lightning150 (the 1.5.0 shape, written from scratch) in a project."""
    shutil.copytree(REPO / "fixtures" / "check" / "lightning150" / "minilight", into / "minilight")
    (into / "pyproject.toml").write_text("[project]\nname = 'minilight'\nversion = '0'\n")


def runtime(into: Path) -> None:
    """fixtures/runtime (the scripts ``trace`` and ``verify`` run, with real DataLoader
    workers), benchmarks/gpu_verify.sh, ``direct_loop.py`` at the top and a docs/images/."""
    shutil.copytree(REPO / "fixtures" / "runtime", into / "fixtures" / "runtime")
    (into / "benchmarks").mkdir()
    shutil.copy2(REPO / "benchmarks" / "gpu_verify.sh", into / "benchmarks")
    shutil.copy(REPO / "fixtures" / "runtime" / "trace" / "direct_loop.py", into)
    (into / "docs" / "images").mkdir(parents=True)


def vocabulary(into: Path) -> None:
    """docs/configuration.md's project with its own reset, root and loader factory; ``bad/``
    declares a name that is no dotted path, ``typo/`` one its module does not define."""
    for folder, table in (
        (into, VOCABULARY),
        (into / "bad", '[tool.lintloader]\nextend-resets = ["restart"]\n'),
        (into / "typo", '[tool.lintloader]\nextend-resets = ["mypkg.data.Loader.restrat"]\n'),
    ):
        (folder / "mypkg").mkdir(parents=True)
        (folder / "mypkg" / "__init__.py").write_text("")
        (folder / "mypkg" / "data.py").write_text(DATA)
        (folder / "mypkg" / "train.py").write_text(TRAIN)
        (folder / "pyproject.toml").write_text(table)


def benchmarks(into: Path) -> None:
    """benchmarks/ (its scripts and the results of their last runs, which ``--replay``
    prints again)."""
    shutil.copytree(REPO / "benchmarks", into / "benchmarks")


def patched_fakewheel(into: Path) -> None:
    """A venv (``venv/``) with ``fakewheel`` 1.0 installed by pip and patched by ``lintloader
    fix``; the wheel of its release 2.0 lies next to it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(into / "venv")], check=True)
    built = wheel(into, "1.0", ORIGINAL)
    wheel(into, "2.0", ORIGINAL + b"\n# 2.0\n")
    python = str(into / "venv" / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "--python", python]
    fix = [sys.executable, "-m", "lintloader", "fix", "--no-cache", "--site-packages"]
    for command in ([*pip, "install", "-q", "--no-index", str(built)], [*fix, "--python", python]):
        done = subprocess.run(command, cwd=into, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr


def without_lsp(into: Path) -> None:
    """A ``lintloader`` on PATH (in ``.bin/``) that sees lintloader and its core dependencies
    only: no site directory, so the [lsp] extra's pygls is not importable."""
    core = into / ".core"
    core.mkdir()
    for name in ("click", "libcst", "yaml", *(("tomli",) if sys.version_info < (3, 11) else ())):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        (core / name).symlink_to(Path(spec.origin).parent)
    (core / "lintloader").symlink_to(REPO / "lintloader")
    script = into / ".bin" / "lintloader"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\nPYTHONPATH={core} exec {sys.executable} -S -m lintloader "$@"\n')
    script.chmod(0o755)


def unused_noqa(into: Path) -> None:
    """docs/configuration.md's LL001 example: a project whose ``train.py`` holds a ``# noqa``
    for a finding it has (LL101), one for a finding it lost, and another tool's code."""
    (into / "pyproject.toml").write_text("[project]\nname = 'train'\nversion = '0'\n")
    (into / "train.py").write_text(
        "class Fetcher:\n"
        "    def __iter__(self):\n"
        "        self.loader._iterator = None  # noqa: LL101\n"
        "        return iter(self.loader)  # noqa: LL101, E501\n"
    )


SCENES: dict[str, Callable[[Path], None]] = {
    "pl150-wheel": lightning150_wheel,
    "torchio121-wheel": torchio121_wheel,
    "lightning150": lightning150_fixture,
    "runtime": runtime,
    "vocabulary": vocabulary,
    "benchmarks": benchmarks,
    "patched-fakewheel": patched_fakewheel,
    "without-lsp": without_lsp,
    "unused-noqa": unused_noqa,
}


def commands(body: str) -> Iterator[tuple[str, list[str]]]:
    """(command, expected output lines) for each ``$ `` line of a block (the blank lines that
    part one command's output from the next are not output)."""
    command: str | None = None
    expected: list[str] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            if command is not None:
                yield command, _trimmed(expected)
            command, expected = line[2:], []
        elif command is not None:
            expected.append(line)
    if command is not None:
        yield command, _trimmed(expected)


def _trimmed(lines: list[str]) -> list[str]:
    while lines and not lines[-1]:
        lines = lines[:-1]
    return lines


def without_comment(command: str) -> str:
    """The command without a trailing ``# ...`` comment (two spaces before it, as written)."""
    return re.split(r"\s{2,}#\s", command, maxsplit=1)[0]


def block_env(cwd: Path, cache: Path) -> dict[str, str]:
    """The environment a block's commands run in, in the scene ``cwd``: the scene's ``.bin/``
    and this interpreter's folder first on ``PATH`` (``python``, ``lintloader``), the cache in
    ``cache``, no colour, 100 columns."""
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(cwd / ".bin"), bin_dir, os.environ.get("PATH", "")]),
        "LINTLOADER_CACHE_DIR": str(cache),
        "TMPDIR": str(cache.parent),
        "NO_COLOR": "1",
        "COLUMNS": "100",
    }
    env.pop("FORCE_COLOR", None)
    return env


def printed(done: subprocess.CompletedProcess[str], cwd: Path, expected: list[str]) -> list[str]:
    """The output lines of the finished command ``done`` (stdout, then stderr) as a block shows
    them, run in ``cwd``, and ``exit N`` after them when the block shows the exit status."""
    output = (done.stdout + done.stderr).replace(sys.prefix, "<VENV>").replace(str(cwd), "<DIR>")
    # a venv's interpreter is python3 or python3.X, after the python that made the venv
    output = VENV_PYTHON.sub("<VENV>/bin/python3", output)
    lines = [DURATION.sub("<TIME>", line) for line in output.splitlines()]
    shows_exit = bool(expected) and EXIT.fullmatch(expected[-1]) is not None
    return [*lines, f"exit {done.returncode}"] if shows_exit else lines


def run(command: str, cwd: Path, cache: Path, expected: list[str]) -> list[str]:
    """The output lines of ``command`` in the scene ``cwd`` (:func:`printed`)."""
    # in a process group of its own, killed with what it started (trace's and verify's
    # workers) once it ends or times out (tests/child_processes.py)
    env = block_env(cwd, cache)
    done = run_once(["bash", "-c", without_comment(command)], cwd=cwd, env=env, timeout=300)
    return printed(done, cwd, expected)


def line_pattern(expected: str) -> re.Pattern[str]:
    """``expected`` as a pattern: durations as ``<TIME>``, ``<PID>`` and ``<N>`` any number,
    a run of two or more spaces any run of spaces."""
    parts = PLACEHOLDER.split(DURATION.sub("<TIME>", expected))
    return re.compile(
        "".join(
            PATTERNS.get(part, " +" if part.startswith("  ") else re.escape(part)) for part in parts
        )
    )


def matches(expected: list[str], actual: list[str]) -> bool:
    """``...`` lines match any run of lines; a line ending in `` ...`` matches by prefix."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head.strip() == ELLIPSIS:
        return any(matches(rest, actual[skip:]) for skip in range(len(actual) + 1))
    if not actual:
        return False
    if head.endswith(" " + ELLIPSIS):
        same = line_pattern(head[: -len(ELLIPSIS)].rstrip()).match(actual[0]) is not None
    else:
        same = line_pattern(head).fullmatch(actual[0]) is not None
    return same and matches(rest, actual[1:])


@pytest.mark.enumerates_rules
def test_every_console_block_names_a_known_scene() -> None:
    assert ALL_BLOCKS, "no console blocks found"
    for block in ALL_BLOCKS:
        assert block.scene in SCENES, f"{block.name}: console block needs <!-- console: SCENE -->"
        assert list(commands(block.body)), f"{block.name}: a console block holds `$ ` commands"


@pytest.mark.parametrize("block", [marked(block) for block in ALL_BLOCKS if run_here(block)])
def test_the_console_block_is_what_the_command_prints(block: Block, tmp_path: Path) -> None:
    if block.scene not in SCENES:
        pytest.fail(f"{block.name}: unknown scene {block.scene!r}")
    scene = tmp_path / "scene"
    scene.mkdir()
    SCENES[block.scene](scene)
    for command, expected in commands(block.body):
        actual = run(command, scene, tmp_path / "cache", expected)
        assert matches(expected, actual), f"{block.name}: `$ {command}` printed:\n" + "\n".join(
            actual
        )


def test_no_transcript_outside_a_checked_block() -> None:
    """A ``$ `` command with its output in a ```text (or any other) block is run by nothing:
    it must be a console block with a scene."""
    unchecked = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            shown = [line for line in match["body"].splitlines() if line.startswith("$ ")]
            if match["lang"] != "console" and shown:
                line = text.count("\n", 0, match.start("body"))
                unchecked.append(f"{path.relative_to(REPO).as_posix()}:{line}: {shown[0]}")
    assert not unchecked, "transcripts no test runs:\n" + "\n".join(unchecked)


def test_the_matcher_bites() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert matches(["x: LL101 ..."], ["x: LL101 long message"])
    assert not matches(["a"], ["a", "extra"])
    assert matches(["took 1.5 s"], [DURATION.sub("<TIME>", "took 0.2 s")])
    assert matches(["pids <PID>,<PID>  done"], ["pids 31673,31681 done"])
    assert not matches(["pids <PID>"], ["pids 3a"])
    assert matches(["(<N>% of the 5.1 s run)"], ["(28.0% of the <TIME> run)"])
    assert not matches(["exit 1"], ["exit 0"])
    assert not matches(["a.b"], ["axb"])  # the rest is literal
    assert matches(["{", "  ...", "}"], ["{", "  x", "  y", "}"])

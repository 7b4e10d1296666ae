"""Every console block of README.md and docs/*.md is a real run: the test runs each ``$ ``
command in the scene the block names and compares what it prints (stdout, then stderr) with the
block, so docs and behaviour cannot drift apart.

A block is marked by an HTML comment on the line before it, ``<!-- console: SCENE -->``; a
console block without one is an error. In a block, a line ``...`` stands for any number of
output lines and a line ending in `` ...`` for any line that starts with what precedes it
(both mark a cut in the output). Placeholders are only for what changes from run to run: the
scene's directory is ``<DIR>`` and a duration (``1.2 s``, ``0.15s``) is ``<TIME>``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import download_wheel

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(
    r"(?:<!-- console: (?P<scene>[\w-]+) -->\n)?```console\n(?P<body>.*?)^```", re.S | re.M
)
DURATION = re.compile(r"\b\d+(?:\.\d+)? ?s\b")
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


def lightning150_wheel(into: Path) -> None:
    """The released pytorch-lightning 1.5.0 wheel, unpacked (its package, tests, dist-info)."""
    with zipfile.ZipFile(download_wheel("pytorch-lightning==1.5.0")) as wheel:
        wheel.extractall(into)


def lightning150_fixture(into: Path) -> None:
    """fixtures/check/lightning150 (the 1.5.0 shape, written from scratch) in a project."""
    shutil.copytree(REPO / "fixtures" / "check" / "lightning150" / "minilight", into / "minilight")
    (into / "pyproject.toml").write_text("[project]\nname = 'minilight'\nversion = '0'\n")


SCENES: dict[str, Callable[[Path], None]] = {
    "pl150-wheel": lightning150_wheel,
    "lightning150": lightning150_fixture,
}


def commands(body: str) -> Iterator[tuple[str, list[str]]]:
    """(command, expected output lines) for each ``$ `` line of a block."""
    command: str | None = None
    expected: list[str] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            if command is not None:
                yield command, expected
            command, expected = line[2:], []
        elif command is not None:
            expected.append(line)
    if command is not None:
        yield command, expected


def without_comment(command: str) -> str:
    """The command without a trailing ``# ...`` comment (two spaces before it, as written)."""
    return re.split(r"\s{2,}#\s", command, maxsplit=1)[0]


def run(command: str, cwd: Path, cache: Path) -> list[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "LINTLOADER_CACHE_DIR": str(cache),
        "NO_COLOR": "1",
        "COLUMNS": "100",
    }
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(
        ["bash", "-c", without_comment(command)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    output = (done.stdout + done.stderr).replace(str(cwd), "<DIR>")
    return [DURATION.sub("<TIME>", line) for line in output.splitlines()]


def matches(expected: list[str], actual: list[str]) -> bool:
    """``...`` lines match any run of lines; a line ending in `` ...`` matches by prefix."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == ELLIPSIS:
        return any(matches(rest, actual[skip:]) for skip in range(len(actual) + 1))
    if not actual:
        return False
    if head.endswith(" " + ELLIPSIS):
        same = actual[0].startswith(head[: -len(ELLIPSIS)].rstrip())
    else:
        same = DURATION.sub("<TIME>", head) == actual[0]
    return same and matches(rest, actual[1:])


def test_every_console_block_names_a_known_scene() -> None:
    assert ALL_BLOCKS, "no console blocks found"
    for block in ALL_BLOCKS:
        assert block.scene in SCENES, f"{block.name}: console block needs <!-- console: SCENE -->"
        assert list(commands(block.body)), f"{block.name}: a console block holds `$ ` commands"


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=lambda block: block.name)
def test_the_console_block_is_what_the_command_prints(block: Block, tmp_path: Path) -> None:
    if block.scene not in SCENES:
        pytest.fail(f"{block.name}: unknown scene {block.scene!r}")
    scene = tmp_path / "scene"
    scene.mkdir()
    SCENES[block.scene](scene)
    for command, expected in commands(block.body):
        actual = run(command, scene, tmp_path / "cache")
        assert matches(expected, actual), f"{block.name}: `$ {command}` printed:\n" + "\n".join(
            actual
        )


def test_the_matcher_bites() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert matches(["x: LL101 ..."], ["x: LL101 long message"])
    assert not matches(["a"], ["a", "extra"])
    assert matches(["took 1.5 s"], [DURATION.sub("<TIME>", "took 0.2 s")])

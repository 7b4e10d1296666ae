"""Hostile text from scanned code never reaches a terminal raw (issue 28, part B): a string
literal holding ESC and BEL in a quoted call is escaped in every format made for terminals and
pages; the data formats keep the text and JSON escapes it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

HOSTILE = "\x1b]0;pwned\x07\x1b[2K\x1b[1GAll clear\u202e"
FETCHER = (
    "class Fetcher:\n"
    "    def __iter__(self):\n"
    f'        self.reset("{HOSTILE}")\n'
    "\n"
    "    def reset(self, msg):\n"
    "        self.loader._iterator = None\n"
)
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202e]")  # any control character but \t and \n


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "fetch.py").write_text(FETCHER, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("output_format", ["text", "concise", "github", "markdown", "dot"])
def test_terminal_formats_escape_control_characters(project: Path, output_format: str) -> None:
    done = run_cli(
        "check", ".", "--no-cache", "--color", "--output-format", output_format, cwd=project
    )
    assert done.returncode == 1, done.stderr
    assert "LL101" in done.stdout or output_format == "dot"
    shown = re.sub("\x1b\\[[0-9;]*m", "", done.stdout)  # lintloader's own colours (--color)
    assert not RAW.search(shown), ascii(shown)
    assert not RAW.search(done.stderr)
    if output_format in ("text", "github"):  # the formats that quote every hop's call
        assert "\\x1b]0;pwned\\x07" in shown


def test_data_formats_keep_the_text_and_escape_it_as_json(project: Path) -> None:
    done = run_cli("check", ".", "--no-cache", "--output-format", "json", cwd=project)
    assert done.returncode == 1 and not RAW.search(done.stdout)
    (finding,) = json.loads(done.stdout)
    assert HOSTILE in finding["chain"][0]["action"]
    sarif = run_cli("check", ".", "--no-cache", "--output-format", "sarif", cwd=project)
    assert sarif.returncode == 1 and not RAW.search(sarif.stdout)
    assert json.loads(sarif.stdout)["runs"][0]["results"][0]["ruleId"] == "LL101"


def test_flake8_messages_escape_control_characters(project: Path) -> None:
    (project / "fetch.py").write_text(FETCHER.replace("msg):", f'msg="{HOSTILE}"):'))
    done = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "LL", "--no-show-source", "fetch.py"],
        cwd=project, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert "LL101" in done.stdout, done.stdout + done.stderr
    assert not RAW.search(done.stdout), ascii(done.stdout)


def test_a_hostile_file_name_neither_breaks_the_table_nor_brings_html(tmp_path: Path) -> None:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    name = "a|b<img src=x onerror=alert(1)>`c.py"
    (tmp_path / name).write_text(FETCHER.replace(HOSTILE, "x"))
    done = run_cli("check", ".", "--no-cache", "--output-format", "markdown", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    html = cmarkgfm.github_flavored_markdown_to_html(done.stdout, options=Options.CMARK_OPT_UNSAFE)
    assert "<img" not in html, html  # raw HTML would pass with CMARK_OPT_UNSAFE
    row = re.search(r"<tbody>\s*<tr>(.*?)</tr>", html, re.DOTALL)
    assert row is not None, html
    cells = re.findall(r"<td>(.*?)</td>", row.group(1), re.DOTALL)
    assert len(cells) == 4, cells  # the | in the name did not add a column
    assert "a|b&lt;img src=x onerror=alert(1)&gt;`c.py:3:9" in cells[2]
    heading = re.search(r"<h3>(.*?)</h3>", html, re.DOTALL)
    assert heading is not None and "&lt;img" in heading.group(1)


def test_github_file_property_keeps_an_escaped_name(tmp_path: Path) -> None:
    (tmp_path / "tab\there.py").write_text(FETCHER.replace(HOSTILE, "x"))
    done = run_cli("check", ".", "--no-cache", "--output-format", "github", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("::error file=tab\\there.py,line=3,"), done.stdout


def test_flake8_survives_a_finding_in_a_file_it_cannot_name(tmp_path: Path) -> None:
    """flake8's formatter encodes names strictly: a finding yielded for ``a\\xff.py`` crashed
    it and lost every later file's. The plugin prints that file's findings on stderr under the
    escaped name, and flake8 reports the other files."""
    bug = FETCHER.replace(HOSTILE, "x").encode()
    for name in (b"a\xff.py", b"b.py", b"c.py"):
        with open(os.path.join(os.fsencode(tmp_path), name), "wb") as handle:
            handle.write(bug)
    done = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "LL", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "LINTLOADER_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1
    assert sorted(line.split(":")[0] for line in done.stdout.splitlines()) == ["./b.py", "./c.py"]
    assert "./a\\xff.py:3:9: LL101 " in done.stderr


def test_a_diff_on_a_terminal_escapes_control_characters(project: Path) -> None:
    """``fix --diff`` to a terminal (a pty here) escapes ESC and BEL; piped, it stays a patch."""
    pty = pytest.importorskip("pty")
    from conftest import lintloader_command

    command = [*lintloader_command(), "fix", "--diff", "--unsafe-fixes", "--no-cache", "."]
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            command, cwd=project, stdout=follower, stderr=subprocess.PIPE, timeout=300, check=False
        )
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the pty is drained
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    assert done.returncode == 1, done.stderr
    text = shown.decode()
    assert "@@" in text and "\x1b" not in text and "\x07" not in text, ascii(text)
    assert "\\x1b]0;pwned\\x07" in text
    piped = run_cli("fix", "--diff", "--unsafe-fixes", "--no-cache", ".", cwd=project)
    assert HOSTILE in piped.stdout  # a patch, byte for byte

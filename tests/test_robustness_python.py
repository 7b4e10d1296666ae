"""``--site-packages`` against bad interpreters and broken installed metadata (issue 8).

A ``--python`` that is not a Python is an operational error (one line on stderr, exit 2); a
distribution whose RECORD is garbage is one LL000 line and its files are still found through
``top_level.txt``. The interpreter is a ``python -m venv --without-pip`` made in tmp_path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

BUG = "class Odd:\n    def __iter__(self):\n        self.l._iterator = None\n"


def make_venv(where: Path) -> tuple[Path, Path]:
    """A bare virtual environment: (its python, its site-packages)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    python = where / "bin" / "python"
    site = next((where / "lib").glob("python3*/site-packages"))
    return python, site


def add_distribution(site: Path, name: str, record: bytes | None) -> None:
    package = site / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "fetch.py").write_text(BUG)
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text(f"{name}\n")
    if record is not None:
        (info / "RECORD").write_bytes(record)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_venv(tmp_path_factory.mktemp("venv") / "env")


def not_pythons(tmp_path: Path) -> dict[str, Path]:
    script = tmp_path / "fake-python"
    script.write_text("#!/bin/sh\necho not json at all\n")
    script.chmod(0o755)
    liar = tmp_path / "lying-python"
    liar.write_text('#!/bin/sh\necho \'{"sites": 3, "names": []}\'\n')
    liar.chmod(0o755)
    crasher = tmp_path / "crashing-python"
    crasher.write_text("#!/bin/sh\necho 'Fatal Python error: init failed' >&2\nexit 1\n")
    crasher.chmod(0o755)
    text = tmp_path / "readme.txt"
    text.write_text("just text\n")
    return {
        "script": script,
        "wrong-json": liar,
        "crashes": crasher,
        "not-executable": text,
        "directory": tmp_path,
        "missing": tmp_path / "no-such-python",
    }


@pytest.mark.parametrize(
    "kind", ["script", "wrong-json", "crashes", "not-executable", "directory", "missing"]
)
def test_python_that_is_not_a_python_is_an_operational_error(tmp_path: Path, kind: str) -> None:
    python = not_pythons(tmp_path)[kind]
    result = run_cli(
        "check", "--site-packages", "--python", str(python), "--no-cache", cwd=tmp_path
    )
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"lintloader: error: --python {python}: ")
    assert "Traceback" not in result.stderr


GARBAGE = {  # RECORD bytes -> the LL000 message start, or None when it parses as no files
    "nul_bytes": (b"\x00\x00\x00garbage\x00,,\n", None),
    "not_utf8": (b"\xff\xfe\xfa\x80 not a record\n", "unreadable RECORD ("),
    "csv_soup": (b'"unterminated,quote\n,,,,,,\n\n"x",\n', None),
}


@pytest.mark.parametrize("case", sorted(GARBAGE))
def test_broken_record_is_ll000_and_files_are_still_found(
    tmp_path: Path, venv: tuple[Path, Path], case: str
) -> None:
    python, site = venv
    name = f"broken_{case}"
    record, message = GARBAGE[case]
    add_distribution(site, name, record)
    result = run_cli(
        "check",
        "--site-packages",
        name,
        "--python",
        str(python),
        "--no-cache",
        "-j",
        "1",
        "--output-format",
        "json",
        cwd=tmp_path,
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)
    assert ("LL101", f"{name}/fetch.py") in {(f["code"], f["path"]) for f in findings}
    problems = [(f["path"], f["message"]) for f in findings if f["code"] == "LL000"]
    if message is None:
        assert problems == []
    else:
        assert len(problems) == 1
        assert problems[0][0] == "<site-packages>"
        assert problems[0][1].startswith(f"{name}: {message}"), problems
        assert "\n" not in problems[0][1]


def test_distribution_without_record_or_top_level_is_one_ll000(
    tmp_path: Path, venv: tuple[Path, Path]
) -> None:
    python, site = venv
    add_distribution(site, "orphan", None)
    (site / "orphan-1.0.dist-info" / "top_level.txt").unlink()
    result = run_cli(
        "check",
        "--site-packages",
        "orphan",
        "--python",
        str(python),
        "--no-cache",
        "--output-format",
        "json",
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)
    assert [(f["code"], f["message"]) for f in findings] == [
        ("LL000", "orphan: no RECORD or top_level.txt to list its files")
    ]


def test_whole_site_scan_survives_broken_metadata(tmp_path: Path, venv: tuple[Path, Path]) -> None:
    python, site = venv
    add_distribution(site, "whole_site_pkg", GARBAGE["not_utf8"][0])
    (site / "junk-0.dist-info").mkdir()
    (site / "junk-0.dist-info" / "METADATA").write_bytes(b"\xff\x00not metadata")
    result = run_cli(
        "check",
        "--site-packages",
        "--python",
        str(python),
        "--no-cache",
        "-j",
        "1",
        "--output-format",
        "json",
        cwd=tmp_path,
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)
    assert ("LL101", "whole_site_pkg/fetch.py") in {(f["code"], f["path"]) for f in findings}

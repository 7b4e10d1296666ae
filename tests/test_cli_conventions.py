"""The ruff conventions CI users rely on, through the real CLI in a subprocess: selectors that
match no rule, extend-* options and keys, per-file ignores on the command line, quiet and output
files, statistics, the hidden-findings note, colour (under a pseudo-terminal) and
``python -m lintloader``."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from harness import run_python

BUG = """\
class Fetcher:
    def __iter__(self):
        self.loader._iterator = None
        return iter(self.loader)

    def close(self):
        self.loader._iterator = None
"""
ANSI = "\x1b["


def project(tmp_path: Path, config: str = "") -> Path:
    (tmp_path / "fetch.py").write_text(BUG)
    if config:
        (tmp_path / "pyproject.toml").write_text(f"[tool.lintloader]\n{config}")
    return tmp_path


def check(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    return run_cli("check", "--no-cache", *args, "fetch.py", cwd=tmp_path, env=env)


@pytest.mark.enumerates_rules
def test_a_selector_that_matches_no_rule_stops_the_run(tmp_path: Path) -> None:
    project(tmp_path)
    for selector in ("LL9", "ZZ", "E501,LL101"):
        done = check(tmp_path, "--select", selector)
        assert done.returncode == 2, (selector, done.stderr)
        assert "matches no rule" in done.stderr and done.stdout == ""
    typo = check(tmp_path, "--select", "LL10")
    assert typo.returncode == 1  # a prefix of real codes is fine
    near = check(tmp_path, "--select", "LL1011")
    assert near.returncode == 2 and "did you mean LL101" in near.stderr


def test_unknown_selectors_in_the_config_stop_the_run_too(tmp_path: Path) -> None:
    project(tmp_path, 'select = ["ZZ"]\n')
    done = check(tmp_path)
    assert done.returncode == 2
    assert "'ZZ' matches no rule" in done.stderr and "pyproject.toml" in done.stderr


def test_unknown_codes_in_ignore_lists_warn(tmp_path: Path) -> None:
    project(tmp_path, 'per-file-ignores = { "x.py" = ["LL777"] }\n')
    done = check(tmp_path, "--ignore", "LL99")
    assert done.returncode == 1  # the LL101 is still reported
    # each warning names where the code came from: the option, or the config key and its file
    assert "warning: --ignore: 'LL99' matches no rule" in done.stderr
    assert "warning: per-file-ignores: 'LL777' matches no rule" in done.stderr


def test_extend_options_add_to_the_configuration(tmp_path: Path) -> None:
    project(tmp_path, 'select = ["LL2"]\nextend-select = ["LL103"]\n')
    listed = json.loads(check(tmp_path, "--min-severity", "info", "--output-format", "json").stdout)
    assert {f["code"] for f in listed} == {"LL103"}
    extended = check(tmp_path, "--extend-select", "LL101", "--output-format", "json")
    # LL103 (info) is selected by its exact code, so it shows without --min-severity info
    assert {f["code"] for f in json.loads(extended.stdout)} == {"LL101", "LL103"}
    ignored = check(tmp_path, "--select", "LL1", "--extend-ignore", "LL101")
    assert ignored.returncode == 0
    excluded = run_cli(
        "check", "--no-cache", "--extend-exclude", "fetch.py", ".", cwd=tmp_path
    )  # fmt: skip
    assert excluded.returncode == 0 and "in 0 files" in excluded.stderr


def test_extend_keys_in_the_configuration(tmp_path: Path) -> None:
    project(tmp_path, 'extend-ignore = ["LL101"]\nextend-exclude = ["build"]\n')
    assert check(tmp_path).returncode == 0


def test_per_file_ignores_on_the_command_line(tmp_path: Path) -> None:
    project(tmp_path)
    done = check(tmp_path, "--per-file-ignores", "fetch.py:LL101")
    assert done.returncode == 0 and "1 suppressed" in done.stderr
    other = check(tmp_path, "--per-file-ignores", "other.py:LL101")
    assert other.returncode == 1
    bad = check(tmp_path, "--per-file-ignores", "no-codes-here")
    assert bad.returncode == 2 and "GLOB:CODE" in bad.stderr


def test_quiet_and_output_file(tmp_path: Path) -> None:
    project(tmp_path)
    quiet = check(tmp_path, "-q")
    assert quiet.returncode == 1 and quiet.stderr == "" and "LL101" in quiet.stdout
    out = tmp_path / "report.json"
    written = check(tmp_path, "-o", str(out), "--output-format", "json")
    assert written.returncode == 1 and written.stdout == ""
    assert [f["code"] for f in json.loads(out.read_text())] == ["LL101"]
    made = check(tmp_path, "-o", str(tmp_path / "missing" / "r.txt"))  # as ruff: folders made
    assert made.returncode == 1 and "LL101" in (tmp_path / "missing" / "r.txt").read_text()
    (tmp_path / "a_file").write_text("")
    unwritable = check(tmp_path, "-o", str(tmp_path / "a_file" / "r.txt"))
    assert unwritable.returncode == 2 and "cannot write output" in unwritable.stderr


def test_statistics_as_ruff_prints_them(tmp_path: Path) -> None:
    project(tmp_path)
    text = check(tmp_path, "--statistics", "--min-severity", "info")
    assert text.stdout.splitlines() == [
        "1\tLL101\t[-] iter-resets-dataloader-iterator",  # remove-sink only: unsafe
        "1\tLL103\t[ ] unreached-dataloader-iterator-reset",
    ]
    rows = json.loads(check(tmp_path, "--statistics", "--output-format", "json").stdout)
    assert rows == [
        {
            "code": "LL101",
            "name": "iter-resets-dataloader-iterator",
            "count": 1,
            "fixable": False,
            "unsafe_fixable": True,
        }
    ]


def test_the_summary_says_when_findings_are_hidden(tmp_path: Path) -> None:
    project(tmp_path)
    done = check(tmp_path)
    assert "1 finding below warning hidden (--min-severity info shows it)" in done.stderr
    shown = check(tmp_path, "--min-severity", "info")
    assert "hidden" not in shown.stderr


def test_fix_takes_min_severity(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "from torch.utils.data import DataLoader\n\n"
        "def fit(ds):\n"
        "    loader = DataLoader(ds, num_workers=2)\n"
        "    for epoch in range(3):\n"
        "        for batch in loader:\n"
        "            pass\n"
    )
    before = script.read_text()
    run_cli("fix", "--no-cache", "--unsafe-fixes", "train.py", cwd=tmp_path)
    assert script.read_text() == before  # LL204 is info: below the default threshold
    done = run_cli(
        "fix", "--no-cache", "--unsafe-fixes", "--min-severity", "info", "train.py", cwd=tmp_path
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "persistent_workers=True" in script.read_text()


def in_terminal(tmp_path: Path, *args: str, env: dict[str, str]) -> str:
    """Run ``lintloader check`` with stdout on a pseudo-terminal; what it wrote there."""
    controller, terminal = pty.openpty()
    merged = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    process = subprocess.Popen(
        [sys.executable, "-m", "lintloader", "check", "--no-cache", *args, "fetch.py"],
        cwd=tmp_path, stdout=terminal, stderr=subprocess.DEVNULL, env={**merged, **env},
    )  # fmt: skip
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(controller)
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_and_the_environment_switches(tmp_path: Path) -> None:
    project(tmp_path)
    assert ANSI in in_terminal(tmp_path, env={})
    assert ANSI not in in_terminal(tmp_path, env={"NO_COLOR": "1"})
    assert ANSI in in_terminal(tmp_path, "--color", env={"NO_COLOR": "1"})
    assert ANSI not in in_terminal(tmp_path, "--no-color", env={})


def test_colour_into_a_pipe_only_when_asked(tmp_path: Path) -> None:
    project(tmp_path)
    assert ANSI not in check(tmp_path).stdout
    assert ANSI in check(tmp_path, "--color").stdout
    assert ANSI in check(tmp_path, env={"FORCE_COLOR": "1"}).stdout
    assert ANSI not in check(tmp_path, env={"NO_COLOR": "1"}).stdout


def test_python_dash_m_lintloader(tmp_path: Path) -> None:
    project(tmp_path)
    done = run_python("-m", "lintloader", "check", "--no-cache", "fetch.py", cwd=tmp_path)
    assert done.returncode == 1 and "LL101" in done.stdout

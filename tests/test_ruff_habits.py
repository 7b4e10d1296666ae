"""Habits a ruff user brings: ``extend =``, ``--color`` on ``concise``, a note for a named file
that is excluded, ``--show-settings``/``--show-files``, singular summaries; real CLI runs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import run_cli

from lintloader.rules.codes import rule_codes

REPO = Path(__file__).resolve().parents[1]
LIGHTNING = REPO / "fixtures" / "check" / "lightning150" / "minilight"
ANSI = "\x1b["


def project(tmp_path: Path, table: str = "") -> Path:
    root = tmp_path / "proj"
    shutil.copytree(LIGHTNING, root / "minilight")
    (root / "pyproject.toml").write_text(f"[project]\nname = 'p'\n[tool.lintloader]\n{table}")
    return root


@pytest.mark.enumerates_rules
def test_extend_reads_a_shared_configuration(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.lintloader]\nignore = ["LL101"]\nbaseline = "base.json"\n'
    )
    root = project(tmp_path, 'extend = "../pyproject.toml"\n')
    shown = run_cli("check", "--show-settings", ".", cwd=root)
    assert shown.returncode == 0, shown.stderr
    assert "ignore            LL101" in shown.stdout
    assert f"baseline          {tmp_path / 'base.json'}" in shown.stdout
    done = run_cli("check", "--no-cache", "--baseline", "none.json", ".", cwd=root)
    assert "no such file" in done.stderr  # the option wins over the extended key
    (root / "pyproject.toml").write_text('[tool.lintloader]\nextend = "../pyproject.toml"\n'
                                         'ignore = []\n')  # fmt: skip
    (tmp_path / "base.json").write_text('{"version": 1, "findings": []}\n')
    done = run_cli("check", "--no-cache", ".", cwd=root)
    assert done.returncode == 1 and "LL101" in done.stdout  # the child's ignore overrides
    (tmp_path / "pyproject.toml").write_text('[tool.lintloader]\nextend = "proj/pyproject.toml"\n')
    cycle = run_cli("check", ".", cwd=root)
    assert cycle.returncode == 2 and "makes a cycle" in cycle.stderr


def test_color_applies_to_concise(tmp_path: Path) -> None:
    root = project(tmp_path)
    coloured = run_cli(
        "check", "--no-cache", "--output-format", "concise", "--color", ".", cwd=root
    )
    assert ANSI in coloured.stdout
    plain = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=root)
    assert ANSI not in plain.stdout
    assert plain.stdout.startswith("minilight/utilities/fetching.py:16:9: LL101 [error]")


def test_a_named_file_that_is_excluded_gets_one_note(tmp_path: Path) -> None:
    root = project(tmp_path, 'exclude = ["minilight/utilities/*"]\n')
    done = run_cli("check", "--no-cache", "minilight/utilities/fetching.py", cwd=root)
    assert done.returncode == 0
    notes = [line for line in done.stderr.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: minilight/utilities/fetching.py is excluded (exclude, .gitignore or a default "
        "exclude); not checked"
    ]


def test_a_named_file_that_is_checked_gets_no_note(tmp_path: Path) -> None:
    """Named as the walk keeps it, by an absolute path, or through a link: no note."""
    root = project(tmp_path)
    target = root / "minilight" / "utilities" / "fetching.py"
    (root / "named_link.py").symlink_to(target)
    for named in ("minilight/utilities/fetching.py", str(target), "minilight/../named_link.py"):
        done = run_cli("check", "--no-cache", named, cwd=root)
        assert done.returncode == 1, done.stderr  # its LL101
        assert not [line for line in done.stderr.splitlines() if line.startswith("note:")]


@pytest.mark.enumerates_rules
def test_show_settings_and_files(tmp_path: Path) -> None:
    root = project(tmp_path, 'select = ["LL1"]\nmin-severity = "info"\n')
    done = run_cli("check", "--show-settings", ".", cwd=root)
    assert done.returncode == 0, done.stderr
    assert f"configuration     {root / 'pyproject.toml'}" in done.stdout
    enabled = ", ".join(code for code in sorted(rule_codes()) if code.startswith("LL1"))
    assert f"rules enabled     {enabled}\n" in done.stdout
    assert "min-severity      info\n" in done.stdout
    assert f"roots             {root}" in done.stdout
    files = run_cli("check", "--show-files", ".", cwd=root)
    assert files.stdout.splitlines() == [
        "minilight/__init__.py",
        "minilight/trainer/__init__.py",
        "minilight/trainer/supporters.py",
        "minilight/utilities/__init__.py",
        "minilight/utilities/collections.py",
        "minilight/utilities/fetching.py",
    ]


def test_one_finding_in_one_file_is_singular(tmp_path: Path) -> None:
    (tmp_path / "fetcher.py").write_text(
        "class Fetcher:\n    def __iter__(self):\n        self.loader._iterator = None\n"
        "        return iter(self.loader)\n"
    )
    done = run_cli("check", "--no-cache", "fetcher.py", cwd=tmp_path)
    assert "Found 1 finding (1 error) in 1 file (" in done.stderr


def test_install_hints_name_a_source_that_exists_and_constraints_for_torch() -> None:
    from lintloader import extra_hint
    from lintloader.runtime.verify.errors import INSTALL_HINT

    assert 'pip install -c constraints.txt -e ".[runtime]"' in INSTALL_HINT
    assert "@ git+https://github.com/lintloader/lintloader@<commit-sha>" in INSTALL_HINT
    assert "constraints" not in extra_hint("plot")  # matplotlib only: no torch to pin
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for path in docs:
        for line in path.read_text(encoding="utf-8").splitlines():
            # an extra is never suggested from an index lintloader is not on
            assert not re.search(r"pip install ['\"]lintloader\[\w+\]['\"]", line), (path, line)
            if re.search(r"pip install\b.*\.\[(runtime|test)\]", line):
                assert "-c constraints.txt" in line, (path, line)


def test_verify_on_another_interpreter_says_what_is_missing_there(tmp_path: Path) -> None:
    import subprocess
    import sys

    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    done = run_cli("verify", "--engine", "torch", "--python", str(python), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"torch is not importable by {python}" in done.stderr
    assert f"{python} -m pip install -c constraints.txt torch" in done.stderr


def test_an_info_rule_selected_by_its_code_is_shown(tmp_path: Path) -> None:
    shutil.copy(REPO / "fixtures" / "rules" / "LL204" / "positive.py", tmp_path / "train.py")
    hidden = run_cli("check", "--no-cache", "--output-format", "concise", "train.py", cwd=tmp_path)
    assert ": LL204 [info]" not in hidden.stdout
    shown = run_cli(
        "check", "--no-cache", "--select", "LL204", "--output-format", "concise", "train.py",
        cwd=tmp_path,
    )  # fmt: skip
    assert shown.returncode == 1
    assert shown.stdout and all(": LL204 [info]" in line for line in shown.stdout.splitlines())
    prefix = run_cli("check", "--no-cache", "--select", "LL2", "train.py", cwd=tmp_path)
    assert ": LL204 [info]" not in prefix.stdout  # a prefix is not an explicit selection

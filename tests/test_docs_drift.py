"""The 14 places issue 32 (section 8) found where docs and behaviour differed, each held by a
test through the real CLI. Where each one is checked:

- the README excerpt of the PL 1.5.0 run, docs/verify.md's real output (its ``interpreter``
  line), docs/trace.md's ``--max-passes 2`` runs, docs/check.md's ``--project-root=auto`` run
  inside a project (docs/pre-commit.md): console blocks that tests/test_docs_console.py runs;
- docs/check.md's option table (``--fix``, ``--diff``, ``--unsafe-fixes``, ``--show-fixes``,
  ``--exit-non-zero-on-fix``): generated, tests/unit/test_option_docs.py;
- untouched notebook outputs and metadata: tests/test_notebooks.py;
- relative paths in selector and configuration errors: tests/test_ci_formats.py,
  tests/test_trust_inputs.py, and the configuration console blocks;
- the rest here: a lone file outside a project, the ``note:`` lines of ``check --fix`` and
  ``fix``, the unsafe fixes ``--help`` names, ``--ignore`` prefixes and the cache default; and
  docs/guarantees.md's line for a refused manifest entry (its example named a reason that
  entry does not get).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import lintloader_command, run_cli
from trust_support import make_env

REPO = Path(__file__).resolve().parents[1]
LIGHTNING = REPO / "fixtures" / "check" / "lightning150" / "minilight"
LL202 = REPO / "fixtures" / "rules" / "LL202" / "positive.py"
STATEFUL = REPO / "fixtures" / "fix" / "hoist_dataloader_state.in.py"  # only an unsafe fix
FETCHING = "minilight/utilities/fetching.py"
SUMMARY = re.compile(
    r"Found (\d+) findings? .*in (\d+) files?(?:, its project's (\d+) files? read)? "
)


def help_text(command: str) -> str:
    """``lintloader COMMAND --help`` as one line: click's wrapping (also inside a hyphenated
    name) undone."""
    done = run_cli(command, "--help")
    assert done.returncode == 0, done.stderr
    return re.sub(r"-\s+", "-", " ".join(done.stdout.split()))


@pytest.fixture
def loose(tmp_path: Path) -> Path:
    """The lightning150 fixture and an LL202 file in a folder that is in no project."""
    shutil.copytree(LIGHTNING, tmp_path / "minilight")
    shutil.copy(LL202, tmp_path / "train.py")
    for folder in (tmp_path, *tmp_path.parents):
        markers = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
        if any((folder / marker).exists() for marker in markers):
            pytest.skip(f"{folder} makes the temporary directory part of a project")
    return tmp_path


def summary(stderr: str) -> tuple[int, int]:
    """(findings, files analysed) of a run's summary line (a file checked in its project:
    the project's files, read for its chains)."""
    match = SUMMARY.search(stderr)
    assert match, stderr
    return int(match[1]), int(match[3] or match[2])


def test_a_lone_file_outside_a_project_is_analysed_alone_unlike_auto(loose: Path) -> None:
    """docs/check.md: outside a project the default analyses a lone file alone, while
    ``--project-root auto`` indexes the file's directory (so the two differ there)."""
    default = run_cli("check", "--no-cache", FETCHING, cwd=loose)
    auto = run_cli("check", "--no-cache", "--project-root=auto", FETCHING, cwd=loose)
    assert default.returncode == auto.returncode == 0, default.stderr + auto.stderr
    assert summary(default.stderr) == (0, 1)
    findings, files = summary(auto.stderr)
    assert findings == 0 and files == len(list((loose / FETCHING).parent.glob("*.py")))
    assert files > 1


def test_check_fix_and_fix_note_every_finding_they_leave(loose: Path) -> None:
    """docs/fix.md: ``check --fix`` and ``fix`` print one ``note:`` for every finding they
    leave, saying why (issue 43): the fix that needs ``--unsafe-fixes``, or no fixer."""
    lone = "note: no project holds"  # the summary's own note: the file is checked alone
    for command in (["check", "--fix"], ["fix"]):
        shutil.copy(LL202, loose / "train.py")
        shutil.copy(STATEFUL, loose / "state.py")
        done = run_cli(*command, "--no-cache", "train.py", "state.py", cwd=loose)
        assert done.returncode == 1, done.stderr
        lines = done.stderr.splitlines()
        notes = [line for line in lines if line.startswith("note: ") and not line.startswith(lone)]
        assert len(notes) == 3, done.stderr
        assert "state.py:12: LL202 hoist-loader-call not applied: the loop sets" in notes[0]
        assert "`--unsafe-fixes` offers hoist-dataloader" in notes[1]
        assert "train.py:29" in notes[2] and "no fixer for this shape" in notes[2]


@pytest.mark.parametrize("command", ["fix", "check"])
def test_help_names_every_unsafe_fix(command: str) -> None:
    from lintloader.fixers.registry import all_strategies

    unsafe = sorted(strategy.name for strategy in all_strategies() if not strategy.safe)
    assert len(unsafe) >= 5
    text = help_text(command)
    assert f"unsafe fixes ({', '.join(unsafe)})" in text


def test_ignore_takes_prefixes_as_help_says(loose: Path) -> None:
    assert "--ignore CODES Comma-separated rule codes or prefixes to skip" in help_text("check")
    kept = run_cli("check", "--no-cache", "--ignore", "LL2", ".", cwd=loose)
    hidden = run_cli("check", "--no-cache", "--ignore", "LL1,LL2", ".", cwd=loose)
    assert (kept.returncode, hidden.returncode) == (1, 0), kept.stderr + hidden.stderr
    assert "LL101" in kept.stdout and "LL202" not in kept.stdout
    assert summary(hidden.stderr)[0] == 0


def test_the_cache_default_is_where_help_says(loose: Path, tmp_path: Path) -> None:
    text = help_text("check")
    assert "(default: $LINTLOADER_CACHE_DIR, else $XDG_CACHE_HOME/lintloader, else" in text
    assert "~/.cache/lintloader)" in text
    unset = ("LINTLOADER_CACHE_DIR", "XDG_CACHE_HOME")
    base = {name: value for name, value in os.environ.items() if name not in unset}
    own, xdg, home = tmp_path / "own", tmp_path / "xdg", tmp_path / "home"
    for env, expected in (
        ({"LINTLOADER_CACHE_DIR": str(own), "XDG_CACHE_HOME": str(xdg)}, own),
        ({"XDG_CACHE_HOME": str(xdg)}, xdg / "lintloader"),
        ({"HOME": str(home)}, home / ".cache" / "lintloader"),
    ):
        done = subprocess.run(
            [*lintloader_command(), "check", FETCHING],
            cwd=loose, env={**base, **env}, capture_output=True, text=True, timeout=300,
            check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert expected.is_dir() and any(expected.iterdir()), (env, expected)


def doc_line(doc: str, start: str) -> str:
    """The one line of ``docs/DOC`` that starts with ``start``."""
    (line,) = [
        line
        for line in (REPO / "docs" / doc).read_text(encoding="utf-8").splitlines()
        if line.startswith(start)
    ]
    return line


def test_the_refused_manifest_entry_is_reported_as_guarantees_shows(tmp_path: Path) -> None:
    """docs/guarantees.md's refusal line, from a real ``--list-patched`` of an environment
    whose manifest has an entry that leads out of the site through a symbolic link."""
    env = make_env(tmp_path)
    done = env.fix("fakefetch")
    assert done.returncode == 0, done.stderr
    outside = tmp_path / "outside"
    outside.mkdir()
    (env.site / "fakefetch" / "out").symlink_to(outside, target_is_directory=True)
    files = env.entries()
    files["fakefetch/out/passwd.py"] = files["fakefetch/fetching.py"]
    env.manifest.write_text(json.dumps({"format": 1, "files": files}))
    listed = env.fix("--list-patched")
    assert listed.returncode == 2
    shown = listed.stderr.replace(str(env.site), "<site>").splitlines()
    assert doc_line("guarantees.md", "refused: <site>/") in shown

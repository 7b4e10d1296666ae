"""A check of some files of a project counts the suppressed and hidden findings of those files
only (issue 44), through real runs of the CLI: cold, replayed warm, and after edits that the
stored run is revisited or relinked for; the JSON, SARIF and ``--statistics`` reports agree with
the printed count of findings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import run_cli

HEADER = "from torch.utils.data import DataLoader\n"
PER_EPOCH = """

def {name}(dataset, epochs):
    for epoch in range(epochs):
        loader = DataLoader(dataset, num_workers=2){noqa}
        for batch in loader:
            pass
"""  # LL202, info: below the default threshold (hidden), with a noqa comment or not
PERSISTENT = """

def {name}(dataset, workers):
    return DataLoader(dataset, num_workers=workers, persistent_workers=True){noqa}
"""  # LL201, warning: shown, or suppressed by its noqa comment


def module(per_epoch: int, persistent: int, suppressed: int) -> str:
    """``per_epoch`` hidden LL202 (one with a noqa comment), ``persistent`` LL201 of which
    the last ``suppressed`` carry one."""
    text = HEADER
    for n in range(per_epoch):
        text += PER_EPOCH.format(name=f"epochs{n}", noqa="  # noqa: LL202" if n == 1 else "")
    for n in range(persistent):
        noqa = "  # noqa: LL201" if n >= persistent - suppressed else ""
        text += PERSISTENT.format(name=f"loader{n}", noqa=noqa)
    return text


# (shown, suppressed, hidden) of each file, and of the two together
COUNTS = {"a.py": (1, 1, 2), "b.py": (2, 2, 3)}
BOTH = (3, 3, 5)
SUMMARY = re.compile(
    r"^Found (?P<shown>\d+) findings? .*?\((?:\d+ parsed, \d+ from cache, )?"
    r"(?P<suppressed>\d+) suppressed\)\.(?: (?P<hidden>\d+) findings? below warning hidden)?",
    re.M,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "counts"\n')
    (root / "a.py").write_text(module(per_epoch=2, persistent=2, suppressed=1))
    (root / "b.py").write_text(module(per_epoch=3, persistent=4, suppressed=2))
    return root


def counts(root: Path, cache: Path, *args: str) -> tuple[tuple[int, int, int], int]:
    """(shown, suppressed, hidden) as the summary line prints them, and how many files were
    parsed (``--verbose``: 0 when the stored run was replayed)."""
    done = run_cli("check", "--verbose", "--cache-dir", str(cache), *args, cwd=root)
    assert done.returncode == 1, done.stderr
    match = SUMMARY.search(done.stderr)
    assert match, done.stderr
    parsed = re.search(r"\((\d+) parsed, ", done.stderr)
    assert parsed
    found = (int(match["shown"]), int(match["suppressed"]), int(match["hidden"] or 0))
    return found, int(parsed[1])


def per_file(root: Path, cache: Path) -> dict[str, tuple[int, int, int]]:
    return {name: counts(root, cache, name)[0] for name in COUNTS}


def test_cold_and_warm_counts_are_the_files_own(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for name, expected in COUNTS.items():  # cold: each file in a cache of its own
        assert counts(project, tmp_path / f"cold-{name}", name) == (expected, 2)
    assert counts(project, cache, ".") == (BOTH, 2)
    for name, expected in COUNTS.items():  # warm: the run stored by `check .`, replayed
        assert counts(project, cache, name) == (expected, 0)
    assert counts(project, cache, "a.py", "b.py") == (BOTH, 0)
    assert counts(project, tmp_path / "nocache", "--no-cache", "a.py")[0] == COUNTS["a.py"]


def test_counts_after_a_revisit_and_a_relink(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert per_file(project, cache) == COUNTS
    b = project / "b.py"
    b.write_text(b.read_text() + "\n\n# a comment at the end\n")  # revisited: findings hold
    assert counts(project, cache, "a.py") == (COUNTS["a.py"], 0)
    assert per_file(project, cache) == COUNTS
    b.write_text("# a new first line\n" + b.read_text())  # lines moved: relinked
    assert counts(project, cache, "b.py") == (COUNTS["b.py"], 1)
    assert per_file(project, cache) == COUNTS
    # a file that gains a finding and a suppression: its counts change, the other's do not
    b.write_text(b.read_text() + module(per_epoch=0, persistent=2, suppressed=1)[len(HEADER) :])
    assert per_file(project, cache) == {"a.py": COUNTS["a.py"], "b.py": (3, 3, 3)}


def test_reports_agree_with_the_printed_count(project: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    for name, (shown, _, _) in COUNTS.items():
        done = run_cli("check", "--cache-dir", cache, "--output-format", "json", name, cwd=project)
        assert len(json.loads(done.stdout)) == shown
        assert f"Found {shown} finding" in done.stderr
        sarif = run_cli(
            "check", "--cache-dir", cache, "--output-format", "sarif", name, cwd=project
        )
        assert len(json.loads(sarif.stdout)["runs"][0]["results"]) == shown
        rows = run_cli("check", "--cache-dir", cache, "--statistics", name, cwd=project)
        assert rows.stdout == f"{shown}\tLL201\t[*] persistent-workers-without-workers\n"
        assert f"Found {shown} finding" in rows.stderr
    # at info, the hidden findings are shown or, with their noqa comment, suppressed: per file too
    done = run_cli("check", "--no-cache", "--min-severity", "info", "a.py", cwd=project)
    assert "Found 2 findings (1 warning, 1 info) in 1 file, its project's 2 files read " in (
        done.stderr
    )
    assert "(2 suppressed)." in done.stderr and "hidden" not in done.stderr

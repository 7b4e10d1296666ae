"""``check --write-baseline`` / ``--baseline`` / ``--show-stale-baseline`` and ``baseline =`` in
``[tool.lintloader]``, through the real CLI on real code: a recorded finding stays hidden when
lines move above it or its call is reformatted; a second instance in the same function is new."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
LIGHTNING = REPO / "fixtures" / "check" / "lightning150" / "minilight"

# a loader built in a step loop: a pool per step, a defeated pool (a warning,
# lintloader/domain/cost.py)
TRAIN = """\
from torch.utils.data import DataLoader


def train(dataset, steps):
    for step in range(steps):
        loader = DataLoader(dataset, batch_size=4, num_workers=2)
        for batch in loader:
            pass
"""


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(LIGHTNING, root / "minilight")
    (root / "train.py").write_text(TRAIN)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    return root


def check(root: Path, *args: str):
    return run_cli("check", "--no-cache", *args, ".", cwd=root)


def test_a_baseline_hides_what_it_records_and_says_so(tmp_path: Path) -> None:
    root = project(tmp_path)
    written = check(root, "--write-baseline", "lintloader-baseline.json")
    assert written.returncode == 0, written.stderr
    assert "Wrote 2 findings to the baseline" in written.stderr
    data = json.loads((root / "lintloader-baseline.json").read_text())
    assert [(e["code"], e["path"], e["root"], e["sink"]) for e in data["findings"]] == [
        (
            "LL101",
            "minilight/utilities/fetching.py",
            "DataFetcher.__iter__",
            "CombinedLoader._shutdown_workers_and_reset_iterator",
        ),
        ("LL202", "train.py", "train", "train"),
    ]
    done = check(root, "--baseline", "lintloader-baseline.json")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "Found 0 findings in 7 files" in done.stderr
    assert "2 baselined" in done.stderr


def test_the_file_is_stable_and_the_same_from_another_directory(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert check(root, "--write-baseline", "first.json").returncode == 0
    assert check(root, "--write-baseline", "second.json").returncode == 0
    first = (root / "first.json").read_text()
    assert first == (root / "second.json").read_text()
    # the same files checked from the parent directory: paths relative to the baseline's folder
    done = run_cli(
        "check", "--no-cache", "--write-baseline", "proj/third.json", "proj", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert (root / "third.json").read_text() == first


def test_moved_and_reformatted_findings_stay_hidden_a_second_instance_is_new(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    assert check(root, "--write-baseline", "base.json").returncode == 0
    moved = "import os\nimport sys\n\n\n" + TRAIN.replace(
        "DataLoader(dataset, batch_size=4, num_workers=2)",
        "DataLoader(\n            dataset,\n            batch_size=4,\n"
        "            num_workers=2,\n        )",
    )
    (root / "train.py").write_text(moved)
    done = check(root, "--baseline", "base.json", "--output-format", "concise")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 baselined" in done.stderr
    again = moved + (
        "\n\ndef more(dataset, steps):\n    for step in range(steps):\n"
        "        for batch in DataLoader(dataset, num_workers=2):\n            pass\n"
    )
    twice = again.replace(
        "        for batch in loader:\n            pass\n",
        "        for batch in loader:\n            pass\n"
        "    for step in range(steps):\n"
        "        loader = DataLoader(dataset, batch_size=4, num_workers=2)\n"
        "        for batch in loader:\n            pass\n",
        1,
    )
    (root / "train.py").write_text(twice)
    done = check(root, "--baseline", "base.json", "--output-format", "concise")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) == 2, done.stdout  # the second loop in train() and the one in more()
    assert all(": LL202 [warning]" in line for line in lines)
    assert "2 baselined" in done.stderr


def test_stale_entries_are_listed(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert check(root, "--write-baseline", "base.json").returncode == 0
    (root / "train.py").write_text("def train():\n    pass\n")
    done = check(root, "--baseline", "base.json", "--show-stale-baseline")
    assert done.returncode == 0, done.stderr
    assert "stale baseline entry: train.py: LL202 train -> train" in done.stderr
    assert "1 stale baseline entry in base.json." in done.stderr


def test_baseline_in_the_configuration(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "ci").mkdir()
    assert check(root, "--write-baseline", "ci/base.json").returncode == 0
    (root / "pyproject.toml").write_text("[tool.lintloader]\nbaseline = 'ci/base.json'\n")
    done = check(root)
    assert done.returncode == 0, done.stderr
    assert "2 baselined" in done.stderr


def test_a_bad_baseline_is_one_line(tmp_path: Path) -> None:
    root = project(tmp_path)
    missing = check(root, "--baseline", "nope.json")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        "lintloader: error: baseline nope.json: no such file "
        "(`--write-baseline nope.json` records one)"
    ]
    (root / "bad.json").write_text("[1, 2]")
    bad = check(root, "--baseline", "bad.json")
    assert bad.returncode == 2
    assert "not a lintloader baseline" in bad.stderr


def git(root: Path, *args: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run(["git", *identity, *args], cwd=root, check=True, capture_output=True)


def test_a_renamed_file_keeps_its_entries_a_deleted_one_is_stale(tmp_path: Path) -> None:
    root = project(tmp_path)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "legacy")
    assert check(root, "--write-baseline", "base.json").returncode == 0
    git(root, "mv", "minilight/utilities/fetching.py", "minilight/utilities/fetch.py")
    git(root, "mv", "train.py", "scripts_train.py")
    done = check(root, "--baseline", "base.json", "--show-stale-baseline")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 baselined" in done.stderr
    assert "0 stale baseline entries in base.json." in done.stderr
    (root / "scripts_train.py").unlink()
    done = check(root, "--baseline", "base.json", "--show-stale-baseline")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 baselined" in done.stderr
    assert "stale baseline entry: train.py (file gone): LL202 train -> train" in done.stderr
    assert "1 stale baseline entry in base.json." in done.stderr


def test_update_drops_stale_entries_follows_renames_adds_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert check(root, "--write-baseline", "base.json").returncode == 0
    (root / "minilight/utilities/fetching.py").rename(root / "minilight/utilities/fetch.py")
    (root / "train.py").unlink()
    (root / "new.py").write_text(TRAIN.replace("def train", "def fresh"))  # new: not added
    done = check(root, "--baseline", "base.json", "--update-baseline")
    assert "Updated the baseline base.json: 1 entry kept, 1 stale dropped." in done.stderr
    data = json.loads((root / "base.json").read_text())
    assert [(e["code"], e["path"]) for e in data["findings"]] == [
        ("LL101", "minilight/utilities/fetch.py")
    ]
    assert done.returncode == 1  # the new finding is reported
    assert "new.py" in done.stdout
    assert check(root, "--update-baseline").returncode == 2  # no baseline to update


def test_an_entry_hides_only_the_finding_it_says_it_is(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert check(root, "--write-baseline", "base.json").returncode == 0
    data = json.loads((root / "base.json").read_text())
    for entry in data["findings"]:  # the fingerprints kept, the labels of another finding
        entry.update(code="LL205", path="elsewhere.py", root="old", sink="old")
    (root / "base.json").write_text(json.dumps(data))
    done = check(root, "--baseline", "base.json", "--output-format", "concise")
    assert done.returncode == 1
    assert len(done.stdout.splitlines()) == 2, done.stdout
    assert "baselined" not in done.stderr


def test_messages_name_the_baseline_relative_to_the_working_directory(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "ci").mkdir()
    assert check(root, "--write-baseline", "ci/base.json").returncode == 0
    (root / "pyproject.toml").write_text("[tool.lintloader]\nbaseline = 'ci/base.json'\n")
    done = check(root, "--show-stale-baseline")
    assert "0 stale baseline entries in ci/base.json." in done.stderr
    assert str(tmp_path) not in done.stderr

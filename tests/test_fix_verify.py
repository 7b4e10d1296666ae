"""Fix, then run: the relocated fetcher iterated three times over
``DataLoader(num_workers=2, persistent_workers=True)`` yields the same batches every pass from
the same worker processes. Controls: the unfixed fetcher respawns its workers every pass, and
the unsafe ``remove-call`` fix loses the second pass's batches (why it is unsafe)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from child_processes import run_once
from harness import run_cli

pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "fix" / "relocate_fetcher.in.py"

ITERATE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import fetcher_mod
from torch.utils.data import DataLoader

loader = DataLoader(
    fetcher_mod.PidDataset(24), batch_size=4, num_workers=2, persistent_workers=True
)
fetcher = fetcher_mod.Fetcher(loader)
passes = []
for _ in range(3):
    batches = [batch.tolist() for batch in fetcher]
    passes.append({
        "indices": [row[0] for batch in batches for row in batch],
        "pids": sorted({row[1] for batch in batches for row in batch}),
    })
if hasattr(fetcher, "teardown"):
    fetcher.teardown()
print(json.dumps({"passes": passes, "after_teardown": loader._iterator is None}))
"""


def iterate(folder: Path) -> dict:
    result = run_once([sys.executable, "-c", ITERATE, str(folder)], timeout=180)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def fix(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("fix", str(folder), "--no-cache", *args, timeout=120)


def project(tmp_path: Path, name: str, source: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "fetcher_mod.py").write_text(source)
    return folder


def test_relocated_fetcher_keeps_batches_and_workers(tmp_path: Path) -> None:
    folder = project(tmp_path, "fixed", FIXTURE.read_text())
    result = fix(folder)
    assert result.returncode == 0, result.stderr
    assert "fixed by relocate" in result.stderr
    run = iterate(folder)
    passes = run["passes"]
    assert passes[0]["indices"] == list(range(24))
    assert all(p["indices"] == passes[0]["indices"] for p in passes)
    assert len(passes[0]["pids"]) == 2
    assert all(p["pids"] == passes[0]["pids"] for p in passes)
    assert run["after_teardown"]  # teardown still shuts the workers down


def test_unfixed_fetcher_respawns_workers(tmp_path: Path) -> None:
    """The control: the same measurement sees the bug before the fix."""
    folder = project(tmp_path, "buggy", FIXTURE.read_text())
    passes = iterate(folder)["passes"]
    assert all(p["indices"] == list(range(24)) for p in passes)
    assert passes[0]["pids"] != passes[1]["pids"] != passes[2]["pids"]


def test_remove_call_loses_data(tmp_path: Path) -> None:
    """Without a teardown (nothing to relocate into), --unsafe-fixes deletes ``self.reset()``
    from ``__iter__``: workers survive but the stale ``done`` flag empties later passes."""
    source = FIXTURE.read_text().replace("    def teardown(self):\n        self.reset()\n", "")
    folder = project(tmp_path, "lossy", source)
    result = fix(folder, "--unsafe-fixes")
    assert "fixed by remove-call" in result.stderr, result.stderr
    passes = iterate(folder)["passes"]
    assert passes[0]["indices"] == list(range(24))
    assert passes[1]["indices"] == [] and passes[2]["indices"] == []

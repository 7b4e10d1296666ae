"""Fix, then run: the relocated fetcher iterated three times over
``DataLoader(num_workers=2, persistent_workers=True)`` yields the same batches every pass from
the same worker processes. Controls: the unfixed fetcher respawns its workers every pass, and
the unsafe ``remove-call`` fix loses the second pass's batches (why it is unsafe)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from child_processes import run_once
from harness import run_cli

pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "fix" / "relocate_fetcher.in.py"

ITERATE = """
import json, sys
from torch.utils.data import DataLoader

for folder in sys.argv[1:]:
    sys.path.insert(0, folder)
    sys.modules.pop("fetcher_mod", None)  # the previous folder's
    import fetcher_mod
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
    loader._iterator = None  # this folder's workers end before the next folder's start
    sys.path.remove(folder)
"""


def iterate(*folders: Path) -> list[dict]:
    """Each folder's ``fetcher_mod`` iterated as :data:`ITERATE` says, in one process (one
    torch import): one result per folder, in order."""
    result = run_once([sys.executable, "-c", ITERATE, *map(str, folders)], timeout=180)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.strip().splitlines()[-len(folders) :]]


def fix(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("fix", str(folder), "--no-cache", *args, timeout=120)


def project(tmp_path: Path, name: str, source: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "fetcher_mod.py").write_text(source)
    return folder


@dataclass(frozen=True)
class Case:
    fixed: subprocess.CompletedProcess[str] | None  # the fix run, None for the control
    run: dict  # what ITERATE saw


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    """The fixture fixed, the fixture unfixed (the control), and without its teardown fixed
    with ``--unsafe-fixes``: each fixed by its own ``fix`` run, all three then iterated in one
    process."""
    root = tmp_path_factory.mktemp("fix_verify")
    # without a teardown there is nothing to relocate into: --unsafe-fixes removes the call
    lossy = FIXTURE.read_text().replace("    def teardown(self):\n        self.reset()\n", "")
    folders = {
        "fixed": project(root, "fixed", FIXTURE.read_text()),
        "buggy": project(root, "buggy", FIXTURE.read_text()),
        "lossy": project(root, "lossy", lossy),
    }
    fixed = {"fixed": fix(folders["fixed"]), "lossy": fix(folders["lossy"], "--unsafe-fixes")}
    runs = iterate(*folders.values())
    return {name: Case(fixed.get(name), run) for name, run in zip(folders, runs, strict=True)}


def test_relocated_fetcher_keeps_batches_and_workers(cases: dict[str, Case]) -> None:
    result = cases["fixed"].fixed
    assert result is not None and result.returncode == 0, result
    assert "fixed by relocate" in result.stderr
    run = cases["fixed"].run
    passes = run["passes"]
    assert passes[0]["indices"] == list(range(24))
    assert all(p["indices"] == passes[0]["indices"] for p in passes)
    assert len(passes[0]["pids"]) == 2
    assert all(p["pids"] == passes[0]["pids"] for p in passes)
    assert run["after_teardown"]  # teardown still shuts the workers down


def test_unfixed_fetcher_respawns_workers(cases: dict[str, Case]) -> None:
    """The control: the same measurement sees the bug before the fix."""
    passes = cases["buggy"].run["passes"]
    assert all(p["indices"] == list(range(24)) for p in passes)
    assert passes[0]["pids"] != passes[1]["pids"] != passes[2]["pids"]


def test_remove_call_loses_data(cases: dict[str, Case]) -> None:
    """Without a teardown (nothing to relocate into), --unsafe-fixes deletes ``self.reset()``
    from ``__iter__``: workers survive but the stale ``done`` flag empties later passes."""
    result = cases["lossy"].fixed
    assert result is not None and "fixed by remove-call" in result.stderr, result
    passes = cases["lossy"].run["passes"]
    assert passes[0]["indices"] == list(range(24))
    assert passes[1]["indices"] == [] and passes[2]["indices"] == []

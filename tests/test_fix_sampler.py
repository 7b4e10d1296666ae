"""hoist-loader-sampler through the real CLI (issue 43): state set on a sampler the loop builds
is no reason to refuse (torch iterates the sampler in the main process at each pass), state set
on the dataset is; a name the loop reads before the statement that binds it is refused; a second
``fix`` changes nothing. fixtures/fix/hoist_loader_sampler*.py show the edit and the other
refusals (test_fix.py); tests/test_fix_proof.py runs the fixed pair with real workers."""

from __future__ import annotations

from pathlib import Path

from harness import run_cli

SOURCE = """\
from torch.utils.data import DataLoader, DistributedSampler


def sharded(dataset, epochs):
    for epoch in range(epochs):
        sampler = DistributedSampler(dataset, num_replicas=1, rank=0)
        sampler.set_epoch(epoch)
        loader = DataLoader(dataset, sampler=sampler, num_workers=2)
        for batch in loader:
            print(len(batch))


def stream(dataset, epochs):
    for epoch in range(epochs):
        sampler = DistributedSampler(dataset, num_replicas=1, rank=0)
        dataset.set_epoch(epoch)
        loader = DataLoader(dataset, sampler=sampler, num_workers=2)
        for batch in loader:
            print(len(batch))


def read_early(dataset, epochs):
    sampler = None
    for epoch in range(epochs):
        print(sampler)
        sampler = DistributedSampler(dataset, num_replicas=1, rank=0)
        loader = DataLoader(dataset, sampler=sampler, num_workers=2)
        for batch in loader:
            print(len(batch))
"""

FIXED_SHARDED = """\
def sharded(dataset, epochs):
    sampler = DistributedSampler(dataset, num_replicas=1, rank=0)
    loader = DataLoader(dataset, sampler=sampler, num_workers=2, persistent_workers=True)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
"""

FIX = ("fix", "--no-cache", "--min-severity", "info", "mod.py")


def test_state_on_the_sampler_is_kept_in_the_loop_state_on_the_dataset_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "mod.py").write_text(SOURCE)
    done = run_cli(*FIX, cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # two findings are left
    assert "mod.py:8: LL202 fixed by hoist-loader-sampler (mod.py)" in done.stderr
    refused = "LL202 hoist-loader-sampler not applied: "
    assert (
        f"mod.py:17: {refused}the loop sets per-epoch state (`dataset.set_epoch(epoch)`) on "
        "what the workers read, which persistent workers would not see"
    ) in done.stderr
    assert f"mod.py:27: {refused}the loop reads `sampler` before the statement" in done.stderr
    fixed = (tmp_path / "mod.py").read_text()
    assert FIXED_SHARDED in fixed
    assert fixed.split("def stream")[1] == SOURCE.split("def stream")[1]  # both refused
    again = run_cli(*FIX, cwd=tmp_path)
    assert "fixed by" not in again.stderr and (tmp_path / "mod.py").read_text() == fixed

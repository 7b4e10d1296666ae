"""A cache is the same bytes whatever the process's hash seed: the same code checked twice
writes the same summaries and the same run (but for the times it read files at), so that two
runs' stores compare byte for byte and what a run recorded reading does not depend on the
order a set of strings happens to iterate in."""

from __future__ import annotations

import re
from pathlib import Path

from harness import run_cli

ATTRIBUTES = [f"part_{index}" for index in range(12)]  # enough that hash orders differ

# a setup method that stores many attributes not from a parameter (config defaults: each
# "rewritten"), a loop that assigns many names (its stores), a loader built in the loop (so
# that the file is a seed and summarized)
STORES = "".join(f"        self.{name} = make({index})\n" for index, name in enumerate(ATTRIBUTES))
SOURCE = f"""\
from torch.utils.data import DataLoader


class Settings:
    def __init__(self, size=2):
        self.size = size
{STORES}

def train(dataset, settings):
    for epoch in range(3):
        {", ".join(ATTRIBUTES)} = settings.parts()
        loader = DataLoader(dataset, num_workers=4)
        for batch in loader:
            step(batch, part_0, part_11)
"""

# a stamp's time or a read's time: nanoseconds since the epoch (19 digits)
_TIMES = re.compile(rb"\b1\d{18}\b")


def stored(cache: Path) -> dict[str, bytes]:
    """Every entry under ``cache`` by its path, with the times in it masked."""
    return {
        str(path.relative_to(cache)): _TIMES.sub(b"T", path.read_bytes())
        for path in sorted(cache.rglob("*"))
        if path.is_file()
    }


def test_the_same_check_stores_the_same_bytes_under_any_hash_seed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(SOURCE)
    entries = []
    for seed in ("1", "2", "3"):
        cache = tmp_path / f"cache-{seed}"
        result = run_cli(
            "check", "--cache-dir", str(cache), "--exit-zero", ".",
            cwd=project, env={"PYTHONHASHSEED": seed},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        entries.append(stored(cache))
    summaries = [name for name in entries[0] if name.startswith("summaries")]
    assert summaries  # the file was summarized and stored
    assert entries[1] == entries[0]
    assert entries[2] == entries[0]

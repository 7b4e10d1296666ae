"""Memory that follows the parsed files: bytes of files whose token answers are known are
released, read again when a later demand round needs them, and the findings do not change."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from lintloader.cache.summaries import SummaryCache
from lintloader.pipeline.engine import CheckOptions, read_source, run_check
from lintloader.rules.registry import all_rules
from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.read.sources import SourceSet
from lintloader.scan.read.stamps import RACY_NS
from lintloader.select.policy import select
from lintloader.select.rounds import CHUNK_FILES, RoundTaker
from lintloader.select.trail import Round
from lintloader.workers.forked import can_fork
from lintloader.workers.progress import ParseStats

FILLERS = CHUNK_FILES + 40  # more than one chunk: bytes are released during the first round


def chain_project(root: Path) -> Path:
    """A reset chain that takes three demand rounds to find: the sink's file (seed tokens),
    then its caller (a token learned in round 2), then the caller's caller (round 3). The
    chain's files sort after the fillers, so their bytes were released before they are
    needed again."""
    package = root / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sink.py").write_text("def drop_workers(loader):\n    del loader._iterator\n")
    (package / "x_middle.py").write_text(
        "from pkg.sink import drop_workers\n\n\ndef restart(holder):\n"
        "    drop_workers(holder.loader)\n"
    )
    (package / "y_top.py").write_text(
        "from pkg.x_middle import restart\n\n\nclass Fetcher:\n    def __iter__(self):\n"
        "        restart(self)\n        return self\n"
    )
    for number in range(FILLERS):
        (package / f"filler_{number:03}.py").write_text(
            f"def helper_{number}(value):\n    return value + {number}\n"
        )
    return root


def age(root: Path) -> None:
    """Old stamps, so that files are not read eagerly as possibly changing ("racy"): their
    reading is deferred until a search needs them (ctime is "now": wait it out)."""
    old = time.time_ns() - 10 * RACY_NS
    for path in root.rglob("*.py"):
        os.utime(path, ns=(old, old))
    time.sleep(RACY_NS / 1e9 + 0.2)


class CountingReader:
    """The real reader, counting how often each file is read."""

    def __init__(self) -> None:
        self.reads: Counter[str] = Counter()

    def __call__(self, path: str, size: int = -1) -> bytes | None:
        self.reads[os.path.basename(path)] += 1
        return read_source(path, size)


def select_in(root: Path, jobs: int, tmp: Path) -> tuple[dict, SourceSet, CountingReader, list]:
    discovery = discover_paths([str(root)], ())
    reader = CountingReader()
    sources = SourceSet(reader)
    files = sources.load(discovery.files, [])
    taker = RoundTaker(
        sources,
        SummaryCache(tmp),
        ParseStats(),
        jobs,
        max_file_mb=4.0,
        shard_min_files=1,
        spare_bytes=0,  # this tree is small: release every unchosen file, as a large one would
        resident_spare_bytes=0,  # in each process of a sharded run too
    )
    rounds: list[Round] = []
    try:
        summaries, _ = select(files, sources, all_rules(), taker.take, rounds)
    finally:
        taker.close()
    return summaries, sources, reader, rounds


def findings_of(root: Path, jobs: int, cache: Path | None) -> list:
    discovery = discover_paths([str(root)], ())
    return run_check(discovery, CheckOptions(jobs=jobs, cache_dir=cache)).findings


@pytest.mark.enumerates_rules
def test_released_files_are_read_again_and_the_findings_do_not_change(tmp_path: Path) -> None:
    root = chain_project(tmp_path / "proj")
    # just written: every file is "racy", read when loaded and held to the end, as before
    held_all = findings_of(root, 1, None)
    assert [(f.code, Path(f.path).name) for f in held_all if f.code == "LL101"] == [
        ("LL101", "y_top.py")
    ]
    age(root)
    summaries, sources, reader, rounds = select_in(root, 1, tmp_path / "c1")
    assert len(rounds) >= 3  # the chain was found backwards, one file a round
    assert {"sink.py", "x_middle.py", "y_top.py"} <= {Path(p).name for p in summaries}
    # the caller was searched in round 1 (not chosen, released), read again in round 2
    assert reader.reads["x_middle.py"] >= 2 and reader.reads["y_top.py"] >= 2
    # what is still held is what was parsed
    assert {Path(p).name for p in sources.held()} <= {Path(p).name for p in summaries}
    assert len(sources.held()) < len(summaries) + 1 < FILLERS
    for jobs, cache in ((1, None), (2, None), (1, tmp_path / "cache"), (1, tmp_path / "cache")):
        assert findings_of(root, jobs, cache) == held_all


@pytest.mark.enumerates_rules
@pytest.mark.skipif(not can_fork(), reason="forked shards run on Linux only")
def test_sharded_rounds_release_and_reread_like_one_process(tmp_path: Path) -> None:
    root = chain_project(tmp_path / "proj")
    age(root)
    serial, _, _, serial_rounds = select_in(root, 1, tmp_path / "a")
    sharded, sources, _, sharded_rounds = select_in(root, 3, tmp_path / "b")
    assert list(sharded) == list(serial)
    assert all(sharded[path] == serial[path] for path in serial)
    assert sharded_rounds == serial_rounds
    # the parent searched one shard of three, a chunk at a time: it holds parsed files only
    assert {Path(p).name for p in sources.held()} <= {Path(p).name for p in serial}

"""A cold round's forked shards (``select/rounds.py``): about as many bytes each, the copies
of a module together, each in the candidates' order."""

from __future__ import annotations

import random

import pytest

from lintloader.scan.model import SourceFile
from lintloader.select.rounds import balanced_shards

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)


def _files(sizes: dict[str, int]) -> list[SourceFile]:
    return [SourceFile(path, path.split("/")[-1][:-3], False, path) for path in sizes]


def test_shards_hold_about_as_many_bytes_and_keep_copies_together() -> None:
    generator = random.Random(45)
    sizes = {f"/env{copy}/m{n}.py": 0 for n in range(400) for copy in range(3)}
    for n in range(400):  # the copies of a module are one file under one name: one size
        size = int(generator.paretovariate(1.2) * 1000)
        for copy in range(3):
            sizes[f"/env{copy}/m{n}.py"] = size
    files = _files(sizes)
    generator.shuffle(files)
    for jobs in (2, 3, 8):
        shards = balanced_shards(files, jobs, sizes.__getitem__)
        assert sorted(f for shard in shards for f in shard) == sorted(files)
        owner = {f.module: number for number, shard in enumerate(shards) for f in shard}
        assert all(f in shards[owner[f.module]] for f in files)  # copies together
        loads = [sum(sizes[f.path] for f in shard) for shard in shards]
        largest = max(3 * size for size in sizes.values())  # the largest module's copies
        assert max(loads) - min(loads) <= largest  # greedy, largest first: within one module
        for shard in shards:
            assert shard == [f for f in files if f in shard]  # the candidates' order


def test_a_shard_of_one_module_and_empty_shards() -> None:
    sizes = {"/a/m.py": 10, "/b/m.py": 10}
    files = _files(sizes)
    assert balanced_shards(files, 3, sizes.__getitem__) == [files, [], []]
    assert balanced_shards([], 2, sizes.__getitem__) == [[], []]


def test_files_of_unknown_size_are_shared_out_by_count() -> None:
    """A tree written a moment ago (its stat stamps not trusted yet) has no size known: the
    shards then hold as many modules each, never all in the first (which ran every shard in
    the parent: tests/test_trust_processes.py's fresh tree)."""
    sizes = {f"/t/m{n}.py": 0 for n in range(10)}
    files = _files(sizes)
    shards = balanced_shards(files, 2, sizes.__getitem__)
    assert [len(shard) for shard in shards] == [5, 5]


def test_a_racy_stamp_keeps_the_size_and_is_never_fresh() -> None:
    """A file modified within the racy window is never vouched for by its stamp, but its size
    stays known for balancing."""
    from lintloader.scan.read.statindex import StatIndex

    index = StatIndex()
    stamp = (1234, 10**18, 10**18, 7)  # size, mtime, ctime, inode
    row = index.record("/t/new.py", stamp, "digest", read_ns=10**18)
    assert index.stamps[row][0] == 1234
    assert index.fresh("/t/new.py", stamp) is None

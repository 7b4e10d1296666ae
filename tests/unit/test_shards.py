"""A cold round's pieces of work (``select/rounds.py``): about as many bytes each, the
smallest modules first, the copies of a module together."""

from __future__ import annotations

import random

import pytest

from lintloader.scan.model import SourceFile
from lintloader.select.rounds import MAX_PIECES, PIECES_PER_JOB, parse_pieces, work_pieces

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)


def _files(sizes: dict[str, int]) -> list[SourceFile]:
    return [SourceFile(path, path.split("/")[-1][:-3], False, path) for path in sizes]


def test_pieces_hold_about_a_share_of_the_bytes_smallest_first_copies_together() -> None:
    generator = random.Random(45)
    sizes = {f"/env{copy}/m{n}.py": 0 for n in range(400) for copy in range(3)}
    for n in range(400):  # the copies of a module are one file under one name: one size
        size = int(generator.paretovariate(1.2) * 1000)
        for copy in range(3):
            sizes[f"/env{copy}/m{n}.py"] = size
    files = _files(sizes)
    generator.shuffle(files)
    for jobs in (2, 3, 8):
        pieces = work_pieces(files, jobs, sizes.__getitem__)
        assert sorted(f for piece in pieces for f in piece) == sorted(files)
        owner = {f.module: number for number, piece in enumerate(pieces) for f in piece}
        assert all(f in pieces[owner[f.module]] for f in files)  # copies together
        share = sum(sizes.values()) / (jobs * PIECES_PER_JOB)
        loads = [sum(sizes[f.path] for f in piece) for piece in pieces]
        largest = [max(3 * sizes[f.path] for f in piece) for piece in pieces]
        assert all(load >= share for load in loads[:-1])  # only the last holds less
        assert all(load < share + most for load, most in zip(loads, largest, strict=True))
        assert len(pieces) <= jobs * PIECES_PER_JOB + 1
        assert largest == sorted(largest)  # the smallest modules first


def test_a_rounds_parses_go_largest_module_first_copies_together() -> None:
    sizes = {"/a/big.py": 265_000, "/b/big.py": 265_000, "/a/mid.py": 40_000, "/a/tiny.py": 10}
    sizes |= {f"/a/m{n}.py": 100 + n for n in range(20)}
    files = _files(sizes)
    pieces = parse_pieces(files, 1000, sizes.__getitem__)
    assert [f.path for f in pieces[0]] == ["/a/big.py", "/b/big.py"]  # one module: parsed once
    assert [f.path for f in pieces[1]] == ["/a/mid.py"]
    assert [f.path for piece in pieces[2:] for f in piece] == [
        *(f"/a/m{n}.py" for n in reversed(range(20))),
        "/a/tiny.py",
    ]
    few = parse_pieces(files, 3, sizes.__getitem__)  # past the limit: the smallest share one
    assert len(few) == 3 and few[:2] == pieces[:2]
    assert sorted(f.path for f in few[2]) == sorted(f.path for p in pieces[2:] for f in p)
    assert parse_pieces([], 10, len) == []


def test_no_pieces_of_nothing_and_at_most_max_pieces() -> None:
    assert work_pieces([], 2, len) == []
    sizes = {f"/t/m{n}.py": 1 for n in range(5000)}
    assert len(work_pieces(_files(sizes), 500, sizes.__getitem__)) <= MAX_PIECES + 1


def test_files_of_unknown_size_are_shared_out_by_count() -> None:
    """A tree written a moment ago (its stat stamps not trusted yet) has no size known: the
    pieces then hold as many modules each, never all in one."""
    sizes = {f"/t/m{n}.py": 0 for n in range(100)}
    pieces = work_pieces(_files(sizes), 2, sizes.__getitem__)
    assert [len(piece) for piece in pieces] == [4] * 25  # 32 shares of 3.125 bytes asked


def test_a_racy_stamp_keeps_the_size_and_is_never_fresh() -> None:
    """A file modified within the racy window is never vouched for by its stamp, but its size
    stays known for balancing."""
    from lintloader.scan.read.statindex import StatIndex

    index = StatIndex()
    stamp = (1234, 10**18, 10**18, 7)  # size, mtime, ctime, inode
    row = index.record("/t/new.py", stamp, "digest", read_ns=10**18)
    assert index.stamps[row][0] == 1234
    assert index.fresh("/t/new.py", stamp) is None

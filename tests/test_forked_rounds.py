"""Forked shards (``workers/forked.py``) and sharded demand rounds (``rounds.py``): real forks, the
same answers as one process, a failing child's shard redone by the parent, and resident children
that keep what they read from one round to the next (each file read once per run)."""

from __future__ import annotations

import json
import os
import pickle
import select as waiting
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pytest
from conftest import FIXTURES

from lintloader.cache import codec
from lintloader.cache.pending import PendingStores
from lintloader.cache.summaries import SummaryCache
from lintloader.pipeline.engine import read_source
from lintloader.rules.registry import all_rules
from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.model import SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.select.policy import select
from lintloader.select.query import GroupQuery
from lintloader.select.rounds import (
    ParseAnswers,
    RoundTaker,
    ShardResult,
    dump_shard,
    load_shard,
    written_apart,
)
from lintloader.summary.summarize import summarize_source
from lintloader.workers.forked import Resident, WorkQueue, can_fork
from lintloader.workers.progress import ParseStats

needs_fork = pytest.mark.skipif(not can_fork(), reason="forked shards run on Linux only")
PIPE_MAX = Path("/proc/sys/fs/pipe-max-size")
needs_wide_pipes = pytest.mark.skipif(
    not PIPE_MAX.exists() or int(PIPE_MAX.read_text()) < 1 << 20,
    reason="this system does not let a pipe hold 1 MiB (fs.pipe-max-size)",
)


def gone(pid: int) -> bool:
    """Whether ``pid`` is no process of ours any more (reaped)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@needs_fork
def test_a_resident_child_answers_request_after_request_keeping_its_memory() -> None:
    seen: list[bytes] = []

    def serve(request: bytes) -> bytes:
        seen.append(request)  # in the child: what it was asked before stays
        return json.dumps([os.getpid(), [r.decode() for r in seen]]).encode()

    first = Resident.start(serve)
    assert first is not None
    second = Resident.start(serve, [first])  # holds none of the first's pipes open
    try:
        answers = []
        for request in (b"one", b"two", b"x" * 300_000):  # past a pipe's buffer
            assert first.send(request)
            answers.append(json.loads(first.answer() or b"null"))
        assert {pid for pid, _ in answers} == {first.pid} != {os.getpid()}
        assert answers[1][1] == ["one", "two"] and len(answers[2][1]) == 3
        assert seen == []  # the parent's list is not the child's
        pid = first.pid
        first.close()  # returns: the second child does not hold the first's pipe open
        assert gone(pid)
    finally:
        for resident in (first, second):
            resident.close(kill=True)


@needs_fork
def test_a_resident_child_that_fails_answers_none_and_is_reaped() -> None:
    def serve(request: bytes) -> bytes:
        if request == b"die":
            os._exit(3)
        raise RuntimeError("only in the child")

    for request in (b"die", b"raise"):
        resident = Resident.start(serve)
        assert resident is not None
        pid = resident.pid
        assert resident.send(request)
        assert resident.answer() is None
        assert gone(pid) and resident.pid == -1
        assert not resident.send(b"again") and resident.answer() is None


@needs_fork
@needs_wide_pipes
def test_a_resident_child_sends_each_answer_as_it_is_made() -> None:
    """A request answered in parts: the parent reads the first before the child has made the
    second (the child makes it only once the parent has read the first), and the child's
    answers do not wait for the parent to read them (600 KB written, none read yet)."""
    go_read, go_write = os.pipe()
    done_read, done_write = os.pipe()

    def serve(request: bytes) -> Iterator[bytes]:
        if request == b"big":
            yield b"x" * 300_000
            yield b"y" * 300_000
            os.write(done_write, b"1")  # both written: the parent read neither
            return
        yield b"first"
        os.read(go_read, 1)  # the parent has read the first answer
        yield b"second"

    resident = Resident.start(serve)
    assert resident is not None
    try:
        assert resident.send(b"parts") and resident.answer() == b"first"
        assert not resident.ready()
        os.write(go_write, b"1")
        assert resident.answer() == b"second"
        assert resident.send(b"big")
        assert waiting.select([done_read], [], [], 30)[0]  # written before any was read
        assert resident.ready()
        assert resident.answer() == b"x" * 300_000 and resident.answer() == b"y" * 300_000
    finally:
        resident.close(kill=True)
        for fd in (go_read, go_write, done_read, done_write):
            os.close(fd)


@needs_fork
def test_a_child_let_go_leaves_on_its_own_and_is_reaped_on_close() -> None:
    resident = Resident.start(lambda request: request)
    assert resident is not None
    pid = resident.pid
    resident.let_go()
    assert not resident.send(b"more") and resident.answer() is None
    deadline = time.monotonic() + 30
    while (status := os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)) is None:
        assert time.monotonic() < deadline, "the child did not leave"
        time.sleep(0.01)
    assert status.si_code == os.CLD_EXITED and status.si_status == 0  # left, not killed
    resident.close()
    assert gone(pid)


@needs_fork
def test_a_childs_parses_are_one_result_only_if_its_pieces_match_what_it_sent() -> None:
    """The summaries of each piece come as they are made, then the pieces the child took: a
    last answer naming a piece it sent no summaries of is refused (the pieces are redone)."""
    path = str(sorted((FIXTURES / "check").rglob("*.py"))[0])
    summary = summarize_source(Path(path).read_bytes(), path, Path(path).stem)
    piece = ShardResult({path: summary}, [], 3, parsed=1, pieces=(0,), more=True)

    def serve(request: bytes) -> Iterator[bytes]:
        yield dump_shard(piece)
        yield dump_shard(ShardResult({}, [(0, 1, 1, "d")], 3, pieces=tuple(json.loads(request))))

    resident = Resident.start(serve)
    assert resident is not None
    try:
        assert resident.send(b"[0]")
        found = ParseAnswers(resident).result()
        assert found is not None and found.summaries == {path: summary}
        assert (found.pieces, found.parsed, found.answers) == ((0,), 1, [(0, 1, 1, "d")])
        assert resident.send(b"[0, 1]")
        assert ParseAnswers(resident).result() is None
    finally:
        resident.close(kill=True)


@needs_fork
def test_a_resident_child_does_its_first_work_before_it_serves(tmp_path: Path) -> None:
    """A resident given ``first`` does it before its first answer; its status says whether
    that went through (one that raised still serves)."""
    mark = tmp_path / "first"

    def first() -> None:
        mark.write_text(str(os.getpid()))

    resident = Resident.start(lambda request: request, first=first)
    assert resident is not None
    pid = resident.pid
    assert resident.send(b"echo") and resident.answer() == b"echo"
    assert mark.read_text() == str(pid)
    resident.close()
    assert gone(pid) and resident.status == 0

    def failing() -> None:
        raise OSError("no space left on device")

    resident = Resident.start(lambda request: request, first=failing)
    assert resident is not None
    assert resident.send(b"echo") and resident.answer() == b"echo"
    resident.close()
    assert resident.status not in (None, 0)


@needs_fork
def test_a_resident_child_writes_nothing_to_the_parents_streams(
    capfd: pytest.CaptureFixture[str],
) -> None:
    sys.stdout.write("buffered before the fork")  # a child that flushed would repeat this
    resident = Resident.start(lambda request: request)
    assert resident is not None
    try:
        assert resident.send(b"echo") and resident.answer() == b"echo"
    finally:
        resident.close()
    sys.stdout.flush()
    assert capfd.readouterr().out == "buffered before the fork"


@needs_fork
def test_a_work_queue_gives_each_number_once_to_whoever_asks_first() -> None:
    """The parent and two children take numbers from one queue as they are free: each number
    is taken once, and a slow process takes fewer."""
    queue = WorkQueue.make(1000)
    assert queue is not None and WorkQueue.make(1025) is None  # 4 bytes a number: PIPE_BUF

    def take_all(request: bytes) -> bytes:
        taken = []
        while (number := queue.take()) is not None:
            taken.append(number)
            if request == b"slow":
                time.sleep(0.002)
        return json.dumps(taken).encode()

    children = [Resident.start(take_all), Resident.start(take_all)]
    try:
        for child, request in zip(children, (b"slow", b"fast"), strict=True):
            assert child is not None and child.send(request)
        mine = []
        while (number := queue.take()) is not None:
            mine.append(number)
            time.sleep(0.002)
        queue.close()
        slow, fast = (json.loads(child.answer() or b"null") for child in children if child)
    finally:
        for child in children:
            if child is not None:
                child.close(kill=True)
    assert sorted(mine + slow + fast) == list(range(1000))
    assert len(fast) > max(len(slow), len(mine))
    assert queue.take() is None


@needs_fork
def test_a_refillable_queue_hands_out_each_batch_to_the_processes_it_stops() -> None:
    """A queue made before the fork and filled for each batch: each number of a batch is
    taken once, each taker stops at its stop, and the next batch starts clean."""
    queue = WorkQueue.refillable()
    assert queue is not None

    def take_batch(request: bytes) -> bytes:
        taken = []
        while (number := queue.take()) is not None:
            taken.append(number)
            time.sleep(0.001)
        return json.dumps(taken).encode()

    child = Resident.start(take_batch)
    assert child is not None
    try:
        for count in (200, 0, 37):
            assert child.send(b"take") and queue.fill(count, 2)
            mine = []
            while (number := queue.take()) is not None:
                mine.append(number)
                time.sleep(0.001)
            theirs = json.loads(child.answer() or b"null")
            assert sorted(mine + theirs) == list(range(count))
        assert not queue.fill(1024, 1)  # more than a pipe takes at once: nothing written
    finally:
        child.close(kill=True)
        queue.close()
    assert not queue.fill(1, 1) and queue.take() is None


def test_no_fork_while_another_thread_runs() -> None:
    import threading

    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not can_fork()
        assert Resident.start(lambda request: request) is None
    finally:
        release.set()
        other.join()


@dataclass
class PlantingTaker(RoundTaker):
    """A taker whose resident children answer with a pickle that would create a file when
    loaded (``planted``), or fail in the middle of their work (``fail``)."""

    planted: Path | None = None
    fail: bool = False

    def _serve(self, files: dict, data: bytes) -> bytes:
        if self.fail:
            raise RuntimeError("only in the child")
        answer = super()._serve(files, data)
        if self.planted is None:
            return answer
        planted = str(self.planted)

        class Plant:
            def __reduce__(self) -> tuple[object, tuple[str, str]]:
                return (open, (planted, "w"))

        return pickle.dumps(Plant())


@pytest.mark.enumerates_rules
@needs_fork
@pytest.mark.parametrize("how", ["planted", "fail"])
def test_an_answer_the_parent_refuses_or_a_failing_child_is_redone_here(
    tmp_path: Path, how: str
) -> None:
    """A child's bytes the codec refuses (a pickle that would create a file) are never run,
    and a child that fails answers nothing: either way its shard runs again in the parent,
    with the same summaries and answers as one process."""
    planted = tmp_path / "planted"
    serial, serial_answers, _, _ = run_select(FIXTURES / "check", 1, tmp_path / "a")
    how_to = {"planted": {"planted": planted}, "fail": {"fail": True}}[how]
    taker = partial(PlantingTaker, **how_to)
    redone, redone_answers, _, _ = run_select(FIXTURES / "check", 3, tmp_path / "b", taker=taker)
    assert list(redone) == list(serial) and redone_answers == serial_answers
    assert not planted.exists()


@dataclass
class RecordingTaker(RoundTaker):
    """A taker that records, as it closes, whether it gave up its queue of parses."""

    dropped: bool | None = None

    def close(self, kill: bool = False) -> None:
        self.dropped = self._parses is None
        super().close(kill)


@dataclass
class DyingTaker(RecordingTaker):
    """A taker whose resident children die in the middle of the first round's searches,
    after taking and searching two pieces of it."""

    def _search(
        self, shard: list[SourceFile], query: GroupQuery, modules: frozenset[str]
    ) -> ShardResult:
        if os.getpid() != PARENT:
            done = getattr(self, "_done", 0)
            if done == 2:
                os._exit(3)
            self._done = done + 1
        return super()._search(shard, query, modules)


@dataclass
class DyingParserTaker(RecordingTaker):
    """A taker whose resident children die in the middle of a round's parses, as they take
    a piece of them (each piece this process parses takes a while: the children do take
    some)."""

    def _parse(self, files: list[SourceFile]) -> ShardResult:
        if os.getpid() != PARENT and files:
            os._exit(3)
        if files:
            time.sleep(0.05)
        return super()._parse(files)


PARENT = os.getpid()


@pytest.mark.enumerates_rules
@needs_fork
@pytest.mark.parametrize("kind", [DyingTaker, DyingParserTaker])
def test_the_pieces_a_child_took_before_it_died_are_redone_here(
    tmp_path: Path, kind: type[RecordingTaker]
) -> None:
    serial, serial_answers, serial_stats, _ = run_select(FIXTURES / "check", 1, tmp_path / "a")
    takers: list[RecordingTaker] = []

    def taker(*args: object, **kwargs: object) -> RoundTaker:
        takers.append(kind(*args, **kwargs))  # type: ignore[arg-type]
        return takers[-1]

    root = FIXTURES / "check"
    redone, redone_answers, stats, _ = run_select(root, 3, tmp_path / "b", taker=taker)
    assert list(redone) == list(serial) and redone_answers == serial_answers
    assert all(redone[path] == serial[path] for path in serial)
    assert stats.parsed + stats.cached == serial_stats.parsed + serial_stats.cached
    # children dead in the searches never got a parse to do; dead in the parses, they may
    # have left their stop in the queue: it is not filled again
    assert [t.dropped for t in takers] == [kind is DyingParserTaker]


@dataclass
class FillRecordingTaker(RoundTaker):
    """A taker that records, as it closes, how many pieces of parses it last shared out (0:
    it never filled the queue of parses)."""

    shared: int | None = None

    def close(self, kill: bool = False) -> None:
        self.shared = self._parses.count if self._parses is not None else None
        super().close(kill)


@pytest.mark.enumerates_rules
@needs_fork
def test_a_round_that_chose_one_module_parses_it_here(tmp_path: Path) -> None:
    """Sharing a single module out saves nothing: it is parsed here, and the queue of parses
    is never filled (the children get no parses to do)."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(FIXTURES / "check" / "guarded" / "fetch.py", root / "fetch.py")
    for n in range(40):
        (root / f"filler_{n}.py").write_text(f"VALUE_{n} = {n}\n")
    serial, serial_answers, _, _ = run_select(root, 1, tmp_path / "a")
    assert list(serial) == [str(root / "fetch.py")]
    takers: list[FillRecordingTaker] = []

    def taker(*args: object, **kwargs: object) -> RoundTaker:
        takers.append(FillRecordingTaker(*args, **kwargs))  # type: ignore[arg-type]
        return takers[-1]

    shared, shared_answers, _, _ = run_select(root, 2, tmp_path / "b", taker=taker)
    assert shared == serial and shared_answers == serial_answers
    assert [t.shared for t in takers] == [0]


@dataclass
class SlowTaker(RoundTaker):
    """A taker that searches slowly here and parses slowly in its children, recording in
    this process what it parsed and what the children's searches chose."""

    here: list[str] = field(default_factory=list)
    theirs: list[str] = field(default_factory=list)

    def _search(
        self, shard: list[SourceFile], query: GroupQuery, modules: frozenset[str]
    ) -> ShardResult:
        if os.getpid() == PARENT:
            time.sleep(0.05)
        return super()._search(shard, query, modules)

    def _parse(self, files: list[SourceFile]) -> ShardResult:
        if os.getpid() != PARENT and files:
            time.sleep(0.3)
        elif files:
            self.here += [f.path for f in files]
        return super()._parse(files)

    def _answer(self, i: int) -> ShardResult | None:
        result = super()._answer(i)
        if result is not None:
            self.theirs += result.chosen
        return result


@pytest.mark.enumerates_rules
@needs_fork
def test_a_rounds_parses_go_to_whichever_process_is_free(tmp_path: Path) -> None:
    """The files a child's search chose are parsed here when this process is free first (the
    children parse slowly here): parses are not bound to the shard that chose them."""
    serial, serial_answers, _, _ = run_select(FIXTURES / "check", 1, tmp_path / "a")
    takers: list[SlowTaker] = []

    def taker(*args: object, **kwargs: object) -> RoundTaker:
        takers.append(SlowTaker(*args, **kwargs))  # type: ignore[arg-type]
        return takers[-1]

    shared, shared_answers, _, _ = run_select(FIXTURES / "check", 3, tmp_path / "b", taker=taker)
    assert list(shared) == list(serial) and shared_answers == serial_answers
    assert all(shared[path] == serial[path] for path in serial)
    (slow,) = takers
    assert len(set(slow.here) & set(slow.theirs)) >= 3
    assert len(slow.here) > len(serial) // 2


def run_select(
    root: Path,
    jobs: int,
    cache_dir: Path,
    reads: Path | None = None,
    taker: Callable[..., RoundTaker] = RoundTaker,
) -> tuple[dict, list, ParseStats, set]:
    """A selection over ``root`` (``reads``: a file each read of a file, in any process, adds
    its path to)."""

    def reader(path: str, size: int = -1) -> bytes | None:
        if reads is not None:
            with open(reads, "a") as log:
                log.write(path + "\n")
        return read_source(path, size)

    discovery = discover_paths([str(root)], ())
    sources = SourceSet(reader)
    files = sources.load(discovery.files, [])
    cache = SummaryCache(cache_dir)
    stats = ParseStats()
    rounds = taker(sources, cache, stats, jobs, max_file_mb=4.0, shard_min_files=1)
    try:
        summaries, _ = select(files, sources, all_rules(), rounds.take)
    finally:
        pids = [r.pid for r in rounds._residents if r is not None and r.pid > 0]
        rounds.close()
    assert all(gone(pid) for pid in pids)
    answers = sorted(
        (
            sources.index.paths[row],
            {t for n, t in enumerate(sources.index.tokens) if checked >> n & 1},
            {t for n, t in enumerate(sources.index.tokens) if present >> n & 1},
            digest,
        )
        for row, checked, present, digest in sources.token_answers(f.path for f in files)
    )
    return summaries, answers, stats, cache.used


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("jobs", [1, pytest.param(3, marks=needs_fork)])
def test_the_stores_made_before_the_rounds_are_written_once_by_the_first_child(
    tmp_path: Path, jobs: int
) -> None:
    """What discovery left to write (``cache/pending.py``) is written by the first resident
    child, each write once, and is then no longer pending here; without a child (one
    process) it stays pending, for this process to write."""
    log = tmp_path / "writes"

    def write(name: str) -> None:
        with open(log, "a") as out:
            out.write(f"{name} {os.getpid()}\n")

    stores = PendingStores(defer=True)
    stores.add(partial(write, "memo"))
    stores.add(partial(write, "listings"))
    assert not log.exists()
    taker = partial(RoundTaker, stores=stores)
    run_select(FIXTURES / "check", jobs, tmp_path / "c", taker=taker)
    if jobs == 1:
        assert not log.exists() and len(stores.writes) == 2
        stores.write()
    else:
        assert not stores.writes
    written = [line.split() for line in log.read_text().splitlines()]
    assert [name for name, _ in written] == ["memo", "listings"]
    (pid,) = {pid for _, pid in written}
    assert (pid != str(os.getpid())) == (jobs > 1)


@pytest.mark.enumerates_rules
@needs_fork
def test_stores_a_child_failed_to_write_stay_pending_here(tmp_path: Path) -> None:
    parent = os.getpid()
    written: list[int] = []

    def write() -> None:
        if os.getpid() != parent:
            raise OSError("the child cannot write")
        written.append(os.getpid())

    stores = PendingStores(defer=True)
    stores.add(write)
    run_select(FIXTURES / "check", 3, tmp_path / "c", taker=partial(RoundTaker, stores=stores))
    assert len(stores.writes) == 1 and not written
    stores.write()
    assert written == [parent] and not stores.writes


def test_a_childs_written_summaries_travel_as_the_bytes_of_their_entries(tmp_path: Path) -> None:
    """A summary a child parsed and wrote is sent as its entry's bytes (not encoded again),
    read back by the parent as the summary; an entry of another file's summary is refused."""
    paths = sorted(str(p) for p in (FIXTURES / "check").rglob("*.py"))[:3]
    made = {p: summarize_source(Path(p).read_bytes(), p, Path(p).stem) for p in paths}
    cache = SummaryCache(tmp_path / "cache")
    cache.keep_written = True
    for n, path in enumerate(paths[:2]):  # the third: read from the cache, say
        cache.put(f"{n:064x}", made[path])
    rest, entries = written_apart(made, cache)
    assert list(rest) == paths[2:] and list(entries) == paths[:2]
    stored = sorted(cache.directory.rglob("*.json"))
    assert sorted(entries.values()) == sorted(entry.read_bytes() for entry in stored)
    assert written_apart(made, cache) == (made, {})  # taken once
    sent = ShardResult(rest, [], 0, entries=entries)
    assert load_shard(dump_shard(sent)).summaries == made
    forged = ShardResult({}, [], 0, entries={paths[1]: entries[paths[0]]})
    with pytest.raises(codec.Invalid):
        load_shard(dump_shard(forged))


@pytest.mark.enumerates_rules
@needs_fork
def test_sharded_rounds_select_summarize_and_remember_what_one_process_does(
    tmp_path: Path,
) -> None:
    root = FIXTURES / "check"
    serial, serial_answers, serial_stats, serial_used = run_select(root, 1, tmp_path / "a")
    sharded, sharded_answers, sharded_stats, sharded_used = run_select(root, 3, tmp_path / "b")
    assert len(serial) > 10
    assert list(sharded) == list(serial)  # same files, same order
    assert all(sharded[path] == serial[path] for path in serial)
    assert sharded_answers == serial_answers
    # two fixture files with the same bytes and module name share a cache entry: which shard
    # parses it and which finds it in the cache depends on timing, the total does not
    total = sharded_stats.parsed + sharded_stats.cached
    assert total == serial_stats.parsed + serial_stats.cached == len(serial)
    assert sharded_used == serial_used
    assert len(list((tmp_path / "b").rglob("summaries-*/*/*.json"))) == len(serial_used)


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("jobs", [1, pytest.param(3, marks=needs_fork)])
def test_cold_rounds_read_each_file_once(tmp_path: Path, jobs: int) -> None:
    """A cold scan keeps the bytes it searched (the resident children their shard's: they
    used to be forked anew each round): a later round asks new tokens without reading a file
    again. Only a file parsed in another process than the one that searched it is read
    twice (the parses of a round go to whichever process is free)."""
    reads = tmp_path / "reads"
    summaries, answers, _, _ = run_select(FIXTURES / "check", jobs, tmp_path / "c", reads)
    read = reads.read_text().splitlines()
    assert len(summaries) > 10
    assert set(read) == {path for path, _, _, _ in answers}
    again = Counter(read) - Counter(set(read))
    assert set(again) <= set(summaries) and max(again.values(), default=1) == 1
    if jobs == 1:
        assert not again
    tokens_asked = {len(checked) for _, checked, _, _ in answers}
    assert max(tokens_asked) > min(tokens_asked) + 5  # later rounds asked some files more


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("jobs", [1, pytest.param(3, marks=needs_fork)])
def test_copies_of_a_package_are_parsed_once_and_summarized_as_each_alone(
    tmp_path: Path, jobs: int
) -> None:
    root = tmp_path / "tree"
    copies = ("env_a", "env_b", "env_c")
    for copy in copies:  # three environments holding the same fixtures
        shutil.copytree(FIXTURES / "check", root / copy)
    summaries, _, stats, _ = run_select(root, jobs, tmp_path / "cache")
    per_copy = [[p for p in summaries if f"{os.sep}{copy}{os.sep}" in p] for copy in copies]
    assert len(per_copy[0]) > 10 and len({len(paths) for paths in per_copy}) == 1
    assert stats.parsed == len(summaries) and stats.cached == 0  # made in this run
    # a copy (the same bytes under the same module name: in a package, not a script, which
    # gets a name of its own) is not parsed again: it shares what its first was parsed into
    shared = 0
    for first, *others in zip(*per_copy, strict=True):
        for other in others:
            if summaries[other].module == summaries[first].module:
                assert summaries[other].functions is summaries[first].functions
                shared += 1
    assert shared >= 10
    for path, summary in summaries.items():  # what the file alone summarizes to, at its path
        assert summary == summarize_source(Path(path).read_bytes(), path, summary.module,
                                           summary.is_package)  # fmt: skip

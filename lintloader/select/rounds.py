"""One demand round's work: pick the files a round's query chooses and summarize them.

``select`` (``select/policy.py``) decides *what* a round asks for; this module decides *how* the
answer is worked out. When the bytes of most files were read in this run (a cold scan), the
first such round cuts the candidates into pieces that this process and ``jobs - 1`` forked
children that stay for the run (``workers/forked.Resident``) take as each is free
(``workers/forked.WorkQueue``) and search: all finish together, whatever each piece costs. A
process's shard is the files of the pieces it took: each later round's query asks each child
about what is left of its shard. Each sharded round then parses what the searches chose, the
largest modules first, each taken by whichever process is free (a second queue, filled each
round): a round's parses cost what its largest files cost, and those can sit in any shard
(a file parsed in a process other than the one that searched it is read there again). A child
sends the summaries of each piece it parsed as soon as they are made, so that this process
decodes them while the child parses its last piece, not after it. Each
process keeps the bytes of its shard (:data:`RESIDENT_SPARE_BYTES` in all, shared by the
processes), so a file is read once per run, not once per round that asks it a new token.
Otherwise (warm and one-changed-file runs answer token questions from the stat index) the
round runs here, and only a large batch of files to parse goes to worker processes
(``select/parse.py``).

Whatever the route, the summaries, the cache entries, the stat index answers and the counts
are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial

from lintloader.cache import codec
from lintloader.cache.pending import PendingStores
from lintloader.cache.summaries import SummaryCache, summary_kind
from lintloader.scan.model import SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.select.parse import at_path, summarize_files
from lintloader.select.query import GroupQuery, chosen_by
from lintloader.summary.limits import size_problem
from lintloader.summary.model import FileSummary
from lintloader.workers.forked import Resident, WorkQueue, can_fork
from lintloader.workers.progress import ParseStats

# Forking pays when a round must search thousands of files whose bytes were read this run.
SHARD_MIN_FILES = 2_000
# The first sharded round's pieces of work, per process (``work_pieces``): the processes
# finish within about a piece of each other.
PIECES_PER_JOB = 16
MAX_PIECES = 1000  # a WorkQueue's numbers fit a pipe written before the fork
# Files searched between two releases of the bytes of those not chosen (what a search holds).
CHUNK_FILES = 256
# Bytes of files not chosen that a process keeps rather than releases, the first found first: a
# project this small is read once per run, whatever later rounds ask (issue 45); past this,
# memory follows the parsed files and a later round reads a released file again.
SPARE_BYTES = 16 * 1024 * 1024
# The same for a cold scan, in all (a sharded one's processes each keep their share of it, of
# their own shard), released when the selection ends: later rounds ask the same files new
# tokens (round 2 of a site-packages asks ``pytorch_lightning`` in 7,658 files round 1
# searched), and the bytes kept answer them without reading the files again. Memory: a 4x
# site-packages tree (37,664 files, -j 2) peaked at 258 MB before, 298 MB now (ruff: 916 MB).
RESIDENT_SPARE_BYTES = 128 * 1024 * 1024


@dataclass(eq=False, repr=False)
class ShardResult:
    """What a child sends back for its shard (as codec data): the summaries, each copy of a
    module (same bytes, same name: parsed once) as the path of the summary it shares. A
    summary the child parsed and wrote to the cache goes as the bytes of its entry
    (``entries``: path -> entry), not encoded a second time; :func:`load_shard` decodes those
    into ``summaries``."""

    summaries: dict[str, FileSummary]
    answers: list[tuple[int, int, int, str]]  # SourceSet.token_answers of the shard
    table_size: int  # the child's token table, to check its bits mean the same tokens
    parsed: int = 0
    cached: int = 0
    used: frozenset[str] = frozenset()  # summary cache keys read or written
    copies: tuple[tuple[str, str], ...] = ()  # (a copy's path, the path it shares a summary of)
    pieces: tuple[int, ...] = ()  # the pieces (of a search or of the parses) the child took
    chosen: tuple[str, ...] = ()  # a search's: the paths it chose to parse
    entries: dict[str, bytes] = field(default_factory=dict)  # summaries as their cache entries
    more: bool = False  # a round's parses, one piece's: more of the child's answers follow

    def shared(self) -> dict[str, FileSummary]:
        """Every summary of the shard, copies sharing what their first was parsed into."""
        found = dict(self.summaries)
        found.update((path, at_path(self.summaries[first], path)) for path, first in self.copies)
        return found


SHARD_KIND = "shard result"  # what a forked child sends back: data, never a pickle
REQUEST_KIND = "shard request"  # what the parent asks a resident child, as data too
PARSE_KIND = "parse request"  # then, to parse what the searches chose


@dataclass(eq=False, repr=False)
class ShardRequest:
    """A round's question to a resident child: the parent's token table (the child's must be
    the start of it: bits mean the same tokens), the query's buckets, the modules asked for by
    name, and the paths of the child's shard that are no candidates any more."""

    tokens: list[bytes]
    buckets: dict[bytes, list[tuple[bytes, ...]]]
    modules: list[str]
    gone: list[str]


@dataclass(eq=False, repr=False)
class ParseRequest:
    """A round's parses, after its searches: the paths of each piece (a module's chosen
    files), largest first; each process takes piece numbers from the round's queue."""

    pieces: list[list[str]]


def dump_shard(result: ShardResult) -> bytes:
    return codec.dumps(SHARD_KIND, ShardResult, result)


def load_shard(data: bytes) -> ShardResult:
    """A child's result; :class:`codec.Invalid` (the shard is redone here) unless every copy
    names a summary it sent."""
    result: ShardResult = codec.loads(SHARD_KIND, ShardResult, data)
    kind = summary_kind()
    for path, entry in result.entries.items():
        summary: FileSummary = codec.loads(kind, FileSummary, entry)
        if summary.path != path:
            raise codec.Invalid("an entry of another file's summary")
        result.summaries[path] = summary
    result.entries = {}
    if not all(first in result.summaries for _, first in result.copies):
        raise codec.Invalid("a copy of a summary that was not sent")
    return result


def merged(results: Sequence[ShardResult], pieces: tuple[int, ...], table_size: int) -> ShardResult:
    """One result of a child's pieces' results, naming the pieces it took."""
    found = ShardResult({}, [], table_size, pieces=pieces)
    used: set[str] = set()
    copies: list[tuple[str, str]] = []
    chosen: list[str] = []
    for result in results:
        found.summaries.update(result.summaries)
        found.entries.update(result.entries)
        found.answers += result.answers
        found.parsed += result.parsed
        found.cached += result.cached
        used |= result.used
        copies += result.copies
        chosen += result.chosen
    found.used, found.copies, found.chosen = frozenset(used), tuple(copies), tuple(chosen)
    return found


@dataclass(eq=False, repr=False)
class ChildShard:
    """A resident child's work: the first sharded round's pieces and the queue it takes them
    from (None once it has), then the files of the pieces it took, as later rounds leave
    them; and the queue of each round's parses (None: the parent parses them all)."""

    pieces: list[list[SourceFile]]
    queue: WorkQueue | None
    parses: WorkQueue | None = None
    files: dict[str, SourceFile] = field(default_factory=dict)
    _known: dict[str, SourceFile] | None = None

    def known(self) -> dict[str, SourceFile]:
        """Every file of the first sharded round, by path: what a parse request may name
        (worked out at the child's first parse request, kept for the later ones)."""
        if self._known is None:
            self._known = {f.path: f for piece in self.pieces for f in piece}
        return self._known


def without_copies(
    summaries: dict[str, FileSummary],
) -> tuple[dict[str, FileSummary], tuple[tuple[str, str], ...]]:
    """The summaries that are no copy, and each copy as (its path, its first's path): a copy
    shares its first's functions (``parse.at_path``), and the codec would write them twice."""
    firsts: dict[int, str] = {}
    unique: dict[str, FileSummary] = {}
    copies: list[tuple[str, str]] = []
    for path, summary in summaries.items():
        first = firsts.setdefault(id(summary.functions), path)
        if first == path:
            unique[path] = summary
        else:
            copies.append((path, first))
    return unique, tuple(copies)


def written_apart(
    summaries: dict[str, FileSummary], cache: SummaryCache
) -> tuple[dict[str, FileSummary], dict[str, bytes]]:
    """``summaries`` less those whose cache entry this process wrote, and those as the bytes
    of their entries (by path): sent as they are, not encoded again."""
    rest: dict[str, FileSummary] = {}
    entries: dict[str, bytes] = {}
    for path, summary in summaries.items():
        entry = cache.take_written(summary) if summary.path == path else None
        if entry is None:
            rest[path] = summary
        else:
            entries[path] = entry
    return rest, entries


@dataclass(eq=False, repr=False)
class RoundTaker:
    """``policy.Take`` for one run: its sources, cache, counts and parallelism."""

    sources: SourceSet
    cache: SummaryCache | None
    stats: ParseStats
    jobs: int
    max_file_mb: float
    shard_min_files: int = SHARD_MIN_FILES
    spare_bytes: int = SPARE_BYTES
    resident_spare_bytes: int = RESIDENT_SPARE_BYTES
    # cache entries made before the rounds (a check's discovery's): the first resident child
    # writes them before it takes its first piece of work (cache/pending.py)
    stores: PendingStores | None = None
    # set at the first sharded round: the paths of each resident's shard, the shard of each
    # module (0: this process's), the residents (None: not started, or failed)
    _shards: list[list[str]] | None = None
    _owner: dict[str, int] = field(default_factory=dict)
    _residents: list[Resident | None] = field(default_factory=list)
    _parses: WorkQueue | None = None  # each sharded round's parses, shared out (None: here)
    _forked: frozenset[str] = frozenset()  # the paths the resident children know
    _keeping: bool = False  # a cold round kept bytes past spare_bytes (close releases them)
    _writer: Resident | None = None  # the resident that writes the stores

    def take(
        self, candidates: list[SourceFile], query: GroupQuery | None, modules: frozenset[str]
    ) -> dict[str, FileSummary]:
        """Summaries of the candidates the query or the module names choose, in the
        candidates' order."""
        cold = self._cold(candidates, query)
        self._keeping |= cold  # bytes past spare_bytes are kept: released by close()
        if cold and self.jobs > 1 and can_fork():
            assert query is not None
            found = self._take_sharded(candidates, query, modules)
        else:
            spare = self.resident_spare_bytes if cold else self.spare_bytes
            chosen = self._choose(candidates, query, modules, spare)
            found = self.summarize(chosen, self.stats, self.jobs)
        return {f.path: found[f.path] for f in candidates if f.path in found}

    def _take_sharded(
        self, candidates: list[SourceFile], query: GroupQuery, modules: frozenset[str]
    ) -> dict[str, FileSummary]:
        """The round in shards: searched, at the first sharded round, in pieces shared out
        among this process and resident children as each is free (``_take_pieces``); later,
        each process asks what is left of the files it took then (a module no shard had, a
        located one, goes to this process), a shard whose child failed redone here. Then what
        the searches chose is parsed, shared out the same way (``_parse_shared``)."""
        self.sources.register(query.searched)  # children must agree on the token bits
        if self._shards is None:
            searches = self._take_pieces(candidates, query, modules)
        else:
            searches = self._take_owned(candidates, query, modules)
        for result in searches:
            self.sources.learn(result.answers, result.table_size)
        by_path = {f.path: f for f in candidates}
        chosen = [by_path[path] for result in searches for path in result.chosen]
        results = self._parse_shared(chosen)
        # the bytes of files chosen here and parsed elsewhere (no digest here yet) go
        self.sources.forget(f.path for f in chosen)
        found: dict[str, FileSummary] = {}
        for result in results:
            self.sources.learn(result.answers, result.table_size)
            self.stats.count(parsed=result.parsed, cached=result.cached)
            if self.cache is not None:
                self.cache.used |= result.used
            found.update(result.shared())
        self.sources.remember_summaries(shards_files([candidates], found), self.cache is None)
        return found

    def _parse_shared(self, chosen: list[SourceFile]) -> list[ShardResult]:
        """Summaries of the files a round's searches chose: the modules the resident children
        know, largest first (:func:`parse_pieces`), each taken by whichever process is free;
        the others here, after those. A single module is parsed here: sharing it out would
        only add the way its summary travels. A child that fails has the pieces it took
        redone here, and the queue is not used again (it may hold the child's stop)."""
        residents = [r for r in self._residents if r is not None and r.pid >= 0]
        queue = self._parses
        limit = MAX_PIECES - len(residents) - 1
        shared = [f for f in chosen if f.path in self._forked]
        pieces = parse_pieces(shared, limit, self.sources.disk_size)
        if len(pieces) < 2 or queue is None or not residents:
            return [self._parse(chosen)]
        if not queue.fill(len(pieces), len(residents) + 1):
            return [self._parse(chosen)]
        request = ParseRequest([[f.path for f in piece] for piece in pieces])
        data = codec.dumps(PARSE_KIND, ParseRequest, request)
        streams = [ParseAnswers(r, failed=not r.send(data)) for r in residents]
        results, taken = take_all(queue, partial(self._parse_piece, pieces, streams))
        results.append(self._parse([f for f in chosen if f.path not in self._forked]))
        done = set(taken)
        answers = [stream.result() for stream in streams]
        accepted = accepted_answers(residents, answers, done, len(pieces))
        results += [result for result in accepted if result is not None]
        if any(result is None for result in accepted):
            queue.close()
            self._parses = None
        left = [f for number, piece in enumerate(pieces) if number not in done for f in piece]
        return [*results, self._parse(left)] if left else results

    def _parse_piece(
        self, pieces: list[list[SourceFile]], streams: list[ParseAnswers], number: int
    ) -> ShardResult:
        """This process's parse of piece ``number``; then the children's answers that came
        meanwhile are read, so that what is left to read when the pieces run out is the
        least."""
        result = self._parse(pieces[number])
        for stream in streams:
            stream.read(wait=False)
        return result

    def _take_owned(
        self, candidates: list[SourceFile], query: GroupQuery, modules: frozenset[str]
    ) -> list[ShardResult]:
        shards = self._current_shards(candidates)
        asked = [
            resident is not None
            and resident.send(self._request(query, modules, self._gone(shard, i)))
            for i, (resident, shard) in enumerate(zip(self._residents, shards[1:], strict=True))
        ]
        results = [self._search(shards[0], query, modules)]
        for i, shard in enumerate(shards[1:]):
            result = self._answer(i) if asked[i] else None
            results.append(self._search(shard, query, modules) if result is None else result)
        return results

    def _take_pieces(
        self, candidates: list[SourceFile], query: GroupQuery, modules: frozenset[str]
    ) -> list[ShardResult]:
        """The first sharded round's searches: the candidates in pieces (:func:`work_pieces`),
        taken from a :class:`WorkQueue` by this process and ``jobs - 1`` resident children,
        each piece by the first that is free, so that all finish together; each process keeps
        the files of its pieces for the later rounds. The pieces a failed child took are
        redone here. The queue of each round's parses is made here too, before the fork."""
        pieces = work_pieces(candidates, self.jobs, self.sources.disk_size)
        queue = WorkQueue.make(len(pieces))
        self._shards, self._residents = [], []
        self._owner = {f.module: 0 for f in candidates}
        if queue is None:  # (no pipe) this process takes every piece
            return [self._search(piece, query, modules) for piece in pieces]
        self._parses = WorkQueue.refillable()
        self._forked = frozenset(f.path for f in candidates)
        for _ in range(self.jobs - 1):
            serve = partial(self._serve, ChildShard(pieces, queue, self._parses))
            first = self._stores_written()
            self._residents.append(Resident.start(serve, self._residents, first))
            self._writer = self._residents[-1] if first else self._writer
        request = self._request(query, modules, [])
        asked = [r is not None and r.send(request) for r in self._residents]
        results, taken = take_all(
            queue, lambda number: self._search(pieces[number], query, modules)
        )
        queue.close()
        done = set(taken)
        answers = [self._answer(i) if sent else None for i, sent in enumerate(asked)]
        accepted = accepted_answers(self._residents, answers, done, len(pieces))
        for i, result in enumerate(accepted):
            theirs = sorted(result.pieces) if result is not None else []
            if result is not None:
                results.append(result)
            files = [f for number in theirs for f in pieces[number]]
            self._shards.append([f.path for f in files])
            self._owner.update((f.module, i + 1) for f in files)
        left = (pieces[number] for number in range(len(pieces)) if number not in done)
        return results + [self._search(piece, query, modules) for piece in left]

    def _current_shards(self, candidates: list[SourceFile]) -> list[list[SourceFile]]:
        """This round's candidates by the shard their module went to at the first sharded
        round (the first shard for a module none had)."""
        shards: list[list[SourceFile]] = [[] for _ in range(len(self._residents) + 1)]
        owner = self._owner
        for file in candidates:
            shards[owner.get(file.module, 0)].append(file)
        return shards

    def _request(self, query: GroupQuery, modules: frozenset[str], gone: list[str]) -> bytes:
        tokens = list(self.sources.index.tokens)
        request = ShardRequest(tokens, query.buckets, sorted(modules), gone)
        return codec.dumps(REQUEST_KIND, ShardRequest, request)

    def _gone(self, shard: list[SourceFile], i: int) -> list[str]:
        """The paths of resident ``i``'s files that are no candidates any more."""
        assert self._shards is not None
        current = {f.path for f in shard}
        return [path for path in self._shards[i] if path not in current]

    def _answer(self, i: int) -> ShardResult | None:
        """Resident ``i``'s result (None: it failed, and is closed)."""
        resident = self._residents[i]
        return answer_of(resident) if resident is not None else None

    def _serve(self, shard: ChildShard, data: bytes) -> bytes | Iterator[bytes]:
        """In a resident child: the answer to one request: a search (at the first, of the
        pieces it takes from the queue until none is left; then, of what is left of the files
        of those pieces), or a round's parses (those it takes from the round's queue, an
        answer each)."""
        if codec.is_kind(PARSE_KIND, data):
            return self._serve_parses(shard, codec.loads(PARSE_KIND, ParseRequest, data))
        request: ShardRequest = codec.loads(REQUEST_KIND, ShardRequest, data)
        index = self.sources.index
        if index.tokens != request.tokens[: len(index.tokens)]:
            raise codec.Invalid("a token table that is not this one's")
        self.sources.register(request.tokens)
        query = GroupQuery.of_buckets(request.buckets)
        modules = frozenset(request.modules)
        queue, shard.queue = shard.queue, None
        if queue is None:
            for path in request.gone:
                shard.files.pop(path, None)
            return dump_shard(self._search(list(shard.files.values()), query, modules))
        results, taken = take_all(
            queue, lambda number: self._search(shard.pieces[number], query, modules)
        )
        queue.close()
        shard.files = {f.path: f for number in taken for f in shard.pieces[number]}
        return dump_shard(merged(results, tuple(taken), len(index.tokens)))

    def _serve_parses(self, shard: ChildShard, request: ParseRequest) -> Iterator[bytes]:
        """In a resident child: the summaries of each piece it takes from the round's queue,
        sent as it is parsed (``more``), then the pieces it took with what the parent learns
        of them: the digests (the bits came with the searches). The bytes of files it chose
        that another process parsed are let go."""
        known = shard.known()
        pieces = [[known[path] for path in piece] for piece in request.pieces]
        if shard.parses is None:
            raise codec.Invalid("no queue of parses")
        if self.cache is not None:  # the entries written are sent as they are (ShardResult)
            self.cache.keep_written = True
        taken = []
        for number in taken_from(shard.parses):
            taken.append(number)
            parsed = self._parse(pieces[number])
            parsed.pieces, parsed.more = (number,), True
            yield dump_shard(parsed)
        answers = self.sources.token_answers(f.path for n in taken for f in pieces[n])
        yield dump_shard(
            ShardResult({}, answers, len(self.sources.index.tokens), pieces=tuple(taken))
        )
        self.sources.forget(path for piece in request.pieces for path in piece)

    def let_go(self) -> None:
        """Let the resident children go: they leave while this process goes on (the rules);
        :meth:`close` reaps them. The bytes this process kept of its shard are released:
        the selection is over, what is held now is what was parsed (memory follows the
        parsed files)."""
        for resident in self._residents:
            if resident is not None:
                resident.let_go()
        if self._parses is not None:
            self._parses.close()
            self._parses = None
        if self._keeping:
            self._keeping = False
            self.sources.forget(self.sources.held())

    def close(self, kill: bool = False) -> None:
        """Let the resident children go (``kill``: now, as after a Ctrl-C) and reap them;
        release the bytes kept (:meth:`let_go`). The stores are no longer pending here once
        the child that wrote them is reaped (else this process writes them:
        ``pipeline/engine.py``)."""
        for resident in self._residents:
            if resident is not None:
                resident.close(kill)
        writer, self._writer = self._writer, None
        if writer is not None and writer.status == 0 and self.stores is not None:
            self.stores.written_elsewhere()
        self._residents = [None] * len(self._residents)
        self.let_go()

    def _stores_written(self) -> Callable[[], None] | None:
        """What the next resident does first: write the stores, when none does yet."""
        if self.stores is None or not self.stores.writes or self._writer is not None:
            return None
        return self.stores.write

    def _cold(self, candidates: list[SourceFile], query: GroupQuery | None) -> bool:
        """Whether the round must search thousands of files read in this run (a cold scan):
        worth shards, and worth keeping the bytes for the next round's tokens."""
        return (
            query is not None
            and len(candidates) >= self.shard_min_files
            and self.sources.read_count >= self.shard_min_files
        )

    def _search(
        self, shard: list[SourceFile], query: GroupQuery, modules: frozenset[str]
    ) -> ShardResult:
        """Run in a child (or here): which files of ``shard`` the round chooses, and the
        token answers of them all."""
        share = self.resident_spare_bytes // max(self.jobs, 1)
        chosen = self._choose(shard, query, modules, share)
        answers = self.sources.token_answers(f.path for f in shard)
        table_size = len(self.sources.index.tokens)
        return ShardResult({}, answers, table_size, chosen=tuple(f.path for f in chosen))

    def _parse(self, files: list[SourceFile]) -> ShardResult:
        """Run in a child (or here): the summaries of ``files``, one process, their digests
        worked out in this process's index (a child sends them once for all its pieces:
        ``_serve_parses``; here there is nothing to learn)."""
        stats = ParseStats()
        used_before = set(self.cache.used) if self.cache is not None else set()
        summaries = self.summarize(files, stats, jobs=1)
        used = (self.cache.used - used_before) if self.cache is not None else set()
        table_size = len(self.sources.index.tokens)
        unique, copies = without_copies(summaries)
        counts = stats.parsed, stats.cached
        result = ShardResult(unique, [], table_size, *counts, frozenset(used), copies)
        if self.cache is not None and self.cache.keep_written:
            result.summaries, result.entries = written_apart(unique, self.cache)
        return result

    def _choose(
        self,
        candidates: list[SourceFile],
        query: GroupQuery | None,
        modules: frozenset[str],
        spare: int,
    ) -> list[SourceFile]:
        """:func:`chosen_by`, a chunk of files at a time, the bytes of the files not chosen
        released after each chunk, but for ``spare`` bytes of them in all over the run: their
        token answers are known (a later round that needs a released one reads it again)."""
        chosen: list[SourceFile] = []
        for start in range(0, len(candidates), CHUNK_FILES):
            chunk = candidates[start : start + CHUNK_FILES]
            picked = chosen_by(query, modules, self.sources, chunk)
            taken = {f.path for f in picked}
            unchosen = (f.path for f in chunk if f.path not in taken)
            self.sources.forget(unchosen, spare=spare)
            chosen += picked
        return chosen

    def summarize(
        self, batch: Sequence[SourceFile], stats: ParseStats, jobs: int
    ) -> dict[str, FileSummary]:
        """Summaries of ``batch``; files too large to parse get an error summary (uncached)."""
        large: dict[str, FileSummary] = {}
        for file in batch:
            problem = size_problem(self.sources.size(file.path), self.max_file_mb)
            if problem:
                large[file.path] = FileSummary(
                    file.path, file.module, file.is_package, error=problem
                )
        small = [f for f in batch if f.path not in large]
        return {**summarize_files(small, self.sources, self.cache, jobs, stats), **large}


def answer_of(resident: Resident) -> ShardResult | None:
    """A resident's next answer (None: it failed, or sent what the codec refuses)."""
    data = resident.answer()
    if data is None:
        return None
    try:
        return load_shard(data)
    except codec.Invalid:
        return None


@dataclass(eq=False, repr=False)
class ParseAnswers:
    """A resident's answers to a round's parses, read as they come: the summaries of each
    piece it parsed (``more``), then the pieces it took (``last``)."""

    resident: Resident
    frames: list[ShardResult] = field(default_factory=list)
    last: ShardResult | None = None
    failed: bool = False

    def read(self, wait: bool) -> None:
        """Read the answers that came (``wait``: all, until the last)."""
        while self.last is None and not self.failed and (wait or self.resident.ready()):
            frame = answer_of(self.resident)
            if frame is None:
                self.failed = True
            elif frame.more:
                self.frames.append(frame)
            else:
                self.last = frame

    def result(self) -> ShardResult | None:
        """The answers as one result (None: the child failed, or named other pieces than those
        it sent)."""
        self.read(wait=True)
        last = self.last
        if last is None or sorted(n for f in self.frames for n in f.pieces) != sorted(last.pieces):
            return None
        return merged([*self.frames, last], last.pieces, last.table_size)


def taken_from(queue: WorkQueue) -> Iterator[int]:
    """Each piece number this process takes from ``queue``, until it reads a stop."""
    while (number := queue.take()) is not None:
        yield number


def take_all(
    queue: WorkQueue, work: Callable[[int], ShardResult]
) -> tuple[list[ShardResult], list[int]]:
    """``work`` on each piece number this process takes from ``queue`` until it reads a stop:
    the results and the numbers, in the order taken."""
    results, taken = [], []
    for number in taken_from(queue):
        taken.append(number)
        results.append(work(number))
    return results, taken


def accepted_answers(
    residents: Sequence[Resident | None],
    answers: Sequence[ShardResult | None],
    done: set[int],
    count: int,
) -> list[ShardResult | None]:
    """Each resident's answer (None: it sent none) where it names pieces of the ``count``
    that no other process took (``done``: those taken so far, the accepted answers' added);
    a resident whose answer is missing or is not accepted is closed now (killed), and its
    pieces are left to redo: None in its place."""
    accepted: list[ShardResult | None] = []
    for resident, result in zip(residents, answers, strict=True):
        taken = set(result.pieces) if result is not None else set()
        if result is None or taken & done or not taken <= set(range(count)):
            if resident is not None:
                resident.close(kill=True)
            accepted.append(None)
        else:
            done |= taken
            accepted.append(result)
    return accepted


def shards_files(
    shards: Sequence[Sequence[SourceFile]], found: dict[str, FileSummary]
) -> list[tuple[SourceFile, FileSummary]]:
    """Each file a child summarized, with its summary."""
    return [(f, found[f.path]) for shard in shards for f in shard if f.path in found]


def work_pieces(
    candidates: Sequence[SourceFile], jobs: int, size: Callable[[str], int]
) -> list[list[SourceFile]]:
    """``candidates`` in pieces of about ``1 / (jobs * PIECES_PER_JOB)`` of their bytes each
    (``size``: a file's, known without reading it; a size not known counts as one byte), the
    copies of a module in one piece (parsed once: ``parse.py``), at most :data:`MAX_PIECES`
    pieces. The smallest modules come first: the bytes a process keeps for later rounds are
    kept first come first (``SourceSet.forget``), so what a later round reads again is the
    fewest, largest files (taken largest first, a site-packages' later rounds read 5,000
    files again, not 1,400)."""
    files: dict[str, list[SourceFile]] = {}
    totals: dict[str, int] = {}
    for file in candidates:
        files.setdefault(file.module, []).append(file)
        totals[file.module] = totals.get(file.module, 0) + max(size(file.path), 1)
    share = sum(totals.values()) / min(jobs * PIECES_PER_JOB, MAX_PIECES)
    pieces: list[list[SourceFile]] = [[]]
    load = 0
    for module in sorted(totals, key=lambda name: (totals[name], name)):
        if load >= share:
            pieces.append([])
            load = 0
        pieces[-1] += files[module]
        load += totals[module]
    return pieces if pieces[0] else []


def parse_pieces(
    chosen: Sequence[SourceFile], limit: int, size: Callable[[str], int]
) -> list[list[SourceFile]]:
    """The files a round chose to parse, a module's (its copies: parsed once) in one piece,
    the largest modules first (``size``: a file's, known without reading it), at most
    ``limit`` pieces (past that, the smallest modules share the last one): taken as each
    process is free, the last to finish starts at most its smallest piece after the others."""
    modules: dict[str, list[SourceFile]] = {}
    for file in chosen:
        modules.setdefault(file.module, []).append(file)
    largest = {name: max(size(f.path) for f in files) for name, files in modules.items()}
    order = sorted(modules, key=lambda name: (-largest[name], name))
    pieces = [modules[name] for name in order[: max(limit - 1, 0)]]
    rest = [f for name in order[len(pieces) :] for f in modules[name]]
    return [*pieces, rest] if rest else pieces

"""The records the traced processes wrote (one JSON-lines file per process), read back.

Plain data, no torch: the report is built in the ``lintloader trace`` process itself.
A line that does not parse (a process killed mid-write) is skipped and counted.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Frame:
    """One Python frame: where it was executing and in which function."""

    path: str
    line: int
    function: str
    torch: bool = False  # a frame of torch itself

    @classmethod
    def of(cls, raw: list[Any]) -> Frame:
        return cls(str(raw[0]), int(raw[1]), str(raw[2]), bool(raw[3]))

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "function": self.function}


@dataclass(frozen=True)
class PassRecord:
    """One pass over a loader: ``iter()`` until exhausted, abandoned or the process ended."""

    number: int
    batches: int
    first_batch_s: float | None
    steady_s: float | None  # mean time between the later batches of this pass
    pool_start: bool  # a worker pool was started by this pass's ``iter()``
    device: str
    ended: str
    t: float  # when it ended
    t0: float | None = None  # when its ``iter()`` was called
    full: bool = False  # run to the end (or to its length): an epoch, not a warm-up peek


@dataclass(frozen=True)
class PoolStart:
    number: int
    t: float
    pids: tuple[int, ...]
    start_s: float
    stack: tuple[Frame, ...]
    ready_s: float | None = None  # from the pool's start to its first batch


@dataclass(frozen=True)
class Shutdown:
    t: float
    pids: tuple[int, ...]
    cause: str
    stack: tuple[Frame, ...]


@dataclass
class LoaderTrace:
    """Everything recorded for one DataLoader object in one process."""

    id: str
    num_workers: int
    persistent_workers: bool
    pin_memory: bool
    pin_memory_device: str
    start_method: str | None
    created: tuple[Frame, ...]
    site: tuple[Frame, ...] = ()  # the user frames that created it, innermost first
    dataset: tuple[str, int | None, int | None] = ("?", None, None)  # type, len, batch size
    dataset_id: str | None = None  # the identity of the dataset object (None: not recorded)
    t: float = 0.0  # when it was created
    lightning_reload: int | None = None  # Trainer.reload_dataloaders_every_n_epochs
    pid: int = -1
    passes: list[PassRecord] = field(default_factory=list)
    pool_starts: list[PoolStart] = field(default_factory=list)
    shutdowns: list[Shutdown] = field(default_factory=list)
    stopped: bool = False  # --max-passes stopped the process at this loader


@dataclass
class ProcessTrace:
    """One traced process (a rank of a DDP job, or the single training process)."""

    pid: int
    ppid: int | None
    rank: int | None
    argv: tuple[str, ...]
    loaders: dict[str, LoaderTrace] = field(default_factory=dict)
    bad_lines: int = 0

    @property
    def label(self) -> str:
        return f"pid {self.pid}" if self.rank is None else f"rank {self.rank} (pid {self.pid})"


def read_run(run_dir: Path) -> list[ProcessTrace]:
    """Every process that recorded a DataLoader, by rank, then pid."""
    processes = [read_process(path) for path in sorted(run_dir.glob("*.jsonl"))]
    found = [process for process in processes if process.loaders]
    return sorted(found, key=lambda p: (p.rank is None, p.rank or 0, p.pid))


def read_process(path: Path) -> ProcessTrace:
    pid = int(path.stem) if path.stem.isdigit() else -1
    process = ProcessTrace(pid, None, None, ())
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            _apply(process, json.loads(line))
        except (ValueError, KeyError, TypeError, IndexError):
            process.bad_lines += 1
    return process


def _apply(process: ProcessTrace, record: dict[str, Any]) -> None:
    event = record["event"]
    if event == "process":
        process.ppid = record.get("ppid")
        process.argv = tuple(record.get("argv") or ())
        process.rank = record.get("rank")
    elif event == "loader":
        process.loaders[record["loader"]] = _loader(record)
        if process.rank is None and record.get("rank") is not None:
            process.rank = int(record["rank"])
    elif event in _LOADER_EVENTS:
        loader = process.loaders.get(record["loader"])
        if loader is not None:
            _LOADER_EVENTS[event](loader, record)


def _loader(record: dict[str, Any]) -> LoaderTrace:
    dataset = record.get("dataset") or {}
    reload = record.get("lightning_reload")
    return LoaderTrace(
        id=record["loader"],
        num_workers=int(record["num_workers"]),
        persistent_workers=bool(record["persistent_workers"]),
        pin_memory=bool(record["pin_memory"]),
        pin_memory_device=str(record.get("pin_memory_device") or ""),
        start_method=record.get("multiprocessing_context"),
        created=_stack(record),
        site=tuple(Frame(str(f[0]), int(f[1]), str(f[2])) for f in record.get("site") or ()),
        dataset=(
            str(dataset.get("type", "?")),
            _int_or_none(dataset.get("len")),
            _int_or_none(dataset.get("batch_size")),
        ),
        dataset_id=str(dataset["id"]) if isinstance(dataset.get("id"), str) else None,
        t=float(record.get("t") or 0.0),
        lightning_reload=reload if isinstance(reload, int) else None,
        pid=int(record.get("pid", -1)),
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _stack(record: dict[str, Any]) -> tuple[Frame, ...]:
    return tuple(Frame.of(raw) for raw in record.get("stack") or ())


def _add_pass(loader: LoaderTrace, record: dict[str, Any]) -> None:
    loader.passes.append(
        PassRecord(
            number=int(record["number"]),
            batches=int(record["batches"]),
            first_batch_s=record.get("first_batch_s"),
            steady_s=record.get("steady_s"),
            pool_start=bool(record.get("pool_start")),
            device=str(record.get("device") or "cpu"),
            ended=str(record.get("ended") or "?"),
            t=float(record["t"]),
            t0=float(record["t0"]) if isinstance(record.get("t0"), (int, float)) else None,
            full=bool(record.get("full", record.get("ended") == "exhausted")),
        )
    )
    loader.passes.sort(key=lambda p: p.number)


def _add_pool_start(loader: LoaderTrace, record: dict[str, Any]) -> None:
    loader.pool_starts.append(
        PoolStart(
            number=int(record["number"]),
            t=float(record["t"]),
            pids=tuple(int(pid) for pid in record.get("pids") or ()),
            start_s=float(record.get("start_s") or 0.0),
            stack=_stack(record),
        )
    )


def _add_shutdown(loader: LoaderTrace, record: dict[str, Any]) -> None:
    loader.shutdowns.append(
        Shutdown(
            t=float(record["t"]),
            pids=tuple(int(pid) for pid in record.get("pids") or ()),
            cause=str(record.get("cause") or "?"),
            stack=_stack(record),
        )
    )


def _pool_ready(loader: LoaderTrace, record: dict[str, Any]) -> None:
    number = int(record["number"])
    for index, start in enumerate(loader.pool_starts):
        if start.number == number:
            ready = float(record["ready_s"])
            loader.pool_starts[index] = dataclasses.replace(start, ready_s=ready)


def _mark_stopped(loader: LoaderTrace, record: dict[str, Any]) -> None:
    loader.stopped = True


_LOADER_EVENTS = {
    "pass": _add_pass,
    "pool_start": _add_pool_start,
    "shutdown": _add_shutdown,
    "stop": _mark_stopped,
    "pool_ready": _pool_ready,
}

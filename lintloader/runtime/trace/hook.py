"""The start-up hook ``lintloader trace`` runs inside every Python process of the traced command.

This module is copied, as ``_lintloader_trace_hook.py``, next to the ``sitecustomize.py`` that
imports it, so it must stand alone: the standard library only, no lintloader import (the traced
command may run another interpreter). :func:`install` adds an import hook and nothing else;
torch's DataLoader is patched only when ``torch.utils.data.dataloader`` is imported, so a
process that never uses torch never imports it.

Each process appends JSON lines to ``<run dir>/<pid>.jsonl`` (one file per process, opened for
each record, so forked and spawned children never share a handle). Records are rare (one per
loader, pass, pool start and shutdown); the per-batch cost is one wrapped ``__next__``.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.abc
import itertools
import json
import linecache
import os
import sys
import sysconfig
import threading
import time
import weakref
from collections.abc import Iterator
from types import FrameType
from typing import Any

RUN_DIR_ENV = "LINTLOADER_TRACE_DIR"
MAX_PASSES_ENV = "LINTLOADER_TRACE_MAX_PASSES"
TARGET_MODULE = "torch.utils.data.dataloader"
STACK_LIMIT = 40
SITE_FRAMES = 4  # user frames kept as a loader's creation site, innermost first
MIN_BUDGET = 2  # --max-passes stops no earlier than after pass 2, where a respawn shows
LIGHTNING_DIRS = ("/lightning/", "/pytorch_lightning/")
DATALOADER_HOOK = "dataloader"  # train_dataloader, val_dataloader, ...: the hooks Lightning reloads
ID_ATTRIBUTE = "_lintloader_trace_id"
PASS_ATTRIBUTE = "_lintloader_trace_pass"
DATASET_ATTRIBUTE = "_lintloader_trace_dataset"
POOL_ATTRIBUTE = "_lintloader_trace_pool"  # (loader id, pool number, start) until 1st batch


class PassState:
    """One pass (one ``iter()`` of a loader) while it is open."""

    __slots__ = (
        "batches", "begin", "device", "first", "last", "loader", "number", "pool_start", "t0",
    )  # fmt: skip

    def __init__(self, loader: str, number: int, begin: float) -> None:
        self.loader = loader
        self.number = number
        self.begin = begin
        self.t0 = time.time()
        self.first: float | None = None
        self.last: float | None = None
        self.batches = 0
        self.pool_start = False
        self.device: str | None = None


class LoaderState:
    """What the hook keeps per DataLoader of this process."""

    __slots__ = ("id", "length", "open_pass", "passes", "persistent", "pool_starts", "site")

    def __init__(
        self, loader_id: str, persistent: bool, site: tuple[Any, ...], length: int | None
    ) -> None:
        self.id = loader_id
        self.persistent = persistent
        self.site = site  # the first two creation frames: loaders of one site share a budget
        self.length = length  # batches per pass, when the loader knows
        self.passes = 0
        self.pool_starts = 0
        self.open_pass: PassState | None = None


class Recorder:
    """Writes this process's records; owned by the process that created it (a forked child
    writes to a file of its own and closes no pass of its parent's)."""

    def __init__(self, run_dir: str, max_passes: int | None) -> None:
        self.run_dir = run_dir
        self.max_passes = max_passes
        self.owner = os.getpid()
        self.loaders: dict[str, LoaderState] = {}
        self.counter = itertools.count(1)
        self.torch_dir = ""
        self.device: str | None = None
        self.announced = False
        self.full_passes: dict[tuple[Any, ...], int] = {}  # per creation site
        self.pools: weakref.WeakSet[Any] = weakref.WeakSet()  # live pool iterators

    def write(self, record: dict[str, Any]) -> None:
        pid = os.getpid()
        record["pid"] = pid
        line = json.dumps(record, separators=(",", ":")) + "\n"
        try:
            path = os.path.join(self.run_dir, f"{pid}.jsonl")
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
        except OSError:
            pass

    def announce(self) -> None:
        """The process record, written before this process's first loader record."""
        if self.announced and os.getpid() == self.owner:
            return
        self.announced, self.owner = True, os.getpid()
        self.write(
            {
                "event": "process",
                "ppid": os.getppid(),
                "rank": _rank(),
                "argv": list(sys.argv[:8]),
                "t": time.time(),
            }
        )

    # -- frames --------------------------------------------------------------------------------
    def stack(self, skip: int) -> list[list[Any]]:
        """``[file, line, function, is_torch]`` from the innermost frame outwards; this
        module's own frames are left out."""
        frames: list[list[Any]] = []
        frame: FrameType | None = sys._getframe(skip + 1)
        own = __file__
        while frame is not None and len(frames) < STACK_LIMIT:
            code = frame.f_code
            if code.co_filename != own:
                name = getattr(code, "co_qualname", code.co_name)
                is_torch = bool(self.torch_dir) and code.co_filename.startswith(self.torch_dir)
                frames.append([code.co_filename, frame.f_lineno, name, is_torch])
            frame = frame.f_back
        return frames

    # -- events --------------------------------------------------------------------------------
    def loader_created(self, loader: Any) -> LoaderState:
        self.announce()
        loader_id = f"{os.getpid()}-{next(self.counter)}"
        object.__setattr__(loader, ID_ATTRIBUTE, loader_id)
        persistent = bool(getattr(loader, "persistent_workers", False))
        stack = self.stack(2)
        site = user_frames(stack)
        length = _length(loader)
        key = tuple(tuple(f[:2]) for f in site[:2])
        state = LoaderState(loader_id, persistent, key, length)
        self.loaders[loader_id] = state
        self.write(
            {
                "event": "loader",
                "loader": loader_id,
                "t": time.time(),
                "rank": _rank(),
                "num_workers": int(getattr(loader, "num_workers", 0) or 0),
                "persistent_workers": persistent,
                "pin_memory": bool(getattr(loader, "pin_memory", False)),
                "pin_memory_device": str(getattr(loader, "pin_memory_device", "") or ""),
                "multiprocessing_context": _context_name(loader),
                "dataset": _dataset_of(loader, self.counter),
                "batches_per_pass": length,
                "lightning_reload": _lightning_reload(),
                "site": site,
                "stack": stack,
            }
        )
        return state

    def state_of(self, loader: Any) -> LoaderState:
        loader_id = getattr(loader, ID_ATTRIBUTE, None)
        state = self.loaders.get(loader_id) if loader_id else None
        return state if state is not None else self.loader_created(loader)

    def pool_started(self, loader: Any, iterator: Any, begin: float) -> None:
        seconds = time.perf_counter() - begin
        state = self.state_of(loader)
        state.pool_starts += 1
        object.__setattr__(iterator, ID_ATTRIBUTE, state.id)
        object.__setattr__(iterator, POOL_ATTRIBUTE, (state.id, state.pool_starts, begin))
        self.pools.add(iterator)
        if state.open_pass is not None:
            state.open_pass.pool_start = True
        pids = [int(w.pid) for w in getattr(iterator, "_workers", ()) if w.pid is not None]
        self.write(
            {
                "event": "pool_start",
                "loader": state.id,
                "t": time.time(),
                "number": state.pool_starts,
                "pids": pids,
                "start_s": round(seconds, 6),
                "stack": self.stack(2),
            }
        )

    def pool_ready(self, pending: tuple[str, int, float], opened: PassState | None) -> None:
        """The first batch of a new pool: the time from its start is what starting it cost."""
        loader_id, number, begin = pending
        if opened is not None:
            opened.pool_start = True  # its first batch waited for the pool
        self.write(
            {
                "event": "pool_ready",
                "loader": loader_id,
                "number": number,
                "t": time.time(),
                "ready_s": round(time.perf_counter() - begin, 6),
            }
        )

    def pool_shutdown(self, iterator: Any) -> None:
        loader_id = getattr(iterator, ID_ATTRIBUTE, None)
        if loader_id is None or getattr(iterator, "_shutdown", True):
            return
        stack = self.stack(2)
        pids = [int(w.pid) for w in getattr(iterator, "_workers", ()) if w.pid is not None]
        self.write(
            {
                "event": "shutdown",
                "loader": loader_id,
                "t": time.time(),
                "pids": pids,
                "cause": _cause(stack),
                "stack": stack,
            }
        )

    def pass_begins(self, loader: Any) -> PassState:
        state = self.state_of(loader)
        if state.open_pass is not None:
            self.pass_ends(state.open_pass, "abandoned")
        state.passes += 1
        if self.max_passes is not None:
            budget = max(self.max_passes, MIN_BUDGET)
            if self.site_full_passes(state.site) >= budget:
                self.stop(state)
        opened = PassState(state.id, state.passes, time.perf_counter())
        state.open_pass = opened
        return opened

    def site_full_passes(self, site: tuple[Any, ...]) -> int:
        """Full passes of a site's loaders: those that ended, and open ones that yielded all
        their batches (Lightning stops at the length without asking for one more)."""
        done = self.full_passes.get(site, 0)
        for other in self.loaders.values():
            opened = other.open_pass
            if other.site == site and opened is not None and _complete(other, opened):
                done += 1
        return done

    def stop(self, state: LoaderState) -> None:
        """End the whole program for ``--max-passes``: ``SystemExit`` in the main thread; from
        another thread (where ``SystemExit`` would end only that thread) the records are
        written, the worker pools stopped, and the process exits at once."""
        self.write({"event": "stop", "loader": state.id, "t": time.time()})
        self.close_passes("stopped")
        if threading.current_thread() is threading.main_thread():
            raise SystemExit(0)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        for iterator in list(self.pools):
            for worker in list(getattr(iterator, "_workers", ())):
                with contextlib.suppress(Exception):
                    worker.terminate()
        os._exit(0)

    def batch(self, opened: PassState, iterator: Any) -> None:
        now = time.perf_counter()
        if opened.first is None:
            opened.first = now
            pending = iterator.__dict__.pop(POOL_ATTRIBUTE, None)
            if pending is not None:  # a pool started by this pass's iter(), or an earlier one
                self.pool_ready(pending, opened)
        elif opened.device is None:  # by the second batch the first one went where it goes
            opened.device = self.visible_device()
        opened.last = now
        opened.batches += 1

    def pass_ends(self, opened: PassState, how: str) -> None:
        state = self.loaders.get(opened.loader)
        if state is not None and state.open_pass is opened:
            state.open_pass = None
        full = how == "exhausted" or (state is not None and _complete(state, opened))
        if state is not None and full:
            self.full_passes[state.site] = self.full_passes.get(state.site, 0) + 1
        first = None if opened.first is None else opened.first - opened.begin
        steady = None
        if opened.batches > 1 and opened.first is not None and opened.last is not None:
            steady = (opened.last - opened.first) / (opened.batches - 1)
        self.write(
            {
                "event": "pass",
                "loader": opened.loader,
                "t": time.time(),
                "number": opened.number,
                "t0": opened.t0,
                "batches": opened.batches,
                "first_batch_s": None if first is None else round(first, 6),
                "steady_s": None if steady is None else round(steady, 6),
                "pool_start": opened.pool_start,
                "device": opened.device or self.visible_device(),
                "ended": how,
                "full": full,
            }
        )

    def close_passes(self, how: str) -> None:
        if os.getpid() != self.owner:
            return
        for state in list(self.loaders.values()):
            if state.open_pass is not None:
                self.pass_ends(state.open_pass, how)

    def visible_device(self) -> str:
        """Where the process computes: the current CUDA device once CUDA is initialised."""
        if self.device is not None:
            return self.device
        torch = sys.modules.get("torch")
        cuda = getattr(torch, "cuda", None)
        try:
            if cuda is not None and cuda.is_initialized():
                index = cuda.current_device()
                self.device = f"cuda:{index} ({cuda.get_device_name(index)})"
                return self.device
        except Exception:
            pass
        return "cpu"


def trusted(path: str) -> bool:
    """``path`` and its parent are directories of this user that no one else can write."""
    try:
        for directory in (path, os.path.dirname(os.path.abspath(path))):
            info = os.stat(directory)
            if info.st_uid != os.getuid() or info.st_mode & 0o022:
                return False
    except OSError:
        return False
    return True


def user_frames(stack: list[list[Any]]) -> list[list[Any]]:
    """The frames that name where a loader was created: outside torch and the interpreter's
    start-up machinery, the user's own first (through a library that wraps
    ``DataLoader.__init__``, as Lightning does), innermost first."""
    frames = [f[:3] for f in stack if not f[3] and not _machinery(f[0])]
    users = [f for f in frames if not _installed(f[0])]
    return (users or frames)[:SITE_FRAMES]


def _installed(path: str) -> bool:
    """A frame of an installed package or of the standard library."""
    return "site-packages" in path or "dist-packages" in path or path.startswith(_stdlib())


@functools.cache
def _stdlib() -> str:
    return sysconfig.get_paths()["stdlib"]


def _machinery(path: str) -> bool:
    return path.startswith("<") or path.endswith(("runpy.py", "/threading.py"))


def _complete(state: LoaderState, opened: PassState) -> bool:
    return bool(state.length) and opened.batches >= (state.length or 0)


def _length(loader: Any) -> int | None:
    try:
        return len(loader)
    except Exception:
        return None


def _dataset_of(loader: Any, counter: Iterator[int]) -> dict[str, Any]:
    """What tells two loaders apart: the identity of their dataset (one loader per split has
    another dataset object, even of the same type and length; a rebuild has the same), with
    its type and length and the batch size for the report."""
    dataset = getattr(loader, "dataset", None)
    try:
        length: int | None = len(dataset)  # type: ignore[arg-type]
    except Exception:
        length = None
    kind = type(dataset)
    return {
        "type": f"{kind.__module__}.{kind.__qualname__}",
        "len": length,
        "batch_size": getattr(loader, "batch_size", None),
        "id": _dataset_identity(dataset, counter),
    }


def _dataset_identity(dataset: Any, counter: Iterator[int]) -> str:
    """A name for the dataset object, stamped on it so that a later object at the same address
    is not taken for it; its address when it takes no attribute (``__slots__``)."""
    stamp = getattr(dataset, DATASET_ATTRIBUTE, None)
    if isinstance(stamp, str):
        return stamp
    stamp = f"{os.getpid()}-d{next(counter)}"
    try:
        object.__setattr__(dataset, DATASET_ATTRIBUTE, stamp)
    except Exception:
        return f"{os.getpid()}-a{id(dataset):x}"
    return stamp


def _lightning_reload() -> int | None:
    """``Trainer.reload_dataloaders_every_n_epochs`` when Lightning is creating the loader
    through a ``*_dataloader`` hook (read from the ``self`` of Lightning's frames on the stack),
    else None: a loader that a callback or a step builds for itself is no reload of Lightning's."""
    frame: FrameType | None = sys._getframe(1)
    callee: FrameType | None = None
    while frame is not None and not _in_lightning(frame):
        callee, frame = frame, frame.f_back
    if callee is None or not callee.f_code.co_name.endswith(DATALOADER_HOOK):
        return None
    while frame is not None:
        if _in_lightning(frame):
            owner = frame.f_locals.get("self")
            trainer = getattr(owner, "trainer", owner)
            value = getattr(trainer, "reload_dataloaders_every_n_epochs", None)
            if isinstance(value, int):
                return value
        frame = frame.f_back
    return None


def _in_lightning(frame: FrameType) -> bool:
    return any(part in frame.f_code.co_filename for part in LIGHTNING_DIRS)


def _rank() -> int | None:
    for name in ("RANK", "LOCAL_RANK"):
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    dist = getattr(sys.modules.get("torch"), "distributed", None)
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except Exception:
        pass
    return None


def _context_name(loader: Any) -> str | None:
    context = getattr(loader, "multiprocessing_context", None)
    if context is None:
        return None
    method = getattr(context, "get_start_method", None)
    return str(method()) if callable(method) else str(context)


def _cause(stack: list[list[Any]]) -> str:
    """How the pool was shut down, read from the frames that called ``_shutdown_workers``."""
    torch_frames = []
    for frame in stack:
        if not frame[3]:
            break
        torch_frames.append(frame[2].rsplit(".", 1)[-1])
    caller = next((frame for frame in stack if not frame[3]), None)
    if "__del__" in torch_frames:
        if caller is None:
            return "iterator garbage-collected"
        source = linecache.getline(caller[0], caller[1])
        return (
            "`_iterator = None`" if "_iterator" in source and "=" in source else "iterator deleted"
        )
    if "_next_data" in torch_frames or "__next__" in torch_frames:
        return "end of pass (persistent_workers=False)"
    if "_clean_up_persistent_workers_atexit" in torch_frames:
        return "interpreter exit"
    return "_shutdown_workers()" if caller is not None else "interpreter exit"


# -- patching torch ----------------------------------------------------------------------------
def patch(module: Any, recorder: Recorder) -> None:
    """Wrap the DataLoader methods that create loaders, begin passes, yield batches and start
    or shut down worker pools. Idempotent."""
    loader_class = module.DataLoader
    if getattr(loader_class, "_lintloader_traced", False):
        return
    recorder.torch_dir = os.path.dirname(os.path.dirname(os.path.dirname(module.__file__)))
    recorder.torch_dir += os.sep
    _patch_loader(loader_class, recorder)
    _patch_iterators(module._BaseDataLoaderIter, module._MultiProcessingDataLoaderIter, recorder)
    loader_class._lintloader_traced = True
    atexit.register(recorder.close_passes, "exit")


def _patch_loader(loader_class: Any, recorder: Recorder) -> None:
    original_init = loader_class.__init__
    original_iter = loader_class.__iter__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        if getattr(self, ID_ATTRIBUTE, None) is None:
            with contextlib.suppress(Exception):
                recorder.loader_created(self)

    def __iter__(self: Any) -> Any:
        opened = None
        with contextlib.suppress(Exception):  # SystemExit (--max-passes) goes through
            opened = recorder.pass_begins(self)
        iterator = original_iter(self)
        if opened is not None:
            with contextlib.suppress(Exception):
                object.__setattr__(iterator, PASS_ATTRIBUTE, opened)
        return iterator

    __init__.__wrapped__ = original_init  # type: ignore[attr-defined]
    __iter__.__wrapped__ = original_iter  # type: ignore[attr-defined]
    loader_class.__init__ = __init__
    loader_class.__iter__ = __iter__


def _patch_iterators(base_class: Any, pool_class: Any, recorder: Recorder) -> None:
    original_next = base_class.__next__
    original_pool_init = pool_class.__init__
    original_shutdown = pool_class._shutdown_workers

    def __next__(self: Any) -> Any:
        opened = self.__dict__.get(PASS_ATTRIBUTE)
        if opened is None:
            return original_next(self)
        try:
            batch = original_next(self)
        except StopIteration:
            self.__dict__[PASS_ATTRIBUTE] = None
            recorder.pass_ends(opened, "exhausted")
            raise
        recorder.batch(opened, self)
        return batch

    def pool_init(self: Any, loader: Any, *args: Any, **kwargs: Any) -> None:
        begin = time.perf_counter()
        original_pool_init(self, loader, *args, **kwargs)
        with contextlib.suppress(Exception):
            recorder.pool_started(loader, self, begin)

    def _shutdown_workers(self: Any) -> None:
        with contextlib.suppress(Exception):
            recorder.pool_shutdown(self)
        original_shutdown(self)

    base_class.__next__ = __next__
    pool_class.__init__ = pool_init
    pool_class._shutdown_workers = _shutdown_workers


class _PatchingLoader(importlib.abc.Loader):
    """Runs the real loader of ``torch.utils.data.dataloader``, then patches the module."""

    def __init__(self, loader: Any, recorder: Recorder) -> None:
        self.loader = loader
        self.recorder = recorder

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        try:
            patch(module, self.recorder)
        except Exception as exc:  # never break the user's run
            sys.stderr.write(f"lintloader trace: cannot instrument DataLoader: {exc}\n")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


class _Watcher(importlib.abc.MetaPathFinder):
    """Waits for ``torch.utils.data.dataloader`` to be imported; removes itself then."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != TARGET_MODULE:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None and spec.loader is not None:
                spec.loader = _PatchingLoader(spec.loader, self.recorder)
                return spec
        return None


def install() -> None:
    """Called by the injected ``sitecustomize``: watch for torch's DataLoader module."""
    run_dir = os.environ.get(RUN_DIR_ENV)
    if not run_dir or not os.path.isdir(run_dir):
        return
    if not trusted(run_dir):
        sys.stderr.write(f"lintloader trace: hook not installed: {run_dir} is not private\n")
        return
    limit = os.environ.get(MAX_PASSES_ENV, "")
    recorder = Recorder(run_dir, int(limit) if limit.isdigit() else None)
    loaded = sys.modules.get(TARGET_MODULE)
    if loaded is not None:
        patch(loaded, recorder)
    else:
        sys.meta_path.insert(0, _Watcher(recorder))

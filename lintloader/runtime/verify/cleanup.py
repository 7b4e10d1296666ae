"""Leave no worker process behind: on success, on failure and on Ctrl-C."""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import signal
import threading
import warnings
from collections.abc import Iterable, Iterator
from typing import Any


def shutdown_workers(loaders: Iterable[Any]) -> None:
    """Shut down the worker pools of ``loaders`` and of every other live multi-process
    DataLoader iterator in this process (an iterator a user's fetcher still holds, or one
    Lightning kept), then reap what is left of our children."""
    with sigint_ignored():
        for loader in loaders:
            _shutdown_iterator(getattr(loader, "_iterator", None))
            with contextlib.suppress(AttributeError, TypeError):
                loader._iterator = None
        for iterator in _live_multiprocessing_iterators():
            _shutdown_iterator(iterator)
        multiprocessing.active_children()  # joins finished children


def pool_pids(loader: Any) -> tuple[int, ...]:
    """PIDs of the live worker processes of ``loader``'s kept (persistent) iterator."""
    workers = getattr(getattr(loader, "_iterator", None), "_workers", None) or ()
    pids = []
    for worker in workers:
        with contextlib.suppress(Exception):
            if worker.is_alive() and worker.pid is not None:
                pids.append(int(worker.pid))
    return tuple(sorted(pids))


def leftover_children() -> list[int]:
    """PIDs of child processes still alive (should be none after :func:`shutdown_workers`)."""
    return sorted(p.pid for p in multiprocessing.active_children() if p.pid is not None)


def _shutdown_iterator(iterator: Any) -> None:
    shutdown = getattr(iterator, "_shutdown_workers", None)
    if callable(shutdown):
        with contextlib.suppress(Exception):
            shutdown()


def _live_multiprocessing_iterators() -> list[Any]:
    try:
        from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter
    except ImportError:
        return []
    with warnings.catch_warnings():  # isinstance() on some lazy torch objects warns
        warnings.simplefilter("ignore")
        return [obj for obj in gc.get_objects() if isinstance(obj, _MultiProcessingDataLoaderIter)]


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ctrl-C ignored in this process while the block runs (in the main thread; elsewhere
    signals cannot be set): a second Ctrl-C must not abort a shutdown half-way, and a traced
    command, in the same process group, receives it while this process waits to report."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)

"""Run one function over shards of work in forked child processes, results sent back as data.

A cold scan of a whole site-packages spends most of its time in two loops over files whose
bytes the parent already holds: searching them for tokens and summarizing the ones that match.
A forked child sees those bytes without copying them (copy-on-write), so a shard costs a fork
(milliseconds), not a worker start-up and a transfer of 100+ MB. Only a single-threaded process
on Linux forks here: elsewhere (and when forking fails) every shard runs in this process, with
the same results.

A child never writes to stdout or stderr and leaves with ``os._exit``, so no buffered output
and no ``atexit`` handler of the parent runs twice. A child that fails, is killed or sends
something unreadable is not trusted: its shard is run again in the parent. A child whose
parent is killed dies with it (:mod:`lintloader.workers.parent_death`); if the parent is interrupted
(Ctrl-C), the children still running are killed and reaped before it goes on.

A result comes back through a pipe as the bytes the caller's ``dump`` made of it, and ``load``
rebuilds it (the select rounds use the cache's data codec): nothing read back can run code, as
a pickle could, and a payload ``load`` refuses is a failed child like any other.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from lintloader.workers.parent_death import die_with_parent
from lintloader.workers.process_group import interrupts_held

Shard = TypeVar("Shard")
Result = TypeVar("Result")


def can_fork() -> bool:
    """Linux, and no other thread: a lock another thread holds at the fork (an import lock, a
    logging handler's) would stay locked forever in the child."""
    return sys.platform == "linux" and hasattr(os, "fork") and threading.active_count() == 1


Dump = Callable[[Any], bytes]
Load = Callable[[bytes], Any]


def map_forked(
    function: Callable[[Shard], Result], shards: Sequence[Shard], dump: Dump, load: Load
) -> list[Result]:
    """``[function(shard) for shard in shards]``, the shards after the first in children, whose
    results come back as ``dump(result)`` and are rebuilt with ``load``."""
    if len(shards) < 2 or not can_fork():
        return [function(shard) for shard in shards]
    children: list[tuple[int, int]] = []
    collected = 0
    try:
        for shard in shards[1:]:
            with interrupts_held() as mask:  # a Ctrl-C held back arrives once it is listed
                children.append(_start(function, shard, mask, dump))
        results = [function(shards[0])]
        for (pid, read_end), shard in zip(children, shards[1:], strict=True):
            result: tuple[Result] | None = _collect(pid, read_end, load)
            collected += 1
            results.append(function(shard) if result is None else result[0])
    except BaseException:  # KeyboardInterrupt above all: leave no child behind
        _stop(children[collected:])
        raise
    return results


def _stop(children: Sequence[tuple[int, int]]) -> None:
    """Kill and reap children whose results are no longer wanted (one already gone, or whose
    pipe is already closed, is skipped at that step)."""
    for pid, read_end in children:
        if pid < 0:
            continue
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.close(read_end)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _start(
    function: Callable[[Shard], Result], shard: Shard, mask: set[int | signal.Signals], dump: Dump
) -> tuple[int, int]:
    """Fork a child for ``shard``, with SIGINT held (``mask``: the mask to restore). Ctrl-C is
    the parent's to handle (it kills its children): the child ignores SIGINT before it lets
    the signal through, so that a Ctrl-C arriving while Python runs its after-fork hooks in
    the child cannot print a traceback from them."""
    parent = os.getpid()
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return -1, -1
    if pid == 0:  # the child: work, send, leave
        status = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            die_with_parent(parent)
            os.close(read_end)
            payload = dump(function(shard))
            view = memoryview(payload)
            while view:
                view = view[os.write(write_end, view) :]
            status = 0
        except BaseException:  # anything: the parent redoes the shard
            pass
        finally:
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _collect(pid: int, read_end: int, load: Load) -> tuple[Result] | None:
    """The child's result (in a 1-tuple, as None is a result too), or None if it failed."""
    if pid < 0:
        return None
    chunks = []
    try:
        while chunk := os.read(read_end, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    try:
        return (load(b"".join(chunks)),)
    except Exception:  # a truncated, corrupt or refused payload: redo the shard
        return None

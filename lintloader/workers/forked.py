"""Forked child processes that stay for a run's shards of work, asked and answered as data.

A cold scan of a whole site-packages spends most of its time in two loops over files: searching
them for tokens and summarizing the ones that match, round after round of the demand selection.
A :class:`Resident` is a child forked once (milliseconds: it sees the parent's memory without
copying it, no worker start-up) that answers each request the parent writes to it
(length-prefixed bytes, both ways) until the parent closes its end; what it read for one
request stays in its memory for the next (later rounds ask the same shard of files new tokens).
Only a single-threaded process on Linux forks here: elsewhere (and when forking fails) the
caller does the work itself, with the same results.

A child never writes to stdout or stderr and leaves with ``os._exit``, so no buffered output
and no ``atexit`` handler of the parent runs twice. A child that fails, is killed or goes
silent answers None: the caller does its work itself. A child whose parent is killed dies with
it (:mod:`lintloader.workers.parent_death`); if the parent is interrupted (Ctrl-C), the caller
kills and reaps it (:meth:`Resident.close`).

The select rounds send requests and answers as the cache's data codec: nothing read back can
run code, as a pickle could, and an answer the parent refuses is a failed child like any other.
A request may be answered in several answers, each sent as soon as it is made (``serve``
yields them): the parent reads the first ones while the child works on the next, and knows
from the answers which is the last. The child's answers go through a pipe widened to hold
them (``_ANSWER_PIPE_BYTES``), so that a child does not wait for a parent still at its own
work to read them.

A :class:`WorkQueue` shares a round's pieces of work out among the parent and its children as
each finishes one (the first to be free takes the next), so they finish together whatever
each piece costs: which files a search chooses to parse, and so what a piece costs, is only
known once it is searched. One made before the fork with :meth:`WorkQueue.refillable` is
filled again by the parent each round (the files the searches chose, to parse): its numbers,
then one stop for each process that takes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import struct
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

from lintloader.workers.parent_death import die_with_parent
from lintloader.workers.process_group import interrupts_held


def can_fork() -> bool:
    """Linux, and no other thread: a lock another thread holds at the fork (an import lock, a
    logging handler's) would stay locked forever in the child."""
    return sys.platform == "linux" and hasattr(os, "fork") and threading.active_count() == 1


_LENGTH = struct.Struct("<Q")  # the size of a request or an answer, before its bytes
_NUMBER = struct.Struct("<I")  # a piece of a WorkQueue
_PIPE_BYTES = 4096  # what a pipe holds at the least (POSIX PIPE_BUF): its numbers, written at once
_STOP = b"\xff" * _NUMBER.size  # in a refillable queue: the taker that reads it stops
# what a child's answer pipe is widened to (Linux' default for a user: /proc/sys/fs/pipe-max-size)
_ANSWER_PIPE_BYTES = 1 << 20
# a child's answer to a request: one, or several sent as each is made (see the module docstring)
Serve = Callable[[bytes], "bytes | Iterator[bytes]"]


class WorkQueue:
    """The numbers ``0..count-1``, in order, for processes forked after it is made to take one
    at a time (each number taken once, by the first to ask): a pipe written full and closed
    before the fork, each read taking one number (Linux reads a pipe under its lock, and
    :func:`can_fork` holds). None from :meth:`make` where that cannot be done: the caller
    then shares its work out another way.

    A refillable queue (:meth:`refillable`) keeps its write end in the process that made it,
    which fills it again for each batch of work (:meth:`fill`): the numbers, then a stop for
    each process that takes, each of which takes until it reads one. A process that fails in
    the middle leaves its stop behind: the queue must not be filled again then (close it)."""

    def __init__(self, descriptor: int, count: int, writer: int = -1) -> None:
        self._descriptor, self.count, self._writer = descriptor, count, writer

    @classmethod
    def make(cls, count: int) -> WorkQueue | None:
        if not _fits(count):
            return None
        queue = cls.refillable()
        if queue is None or not queue.fill(count, 0):
            return None
        queue._close_writer()
        return queue

    @classmethod
    def refillable(cls) -> WorkQueue | None:
        """An empty queue whose maker fills it (:meth:`fill`), before or after forking the
        processes that take from it."""
        if not can_fork():
            return None
        try:
            taken, given = os.pipe()
        except OSError:
            return None
        return cls(taken, 0, given)

    def fill(self, count: int, takers: int) -> bool:
        """Hand out ``0..count-1`` to ``takers`` processes (each takes until it reads its stop);
        False where it cannot be done (too many numbers for the pipe, or the queue is
        closed): nothing was written."""
        if self._writer < 0 or not _fits(count + takers):
            return False
        numbers = b"".join(map(_NUMBER.pack, range(count))) + _STOP * takers
        try:
            _write_all(self._writer, numbers)
        except OSError:
            return False
        self.count = count
        return True

    def take(self) -> int | None:
        """The next number no process took yet (None: all were taken, this process read its
        stop, or the queue is closed)."""
        try:
            data = os.read(self._descriptor, _NUMBER.size)
        except OSError:
            return None
        if len(data) != _NUMBER.size or data == _STOP:
            return None
        return int(_NUMBER.unpack(data)[0])

    def _close_writer(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._writer)
        self._writer = -1

    def close(self) -> None:
        self._close_writer()
        with contextlib.suppress(OSError):
            os.close(self._descriptor)
        self._descriptor = -1


def _fits(numbers: int) -> bool:
    """Whether a queue's numbers are written at once into an empty pipe (never blocking)."""
    return 0 < numbers * _NUMBER.size <= _PIPE_BYTES


class Resident:
    """A forked child that answers requests with ``serve(request)`` until it is closed (see
    the module docstring). A child that fails, is killed or goes silent answers None, and is
    closed: the caller does the work itself."""

    def __init__(self, pid: int, to_child: int, from_child: int) -> None:
        self.pid, self._to_child, self._from_child = pid, to_child, from_child
        self.status: int | None = None  # its wait status, once reaped (0: it did all it had to)

    @classmethod
    def start(
        cls,
        serve: Serve,
        others: Sequence[Resident | None] = (),
        first: Callable[[], None] | None = None,
    ) -> Resident | None:
        """A child serving requests with ``serve``; None if it could not be forked (or this
        process cannot fork safely, :func:`can_fork`). ``others``: the residents started
        before it, whose pipes it must not hold open (each leaves when its pipe closes).
        ``first``: what the child does before it serves (its :attr:`status` is 0 only when
        that returned, and every request was served)."""
        if not can_fork():
            return None
        parent = os.getpid()
        requests, answers = os.pipe(), os.pipe()
        _widen(answers[1])
        with interrupts_held() as mask:
            try:
                pid = os.fork()
            except OSError:
                for fd in (*requests, *answers):
                    os.close(fd)
                return None
            if pid == 0:
                status = 1
                try:
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                    die_with_parent(parent)
                    for other in others:
                        if other is not None:
                            other.forget()
                    os.close(requests[1])
                    os.close(answers[0])
                    done = _done(first)
                    _serve_forever(serve, requests[0], answers[1])
                    status = 0 if done else 1
                except BaseException:  # anything: the parent does the work itself
                    pass
                finally:
                    os._exit(status)
        os.close(requests[0])
        os.close(answers[1])
        return cls(pid, requests[1], answers[0])

    def send(self, request: bytes) -> bool:
        """Hand the child a request (False: it is gone, and now closed)."""
        if self.pid < 0 or self._to_child < 0:
            return False
        try:
            _write_all(self._to_child, _LENGTH.pack(len(request)) + request)
        except OSError:
            self.close()
            return False
        return True

    def answer(self) -> bytes | None:
        """The child's answer to the request sent last, or its next one (None: it failed, and
        is now closed)."""
        if self.pid < 0 or self._from_child < 0:
            return None
        head = _read_exactly(self._from_child, _LENGTH.size)
        found = _read_exactly(self._from_child, _LENGTH.unpack(head)[0]) if head else None
        if found is None:
            self.close()
        return found

    def ready(self) -> bool:
        """Whether an answer has begun to come (or the child is gone): :meth:`answer` does not
        wait for the child's work."""
        if self.pid < 0 or self._from_child < 0:
            return False
        poller = select.poll()  # (not select.select: a descriptor past 1023 is no error)
        poller.register(self._from_child, select.POLLIN)
        return bool(poller.poll(0))

    def forget(self) -> None:
        """Close this process's ends of the pipes, leaving the child alone (in a sibling)."""
        self.let_go()
        self.pid = -1

    def let_go(self) -> None:
        """Close this process's ends of the pipes: the child leaves (its requests end) while
        this process goes on; :meth:`close` reaps it."""
        for fd in (self._to_child, self._from_child):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._to_child = self._from_child = -1

    def close(self, kill: bool = False) -> None:
        """Let the child go (it leaves when its requests end; ``kill``: now, mid-request, as
        after a Ctrl-C) and reap it."""
        if self.pid < 0:
            return
        pid, self.pid = self.pid, -1
        if kill:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.let_go()
        with contextlib.suppress(ChildProcessError):
            self.status = os.waitpid(pid, 0)[1]


def _done(work: Callable[[], None] | None) -> bool:
    """Do ``work`` (in a child): whether it returned (one that raised leaves it to the
    parent, and the child serves all the same)."""
    try:
        if work is not None:
            work()
    except Exception:
        return False
    return True


def _serve_forever(serve: Serve, requests: int, answers: int) -> None:
    """The resident child's loop: a request in, ``serve``'s answer (or each of its answers,
    as it is made) out, until the parent closes its end."""
    while True:
        head = _read_exactly(requests, _LENGTH.size)
        if not head:
            return
        request = _read_exactly(requests, _LENGTH.unpack(head)[0])
        if request is None:
            return
        answered = serve(request)
        for answer in [answered] if isinstance(answered, bytes) else answered:
            _write_all(answers, _LENGTH.pack(len(answer)) + answer)


def _widen(fd: int) -> None:
    """Let the pipe of ``fd`` hold :data:`_ANSWER_PIPE_BYTES` (where Linux allows it; else
    it keeps its size, and a writer waits for the reader sooner)."""
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _ANSWER_PIPE_BYTES)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytes | None:
    """``size`` bytes from ``fd`` (b"" when the other end closed before the first byte, None
    when it closed before the last)."""
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return b"" if left == size else None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)

"""Which files git does not ignore, asked while the tree walk goes on.

git keeps a walked file when it tracks it, or when it does not track it and does not ignore
it. The two halves cost very differently: the tracked files come from the index (``git
ls-files --cached``, about 8 ms in a 5,400-file project), the untracked ones that are not
ignored from a walk of the whole tree with every ignore rule (``--others --exclude-standard``,
about 35 ms). So the first is asked at once, and its answer comes while the tree is walked; the
second only when the walk meets a file git does not track, and the walk waits for it then. Most
trees have none (a commit stages its new files): asked as every walk began, it ran beside the
walk on the same cores, and its start, kill and join cost the parent ~0.01 s (round 14,
docs/performance.md).

Each answer's output is drained by a thread (it can be larger than a pipe holds). Each git runs
in a process group of its own, killed when its answer is in, on a timeout, or when the walk is
interrupted or abandoned.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Iterable, Sequence

from lintloader.scan.model import NOTEBOOK_SUFFIX
from lintloader.workers.process_group import interrupts_held, kill_group, start_grouped

TIMEOUT_S = 60.0
# A wildcard matches across '/' in a git pathspec: every .py file and notebook below the
# directory. Only those are asked for: a project's other files (data, docs) are most of what
# git would list, and the walk looks up no other name.
PATHSPECS = ("*.py", f"*{NOTEBOOK_SUFFIX}")


# A scanned tree's git metadata (its .git/config, or the tree itself laid out as a git
# directory) is not the user's: nothing in it may run a program. These settings, given on the
# command line, override the repository's own (the user's global and system configuration keep
# the trust git gives them). ``core.fsmonitor`` is the one key ``ls-files`` runs a program from
# (empty: off, in every git version, where ``false`` would name a program before git 2.36); a
# tree laid out as a git directory is never discovered as a bare repository; no transport (a
# partial clone's lazy fetch, with ``core.sshCommand``) may start; and no pager.
HARDENED = (
    "--no-pager",
    "-c",
    "core.fsmonitor=",
    "-c",
    "safe.bareRepository=explicit",
    "-c",
    "protocol.allow=never",
    "-c",
    "core.pager=cat",
)


def git_argv(*args: str) -> list[str]:
    """The argv of ``git ARGS`` run on a scanned tree, with :data:`HARDENED`: every git
    lintloader runs is built here."""
    return ["git", *HARDENED, *args]


TRACKED = ("ls-files", "-z", "--cached", "--")
UNTRACKED = ("ls-files", "-z", "--others", "--exclude-standard", "--")


class _Ask:
    """One ``git ls-files`` below a directory, running until :meth:`output` or :meth:`close`."""

    def __init__(self, argv: Sequence[str], directory: str) -> None:
        self._output: tuple[bytes, bytes] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        try:
            self._process = start_grouped(git_argv(*argv, *PATHSPECS), cwd=directory)
        except OSError:  # no git
            return
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self._process is not None
        try:
            self._output = self._process.communicate()
        except (OSError, ValueError):  # killed while reading
            self._output = None

    @property
    def ready(self) -> bool:
        return self._process is None or not self._reader.is_alive()

    def output(self) -> bytes | None:
        """What git printed, or None outside git (or if git failed)."""
        if self._process is None:
            return None
        self._reader.join(TIMEOUT_S)
        self.close()
        if self._output is None or self._process.returncode != 0:
            return None
        return self._output[0]

    def close(self) -> None:
        """Kill git's process group (whatever git left behind goes with it) and wait for the
        thread that drains its output, which ends with git's pipes."""
        if self._process is None:
            return
        kill_group(self._process)
        self._reader.join(TIMEOUT_S)


class GitAnswer:
    """Which walked files git keeps: the tracked ones, and the untracked ones it does not
    ignore (asked for only when a file is not tracked)."""

    def __init__(self, tracked: bytes, root: str, untracked: Callable[[], _Ask]) -> None:
        self.tracked_output = tracked
        self._root = root
        self._tracked = _paths(root, tracked)
        self._ask = untracked  # the second ask, started if it was not yet
        self._untracked: set[str] | None = None
        self.untracked_read = False  # whether keeps() had to wait for the second answer
        self._failed = False  # the second git failed: keep what it would have decided

    def tracks(self, path: str) -> bool:
        return path in self._tracked

    def tracks_all(self, paths: Iterable[str]) -> bool:
        """Whether git tracks every one of ``paths`` (then it keeps them all)."""
        return self._tracked.issuperset(paths)

    def keeps(self, path: str) -> bool:
        if path in self._tracked:
            return True
        if self._untracked is None:
            self.untracked_read = True
            ask = self._ask()
            output = ask.output()
            self._untracked = set() if output is None else _paths(self._root, output)
            self._failed = output is None  # as a walk outside git: keep the file
        return self._failed or path in self._untracked


def _paths(root: str, output: bytes) -> set[str]:
    """The paths git printed, below ``root`` (a normalized absolute path ending in a slash)."""
    names = output.decode("utf-8", "surrogateescape").split("\0")
    # git lists normalized paths relative to the directory: joined, they stay normalized
    return {root + name for name in names if name}


class GitFiles:
    """``git ls-files`` below one directory, as a context: the tracked files asked on entry,
    the untracked ones when a walked file is not tracked (see the module docstring); both
    stopped on exit.
    Each git is started and recorded with Ctrl-C held, so an interrupt cannot leave one
    running unrecorded."""

    def __init__(self, directory: str) -> None:
        self._directory = directory
        self._root = os.path.abspath(directory).rstrip(os.sep) + os.sep
        self._tracked: _Ask | None = None  # started on entry
        self._untracked: _Ask | None = None  # started by start_untracked(), if at all
        self._asked = False
        self._answer: GitAnswer | None = None

    def __enter__(self) -> GitFiles:
        try:
            with interrupts_held():
                self._tracked = _Ask(TRACKED, self._directory)
        except BaseException:  # a Ctrl-C let through as the block ends
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start_untracked(self) -> _Ask:
        """Start asking for the untracked files git does not ignore (once): when the walk
        meets a file git does not track (:meth:`GitAnswer.keeps`)."""
        if self._untracked is None:
            with interrupts_held():
                self._untracked = _Ask(UNTRACKED, self._directory)
        return self._untracked

    @property
    def ready(self) -> bool:
        """Whether the answer about tracked files is in (or there will be none)."""
        return self._tracked is None or self._tracked.ready

    def result(self) -> GitAnswer | None:
        """Which files git keeps, or None outside git (or if git failed); worked out once."""
        if not self._asked and self._tracked is not None:
            self._asked = True
            output = self._tracked.output()
            if output is not None:
                self._answer = GitAnswer(output, self._root, self.start_untracked)
        return self._answer

    def close(self) -> None:
        """Stop both asks (the second, unread when every walked file was tracked)."""
        for ask in (self._tracked, self._untracked):
            if ask is not None:
                ask.close()

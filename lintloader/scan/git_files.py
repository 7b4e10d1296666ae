"""Which files git does not ignore, asked while the tree walk goes on.

git keeps a walked file when it tracks it, or when it does not track it and does not ignore
it. The two halves cost very differently: the tracked files come from the index (``git
ls-files --cached``, about 8 ms in a 5,400-file project), the untracked ones that are not
ignored from a walk of the whole tree with every ignore rule (``--others --exclude-standard``,
about 35 ms). So both are asked at once, beside the walk, and the walk waits for the second
only when it meets a file git does not track (most trees have none: a commit stages its new
files); otherwise the second is killed unread.

Each answer's output is drained by a thread (it can be larger than a pipe holds). Each git runs
in a process group of its own, killed when its answer is in, on a timeout, or when the walk is
interrupted or abandoned.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Sequence

from lintloader.scan.model import NOTEBOOK_SUFFIX
from lintloader.scan.process_group import kill_group, start_grouped

TIMEOUT_S = 60.0
# A wildcard matches across '/' in a git pathspec: every .py file and notebook below the
# directory. Only those are asked for: a project's other files (data, docs) are most of what
# git would list, and the walk looks up no other name.
PATHSPECS = ("*.py", f"*{NOTEBOOK_SUFFIX}")
TRACKED = ("git", "ls-files", "-z", "--cached", "--")
UNTRACKED = ("git", "ls-files", "-z", "--others", "--exclude-standard", "--")


class _Ask:
    """One ``git ls-files`` below a directory, running until :meth:`paths` or :meth:`close`."""

    def __init__(self, argv: Sequence[str], directory: str, root: str) -> None:
        self._root = root
        self._output: tuple[bytes, bytes] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        try:
            self._process = start_grouped([*argv, *PATHSPECS], cwd=directory)
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

    def paths(self, output: bytes) -> set[str]:
        names = output.decode("utf-8", "surrogateescape").split("\0")
        # git lists normalized paths relative to the directory: joined, they stay normalized
        return {self._root + name for name in names if name}

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

    def __init__(self, tracked: bytes, ask: _Ask, untracked: _Ask) -> None:
        self.tracked_output = tracked
        self._tracked = ask.paths(tracked)
        self._ask = untracked
        self._untracked: set[str] | None = None
        self.untracked_read = False  # whether keeps() had to wait for the second answer
        self._failed = False  # the second git failed: keep what it would have decided

    def tracks(self, path: str) -> bool:
        return path in self._tracked

    def keeps(self, path: str) -> bool:
        if path in self._tracked:
            return True
        if self._untracked is None:
            self.untracked_read = True
            output = self._ask.output()
            self._untracked = set() if output is None else self._ask.paths(output)
            self._failed = output is None  # as a walk outside git: keep the file
        return self._failed or path in self._untracked


class GitFiles:
    """``git ls-files`` below one directory, started at once: see the module docstring."""

    def __init__(self, directory: str) -> None:
        root = os.path.abspath(directory).rstrip(os.sep) + os.sep
        self._tracked = _Ask(TRACKED, directory, root)
        self._untracked = _Ask(UNTRACKED, directory, root)

    @property
    def ready(self) -> bool:
        """Whether the answer about tracked files is in (or there will be none)."""
        return self._tracked.ready

    def result(self) -> GitAnswer | None:
        """Which files git keeps, or None outside git (or if git failed)."""
        output = self._tracked.output()
        if output is None:
            self._untracked.close()
            return None
        return GitAnswer(output, self._tracked, self._untracked)

    def close(self) -> None:
        """Stop both asks (the second, unread when every walked file was tracked)."""
        self._tracked.close()
        self._untracked.close()

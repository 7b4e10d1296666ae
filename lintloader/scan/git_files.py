"""Which files git does not ignore, asked while the tree walk goes on.

``git ls-files`` takes about as long as a warm walk of the same project (each ~35 ms in a
5,400-file project), so it runs beside the walk: it is started first, a thread drains its
output (which can be larger than a pipe holds), and the walk asks for the answer only when it
must filter a directory's files. git runs in a process group of its own, killed when the answer
is in, on a timeout, or when the walk is interrupted or abandoned.
"""

from __future__ import annotations

import os
import subprocess
import threading

from lintloader.scan.model import NOTEBOOK_SUFFIX
from lintloader.scan.process_group import kill_group, start_grouped

TIMEOUT_S = 60.0
# A wildcard matches across '/' in a git pathspec: every .py file and notebook below the
# directory. Only those are asked for: a project's other files (data, docs) are most of what
# git would list, and the walk looks up no other name.
PATHSPECS = ("*.py", f"*{NOTEBOOK_SUFFIX}")


class GitFiles:
    """``git ls-files --cached --others --exclude-standard`` below one directory."""

    def __init__(self, directory: str) -> None:
        self._root = os.path.abspath(directory).rstrip(os.sep) + os.sep
        self._output: tuple[bytes, bytes] | None = None
        self.answer: bytes | None = None  # git's output, once result() has it
        self._process: subprocess.Popen[bytes] | None = None
        argv = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--"]
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
        """Whether the answer is in (or there will be none)."""
        return self._process is None or not self._reader.is_alive()

    def result(self) -> set[str] | None:
        """The normalized absolute paths git lists, or None outside git (or if git failed)."""
        if self._process is None:
            return None
        self._reader.join(TIMEOUT_S)
        self.close()
        if self._output is None or self._process.returncode != 0:
            return None
        self.answer = self._output[0]
        names = self.answer.decode("utf-8", "surrogateescape").split("\0")
        # git lists normalized paths relative to the directory: joined, they stay normalized
        return {self._root + name for name in names if name}

    def close(self) -> None:
        """Kill git's process group (whatever git left behind goes with it) and wait for the
        thread that drains its output, which ends with git's pipes."""
        if self._process is None:
            return
        kill_group(self._process)
        self._reader.join(TIMEOUT_S)

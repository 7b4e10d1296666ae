"""Where a fix note points: ``path:line``, or ``train.ipynb:cell N:L`` in a notebook (the fix
works on the notebook's code cells as one Python source, whose line numbers no user sees)."""

from __future__ import annotations

from collections.abc import Mapping

from lintloader.scan.model import NOTEBOOK_SUFFIX


class FixPlaces:
    """``place(display, line)`` for the notes of one fix run."""

    def __init__(self, originals: Mapping[str, bytes], displays: Mapping[str, str]) -> None:
        self._originals = originals  # path -> the analysed source (a notebook's Python)
        self._paths = {display: path for path, display in displays.items()}
        self._lines: dict[str, list[str]] = {}

    def __call__(self, display: str, line: int) -> str:
        path = self._paths.get(display, display)
        if not path.endswith(NOTEBOOK_SUFFIX) or path not in self._originals:
            return f"{display}:{line}"
        from lintloader.scan.read.notebooks import location

        if path not in self._lines:
            self._lines[path] = self._originals[path].decode("utf-8", "replace").splitlines()
        where = location(self._lines[path], line)
        return f"{display}:{line}" if where is None else f"{display}:cell {where.cell}:{where.line}"

"""Jupyter notebooks: their code cells as one Python source, and back.

Training loops often live in notebooks. A notebook is read (with ``nbformat``, the optional
``notebooks`` extra, else as the JSON of format 4 with the standard library: the same cells
and sources) into one Python source: each code cell after a marker line
``# %% lintloader cell N`` (N: the cell's position in the notebook, 1-based), so positions map
back to ``train.ipynb:cell N:line:column``. As ruff does, IPython syntax is skipped: a cell that
starts with a cell magic (``%%bash``) is left out, and a line magic, shell escape or help line
(``%time``, ``!pip``, ``x?``) becomes ``pass`` with a token that restores it on the way back.

A fix edits that Python source (with libcst, like any file); :func:`python_to_notebook` puts
each cell's new source back into the notebook and leaves outputs and metadata untouched.
"""

from __future__ import annotations

import errno
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from types import ModuleType
from typing import TYPE_CHECKING, Any

from lintloader.scan.model import NOTEBOOK_SUFFIX
from lintloader.scan.read.notebook_json import source_json, source_spans

if TYPE_CHECKING:
    from lintloader.finding.findings import Finding, Hop
    from lintloader.scan.model import SourceFile

MARKER = "# %% lintloader cell "
_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?P<magic>[%!].*|[\w.]+\?{1,2}\s*)$")
_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)pass  # lintloader-magic (?P<index>\d+)$")
_MARKER_LINE = re.compile(r"^# %% lintloader cell (?P<cell>\d+)$")
_LINE_IN_MESSAGE = re.compile(r"\((detected at |)line (\d+)\)")  # a rule's, a syntax error's


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


class NotebookError(OSError):
    """A notebook that cannot be read or written back (reported like an unreadable file)."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EINVAL, message)


@dataclass(frozen=True)
class Location:
    cell: int  # 1-based position of the cell in the notebook
    line: int  # 1-based line in the cell


@dataclass(frozen=True)
class Notebook:
    """What is read of a notebook: its cells (each the JSON object of one)."""

    cells: list[dict[str, Any]]


def _nbformat() -> ModuleType | None:
    """The nbformat module, None without the ``notebooks`` extra."""
    try:
        import nbformat
    except ImportError:
        return None
    return nbformat


def _read(data: bytes) -> Notebook:
    nbformat = _nbformat()
    try:
        text = data.decode("utf-8")
        if nbformat is None:
            return _cells(json.loads(text))
        return _cells(nbformat.reads(text, as_version=nbformat.NO_CONVERT))
    except NotebookError:
        raise
    except Exception as exc:  # nbformat raises JSON, validation and version errors alike
        raise NotebookError(
            f"not a readable notebook: {' '.join(str(exc).split())[:200]}"
        ) from None


def _cells(notebook: object) -> Notebook:
    """The cells of a notebook of format 4 (its JSON, or nbformat's reading of it: a dict)."""
    if not isinstance(notebook, dict) or notebook.get("nbformat") != 4:
        found = notebook.get("nbformat") if isinstance(notebook, dict) else None
        raise NotebookError(f"not a readable notebook: format {found!r} (lintloader reads 4)")
    cells = notebook.get("cells")
    if not isinstance(cells, list) or not all(_is_cell(cell) for cell in cells):
        raise NotebookError("not a readable notebook: its cells are not a list of cells")
    return Notebook(cells)


def _is_cell(cell: object) -> bool:
    if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
        return False
    source = cell.get("source", "")
    return isinstance(source, str) or (
        isinstance(source, list) and all(isinstance(line, str) for line in source)
    )


def notebook_to_python(data: bytes) -> bytes:
    """The code cells of a notebook as one Python source (see the module's docstring)."""
    notebook = _read(data)
    parts: list[str] = []
    magics = 0
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", ""))
        if source.lstrip().startswith("%%"):
            continue  # a cell magic: the cell is not Python
        lines = []
        for line in source.splitlines():
            match = _MAGIC.match(line)
            if match and _is_magic(match.group("magic")):
                lines.append(f"{match.group('indent')}pass  # lintloader-magic {magics}")
                magics += 1
            else:
                lines.append(line)
        parts.append(MARKER + str(number))
        parts.extend(lines)
    return ("\n".join(parts) + "\n").encode("utf-8") if parts else b""


def _is_magic(text: str) -> bool:
    """``%time``, ``!pip``, ``obj?``: matched by ``_MAGIC``; ``!=`` starts no shell escape."""
    return not text.startswith("!=")


def location(python: Sequence[str], line: int) -> Location | None:
    """Where line ``line`` of the notebook's Python source (its lines: ``python``) is."""
    for index in range(min(line, len(python)) - 1, -1, -1):
        match = _MARKER_LINE.match(python[index].rstrip("\r\n"))
        if match:
            return Location(int(match.group("cell")), line - index - 1)
    return None


def in_cells(
    findings: Sequence[Finding],
    files: Iterable[SourceFile],
    read: Callable[[str], bytes | None],
) -> list[Finding]:
    """Findings (and their chains) in notebooks located by cell, for reports: ``line`` becomes
    the line in the cell, ``cell`` the cell (``read``: a notebook's Python source). Fixers keep
    working on the unconverted findings. Other findings are returned as they are."""
    notebooks = {f.display: f.path for f in files if is_notebook(f.path)}
    if not notebooks:
        return list(findings)
    lines: dict[str, list[str]] = {}

    def python_lines(display: str) -> list[str] | None:
        if display not in notebooks:
            return None
        if display not in lines:
            python = read(notebooks[display]) or b""
            lines[display] = python.decode("utf-8", "replace").splitlines()
        return lines[display]

    return [_finding_in_cells(finding, python_lines) for finding in findings]


def _finding_in_cells(finding: Finding, python_lines: Callable[[str], list[str] | None]) -> Finding:
    chain = tuple(_hop_in_cells(hop, python_lines) for hop in finding.chain)
    also = tuple(_hop_in_cells(hop, python_lines) for hop in finding.also)
    python = python_lines(finding.path)
    where = location(python, finding.line) if python is not None else None
    if python is None or where is None:
        return replace(finding, chain=chain, also=also)
    end_line = where.line + max(0, finding.end_line - finding.line) if finding.end_line else 0
    message = _LINE_IN_MESSAGE.sub(
        lambda m: _cell_line(python, int(m.group(2)), m.group(1)), finding.message
    )
    return replace(
        finding,
        cell=where.cell,
        line=where.line,
        end_line=end_line,
        message=message,
        chain=chain,
        also=also,
    )


def _cell_line(python: Sequence[str], line: int, prefix: str = "") -> str:
    """``(line 7)`` of a message, as ``(cell 4, line 2)`` (``prefix``: ``detected at``)."""
    where = location(python, line)
    if where is None:
        return f"({prefix}line {line})"
    return f"({prefix}cell {where.cell}, line {where.line})"


def _hop_in_cells(hop: Hop, python_lines: Callable[[str], list[str] | None]) -> Hop:
    python = python_lines(hop.path)
    where = location(python, hop.line) if python is not None else None
    return hop if where is None else replace(hop, cell=where.cell, line=where.line)


def python_to_notebook(original: bytes, python: bytes) -> bytes:
    """``original`` (the notebook's bytes) with each code cell's source replaced by its part of
    ``python`` (the edited Python source), magics restored. Only the ``source`` of a cell whose
    lines changed is rewritten (in the style of the old one, with its line endings); every
    other byte stays as it was. The result must validate and read back as ``original`` with
    just those sources changed; else :class:`NotebookError`."""
    notebook = _read(original)
    text = original.decode("utf-8")
    magic_lines = _magic_lines(notebook)
    try:
        spans = source_spans(text)
    except (ValueError, IndexError) as exc:
        raise NotebookError(f"the notebook's cells cannot be mapped ({exc})") from None
    if len(spans) != len(notebook.cells):
        raise NotebookError("the notebook's cells cannot be mapped")
    edits: dict[int, str] = {}
    for number, lines in _split_cells(python.decode("utf-8"), len(notebook.cells)).items():
        cell = notebook.cells[number - 1]
        if cell.get("cell_type") != "code":
            raise NotebookError(f"cell {number} is not a code cell; not written")
        restored = [_restore(line, magic_lines) for line in lines]
        old = "".join(cell.get("source", ""))
        if old.splitlines() != restored:
            newline = "\r\n" if "\r\n" in old else "\n"
            edits[number - 1] = newline.join(restored) + (newline if old.endswith("\n") else "")
    for index in sorted(edits, reverse=True):
        span = spans[index]
        if span is None:
            raise NotebookError(f"cell {index + 1} has no source to edit")
        column = span.start - (text.rfind("\n", 0, span.start) + 1)
        value = source_json(text[span.start : span.end], edits[index], column)
        text = text[: span.start] + value + text[span.end :]
    _check_written(original, text, edits)
    return text.encode("utf-8")


def _check_written(original: bytes, text: str, edits: dict[int, str]) -> None:
    """The edited notebook validates (with nbformat where it is installed, else reads back as
    format 4) and holds what ``original`` held but ``edits``."""
    import warnings

    nbformat = _nbformat()
    expected = json.loads(original)
    for index, source in edits.items():
        expected["cells"][index]["source"] = source
    try:
        if _joined(json.loads(text)) != _joined(expected):
            raise ValueError("it would not read back as written")
        if nbformat is None:
            _cells(json.loads(text))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                nbformat.validate(nbformat.reads(text, as_version=nbformat.NO_CONVERT))
    except Exception as exc:  # nbformat's ValidationError and friends: not its own base class
        lines = str(exc).strip().splitlines()
        first = " ".join(lines[0].split())[:200] if lines else type(exc).__name__
        raise NotebookError(f"not a valid notebook ({first})") from None


def _joined(notebook: dict[str, Any]) -> dict[str, Any]:
    """``notebook`` (its JSON) with each cell's source as one string, as nbformat reads it."""
    for cell in notebook["cells"]:
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
    return notebook


def _magic_lines(notebook: Notebook) -> list[str]:
    """The magic lines in the order :func:`notebook_to_python` numbered them."""
    found = []
    for cell in notebook.cells:
        source = "".join(cell.get("source", ""))
        if cell.get("cell_type") != "code" or source.lstrip().startswith("%%"):
            continue
        for line in source.splitlines():
            match = _MAGIC.match(line)
            if match and _is_magic(match.group("magic")):
                found.append(match.group("magic"))
    return found


def changed_cells(old: bytes, new: bytes) -> list[tuple[int, list[str], list[str]]]:
    """The cells whose lines differ between two Python forms of one notebook (see the
    module's docstring): (cell number, old lines, new lines), in the notebook's order."""
    before = _split_cells(old.decode("utf-8"), None)
    after = _split_cells(new.decode("utf-8"), None)
    return [
        (number, before.get(number, []), after.get(number, []))
        for number in sorted({*before, *after})
        if before.get(number) != after.get(number)
    ]


def _split_cells(python: str, cell_count: int | None) -> dict[int, list[str]]:
    cells: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in python.splitlines():
        match = _MARKER_LINE.match(line)
        if match:
            number = int(match.group("cell"))
            if number in cells or not 1 <= number <= (cell_count or number):
                raise NotebookError(f"cell marker {number} repeated or unknown; not written")
            current = cells[number] = []
        elif current is None:
            if line.strip():
                raise NotebookError("code before the first cell marker; not written")
        else:
            current.append(line)
    return cells


def _restore(line: str, magic_lines: list[str]) -> str:
    match = _PLACEHOLDER.match(line)
    if match is None:
        return line
    index = int(match.group("index"))
    if index >= len(magic_lines):
        raise NotebookError("a magic line's placeholder is unknown; not written")
    return match.group("indent") + magic_lines[index]

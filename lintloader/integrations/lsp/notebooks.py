"""Notebooks in the editor: what the analysis reads of an open notebook, and where a finding in
its code is shown.

A client that syncs notebooks (``notebookDocument/didOpen`` ...; VS Code does) sends a notebook
as its cells, each a text document of its own. The analysis reads a notebook file
(``scan/read/notebooks.py`` turns its code cells into one Python source, a marker line before each),
so the open notebook goes in as the file it would be saved as: its cells' kinds and texts in
order. A finding's line in that Python source is a line of a cell (``scan/read/notebooks.py``'s
``location``), shown in that cell's document. A notebook that is not open as cells (closed, or
opened as a plain text document, its JSON) shows the finding in that JSON text, on the line of
the cell's ``source`` that holds it
(``scan/read/notebook_json.py`` finds where each cell's source is).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from lsprotocol import types

from lintloader.scan.read.notebook_json import Span, source_spans
from lintloader.scan.read.notebooks import NotebookError, location, notebook_to_python

SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            cells=[types.NotebookCellLanguage(language="python")], notebook="*"
        )
    ],
    save=True,
)
TextOf = Callable[[str], "str | None"]  # a cell document's URI -> its text


def notebook_json(notebook: types.NotebookDocument, text_of: TextOf) -> bytes:
    """The notebook as the editor has it, as a notebook file (nbformat 4) holds it: its cells'
    kinds and sources, in order (no outputs or metadata: the analysis reads neither)."""
    cells: list[dict[str, object]] = []
    for cell in notebook.cells:
        source = text_of(cell.document) or ""
        if cell.kind == types.NotebookCellKind.Code:
            cells.append(
                {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                 "source": source}
            )  # fmt: skip
        else:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": source})
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    return json.dumps(document, indent=1).encode("utf-8")


def notebook_code(data: bytes) -> bytes | None:
    """A notebook's code cells as the analysis reads them (``scan/read/notebooks.py``): what goes
    to the engine for an open notebook; None when ``data`` is not a readable notebook."""
    try:
        return notebook_to_python(data)
    except NotebookError:
        return None


class NotebookView:
    """Where the lines of a notebook's Python source (``python``, its code cells as the
    analysis read them) are shown: in the cell
    documents ``cells`` (URIs, in notebook order) when it is open as a notebook, else in its
    JSON ``text``, the document at ``path``."""

    def __init__(
        self, path: str, python: Sequence[str], cells: Sequence[str] | None, text: str
    ) -> None:
        self.path, self.python, self.cells, self.text = path, python, cells, text
        self._spans: list[Span | None] | None = None

    def place(self, line: int, column: int) -> tuple[str, int, int]:
        """(document, line, column) of a 1-based place in the Python source."""
        where = location(self.python, line)
        if where is None:
            return self.path, 1, 1
        if self.cells is not None:
            if where.cell > len(self.cells):
                return self.path, 1, 1
            return self.cells[where.cell - 1], where.line, column
        return (self.path, *self._json_point(where.cell, where.line, column))

    def _json_point(self, cell: int, line: int, column: int) -> tuple[int, int]:
        if self._spans is None:
            try:
                self._spans = source_spans(self.text)
            except (ValueError, IndexError):
                self._spans = []
        span = self._spans[cell - 1] if cell <= len(self._spans) else None
        if span is None:
            return 1, 1
        offset = source_offset(self.text, span, line, column)
        before = self.text[:offset]
        return before.count("\n") + 1, offset - before.rfind("\n")


def source_offset(text: str, span: Span, line: int, column: int) -> int:
    """Where, in a notebook's JSON ``text``, the character at 1-based (``line``, ``column``)
    of the cell source at ``span`` (one string, or a list of them) is written; the end of its
    line when the column is past it, the start of the source when the line is."""
    at_line, at_column, index, inside = 1, 1, span.start, False
    found = span.start
    while index < span.end:
        char = text[index]
        if char == '"':  # an escaped one is stepped over with its backslash, below
            inside = not inside
            index += 1
            continue
        if not inside:
            index += 1
            continue
        if (at_line, at_column) == (line, column):
            return index
        width = 1 if char != "\\" else 6 if text[index + 1] == "u" else 2
        if char == "\\" and text[index + 1] == "n":
            if at_line == line:
                return index
            at_line, at_column = at_line + 1, 1
        else:
            at_column += 1
        index += width
        found = index if at_line == line else found
    return found

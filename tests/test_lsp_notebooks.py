"""Notebooks through ``lintloader server`` and a real LSP client (pytest-lsp): synced as cells
(``notebookDocument/didOpen``), the diagnostics are in the cells ``lintloader check`` names,
at the same lines and columns, pushed and pulled, and an unsaved edit of a cell counts; a
notebook opened as a plain text document shows them on its JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsp_support import (
    answer,
    capabilities,
    codes,
    lsp_session,
    open_document,
    types,
    until,
)
from test_notebooks import notebook

pytestmark = pytest.mark.asyncio


def _client_capabilities(pull: bool) -> types.ClientCapabilities:
    found = capabilities(pull)
    found.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()
    )
    return found


def _cells(path: Path) -> list[tuple[str, types.NotebookCellKind, str]]:
    """(URI, kind, text) of each cell, as VS Code sends a notebook."""
    document = json.loads(path.read_text(encoding="utf-8"))
    cell_uri = path.as_uri().replace("file:", "vscode-notebook-cell:", 1)
    kinds = {"code": types.NotebookCellKind.Code, "markdown": types.NotebookCellKind.Markup}
    return [
        (f"{cell_uri}#cell{n}", kinds[cell["cell_type"]], "".join(cell["source"]))
        for n, cell in enumerate(document["cells"], start=1)
    ]


def _open_notebook(client, path: Path, cells) -> None:
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=path.as_uri(),
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=kind, document=uri) for uri, kind, _ in cells],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
                for uri, _, text in cells
            ],
        )
    )


def _edit_cell(client, path: Path, cell_uri: str, text: str) -> None:
    """Replace a cell's whole text (an unsaved edit)."""
    change = types.NotebookDocumentCellContentChanges(
        document=types.VersionedTextDocumentIdentifier(uri=cell_uri, version=2),
        changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
    )
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(
                uri=path.as_uri(), version=2
            ),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(text_content=[change])
            ),
        )
    )


def _checked(cli, root: Path) -> list[tuple[str, int, int, int]]:
    """(code, cell, line, column) of what ``lintloader check`` reports in the notebook."""
    printed = cli("check", "--output-format", "json", ".", cwd=root).stdout
    return [(f["code"], f["cell"], f["line"], f["column"]) for f in json.loads(printed)]


def _placed(cells, diagnostics: dict[str, list[types.Diagnostic]]) -> list[tuple]:
    """The same, from diagnostics by cell URI."""
    numbers = {uri: n for n, (uri, _, _) in enumerate(cells, start=1)}
    return sorted(
        (str(d.code), numbers[uri], d.range.start.line + 1, d.range.start.character + 1)
        for uri, found in diagnostics.items()
        for d in found
    )


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "nb"\n', encoding="utf-8")
    notebook(root / "train.ipynb")
    return root


async def test_a_notebook_synced_as_cells_is_diagnosed_in_its_cells(tmp_path, cli):
    root = _project(tmp_path)
    path = root / "train.ipynb"
    cells = _cells(path)
    expected = _checked(cli, root)
    assert sorted(expected) == [("LL201", 5, 1, 9), ("LL202", 4, 3, 14)]
    async with lsp_session(root, tmp_path / "cache", caps=_client_capabilities(False)) as client:
        _open_notebook(client, path, cells)
        fifth = cells[4][0]
        await until(lambda: codes(client, fifth) == ["LL201"], "LL201 in the fifth cell")
        pushed = {uri: list(client.diagnostics.get(uri, ())) for uri, _, _ in cells}
        # an unsaved edit of the fifth cell fixes it: its diagnostic goes, the fourth's stays
        _edit_cell(client, path, fifth, cells[4][2].replace("persistent_workers=True", ""))
        await until(lambda: codes(client, fifth) == [], "the fifth cell cleared")
        fourth = codes(client, cells[3][0])
    assert _placed(cells, pushed) == sorted(expected)
    assert fourth == ["LL202"]
    # the chain of the LL202: the loop line and the loader's, in their cell
    [ll202] = pushed[cells[3][0]]
    related = [(r.location.uri, r.location.range.start.line) for r in ll202.related_information]
    assert related == [(cells[3][0], 1), (cells[3][0], 2)]


async def test_pulled_diagnostics_of_a_cell(tmp_path, cli):
    root = _project(tmp_path)
    path = root / "train.ipynb"
    cells = _cells(path)
    async with lsp_session(root, tmp_path / "cache", caps=_client_capabilities(True)) as client:
        _open_notebook(client, path, cells)
        pulled = {}
        for uri, _, _ in cells:
            report = await answer(
                client.text_document_diagnostic_async(
                    types.DocumentDiagnosticParams(
                        text_document=types.TextDocumentIdentifier(uri=uri)
                    )
                )
            )
            pulled[uri] = list(report.items)
    assert _placed(cells, pulled) == sorted(_checked(cli, root))


async def test_a_notebook_opened_as_text_shows_them_on_its_json_lines(tmp_path):
    root = _project(tmp_path)
    path = root / "train.ipynb"
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, path)
        await until(lambda: len(codes(client, path.as_uri())) == 2, "two diagnostics")
        found = {str(d.code): d.range.start for d in client.diagnostics[path.as_uri()]}
    lines = path.read_text(encoding="utf-8").splitlines()
    loop = found["LL202"]  # cell 4, line 3, column 14: `DataLoader(` of the loop's loader
    assert lines[loop.line].strip().startswith('"    loader = DataLoader(ds')
    built = "DataLoader(ds, num_workers=2, persistent_workers=True)"
    assert lines[loop.line][loop.character :].startswith(built)
    probe = found["LL201"]  # cell 5, line 1, column 9
    assert lines[probe.line][probe.character :].startswith("DataLoader(ds, num_workers=0")

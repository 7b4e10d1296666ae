"""A cold server shows the open files checked alone first, then the project's findings
(docs/performance.md, "open files first"), driven by a real LSP client (pytest-lsp): pushed,
pulled by a client that can be asked to pull again (``workspace/diagnostic/refresh``), and
pulled by one that cannot (its answer waits for the project's analysis, as before). A finding
the open file alone gives and the project's analysis does not (a file git ignores: the
project's analysis skips it) disappears once that analysis lands."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import lsp_support as lsp
import pytest
from lsp_support import FETCHING, types, uri

pytestmark = pytest.mark.asyncio
SCRATCH = Path("scratch/fetch_all.py")
# one file alone gives this LL101 (its chain stays in the file); git ignores the folder
SCRATCH_SOURCE = """\
class Fetcher:
    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        self.loader._iterator = None
        return iter(self.loader)
"""


def scratch_project(tmp_path: Path) -> Path:
    """The lightning150 fixture as a git project, with an ignored scratch file."""
    root = lsp.buggy_project(tmp_path)
    (root / ".gitignore").write_text("scratch/\n", encoding="utf-8")
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *command],
            cwd=root,
            check=True,
            capture_output=True,
        )
    (root / SCRATCH).parent.mkdir()
    (root / SCRATCH).write_text(SCRATCH_SOURCE, encoding="utf-8")
    return root


class Published(dict[str, Sequence[types.Diagnostic]]):
    """The client's pushed diagnostics, with every publication in order (``history``)."""

    def __init__(self) -> None:
        super().__init__()
        self.history: list[tuple[str, list[str]]] = []

    def __setitem__(self, uri: str, diagnostics: Sequence[types.Diagnostic]) -> None:
        self.history.append((uri, [str(d.code) for d in diagnostics]))
        super().__setitem__(uri, diagnostics)


async def pull(client, document: str) -> list[str]:
    report = await lsp.answer(
        client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(document))
        )
    )
    return [str(d.code) for d in report.items]


async def test_pushed_open_file_first_then_the_projects(tmp_path):
    root = scratch_project(tmp_path)
    scratch, fetching = uri(root, SCRATCH), uri(root, FETCHING)
    async with lsp.lsp_session(root, tmp_path / "cache") as client:
        client.diagnostics = published = Published()
        lsp.open_document(client, root / SCRATCH)
        lsp.open_document(client, root / FETCHING)
        await lsp.until(lambda: (fetching, ["LL101"]) in published.history, "the project's LL101")
        await lsp.until(lambda: (scratch, []) in published.history, "the scratch file cleared")
    # the open files alone first: the scratch file's own finding (fetching.py's chain ends
    # in another file: nothing alone, so nothing pushed for it early)
    assert published.history[0] == (scratch, ["LL101"])
    # then the project's analysis: git ignores the scratch file, so its finding is gone
    later = published.history[1:]
    assert (scratch, []) in later and (fetching, ["LL101"]) in later
    assert [codes for shown, codes in published.history if shown == scratch][-1] == []


async def test_pulled_open_file_first_then_a_refresh(tmp_path):
    root = scratch_project(tmp_path)
    scratch, fetching = uri(root, SCRATCH), uri(root, FETCHING)
    async with lsp.lsp_session(root, tmp_path / "cache", pull=True) as client:
        lsp.open_document(client, root / SCRATCH)
        lsp.open_document(client, root / FETCHING)
        early = {scratch: await pull(client, scratch), fetching: await pull(client, fetching)}
        await lsp.until(lambda: client.diagnostic_refresh_count >= 1, "a refresh")
        final = {scratch: await pull(client, scratch), fetching: await pull(client, fetching)}
        pushed = dict(client.diagnostics)
    assert early == {scratch: ["LL101"], fetching: []}  # each open file alone
    assert final == {scratch: [], fetching: ["LL101"]}  # the project's, after the refresh
    assert pushed == {}


async def test_a_client_without_refresh_waits_for_the_projects(tmp_path):
    root = scratch_project(tmp_path)
    caps = lsp.capabilities(pull=True)
    caps.workspace.diagnostics = None  # no workspace/diagnostic/refresh
    scratch, fetching = uri(root, SCRATCH), uri(root, FETCHING)
    async with lsp.lsp_session(root, tmp_path / "cache", caps=caps) as client:
        lsp.open_document(client, root / SCRATCH)
        lsp.open_document(client, root / FETCHING)
        first = {scratch: await pull(client, scratch), fetching: await pull(client, fetching)}
        refreshed = client.diagnostic_refresh_count
    assert first == {scratch: [], fetching: ["LL101"]}  # the final answer at once
    assert refreshed == 0

"""``lintloader server`` opened on a hostile clone (issue 39): an editor that opens a stranger's
repository, whose ``src/`` is laid out as a git directory with ``core.fsmonitor`` set, or whose
unpacked ``.git/config`` sets it, never runs that command, through a real LSP client."""

from __future__ import annotations

import shutil
from pathlib import Path

import lsp_support as lsp
import pytest
from test_trust_git import TREES

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


@pytest.mark.parametrize("tree", sorted(TREES))
async def test_the_server_runs_no_command_of_the_workspace(tmp_path: Path, tree: str) -> None:
    marker = tmp_path / "MARKER"
    root = TREES[tree](tmp_path, marker)
    train = root / "src" / "train.py"
    async with lsp.lsp_session(root, tmp_path / "cache") as client:
        lsp.open_document(client, train)
        await _analysed(client, train)
        text = train.read_text(encoding="utf-8") + "\n# an unsaved edit\n"
        lsp.change_document(client, train, text, 2)  # an edit analyses the workspace again
        await _analysed(client, train)
    assert not marker.exists(), "lintloader server ran the workspace's core.fsmonitor"


async def _analysed(client, path: Path) -> None:
    """A hover waits for the analysis of ``path``'s project to end (the server answers it from
    the finished analysis)."""
    position = lsp.types.Position(line=0, character=0)
    params = lsp.types.HoverParams(
        text_document=lsp.types.TextDocumentIdentifier(uri=path.as_uri()), position=position
    )
    await lsp.answer(client.text_document_hover_async(params))

"""``lintloader server`` never edits through a link out of the workspace, and a file without a
project marker is analysed alone, never with ``/`` as its project (issue 39), through a real
LSP client (pytest-lsp) and real links."""

from __future__ import annotations

import shutil
from pathlib import Path

import lsp_support as lsp
import pytest
from lsp_support import FETCHING, types

from lintloader.integrations.project import find_project_root

pytestmark = pytest.mark.asyncio

LOOP = """from torch.utils.data import DataLoader


def train(dataset, epochs):
    for epoch in range(epochs):
        loader = DataLoader(dataset, num_workers=4, persistent_workers=True)
        for batch in loader:
            print(batch)
"""


async def _actions(client, document: str, line: int, only=None) -> list[types.CodeAction]:
    return await lsp.answer(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                range=types.Range(
                    start=types.Position(line=line, character=0),
                    end=types.Position(line=line, character=0),
                ),
                context=types.CodeActionContext(diagnostics=[], only=only),
            )
        )
    )


def linked_out(tmp_path: Path) -> tuple[Path, Path]:
    """The buggy project with fetching.py a link to a file outside it (the project, the
    file outside)."""
    root = lsp.buggy_project(tmp_path)
    outside = tmp_path / "elsewhere" / "fetching.py"
    outside.parent.mkdir()
    shutil.move(root / FETCHING, outside)
    (root / FETCHING).symlink_to(outside)
    return root, outside


async def test_no_action_edits_a_file_linked_out_of_the_workspace(tmp_path, cli):
    root, outside = linked_out(tmp_path)
    before = outside.read_bytes()
    fetching = lsp.uri(root, FETCHING)
    async with lsp.lsp_session(root, tmp_path / "cache") as client:
        lsp.open_document(client, root / FETCHING)
        await lsp.until(lambda: lsp.codes(client, fetching) == ["LL101"], "LL101 through the link")
        actions = await _actions(client, fetching, 15)
        fix_all = await _actions(client, fetching, 0, only=[types.CodeActionKind.SourceFixAll])
    assert [a.title for a in actions if a.kind == types.CodeActionKind.QuickFix] == []
    # fix-all is tried before it is offered: its only edit is refused, so it is not offered
    assert list(fix_all) == []
    assert outside.read_bytes() == before
    # `fix` refuses the same edit, for the same reason
    fixed = cli("fix", ".", cwd=root, env={"LINTLOADER_CACHE_DIR": str(tmp_path / "c2")})
    assert "resolves (through a symbolic link) outside the scanned paths" in fixed.stderr
    assert outside.read_bytes() == before


async def test_a_link_inside_the_workspace_is_still_fixed(tmp_path):
    """The refusal is about where a link leads: one to a file of the project is edited."""
    root = lsp.buggy_project(tmp_path)
    real = root / "minilight" / "real_fetching.py"
    shutil.move(root / FETCHING, real)
    (root / FETCHING).symlink_to(real)
    fetching = lsp.uri(root, FETCHING)
    async with lsp.lsp_session(root, tmp_path / "cache") as client:
        lsp.open_document(client, root / FETCHING)
        await lsp.until(lambda: lsp.codes(client, fetching) == ["LL101"], "LL101")
        actions = await _actions(client, fetching, 15)
    titles = [a.title.split(":")[0] for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert titles[0] == "Fix LL101 (safe, relocate)" and titles[-1] == "Add `# noqa"


@pytest.mark.parametrize("workspace", ["its own", "/"])
async def test_a_file_without_a_project_marker_is_analysed_alone(tmp_path, workspace):
    """Opened from another workspace, or from one whose folder is ``/``: the file alone is
    the project (its sibling, with the same finding, is never analysed)."""
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "a_sibling.py").write_text(LOOP, encoding="utf-8")
    train = loose / "train.py"
    train.write_text(LOOP, encoding="utf-8")
    if find_project_root([str(train)]) is not None:
        pytest.skip(f"a folder above {loose} holds a project marker")
    workspace_root = tmp_path / "workspace"
    workspace_root.mkdir()
    (workspace_root / "pyproject.toml").write_text("", encoding="utf-8")
    folder = Path("/") if workspace == "/" else workspace_root
    async with lsp.lsp_session(workspace_root, tmp_path / "cache", folder=folder) as client:
        lsp.open_document(client, train)
        await lsp.until(
            lambda: "LL202" in lsp.codes(client, train.as_uri()), "LL202 in the lone file"
        )
        assert (loose / "a_sibling.py").as_uri() not in client.diagnostics
        hover = await lsp.answer(
            client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=train.as_uri()),
                    position=types.Position(line=5, character=18),
                )
            )
        )
    assert hover is not None and "LL202" in hover.contents.value

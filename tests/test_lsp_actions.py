"""Code actions and hover of ``lintloader server`` through a real LSP client (pytest-lsp):
each fix strategy as a quick fix labelled safe or unsafe, ``# noqa``, fix-all with safe fixes
only, each edit what ``lintloader fix`` writes; the chain and the advisory on hover."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import run_cli
from lsp_support import (
    FETCHING,
    SUPPORTERS,
    answer,
    applied,
    apply_workspace_edit,
    buggy_project,
    change_document,
    codes,
    lsp_session,
    open_document,
    types,
    until,
    uri,
)

pytestmark = pytest.mark.asyncio


def _line_range(line: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=0),
                       end=types.Position(line=line, character=0))  # fmt: skip


async def _actions(client, document: str, line: int, only=None) -> list[types.CodeAction]:
    diagnostics = [d for d in client.diagnostics.get(document, ()) if d.range.start.line == line]
    return await answer(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                range=_line_range(line),
                context=types.CodeActionContext(diagnostics=diagnostics, only=only),
            )
        )
    )


@pytest.fixture(scope="module")
def fixed_by_cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The buggy project after ``lintloader fix .`` (one run, which the two tests that hold
    the editor's edits to it read)."""
    base = tmp_path_factory.mktemp("fixed_by_cli")
    copy = buggy_project(base)
    done = run_cli("fix", ".", cwd=copy, env={"LINTLOADER_CACHE_DIR": str(base / "c2")})
    assert done.returncode in (0, 1), done.stderr
    return copy


async def test_quick_fixes_are_the_strategies_and_noqa(tmp_path, fixed_by_cli):
    root = buggy_project(tmp_path)
    fetching = uri(root, FETCHING)
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, root / FETCHING)
        await until(lambda: codes(client, fetching) == ["LL101"], "LL101")
        actions = await _actions(client, fetching, 15)
    titles = [a.title for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [t.split(":")[0] for t in titles] == [
        "Fix LL101 (safe, relocate)",
        "Fix LL101 (unsafe, remove-call)",
        "Add `# noqa",
    ]
    relocate, remove_call, noqa = actions[:3]
    assert relocate.is_preferred and not remove_call.is_preferred
    assert [d.code for d in relocate.diagnostics] == ["LL101"]
    # relocate is the edit `lintloader fix` makes (here in fetching.py only)
    expected = fixed_by_cli
    assert list(relocate.edit.changes) == [fetching]
    text = (root / FETCHING).read_text(encoding="utf-8")
    assert applied(text, relocate.edit.changes[fetching]) == (expected / FETCHING).read_text(
        encoding="utf-8"
    )
    # remove-call is what `fix --unsafe-fixes` would do when relocate cannot
    assert "self.reset()\n        self.dataloader_iter" not in applied(
        text, remove_call.edit.changes[fetching]
    )
    suppressed = applied(text, noqa.edit.changes[fetching]).splitlines()[15]
    assert suppressed == "        self.reset()  # noqa: LL101"
    # fix-all is offered where a safe fix exists, its edit made on resolve
    [fix_all] = [a for a in actions if a.kind == "source.fixAll.lintloader"]
    assert fix_all.edit is None


async def test_fix_all_applies_safe_fixes_only_and_the_finding_goes(tmp_path, cli, fixed_by_cli):
    root = buggy_project(tmp_path)
    fetching = uri(root, FETCHING)
    expected = fixed_by_cli
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, root / FETCHING)
        await until(lambda: codes(client, fetching) == ["LL101"], "LL101")
        [fix_all] = await _actions(client, fetching, 0, only=[types.CodeActionKind.SourceFixAll])
        assert fix_all.kind == "source.fixAll.lintloader"
        resolved = await answer(client.code_action_resolve_async(fix_all))
        apply_workspace_edit(resolved.edit)
        for relative in (FETCHING, SUPPORTERS):
            assert (root / relative).read_bytes() == (expected / relative).read_bytes()
        # the editor's buffer takes the edit, then is saved
        change_document(client, root / FETCHING, (root / FETCHING).read_text("utf-8"), 2)
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(fetching))
        )
        await until(lambda: codes(client, fetching) == [], "LL101 fixed")
    assert cli("check", ".", cwd=root).returncode == 0


async def test_fix_all_never_applies_an_unsafe_fix(tmp_path):
    """LL202's only fix here (hoist-dataloader: the loop sets per-epoch state, so the safe
    hoist-loader-call refuses) is unsafe: a quick fix, never in fix-all."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    train = root / "train.py"
    train.write_text(
        "from torch.utils.data import DataLoader\n\n\n"
        "def train(dataset, epochs):\n"
        "    for epoch in range(epochs):\n"
        "        dataset.epoch = epoch\n"
        "        loader = DataLoader(dataset, num_workers=4, persistent_workers=True)\n"
        "        for batch in loader:\n"
        "            print(batch)\n",
        encoding="utf-8",
    )
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, train)
        await until(lambda: "LL202" in codes(client, train.as_uri()), "LL202")
        line = next(d for d in client.diagnostics[train.as_uri()] if d.code == "LL202")
        actions = await _actions(client, train.as_uri(), line.range.start.line)
        only_fix_all = await _actions(
            client, train.as_uri(), 0, only=[types.CodeActionKind.SourceFixAll]
        )
    titles = [a.title for a in actions]
    assert any(t.startswith("Fix LL202 (unsafe, hoist-dataloader)") for t in titles), titles
    assert not any(a.kind == "source.fixAll.lintloader" for a in actions)
    assert list(only_fix_all) == []


async def test_hover_shows_the_chain_and_the_advisory(tmp_path):
    root = buggy_project(tmp_path)
    # the project is laid out as an installed affected release (its dist-info beside it)
    dist_info = root / "pytorch_lightning-1.5.0.dist-info"
    dist_info.mkdir()
    (dist_info / "top_level.txt").write_text("minilight\n", encoding="utf-8")
    fetching = uri(root, FETCHING)
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, root / FETCHING)
        await until(lambda: codes(client, fetching) == ["LL101"], "LL101")
        hover = await answer(
            client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=fetching),
                    position=types.Position(line=15, character=12),
                )
            )
        )
        nothing = await answer(
            client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=fetching),
                    position=types.Position(line=2, character=0),
                )
            )
        )
    text = hover.contents.value
    assert text.startswith("**[LL101](")
    assert "1. [minilight/utilities/fetching.py:16:9](" in text
    assert "`DataFetcher.__iter__: calls self.reset()`" in text
    assert f"({uri(root, SUPPORTERS)}#L22)" in text
    assert "`CombinedLoader._shutdown_workers_and_reset_iterator: resets " in text
    assert "also reaches" in text
    assert "advisory: pytorch-lightning 1.5.0 is affected; fixed in 1.5.1" in text
    assert nothing is None

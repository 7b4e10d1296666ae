"""The server's quick fixes and fix-all are judged as ``check`` judges "fixable" (issue 43),
through a real LSP client over stdio: a strategy whose edit applies but leaves its finding (a
hoist while Lightning still reloads the loader every epoch: LL205 stays) gets no quick fix, or a
disabled one that says why where the client shows those; one that ends its finding gets its
edit, the one ``lintloader fix`` writes; fix-all leaves the findings ``fix`` leaves."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from lsp_support import (
    answer,
    applied,
    apply_workspace_edit,
    capabilities,
    codes,
    lsp_session,
    open_document,
    types,
    until,
)

pytestmark = pytest.mark.asyncio

IMPORTS = "from lightning.pytorch import Trainer\nfrom torch.utils.data import DataLoader\n"
RELOADED = (  # the hoist is made, but Lightning still rebuilds the loader: LL205 after it
    "\n\ndef reloaded(dataset, epochs):\n"
    "    trainer = Trainer(reload_dataloaders_every_n_epochs=1)\n"
    "    for epoch in range(epochs):\n"
    "        loader = DataLoader(dataset, num_workers=2)\n"
    "        for batch in loader:\n"
    "            pass\n"
    "    return trainer\n"
)
PLAIN = (  # the hoist ends the finding
    "\n\ndef plain(dataset, epochs):\n"
    "    for epoch in range(epochs):\n"
    "        loader = DataLoader(dataset, num_workers=2)\n"
    "        for batch in loader:\n"
    "            pass\n"
)


def project(tmp_path: Path, **files: str) -> Path:
    """A project that shows info findings (a per-epoch loader without persistence is info)."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.lintloader]\nmin-severity = "info"\n')
    for name, text in files.items():
        (root / f"{name}.py").write_text(text, encoding="utf-8")
    return root


async def actions_at(client, path: Path, line: int, only=None) -> list[types.CodeAction]:
    document = path.as_uri()
    diagnostics = [d for d in client.diagnostics.get(document, ()) if d.range.start.line == line]
    start = types.Position(line=line, character=0)
    return await answer(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                range=types.Range(start=start, end=start),
                context=types.CodeActionContext(diagnostics=diagnostics, only=only),
            )
        )
    )


def line_of(client, path: Path, code: str) -> int:
    return next(d for d in client.diagnostics[path.as_uri()] if d.code == code).range.start.line


def findings(cli, root: Path) -> list[tuple[str, int, str]]:
    done = cli("check", "--no-cache", "--output-format", "json", ".", cwd=root)
    assert done.returncode in (0, 1), done.stderr
    return sorted((f["path"], f["line"], f["code"]) for f in json.loads(done.stdout))


async def test_a_fix_that_leaves_its_finding_is_not_offered(tmp_path, cli):
    root = project(tmp_path, reload=IMPORTS + RELOADED)
    reload = root / "reload.py"
    # the strategies apply (the edit is made) but end nothing: check promises none
    done = cli("fix", "--no-cache", "--diff", ".", cwd=root)
    assert "LL202 would be changed by hoist-loader-call (reload.py) but not fixed" in done.stderr
    assert "fixable" not in cli("check", "--no-cache", ".", cwd=root).stderr
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, reload)
        await until(lambda: codes(client, reload.as_uri()) == ["LL202"], "LL202")
        actions = await actions_at(client, reload, line_of(client, reload, "LL202"))
        no_fix_all = await actions_at(client, reload, 0, only=[types.CodeActionKind.SourceFixAll])
    assert [a.title for a in actions] == ["Add `# noqa: LL202`"]
    assert list(no_fix_all) == []


async def test_a_client_that_shows_disabled_actions_is_told_why(tmp_path):
    root = project(tmp_path, reload=IMPORTS + RELOADED)
    reload = root / "reload.py"
    caps = capabilities()
    caps.text_document.code_action.disabled_support = True
    async with lsp_session(root, tmp_path / "cache", caps=caps) as client:
        open_document(client, reload)
        await until(lambda: codes(client, reload.as_uri()) == ["LL202"], "LL202")
        actions = await actions_at(client, reload, line_of(client, reload, "LL202"))
    *fixes, noqa = actions
    assert [a.title.split(":")[0] for a in fixes] == [
        "Fix LL202 (safe, hoist-loader-call)",
        "Fix LL202 (unsafe, hoist-dataloader)",
    ]
    for action in fixes:
        name = action.title.split(", ")[1].split(")")[0]
        assert action.edit is None and action.disabled is not None
        assert action.disabled.reason == (
            f"{name} does not end this finding: its edit leaves LL205 [info] at reload.py:6, "
            "which still says the worker pool is rebuilt"
        )
    assert noqa.disabled is None and noqa.title == "Add `# noqa: LL202`"


async def test_a_fix_that_ends_its_finding_is_offered_with_fix_s_edit(tmp_path, cli):
    root = project(tmp_path, plain=IMPORTS + PLAIN)
    plain = root / "plain.py"
    assert "[*] 1 fixable with `--fix`." in cli("check", "--no-cache", ".", cwd=root).stderr
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, plain)
        await until(lambda: codes(client, plain.as_uri()) == ["LL202"], "LL202")
        actions = await actions_at(client, plain, line_of(client, plain, "LL202"))
    titles = [a.title.split(":")[0] for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert titles == [
        "Fix LL202 (safe, hoist-loader-call)",
        "Fix LL202 (unsafe, hoist-dataloader)",
        "Add `# noqa",
    ], titles
    assert actions[-1].kind == "source.fixAll.lintloader"  # the safe fix ends a finding here
    hoist = actions[0]
    assert hoist.disabled is None and hoist.is_preferred
    assert [d.code for d in hoist.diagnostics] == ["LL202"]
    # its edit is the one `lintloader fix plain.py` writes, and the finding is gone after it
    copy = tmp_path / "fixed"
    shutil.copytree(root, copy)
    assert cli("fix", "--no-cache", "plain.py", cwd=copy).returncode == 0
    [(target, edits)] = hoist.edit.changes.items()
    assert target == plain.as_uri()
    assert applied(plain.read_text(), edits) == (copy / "plain.py").read_text()
    apply_workspace_edit(hoist.edit)
    assert findings(cli, root) == []


async def test_fix_all_leaves_the_findings_fix_leaves(tmp_path, cli):
    """One document with a finding the safe fixes end and one they change but leave."""
    root = project(tmp_path, mixed=IMPORTS + PLAIN + RELOADED)
    mixed = root / "mixed.py"
    copy = tmp_path / "fixed"
    shutil.copytree(root, copy)
    assert cli("fix", "--no-cache", "mixed.py", cwd=copy).returncode == 1  # LL205 is left
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, mixed)
        await until(lambda: codes(client, mixed.as_uri()) == ["LL202", "LL202"], "LL202s")
        [fix_all] = await actions_at(client, mixed, 0, only=[types.CodeActionKind.SourceFixAll])
        resolved = await answer(client.code_action_resolve_async(fix_all))
    apply_workspace_edit(resolved.edit)
    assert mixed.read_text() == (copy / "mixed.py").read_text()
    left = findings(cli, root)
    assert left == findings(cli, copy)
    assert [code for _, _, code in left] == ["LL205"]

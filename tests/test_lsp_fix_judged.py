"""The server's quick fixes and fix-all are judged as ``check`` judges "fixable" (issue 43),
through a real LSP client over stdio: a strategy whose edit applies but leaves its finding (a
hoist while Lightning still reloads the loader every epoch: LL205 stays) gets no quick fix, or a
disabled one that says why where the client shows those; one that ends its finding gets its
edit, the one ``lintloader fix`` writes; fix-all leaves the findings ``fix`` leaves."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from harness import run_cli_forked
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


JSON_CHECK = ("check", "--no-cache", "--output-format", "json", ".")


def sorted_findings(done: subprocess.CompletedProcess[str]) -> list[tuple[str, int, str]]:
    assert done.returncode in (0, 1), done.stderr
    return sorted((f["path"], f["line"], f["code"]) for f in json.loads(done.stdout))


def findings(cli, root: Path) -> list[tuple[str, int, str]]:
    return sorted_findings(cli(*JSON_CHECK, cwd=root))


@pytest.fixture(scope="module")
def by_cli(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """What the CLI says of each test's project before its session (the oracles the editor is
    held to): cold runs of the console script's code forked from one process that imported
    the CLI once (harness.run_cli_forked). The ``fix`` runs edit copies, which the tests read
    as what ``lintloader fix`` writes."""
    base = tmp_path_factory.mktemp("by_cli")
    for name in ("reload", "plain", "mixed"):
        (base / name).mkdir()
    reload = project(base / "reload", reload=IMPORTS + RELOADED)
    plain = project(base / "plain", plain=IMPORTS + PLAIN)
    mixed = project(base / "mixed", mixed=IMPORTS + PLAIN + RELOADED)
    check = ("check", "--no-cache", ".")
    runs = [
        (("fix", "--no-cache", "--diff", "."), reload),
        (check, reload),
        (check, plain),
        (("fix", "--no-cache", "plain.py"), plain.parent / "fixed"),
        (("fix", "--no-cache", "mixed.py"), mixed.parent / "fixed"),
        (JSON_CHECK, mixed.parent / "fixed"),
    ]
    for folder in (plain, mixed):
        shutil.copytree(folder, folder.parent / "fixed")
    names = ("reload_diff", "reload_check", "plain_check", "plain_fix", "mixed_fix", "mixed_left")
    done: dict[str, object] = dict(zip(names, run_cli_forked(runs), strict=True))
    done["plain_fixed"] = plain.parent / "fixed"
    done["mixed_fixed"] = mixed.parent / "fixed"
    return done


async def test_a_fix_that_leaves_its_finding_is_not_offered(tmp_path, by_cli):
    root = project(tmp_path, reload=IMPORTS + RELOADED)
    reload = root / "reload.py"
    # the strategies apply (the edit is made) but end nothing: check promises none
    done = by_cli["reload_diff"]
    assert "LL202 would be changed by hoist-loader-call (reload.py) but not fixed" in done.stderr
    assert "fixable" not in by_cli["reload_check"].stderr
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


async def test_a_fix_that_ends_its_finding_is_offered_with_fix_s_edit(tmp_path, cli, by_cli):
    root = project(tmp_path, plain=IMPORTS + PLAIN)
    plain = root / "plain.py"
    assert "[*] 1 fixable with `--fix`." in by_cli["plain_check"].stderr
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
    copy = by_cli["plain_fixed"]
    assert by_cli["plain_fix"].returncode == 0, by_cli["plain_fix"].stderr
    [(target, edits)] = hoist.edit.changes.items()
    assert target == plain.as_uri()
    assert applied(plain.read_text(), edits) == (copy / "plain.py").read_text()
    apply_workspace_edit(hoist.edit)
    assert findings(cli, root) == []


async def test_fix_all_leaves_the_findings_fix_leaves(tmp_path, cli, by_cli):
    """One document with a finding the safe fixes end and one they change but leave."""
    root = project(tmp_path, mixed=IMPORTS + PLAIN + RELOADED)
    mixed = root / "mixed.py"
    copy = by_cli["mixed_fixed"]
    assert by_cli["mixed_fix"].returncode == 1, by_cli["mixed_fix"].stderr  # LL205 is left
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, mixed)
        await until(lambda: codes(client, mixed.as_uri()) == ["LL202", "LL202"], "LL202s")
        [fix_all] = await actions_at(client, mixed, 0, only=[types.CodeActionKind.SourceFixAll])
        resolved = await answer(client.code_action_resolve_async(fix_all))
    apply_workspace_edit(resolved.edit)
    assert mixed.read_text() == (copy / "mixed.py").read_text()
    left = findings(cli, root)
    assert left == sorted_findings(by_cli["mixed_left"])
    assert [code for _, _, code in left] == ["LL205"]

"""``lintloader server`` driven by a real LSP client (pytest-lsp): diagnostics with their
chain, pushed and pulled, the same as ``lintloader check``; cross-file republishing after
unsaved edits and saves; a file that does not parse; a configuration reload; progress."""

from __future__ import annotations

import json

import pytest
from lsp_support import (
    FETCHING,
    SUPPORTERS,
    buggy_project,
    change_document,
    codes,
    lsp_session,
    open_document,
    types,
    until,
    uri,
)

from lintloader import DOCS_URL

pytestmark = pytest.mark.asyncio
RESET_LINE = "        dataloader._iterator = None\n"


async def test_pushed_diagnostic_carries_the_chain(tmp_path, cli):
    root = buggy_project(tmp_path)
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, root / FETCHING)
        fetching = uri(root, FETCHING)
        await until(lambda: fetching in client.diagnostics, "diagnostics of fetching.py")
        [diagnostic] = client.diagnostics[fetching]
        reports = client.progress_reports
    assert diagnostic.code == "LL101"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.source == "lintloader"
    assert diagnostic.code_description.href == f"{DOCS_URL}/rules/LL101.md"
    # the range is `self.reset()` in __iter__ (line 16, columns 9-21, 1-based)
    assert diagnostic.range == types.Range(
        start=types.Position(line=15, character=8), end=types.Position(line=15, character=20)
    )
    related = [(r.location.uri, r.location.range.start.line, r.message) for r in
               diagnostic.related_information]  # fmt: skip
    supporters = uri(root, SUPPORTERS)
    assert related == [
        (fetching, 15, "DataFetcher.__iter__: calls self.reset()"),
        (
            fetching,
            30,
            "DataFetcher.reset: calls "
            "CombinedLoader._shutdown_workers_and_reset_iterator(self.dataloader)",
        ),
        (
            supporters,
            21,
            "CombinedLoader._shutdown_workers_and_reset_iterator: resets "
            "dataloader._iterator = None",
        ),
        (supporters, 20, "also reaches dataloader._iterator._shutdown_workers()"),
    ]
    # the same finding `lintloader check` reports for the project
    checked = json.loads(cli("check", "--output-format", "json", ".", cwd=root).stdout)
    assert [(f["code"], f["line"], f["column"], f["message"]) for f in checked] == [
        ("LL101", 16, 9, diagnostic.message)
    ]
    # the first analysis ran under a $/progress token, begun and ended
    [progress] = reports.values()
    kinds = [p.kind for p in progress]
    assert kinds[0] == "begin" and kinds[-1] == "end", kinds
    assert progress[-1].message == "1 finding in 6 files"


async def test_pulled_diagnostics_for_a_document_and_the_workspace(tmp_path):
    root = buggy_project(tmp_path)
    async with lsp_session(root, tmp_path / "cache", pull=True) as client:
        open_document(client, root / SUPPORTERS)
        document = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=uri(root, FETCHING))
            )
        )
        workspace = await client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        # an unsaved edit of supporters.py takes the reset away: fetching.py reads empty
        text = (root / SUPPORTERS).read_text(encoding="utf-8").replace(RESET_LINE, "")
        text = text.replace("dataloader._iterator._shutdown_workers()", "pass")
        change_document(client, root / SUPPORTERS, text, 2)
        cleared = await client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        pushed = dict(client.diagnostics)
    assert [(d.code, d.range.start.line) for d in document.items] == [("LL101", 15)]
    assert len(document.items[0].related_information) == 4
    assert [(r.uri, [d.code for d in r.items]) for r in workspace.items] == [
        (uri(root, FETCHING), ["LL101"])
    ]
    assert [(r.uri, list(r.items)) for r in cleared.items] == [(uri(root, FETCHING), [])]
    assert client.diagnostic_refresh_count >= 1  # asked to pull again after the edit
    assert pushed == {}  # a client that pulls is not pushed to as well


async def test_noqa_and_per_file_ignores_hold_as_in_check(tmp_path, cli):
    root = buggy_project(tmp_path)
    fetching = root / FETCHING
    source = fetching.read_text(encoding="utf-8")
    call = "        self.reset()\n        self.dataloader_iter"
    suppressed = call.replace("self.reset()", "self.reset()  # noqa: LL101")
    fetching.write_text(source.replace(call, suppressed), encoding="utf-8")
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, fetching)
        await until(lambda: client.progress_reports, "the first analysis")
        await until(lambda: _ended(client), "the end of the first analysis")
        before = codes(client, fetching.as_uri())
        # unsuppressed in the buffer: the finding appears before any save
        change_document(client, fetching, source, 2)
        await until(lambda: codes(client, fetching.as_uri()) == ["LL101"], "LL101 again")
    assert before == []
    checked = cli("check", ".", cwd=root)  # the file on disk keeps its noqa: check agrees
    assert (checked.returncode, checked.stdout) == (0, "")


def _ended(client) -> bool:
    return any(p.kind == "end" for reports in client.progress_reports.values() for p in reports)


async def test_an_unsaved_edit_republishes_an_unopened_file(tmp_path):
    """The chain ends in supporters.py; editing it (unsaved) clears the finding in
    fetching.py, which is not open, and undoing the edit brings it back; a save counts."""
    root = buggy_project(tmp_path)
    supporters_path = root / SUPPORTERS
    original = supporters_path.read_text(encoding="utf-8")
    harmless = original.replace(RESET_LINE, "").replace(
        "            dataloader._iterator._shutdown_workers()\n", "            pass\n"
    )
    fetching = uri(root, FETCHING)
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, supporters_path)
        await until(lambda: codes(client, fetching) == ["LL101"], "LL101 in fetching.py")
        change_document(client, supporters_path, harmless, 2)
        await until(lambda: codes(client, fetching) == [], "fetching.py cleared")
        change_document(client, supporters_path, original, 3)
        await until(lambda: codes(client, fetching) == ["LL101"], "LL101 back")
        # saved to disk: the same as the buffer
        change_document(client, supporters_path, harmless, 4)
        supporters_path.write_text(harmless, encoding="utf-8")
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=supporters_path.as_uri())
            )
        )
        await until(lambda: codes(client, fetching) == [], "fetching.py cleared after save")


async def test_a_file_that_does_not_parse_is_ll000_and_the_server_goes_on(tmp_path):
    root = buggy_project(tmp_path)
    broken = root / "minilight" / "broken.py"
    broken.write_text("def reset(:\n    loader._iterator = None\n", encoding="utf-8")
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, broken)
        await until(lambda: codes(client, broken.as_uri()) == ["LL000"], "LL000")
        [diagnostic] = client.diagnostics[broken.as_uri()]
        assert diagnostic.range.start == types.Position(line=0, character=10)
        assert diagnostic.code_description.href.endswith(
            "guarantees.md#a-bad-file-never-stops-a-run"
        )
        # the rest of the project is analyzed as before (published after broken.py)
        await until(lambda: codes(client, uri(root, FETCHING)) == ["LL101"], "LL101")
        change_document(client, broken, "def reset():\n    pass\n", 2)
        await until(lambda: codes(client, broken.as_uri()) == [], "LL000 cleared")


async def test_pyproject_change_reloads_the_configuration(tmp_path):
    root = buggy_project(tmp_path)
    pyproject = root / "pyproject.toml"
    fetching = uri(root, FETCHING)
    async with lsp_session(root, tmp_path / "cache") as client:
        open_document(client, root / FETCHING)
        await until(lambda: codes(client, fetching) == ["LL101"], "LL101")
        pyproject.write_text(
            '[project]\nname = "minilight"\n\n[tool.lintloader]\nignore = ["LL101"]\n',
            encoding="utf-8",
        )
        _watched(client, pyproject, types.FileChangeType.Changed)
        await until(lambda: codes(client, fetching) == [], "LL101 ignored by the new config")
        pyproject.write_text(
            '[tool.lintloader]\nper-file-ignores = { "minilight/trainer/*" = ["LL101"] }\n',
            encoding="utf-8",
        )
        _watched(client, pyproject, types.FileChangeType.Changed)
        await until(lambda: codes(client, fetching) == ["LL101"], "LL101 back")
        pyproject.write_text(
            '[tool.lintloader]\nper-file-ignores = { "minilight/utilities/*" = ["LL101"] }\n',
            encoding="utf-8",
        )
        _watched(client, pyproject, types.FileChangeType.Changed)
        await until(lambda: codes(client, fetching) == [], "LL101 ignored in utilities/")


def _watched(client, path, kind) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=path.as_uri(), type=kind)])
    )

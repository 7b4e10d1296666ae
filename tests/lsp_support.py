"""A real LSP client (pytest-lsp) driving ``lintloader server`` in a subprocess."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="the [lsp] test tools are not installed")
types = pytest.importorskip("lsprotocol.types", reason="the [lsp] extra is not installed")

from conftest import FIXTURES, lintloader_command  # noqa: E402

LIGHTNING150 = FIXTURES / "check" / "lightning150"
FETCHING = Path("minilight/utilities/fetching.py")
SUPPORTERS = Path("minilight/trainer/supporters.py")
WAIT = 120.0  # seconds a client waits for the server before the test fails


def buggy_project(tmp_path: Path, fixture: Path = LIGHTNING150) -> Path:
    """A copy of a fixture tree with a pyproject.toml (it is the workspace root)."""
    root = tmp_path / "project"
    shutil.copytree(fixture, root, ignore=shutil.ignore_patterns("expected.txt", "README.md"))
    (root / "pyproject.toml").write_text('[project]\nname = "minilight"\n', encoding="utf-8")
    return root


def capabilities(pull: bool = False) -> types.ClientCapabilities:
    """Neovim 0.10's capabilities without pulled diagnostics (pushed ones); ``pull``: with."""
    found = pytest_lsp.client_capabilities("neovim@v0.10.0")
    found.text_document.diagnostic = None
    found.workspace.diagnostics = None
    if pull:
        found.text_document.diagnostic = types.DiagnosticClientCapabilities(
            related_document_support=True
        )
        found.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(
            refresh_support=True
        )
    return found


@contextlib.asynccontextmanager
async def lsp_session(
    root: Path,
    cache: Path,
    pull: bool = False,
    caps: types.ClientCapabilities | None = None,
    args: Sequence[str] = (),
    folder: Path | None = None,
) -> AsyncIterator[pytest_lsp.LanguageClient]:
    """``lintloader server ARGS`` started in ``root`` as an editor starts it (its working
    directory the project's, so paths in messages read as ``check``'s there), initialized with
    ``root`` (or ``folder``) as its workspace folder; shut down cleanly at the end (exit
    code 0)."""
    folder = folder or root
    env = {**os.environ, "LINTLOADER_CACHE_DIR": str(cache)}
    client = pytest_lsp.make_test_lsp_client()
    # a session of its own: whatever the server leaves (its helper, a forked analysis) is
    # killed with its group at the end, as tests/child_processes.py does
    await client.start_io(
        *lintloader_command(), "server", *args, env=env, cwd=str(root), start_new_session=True
    )
    params = types.InitializeParams(
        capabilities=caps or capabilities(pull),
        root_uri=folder.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name or "/")],
    )
    try:
        await client.initialize_session(params)
        yield client
        await asyncio.wait_for(client.shutdown_session(), WAIT)
        assert client._server is not None
        assert client._server.returncode == 0
    finally:
        server = client._server
        if server is not None and server.returncode is None:  # the test failed before exit
            server.kill()
        await client.stop()
        if server is not None:
            with contextlib.suppress(OSError):
                os.killpg(server.pid, signal.SIGKILL)


async def until(condition: Callable[[], object], what: str) -> None:
    """Wait until ``condition()`` holds (the server answers asynchronously)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def uri(root: Path, relative: Path | str) -> str:
    return (root / relative).as_uri()


def open_document(client: pytest_lsp.LanguageClient, path: Path, text: str | None = None) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(),
                language_id="python",
                version=1,
                text=path.read_text(encoding="utf-8") if text is None else text,
            )
        )
    )


def codes(client: pytest_lsp.LanguageClient, document: str) -> list[str]:
    return [str(d.code) for d in client.diagnostics.get(document, ())]


def change_document(client: pytest_lsp.LanguageClient, path: Path, text: str, version: int) -> None:
    """Replace an open document's whole text (an unsaved edit)."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def applied(text: str, edits: list[types.TextEdit]) -> str:
    """``text`` with LSP ``edits`` applied (positions in an ASCII text: characters)."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        return sum(len(line) for line in lines[: position.line]) + position.character

    spans = sorted((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits)
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


def apply_workspace_edit(edit: types.WorkspaceEdit) -> None:
    """Write what a workspace edit changes, as an editor would on saving every file."""
    from urllib.parse import unquote, urlparse

    for target, edits in (edit.changes or {}).items():
        path = Path(unquote(urlparse(target).path))
        path.write_text(applied(path.read_text(encoding="utf-8"), list(edits)), encoding="utf-8")


async def answer(request):
    """The server's answer to ``request`` (fails, rather than hangs, when none comes)."""
    return await asyncio.wait_for(request, WAIT)

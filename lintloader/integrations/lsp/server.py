"""``lintloader server``: the language server's features, wired to a :class:`Session`.

Diagnostics are pushed (``textDocument/publishDiagnostics``) to a client that does not pull
them, and answered on ``textDocument/diagnostic`` and ``workspace/diagnostic`` to one that
does. Hover, code actions (quick fixes, ``# noqa``, ``source.fixAll.lintloader``), a reload
when ``pyproject.toml`` or a Python file changes on disk, and progress during the first
analysis of a project.
"""

from __future__ import annotations

import contextlib
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from lintloader import __version__
from lintloader.fixers.catalog import fix_kind
from lintloader.integrations.lsp import action_kinds as actions
from lintloader.integrations.lsp import hover, notebooks
from lintloader.integrations.lsp.analysis import Settings
from lintloader.integrations.lsp.diagnostics import SOURCE
from lintloader.integrations.lsp.session import Session, path_of_uri
from lintloader.integrations.lsp.workspace import EDITED
from lintloader.workers.prefork import Helper

WATCHED = ("**/pyproject.toml", "**/*.py", "**/*.ipynb")


def build_server(settings: Settings, helper: Helper | None = None) -> LanguageServer:
    """The server (``helper``: forks cold analyses, see ``workers/prefork.py``)."""
    server = LanguageServer("lintloader", __version__, notebook_document_sync=notebooks.SYNC)
    session = Session(server, settings, helper)
    _documents(server, session)
    _diagnostics(server, session)
    _hover(server, session)
    _code_actions(server, session)
    return server


def adopt_handshake(server: LanguageServer, params: dict[str, Any]) -> None:
    """Set the server up from an ``initialize`` request that ``handshake.py`` already
    answered, as pygls does when it answers one itself (its workspace, the client's
    capabilities, the position encoding)."""
    protocol = server.protocol
    steps = protocol.lsp_initialize(protocol._converter.structure(params, types.InitializeParams))
    with contextlib.suppress(StopIteration):
        while True:  # no INITIALIZE handler of ours: pygls' own steps only
            next(steps)


def _documents(server: LanguageServer, session: Session) -> None:
    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        folders = [path_of_uri(f.uri) for f in server.workspace.folders.values()]
        roots = [f for f in folders if f] or [server.workspace.root_path or ""]
        for root in filter(None, roots):
            session.projects.add(root)
        session.start()
        await _watch_files(server)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        _opened(session, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        _edited(session, params.text_document.uri, on_disk=False)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        _edited(session, params.text_document.uri, saved=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        # its file, not the buffer, counts now
        _edited(session, params.text_document.uri, on_disk=False)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_opened(params: types.DidOpenNotebookDocumentParams) -> None:
        _opened(session, params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_changed(params: types.DidChangeNotebookDocumentParams) -> None:
        _edited(session, params.notebook_document.uri, on_disk=False)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_saved(params: types.DidSaveNotebookDocumentParams) -> None:
        _edited(session, params.notebook_document.uri, saved=True)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_closed(params: types.DidCloseNotebookDocumentParams) -> None:
        _edited(session, params.notebook_document.uri, on_disk=False)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(params: types.DidChangeWatchedFilesParams) -> None:
        session.changed([p for c in params.changes if (p := path_of_uri(c.uri))])


def _opened(session: Session, uri: str) -> None:
    path = path_of_uri(uri)
    if path is None or not path.endswith(EDITED):
        return
    project = session.projects.of(path)
    if project.analysis is None:  # a cold project's open files are checked alone first
        session.check_early(project)
    if session.buffers_differ(project, path):
        session.changed([path], on_disk=False)
    elif project.analysis is None:  # the first analysis (under way, or to start) reads it
        session.start()
    else:
        session.publish(project, [path])


def _edited(session: Session, uri: str, saved: bool = False, on_disk: bool = True) -> None:
    """A document changed (``saved``: written to disk; ``on_disk`` False: in its buffer)."""
    path = path_of_uri(uri)
    if path is not None and (path.endswith(EDITED) or (saved and path.endswith(".toml"))):
        session.projects.of(path)
        session.changed([path], on_disk)


async def _watch_files(server: LanguageServer) -> None:
    """Ask to hear of ``pyproject.toml`` and Python files changed outside the editor."""
    workspace = server.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED]
    )
    registration = types.Registration(
        id="lintloader-watched-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options,
    )
    await server.client_register_capability_async(
        types.RegistrationParams(registrations=[registration])
    )


def _diagnostics(server: LanguageServer, session: Session) -> None:
    options = types.DiagnosticOptions(
        identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=True
    )

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, options)
    async def document(
        params: types.DocumentDiagnosticParams,
    ) -> types.RelatedFullDocumentDiagnosticReport:
        items = await session.diagnostics_of(params.text_document.uri)
        return types.RelatedFullDocumentDiagnosticReport(items=items)

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    async def workspace(params: types.WorkspaceDiagnosticParams) -> types.WorkspaceDiagnosticReport:
        reports: list[types.WorkspaceDocumentDiagnosticReport] = []
        for project in list(session.projects.projects.values()):
            await session.settled(project)
            for path in sorted(project.ever_shown):  # a path cleared since: reported empty
                for uri, items in session.placed(project, path).items():
                    reports.append(
                        types.WorkspaceFullDocumentDiagnosticReport(
                            uri=uri, items=items, version=None
                        )
                    )
        return types.WorkspaceDiagnosticReport(items=reports)


def _hover(server: LanguageServer, session: Session) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(params: types.HoverParams) -> types.Hover | None:
        found = await session.findings_of(params.text_document.uri)
        if found is None:
            return None
        project, _, findings = found
        if project.analysis is None:
            return None
        here = hover.at_position(findings, params.position.line, params.position.character)
        return hover.hover(here, project.analysis.path_of)


def _code_actions(server: LanguageServer, session: Session) -> None:
    options = types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=True)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, options)
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction] | None:
        found = await session.findings_of(params.text_document.uri)
        if found is None or found[0].analysis is None:
            return None
        project, path, findings = found
        only = params.context.only
        made: list[types.CodeAction] = []
        here = actions.touching(findings, params.range.start.line + 1, params.range.end.line + 1)
        if here and actions.wanted(types.CodeActionKind.QuickFix, only):
            made += await session.quick_fixes(project, path, here)
        if any(fix_kind(f.fixes) == "safe" for f in findings) and actions.wanted(
            actions.FIX_ALL, only
        ):
            # a finding names a safe strategy; offered only when the fix rounds (tried here, as
            # `lintloader fix` runs them) end a finding, so fix-all never promises nothing
            edit = await session.fix_all(project, path)
            if edit is not None and edit.changes:
                action = actions.fix_all_action()
                action.data = {"uri": params.text_document.uri}
                if not session.resolves_edits():  # else made on resolve (tried: kept)
                    action.edit = edit
                made.append(action)
        return made

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve(action: types.CodeAction) -> types.CodeAction:
        uri = action.data.get("uri") if isinstance(action.data, dict) else None
        path = path_of_uri(uri) if isinstance(uri, str) else None
        if action.kind == actions.FIX_ALL and path is not None and action.edit is None:
            action.edit = await session.fix_all(session.projects.of(path), path)
        return action

"""One editor session: the analysis loop and what each request is answered from.

Every change marks its project stale; one loop analyzes stale projects, one at a time, in a
worker thread (the engine is not shared between threads: analyses and fix rounds all run in
that one thread), while the event loop keeps answering. Edits that arrive
while an analysis runs are taken together by the next one. A request that needs findings
(a pull of diagnostics, a hover, a code action) waits until its project is analyzed as it is
now, so what it answers from matches the buffer the editor shows. One exception, before a
cold project's first analysis lands: its open files checked alone are shown meanwhile
(pushed, or a pull of an open file answered from them where the client can be asked to pull
again; see :meth:`Session.check_early`).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from lintloader.finding.findings import Finding
from lintloader.integrations.lsp.analysis import (
    Analysis,
    Settings,
    analyze,
    analyze_alone,
    cold_cache,
    starts_cold,
)
from lintloader.integrations.lsp.diagnostics import Converter, Mover, uri_of
from lintloader.integrations.lsp.notebooks import NotebookView, notebook_json
from lintloader.integrations.lsp.workspace import (
    Project,
    Projects,
    buffers,
    disk_lines,
    on_disk,
)
from lintloader.scan.model import DiscoveryError
from lintloader.scan.read.notebooks import is_notebook
from lintloader.scan.read.reading import read_source
from lintloader.settings.config import ConfigError
from lintloader.text.wording import counted
from lintloader.workers.prefork import Helper

T = TypeVar("T")


def path_of_uri(uri: str) -> str | None:
    """The absolute path of a ``file:`` URI (None for any other scheme)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return os.path.abspath(path) if path else None


class Session:
    def __init__(
        self, server: LanguageServer, settings: Settings, helper: Helper | None = None
    ) -> None:
        self.server = server
        self.settings = settings
        self.helper = helper  # forks the cold analyses (workers/prefork.py)
        self.projects = Projects()
        self.engine = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lintloader")
        self.loop_task: asyncio.Task[None] | None = None
        self.tokens = itertools.count(1)
        # per project root: the open files checked alone, or queued (see :meth:`check_early`)
        self.early_checks: dict[str, tuple[frozenset[str], asyncio.Future[None]]] = {}
        # the last fix-all tried: (analysis, path, edit), reused while neither changes
        self._last_fix_all: tuple[object, str, types.WorkspaceEdit | None] | None = None
        # the quick fixes tried on the last analysis: (analysis, finding -> its actions)
        self._tried: tuple[object, dict[Finding, list[types.CodeAction]]] | None = None

    # -- what the client can do ------------------------------------------------------------
    @property
    def capabilities(self) -> types.ClientCapabilities:
        return self.server.client_capabilities

    @property
    def pulls(self) -> bool:
        """Whether the client pulls diagnostics (then none are pushed)."""
        document = self.capabilities.text_document
        return document is not None and document.diagnostic is not None

    def can_refresh(self) -> bool:
        workspace = self.capabilities.workspace
        diagnostics = workspace.diagnostics if workspace else None
        return bool(diagnostics and diagnostics.refresh_support)

    @property
    def watches_files(self) -> bool:
        """Whether the client reports files changed on disk (``server.py`` registers for
        them when it can)."""
        workspace = self.capabilities.workspace
        watched = workspace.did_change_watched_files if workspace else None
        return bool(watched and watched.dynamic_registration)

    def shows_progress(self) -> bool:
        window = self.capabilities.window
        return bool(window and window.work_done_progress)

    def shows_disabled(self) -> bool:
        """Whether the client shows disabled code actions (with the reason)."""
        document = self.capabilities.text_document
        action = document.code_action if document else None
        return bool(action and action.disabled_support)

    def resolves_edits(self) -> bool:
        document = self.capabilities.text_document
        action = document.code_action if document else None
        support = action.resolve_support if action else None
        return bool(support and "edit" in support.properties)

    # -- texts -------------------------------------------------------------------------------
    def open_texts(self) -> dict[str, str]:
        """path -> text of every open document with a ``file:`` URI (a notebook open as
        cells: the notebook file it would be saved as, see ``notebooks.py``)."""
        workspace = self.server.workspace
        texts = {}
        for uri, document in workspace.text_documents.items():
            path = path_of_uri(uri)
            if path is not None:
                texts[path] = document.source
        for uri, notebook in workspace.notebook_documents.items():
            path = path_of_uri(uri)
            if path is not None:
                texts[path] = notebook_json(notebook, self.cell_text).decode("utf-8")
        return texts

    def cell_text(self, uri: str) -> str | None:
        document = self.server.workspace.text_documents.get(unquote(uri))
        return document.source if document is not None else None

    def lines(self, path: str) -> Sequence[str]:
        """The lines of a document (an absolute path, or a notebook cell's URI)."""
        documents = self.server.workspace.text_documents
        document = documents.get(uri_of(path)) or documents.get(unquote(uri_of(path)))
        return document.lines if document is not None else disk_lines(path)

    def converter(self, analysis: Analysis) -> Converter:
        codec = self.server.workspace.position_codec
        return Converter(codec, self.lines, analysis.path_of, self.mover(analysis))

    def mover(self, analysis: Analysis) -> Mover:
        """Where a finding's place is shown: a notebook's in its cells (``notebooks.py``)."""
        views: dict[str, NotebookView] = {}

        def moved(path: str, line: int, column: int) -> tuple[str, int, int]:
            if not is_notebook(path):
                return path, line, column
            if path not in views:
                views[path] = self.notebook_view(analysis, path)
            return views[path].place(line, column)

        return moved

    def notebook_view(self, analysis: Analysis, path: str) -> NotebookView:
        data = analysis.options.sources.get(path) or on_disk(path, read_source) or b""
        cells = self.cells(path)
        text = "".join(self.lines(path)) if cells is None else ""
        python = data.decode("utf-8", "replace").splitlines()
        return NotebookView(path, python, cells, text)

    def documents(self, path: str) -> list[str]:
        """The URIs that show ``path``'s diagnostics (a notebook's cells too, when it is open
        as a notebook): each is published to, empty or not, so that old ones are cleared."""
        return [uri_of(path), *(self.cells(path) or ())]

    def cells(self, path: str) -> list[str] | None:
        """The URIs of the cells of the notebook at ``path``, when it is open as a notebook."""
        notebook = self.server.workspace.get_notebook_document(notebook_uri=uri_of(path))
        return [cell.document for cell in notebook.cells] if notebook is not None else None

    def placed(self, project: Project, path: str) -> dict[str, list[types.Diagnostic]]:
        """The diagnostics of ``path``'s findings, by the URI of the document that shows
        them (see :meth:`documents`)."""
        shown = project.shown_analysis
        if shown is None:
            return {}
        findings = project.findings(path)
        return self.converter(shown).placed(path, findings, self.documents(path))

    # -- the analysis loop -------------------------------------------------------------------
    def changed(self, paths: Sequence[str], on_disk: bool = True) -> None:
        """Files changed (edited, saved, on disk): analyze their projects again (``on_disk``
        False: only open buffers changed, where the client reports changes on disk)."""
        if self.projects.touched(paths, on_disk or not self.watches_files):
            self.start()

    def start(self) -> None:
        if self.loop_task is None or self.loop_task.done():
            self.loop_task = asyncio.ensure_future(self.analyze_stale())

    async def analyze_stale(self) -> None:
        while stale := self.projects.stale():
            for project in stale:
                await self.analyze(project)

    async def settled(self, project: Project) -> None:
        """Wait until ``project``'s analysis is of its latest generation."""
        while project.stale:
            self.start()
            assert self.loop_task is not None
            await asyncio.shield(self.loop_task)

    async def in_engine(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.engine, work)

    async def analyze(self, project: Project) -> None:
        generation = project.generation
        first = project.analysis is None
        data = buffers(project, self.open_texts())
        before = None if project.disk_changed else project.analysis
        project.disk_changed = False  # a change from now on is seen by the next analysis
        token = await self.progress_begin(project) if first and self.shows_progress() else None
        try:
            if first:
                await self.first_steps(project)
            analysis = await self.in_engine(
                lambda: analyze(project.root, data, self.settings, before)
            )
        except (ConfigError, DiscoveryError) as exc:
            project.analyzed, project.disk_changed = generation, True
            self.show(f"lintloader: {exc}")
            self.end_quietly(token)
            return
        except Exception as exc:  # an internal error: one message, and the server goes on
            project.analyzed, project.disk_changed = generation, True
            self.show(f"lintloader: internal error: {type(exc).__name__}: {exc}")
            self.end_quietly(token)
            return
        changed = project.take(analysis, generation)
        if token is not None:
            self.progress_end(token, analysis)
        # a pull answered from the early check was not final: ask for another, changed or not
        refresh, project.answered_early = project.answered_early, False
        self.publish(project, changed, refresh)

    async def first_steps(self, project: Project) -> None:
        """Before a project's first analysis: its cold analysis started in the helper's
        forked child, which parses in shards (the analysis that follows here replays it),
        and, while that runs, the open files checked alone (:meth:`check_early`). Where there
        is no helper, no cache, or the cache holds a run of the project already (or the
        child failed), there is no child."""
        helper = self.helper
        cache = cold_cache(project.root, self.settings) if helper is not None else None
        child: asyncio.Future[bool] | None = None
        if helper is not None and cache is not None:
            job = {"root": project.root, "cache_dir": str(cache), "jobs": self.settings.cold_jobs}
            # waited for in a thread of its own: the engine's thread checks the open files
            child = asyncio.get_running_loop().run_in_executor(None, lambda: helper.run(job))
        self.check_early(project)
        if child is not None:
            await child

    # -- the open files first -------------------------------------------------------------------
    def check_early(self, project: Project) -> asyncio.Future[None] | None:
        """Until the first analysis of a cold project lands, check its open Python files
        alone (``analyze_alone``) and show that at once (pushed; a pull of an open file is
        answered from it where the client can be asked to pull again). Queued in the engine
        now, so before any analysis queued after; the check under way (or None)."""
        paths = self.early_paths(project)
        checked, task = self.early_checks.get(project.root, (frozenset(), None))
        if not paths or paths <= checked:
            return task
        data = buffers(project, {p: t for p, t in self.open_texts().items() if p in paths})
        settings, root = self.settings, project.root
        done = asyncio.get_running_loop().run_in_executor(
            self.engine, lambda: analyze_alone(root, sorted(paths), data, settings)
        )
        task = asyncio.ensure_future(self.show_early(project, done))
        self.early_checks[project.root] = (checked | paths, task)
        return task

    def early_paths(self, project: Project) -> frozenset[str]:
        """The open Python files of ``project`` an early check takes: none once its first
        analysis landed, or when that analysis replays a stored run (it is quick then)."""
        if project.analysis is not None:
            return frozenset()
        if project.cold is None:
            project.cold = starts_cold(project.root, self.settings)
        if not project.cold:
            return frozenset()
        open_ = self.open_texts()
        return frozenset(
            p for p in open_ if p.endswith(".py") and project.covers(p) and os.path.isfile(p)
        )

    async def show_early(self, project: Project, done: asyncio.Future[Analysis]) -> None:
        """Show the early check ``done`` gives, unless the project's analysis came first."""
        try:
            early = await done
        except Exception:  # the project's analysis says what is wrong
            return
        if project.analysis is None:  # else it landed meanwhile: it counts
            changed = project.take_early(early)
            if not self.pulls:
                self.publish(project, changed)

    async def progress_begin(self, project: Project) -> str | None:
        token = f"lintloader/analysis/{next(self.tokens)}"
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception:  # a client that refuses: no progress shown
            return None
        begin = types.WorkDoneProgressBegin(
            title="lintloader", message=f"analyzing {project.root}", cancellable=False
        )
        self.server.work_done_progress.begin(token, begin)
        return token

    def end_quietly(self, token: str | None) -> None:
        if token is not None:
            self.progress_end(token, None)

    def progress_end(self, token: str, analysis: Analysis | None) -> None:
        """End the progress of an analysis (None: it failed)."""
        message = "failed"
        if analysis is not None:
            found, files = len(analysis.result.findings), analysis.result.files_found
            message = f"{counted(found, 'finding')} in {files} files"
        self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

    def publish(self, project: Project, paths: Sequence[str], refresh: bool = False) -> None:
        """Show the new findings of ``paths`` (pushed, or a refresh asked of a pulling
        client; ``refresh``: asked even with no path); a path without findings any more is
        cleared."""
        if not (paths or refresh) or project.shown_analysis is None:
            return
        if self.pulls:
            if self.can_refresh():
                self.server.workspace_diagnostic_refresh(None)
            return
        for path in paths:
            for uri, diagnostics in self.placed(project, path).items():
                self.server.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
                )

    def show(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        self.server.window_show_message(types.ShowMessageParams(type=kind, message=message))

    # -- answers -----------------------------------------------------------------------------
    async def findings_of(self, uri: str) -> tuple[Project, str, tuple[Finding, ...]] | None:
        """The findings a hover or a code action answers from (none in a notebook: its
        findings are placed in its cells, which have no fixes or hovers of their own)."""
        path = path_of_uri(uri)
        if path is None:
            return None
        project = self.projects.of(path)
        await self.settled(project)
        return project, path, () if is_notebook(path) else project.findings(path)

    async def diagnostics_of(self, uri: str) -> list[types.Diagnostic]:
        """The diagnostics of one document: a file, or a cell of a notebook."""
        notebook = self.server.workspace.get_notebook_document(cell_uri=uri)
        path = path_of_uri(notebook.uri if notebook is not None else uri)
        if path is None:
            return []
        project = self.projects.of(path)
        if not await self.answered_early(project, path):
            await self.settled(project)
        placed = self.placed(project, path)
        return placed.get(uri) or placed.get(unquote(uri)) or []

    async def answered_early(self, project: Project, path: str) -> bool:
        """Whether a pull of ``path`` is answered from the early check of the open files
        (the client is asked to pull again once the project's analysis lands); else the
        answer waits for that analysis, as for a client that cannot be asked."""
        if project.analysis is not None or not self.can_refresh() or not self.pulls:
            return False
        early = self.check_early(project)
        if early is None:
            return False
        await asyncio.shield(early)
        shown = project.early
        if project.analysis is not None or shown is None:
            return False
        if not any(f.path == path for f in shown.discovery.files):
            return False
        project.answered_early = True
        return True

    def buffers_differ(self, project: Project, path: str) -> bool:
        """Whether the open buffer of ``path`` is not what the last analysis read."""
        texts = {p: t for p, t in self.open_texts().items() if p == path}
        analysis = project.analysis
        read = analysis.options.sources.get(path) if analysis else None
        now = buffers(project, texts).get(path)
        return now != read

    async def quick_fixes(
        self, project: Project, path: str, findings: Sequence[Finding]
    ) -> list[types.CodeAction]:
        """The quick fixes and ``# noqa`` actions of ``findings`` in ``path``, each tied to
        its diagnostic; tried once per analysis and finding (an editor asks at every move)."""
        from lintloader.integrations.lsp.actions import noqa_action, quick_fixes, without_accepted

        await self.settled(project)
        analysis = project.analysis
        if analysis is None:
            return []
        if self._tried is None or self._tried[0] is not analysis:
            self._tried = (analysis, {})
        tried = self._tried[1]
        codec = self.server.workspace.position_codec
        data = dict(analysis.options.sources)
        disabled = self.shows_disabled()

        def work() -> None:
            restrict = without_accepted(analysis)
            open_ = set(restrict(analysis.result).findings) if restrict else set(findings)
            for finding in findings:
                if finding in tried:
                    continue
                fixes = (
                    quick_fixes(analysis, finding, restrict, codec, disabled)
                    if finding in open_  # one the baseline accepts gets no fix: none tried
                    else []
                )
                noqa = noqa_action(analysis, path, finding, data, codec)
                tried[finding] = [action for action in [*fixes, noqa] if action is not None]

        await self.in_engine(work)
        converter = self.converter(analysis)
        made = []
        for finding in findings:
            for action in tried.get(finding, []):
                action.diagnostics = [converter.diagnostic(path, finding)]
                made.append(action)
        return made

    async def fix_all(self, project: Project, path: str) -> types.WorkspaceEdit | None:
        """The safe fixes of ``path``'s findings, as one edit (None before any analysis, or
        when they end no finding); tried once per analysis and file (an editor asks for code
        actions at every move)."""
        from lintloader.integrations.lsp.actions import fix_all_edit

        await self.settled(project)
        analysis = project.analysis
        if analysis is None:
            return None
        last = self._last_fix_all
        if last is not None and last[0] is analysis and last[1] == path:
            return last[2]
        codec = self.server.workspace.position_codec
        edit = await self.in_engine(lambda: fix_all_edit(analysis, path, codec))
        self._last_fix_all = (analysis, path, edit)
        return edit

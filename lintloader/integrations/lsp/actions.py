"""Code actions on findings: a quick fix per fix strategy (labelled safe or unsafe), ``# noqa``
for the finding's code, and ``source.fixAll.lintloader``, which applies the safe fixes only.
Neither fixes a finding the project's baseline accepts (``baseline =``), as ``lintloader fix``.

The edits come from the fix rounds ``lintloader fix`` runs (``fixers/runner.py``), judged as
``check`` judges "fixable" (``fixers/trial.py``): a quick fix is one strategy's rounds on its
finding alone, offered only when they end that finding (a client that shows disabled actions
gets one that says why not); fix-all is the rounds of ``fix``, safe strategies only, on the
findings of one document, offered when they end one, and may edit several files (a relocation
into another module's ``teardown``). No action edits a file
``fix`` would not write (:func:`refusal`): a link out of the project, a read-only file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from lsprotocol import types
from pygls.workspace import PositionCodec

from lintloader.finding.findings import PARSE_ERROR_CODE, Finding
from lintloader.fixers.base import FixStrategy
from lintloader.fixers.runner import FixOutcome, Guard, Restrict, Sources
from lintloader.fixers.writer import Roots, why_not_writable
from lintloader.integrations.lsp.analysis import Analysis
from lintloader.integrations.lsp.edits import workspace_edit


def refusal(analysis: Analysis) -> Guard:
    """Why an action must not edit a file: ``fix``'s check of its writes, on the analysed
    roots (a file that resolves, through a link, outside them; a read-only file)."""
    roots = Roots.of(analysis.discovery.roots)
    return lambda path: why_not_writable(path, roots, allow_installed=True)


def sources_for(buffers: Mapping[str, bytes]) -> Sources:
    """Every file's bytes as the editor has them: a buffer, else the file (read when asked)."""
    return Sources(FixOutcome(originals=dict(buffers), sources=dict(buffers)))


def strategy_fix(
    analysis: Analysis,
    finding: Finding,
    strategy: FixStrategy,
    restrict: Restrict | None,
    codec: PositionCodec,
    disabled: bool = False,
) -> types.CodeAction | None:
    """``strategy`` on ``finding``: the fix rounds ``fix`` runs, on that finding alone
    (:func:`~lintloader.fixers.trial.try_strategy`), their edit offered only when they end it.
    Otherwise None, or (``disabled``: the client shows such actions) a disabled action that
    says why."""
    from lintloader.fixers.trial import try_strategy

    trial = try_strategy(
        analysis.discovery, analysis.options, finding, strategy.name, restrict, refusal(analysis)
    )
    safety = "safe" if strategy.safe else "unsafe"
    title = f"Fix {finding.code} ({safety}, {strategy.name}): {strategy.description}"
    if not trial.ends:
        if not disabled:
            return None
        why = f"{strategy.name} does not end this finding: {trial.why_not()}"
        return types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix,
            disabled=types.CodeActionDisabled(reason=why),
        )
    changed = trial.outcome.changed
    before = {path: trial.outcome.originals[path] for path in changed}
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        edit=workspace_edit(before, changed, codec),
        is_preferred=strategy.safe or None,
    )


def quick_fixes(
    analysis: Analysis,
    finding: Finding,
    restrict: Restrict | None,
    codec: PositionCodec,
    disabled: bool = False,
) -> list[types.CodeAction]:
    """A quick fix per strategy the finding names that ends it, safe ones first (see
    :func:`strategy_fix`)."""
    from lintloader.fixers.registry import load_registry

    registry = load_registry()
    strategies = [s for name in finding.fixes if (s := registry.get(name)) is not None]
    strategies.sort(key=lambda s: not s.safe)
    found = (strategy_fix(analysis, finding, s, restrict, codec, disabled) for s in strategies)
    return [action for action in found if action is not None]


def noqa_action(
    analysis: Analysis,
    path: str,
    finding: Finding,
    buffers: Mapping[str, bytes],
    codec: PositionCodec,
) -> types.CodeAction | None:
    """Add ``# noqa: CODE`` to the statement that holds the finding's line."""
    from lintloader.fixers.add_noqa import add_noqa

    if finding.code == PARSE_ERROR_CODE or refusal(analysis)(path):
        return None
    sources = sources_for(buffers)
    source = sources[path]
    try:
        edited, count = add_noqa(source, {finding.line: {finding.code}})
    except Exception:  # a buffer libcst cannot parse gets no such action
        return None
    if not count:
        return None
    return types.CodeAction(
        title=f"Add `# noqa: {finding.code}`",
        kind=types.CodeActionKind.QuickFix,
        edit=workspace_edit({path: source}, {path: edited}, codec),
    )


def without_accepted(analysis: Analysis, within: Restrict | None = None) -> Restrict | None:
    """``within`` less the findings the project's baseline accepts; when the baseline cannot
    be read, nothing (a fix must not rewrite what it may accept)."""
    from lintloader.fixers.scope import fix_scope
    from lintloader.suppress.baseline import BaselineError, read

    baseline = analysis.options.config.baseline
    try:
        recorded = read(baseline) if baseline is not None else []
    except BaselineError:
        return lambda result: replace(result, findings=[])
    return fix_scope(within, baseline, recorded)


def fix_all_edit(analysis: Analysis, path: str, codec: PositionCodec) -> types.WorkspaceEdit | None:
    """The safe fixes of the findings in ``path`` (fix rounds, as ``lintloader fix``), as one
    edit of every file they change; None when they end no finding (``fix`` would fix none)."""
    from lintloader.fixers.registry import load_registry
    from lintloader.fixers.runner import fix_in_memory
    from lintloader.integrations.project import ReportScope

    scope = ReportScope(analysis.root, (path,))
    restrict = without_accepted(analysis, scope.restrict)
    outcome = fix_in_memory(
        analysis.discovery,
        analysis.options,
        load_registry(),
        False,
        guard=refusal(analysis),
        restrict=restrict,
    )
    if not outcome.fixed:
        return None
    before = {p: outcome.originals[p] for p in outcome.changed}
    return workspace_edit(before, outcome.changed, codec)

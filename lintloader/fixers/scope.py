"""What a fix may act on: the findings ``check`` reports. Every fix path (``fix``, ``check --fix``
and ``--diff``, the pre-commit fix hook, the editor's quick fixes and fix-all) narrows its
rounds with the same :data:`~lintloader.fixers.runner.Restrict`: the findings located in the
files given (a project scope), less those the baseline accepts, so a fix never rewrites code a
team has accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from lintloader.fixers.runner import Restrict
from lintloader.pipeline.engine import CheckResult
from lintloader.suppress.baseline import Entry, match_files


def fix_scope(
    within: Restrict | None, baseline: str | None, recorded: Sequence[Entry] = ()
) -> Restrict | None:
    """``within`` (None: every file) less the findings the baseline at ``baseline`` holds
    (``recorded``: its entries, read once by the caller)."""
    if baseline is None:
        return within

    def restrict(result: CheckResult) -> CheckResult:
        if within is not None:
            result = within(result)
        matched = match_files(result.findings, result.files, recorded, baseline)
        return replace(result, findings=matched.findings)

    return restrict

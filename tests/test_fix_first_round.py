"""The fix trial starts from the command's own check (``fixers/runner.py``'s ``FixRounds.first``,
``fixers/trial.py``'s ``try_fixes``): the check of the files as they are is not made again for
the first round, nor for the every-finding check of the unfixed sources when the command
already showed every finding. The answer is the rounds' from a check of their own: the same
edits, fixes (with what each leaves), notes, findings left and rounds; on a project whose chain
crosses files (the guard and the hoist in one file make a finding in its caller's file, which a
later round fixes). On every rule's fixtures, what ``check`` now promises is compared with what
``fix`` (rounds that check for themselves) applies by tests/test_fix_honest.py. A replayed check
(its program empty) is never started from.

In-process through the library API, as ``lintloader check`` calls it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from test_fix_rounds_shared import outcome_parts, tree

from lintloader.finding.findings import Severity
from lintloader.fixers.registry import load_registry
from lintloader.fixers.runner import FixRounds
from lintloader.fixers.trial import try_fixes
from lintloader.pipeline.engine import CheckOptions, run_check
from lintloader.scan.discover.paths import discover_paths
from lintloader.settings.config import Config

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)


def test_rounds_from_the_commands_check_end_as_rounds_that_check_again(tmp_path: Path) -> None:
    root = tree("project", tmp_path)
    discovery = discover_paths([str(root)], cwd=str(root))
    options = CheckOptions(config=Config(min_severity=Severity.INFO), jobs=1, cache_writes=False)
    checked = run_check(discovery, options)
    started = FixRounds(discovery, options, load_registry(), first=checked)
    own = FixRounds(discovery, options, load_registry())
    for unsafe in (False, True):
        from_checked = started.run(unsafe) if not unsafe else started.unsafe_after()
        checked_again = own.run(unsafe) if not unsafe else own.unsafe_after()
        assert outcome_parts(from_checked) == outcome_parts(checked_again)
        # not vacuous: the first round read the command's check, and fixes followed it
        assert from_checked.found is checked.findings
        assert from_checked.applied and from_checked.rounds > 1
    # the check of the unfixed sources at every severity is the command's too
    assert started._before is checked and own._before is not checked
    # the hoist in loop_built.py made a finding in main.py (its caller's loop), which a later
    # round fixed: a chain across files, a fix that enabled another
    assert not any(f.path.endswith("main.py") for f in checked.findings)
    assert any(a.finding.path.endswith("main.py") for a in from_checked.applied)


def test_the_trial_answers_alike_from_the_commands_check(tmp_path: Path) -> None:
    root = tree("project", tmp_path)
    discovery = discover_paths([str(root)], cwd=str(root))
    options = CheckOptions(config=Config(min_severity=Severity.INFO), jobs=1)
    checked = run_check(discovery, options)
    started, own = try_fixes(discovery, options, checked=checked), try_fixes(discovery, options)
    assert started.applied_to(checked.findings) == own.applied_to(checked.findings)
    assert started.unsafe_offered(checked.findings) == own.unsafe_offered(checked.findings)
    assert started.notes == own.notes
    assert any(started.applied_to(checked.findings))


def test_a_replayed_check_is_not_started_from(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    root = tree("project", tmp_path / "src")
    discovery = discover_paths([str(root)], cwd=str(root))
    config = Config(min_severity=Severity.INFO)
    options = CheckOptions(config=config, jobs=1, cache_dir=tmp_path / "cache", replay=True)
    run_check(discovery, options)
    replayed = run_check(discovery, options)
    assert replayed.route == "replayed" and replayed.linked is None
    started = try_fixes(discovery, replace(options, replay=False), checked=replayed)
    own = try_fixes(discovery, replace(options, replay=False))
    findings = run_check(discovery, replace(options, replay=False)).findings
    assert started.applied_to(findings) == own.applied_to(findings)
    assert any(started.applied_to(findings))

"""A new rule, written knowing nothing of incremental reuse, stays correct under warm runs.

The rule below reads calls only through the linker's queries, as any rule does
(``calls_named``, ``calls_of``, ``edges_into``), and says nothing about stored runs. It joins the
registry the way a new ``llNNN_*.py`` module would (``all_rules`` is the registry's one list),
and after a random series of one-file edits (calls added, lines moved, helpers added, files
restored) every warm run prints exactly what a run without cache prints.

(What the recording itself must keep is checked closer in ``tests/test_demand_reads.py`` and
``tests/test_recording.py``: on this series the stored selection's other checks already send
every edit that matters to the rule back to analysis.)
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_revisit import HELPER, _blank_line_inserted, _call_added, check, make_project, shown

from lintloader.analysis.context import AnalysisContext
from lintloader.findings import Finding, Severity
from lintloader.rules import registry
from lintloader.rules.base import Rule

SEED = 20261204
STEPS = 40


def _check(ctx: AnalysisContext) -> Iterator[Finding]:
    """A ``print()`` in a function that other code calls, or that resets something."""
    program = ctx.program
    for info, call in program.calls_named(["print"]):
        callers = program.edges_into(info.key)
        resets = [c for c in program.calls_of(info.key) if "reset" in c.target[-1]]
        if callers or resets:
            where = ctx.display(info.file.path)
            message = f"`{info.display_name}` prints ({len(callers)} callers, {len(resets)} resets)"
            yield Finding(
                "LL901", Severity.WARNING, where, call.site.line, call.site.column, message
            )


NEW_RULE = Rule(
    "LL901",
    "print-next-to-reset",
    Severity.WARNING,
    "A print() next to a reset.",
    "## print-next-to-reset (LL901)\n",
    _check,
    seed_tokens=((b"print(",),),
)


@pytest.fixture
def with_new_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = registry.all_rules()
    monkeypatch.setattr(registry, "all_rules", lambda: (*rules, NEW_RULE))


@pytest.mark.usefixtures("with_new_rule")
def test_a_new_rule_is_right_after_any_series_of_edits(tmp_path: Path) -> None:
    root, cache = make_project(tmp_path / "proj"), tmp_path / "cache"
    files = sorted(root.rglob("*.py"))
    originals = {path: path.read_text() for path in files}
    edits = (
        lambda text, n: _call_added(text, n, f"print({n})"),
        lambda text, n: _call_added(text, n, f"print({n})"),
        lambda text, n: _call_added(text, n, "reset()"),
        lambda text, n: _call_added(text, n, "helper_0(1)"),
        lambda text, n: _blank_line_inserted(text, n),
        lambda text, n: text + HELPER.format(name=f"helper_{n}"),
        lambda text, n: text + f"\n# comment {n}\n",
    )
    rng = random.Random(SEED)
    first = check(root, cache)
    assert first.route == "analyzed"
    routes, codes = [], set()
    for step in range(STEPS):
        for path in rng.sample(files, rng.choice((1, 1, 2))):
            if rng.random() < 0.2:
                path.write_text(originals[path])
            else:
                path.write_text(rng.choice(edits)(path.read_text(), step))
        cached = check(root, cache)
        assert shown(cached) == shown(check(root, None)), f"step {step}"
        routes.append(cached.route)
        codes |= {finding.code for finding in cached.findings}
    assert "LL901" in codes  # the new rule found something on the way
    assert {"replayed", "analyzed"} <= set(routes), routes

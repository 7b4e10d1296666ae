"""The one cost model (lintloader/domain/cost.py): the kinds of extra pool, the start method a
loader gets, the severity and the words every part of lintloader derives from them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lintloader.domain import cost
from lintloader.domain.cost import Frequency, Kind, PoolCount, StartMethod
from lintloader.summary.start_methods import context_branches

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)


def start_method(
    written: str | None, python: tuple[int, int] | None = None, platform: str | None = None
) -> StartMethod:
    """The start method of a loader whose ``multiprocessing_context`` is ``written``, read the
    way the summarizer reads it (``summary/start_methods.py``)."""
    branches = context_branches(ast.parse(written, mode="eval").body) if written else None
    return cost.start_method(branches, python, platform)


def test_the_module_imports_nothing_of_lintloader() -> None:
    """The ground floor: the rules, the analyses and the runtime trace all import it."""
    tree = ast.parse(Path(cost.__file__).read_bytes())
    imported = [
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    ] + [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
         for alias in node.names]  # fmt: skip
    assert imported and not [name for name in imported if name.startswith("lintloader")]


@pytest.mark.parametrize(
    ("persistent", "frequency", "kind"),
    [
        (True, Frequency.EPOCH, Kind.DEFEATED),  # a rebuild or reset throws persistence away
        (True, Frequency.EVALUATION, Kind.DEFEATED),
        (False, Frequency.STEP, Kind.DEFEATED),  # a pool per step, persistent or not
        (True, Frequency.STEP, Kind.DEFEATED),
        (False, Frequency.EPOCH, Kind.AVOIDABLE),  # torch's default: one pool per epoch
        (False, Frequency.EVALUATION, Kind.AVOIDABLE),
        (False, Frequency.CALL, Kind.AVOIDABLE),
    ],
)
def test_kind_of_an_extra_pool(persistent: bool, frequency: Frequency, kind: Kind) -> None:
    assert cost.extra_kind(persistent, frequency) is kind


def test_persistent_with_zero_workers_is_a_raise_of_its_own() -> None:
    assert cost.extra_kind(True, Frequency.EPOCH, num_workers_zero=True) is Kind.RAISE
    assert cost.severity(Kind.RAISE, Frequency.ONCE) == "error"
    assert Kind.RAISE.advisory_label == "affected" and Kind.RAISE.verdict == "FAIL"


def test_words_follow_the_kind() -> None:
    assert (Kind.DEFEATED.advisory_label, Kind.DEFEATED.verdict) == ("affected", "FAIL")
    assert (Kind.AVOIDABLE.advisory_label, Kind.AVOIDABLE.verdict) == ("advice", "could save")


@pytest.mark.parametrize(
    ("platform", "python", "method"),
    [
        ("linux", (3, 10), "fork"),
        ("linux", (3, 13), "fork"),
        ("linux", (3, 14), "forkserver"),
        ("linux", (3, 15), "forkserver"),
        ("darwin", (3, 10), "spawn"),
        ("win32", (3, 12), "spawn"),
    ],
)
def test_default_start_method(platform: str, python: tuple[int, int], method: str) -> None:
    found = start_method(None, python, platform)
    assert (found.name, found.explicit) == (method, False)
    assert found.costly is (method != "fork")


def test_explicit_context_wins_over_the_default() -> None:
    for written, name in [
        ('"spawn"', "spawn"),
        ("mp.get_context('forkserver')", "forkserver"),
        ("'fork'", "fork"),
    ]:
        found = start_method(written, (3, 14), "linux")
        assert (found.name, found.explicit) == (name, True)
    # a context the text does not name: the default of the Python
    assert start_method("self.context", (3, 14), "linux").name == "forkserver"
    assert "multiprocessing_context" in start_method('"spawn"').describe()
    assert start_method(None, (3, 14), "linux").describe() == (
        "start method forkserver, Python 3.14's default on Linux"
    )


@pytest.mark.parametrize(
    ("written", "python", "name", "costly", "when"),
    [
        # one branch names spawn, the other is the default (fork): costly only when `flag`
        ('"spawn" if flag else None', (3, 12), "spawn", False, "flag"),
        ('"spawn" if flag else "fork"', (3, 12), "spawn", False, "flag"),
        ('"fork" if args.safe else mp.get_context("spawn")', (3, 12), "spawn", False,
         "not args.safe"),
        # every branch costly: the default of 3.14 is forkserver, or both name one
        ('"spawn" if flag else None', (3, 14), "spawn", True, None),
        ('"spawn" if flag else "forkserver"', (3, 12), "spawn", True, None),
        # a config value or a variable names no method: the default
        ("cfg.spawn", (3, 12), "fork", False, None),
        ("mp.get_context(cfg.start_method)", (3, 12), "fork", False, None),
        ("mp.get_context(method='forkserver')", (3, 12), "forkserver", True, None),
    ],
)  # fmt: skip
def test_a_context_chosen_by_a_condition(
    written: str, python: tuple[int, int], name: str, costly: bool, when: str | None
) -> None:
    """Issue 41: the start method of ``"spawn" if flag else None`` is known on one branch only:
    costly (the severity raised) only when every branch is, else priced by the costly branch
    with its condition, which the message says."""
    found = start_method(written, python, "linux")
    assert (found.name, found.costly, found.costly_when) == (name, costly, when)


def test_the_message_names_the_condition_of_a_costly_branch() -> None:
    fork = start_method('"spawn" if flag else None', (3, 12), "linux")
    assert cost.severity(Kind.AVOIDABLE, Frequency.EPOCH, fork) == "info"
    assert cost.cost_phrase(Kind.AVOIDABLE, Frequency.EPOCH, 2, method=fork) == (
        "a new pool of 2 workers once per epoch, and under spawn when flag each worker a fresh"
        " interpreter (from multiprocessing_context): avoidable with persistent_workers=True"
    )
    default = start_method('"fork" if flag else None', (3, 14), "linux")
    assert "under forkserver when not flag each worker a fresh interpreter (Python 3.14's" in (
        cost.cost_phrase(Kind.DEFEATED, Frequency.EPOCH, 2, method=default)
    )
    both = start_method('"spawn" if flag else None', (3, 14), "linux")
    assert cost.severity(Kind.AVOIDABLE, Frequency.EPOCH, both) == "warning"
    assert both.describe() == (
        "start method spawn, from multiprocessing_context, or forkserver, Python 3.14's default"
        " on Linux"
    )
    either = start_method('"spawn" if flag else "forkserver"', (3, 12), "linux")
    assert either.describe() == "start method spawn or forkserver, from multiprocessing_context"


@pytest.mark.parametrize(
    ("spec", "lowest"),
    [(">=3.10", (3, 10)), (">=3.9,<4", (3, 9)), ("~=3.14", (3, 14)), (">3.13", (3, 14)),
     ("==3.12.*", (3, 12)), ("<4", None), ("", None)],
)  # fmt: skip
def test_lowest_python_of_requires_python(spec: str, lowest: tuple[int, int] | None) -> None:
    assert cost.lowest_python(spec) == lowest


def test_severity_by_kind_frequency_and_start_method() -> None:
    fork = start_method(None, (3, 12), "linux")
    spawn = start_method('"spawn"')
    forkserver = start_method(None, (3, 14), "linux")
    assert cost.severity(Kind.AVOIDABLE, Frequency.EPOCH, fork) == "info"
    assert cost.severity(Kind.DEFEATED, Frequency.EPOCH, fork) == "warning"
    assert cost.severity(Kind.DEFEATED, Frequency.STEP, fork) == "warning"
    for costly in (spawn, forkserver):  # a fresh interpreter per worker: one level up
        assert cost.severity(Kind.AVOIDABLE, Frequency.EPOCH, costly) == "warning"
        assert cost.severity(Kind.DEFEATED, Frequency.EVALUATION, costly) == "error"
        # paid only when an attempt fails, or once per item: not raised
        assert cost.severity(Kind.AVOIDABLE, Frequency.RETRY, costly) == "info"
        assert cost.severity(Kind.AVOIDABLE, Frequency.ONCE, costly) == "info"


def test_frequency_is_ordered_step_evaluation_epoch() -> None:
    assert Frequency.STEP > Frequency.EVALUATION > Frequency.EPOCH > Frequency.RETRY


def test_cost_phrases() -> None:
    assert cost.cost_phrase(Kind.DEFEATED, Frequency.STEP, 8) == (
        "a new pool of 8 workers every step"
    )
    assert cost.cost_phrase(Kind.DEFEATED, Frequency.EVALUATION, None, every="500") == (
        "a new worker pool every 500 steps"
    )
    assert cost.cost_phrase(Kind.DEFEATED, Frequency.EVALUATION, 4) == (
        "a new pool of 4 workers every evaluation"
    )
    assert cost.cost_phrase(Kind.AVOIDABLE, Frequency.EPOCH, 2) == (
        "a new pool of 2 workers once per epoch: avoidable with persistent_workers=True"
    )
    spawn = start_method('"spawn"')
    assert (
        "fresh interpreter: start method spawn, from multiprocessing_context"
        in cost.cost_phrase(Kind.AVOIDABLE, Frequency.EPOCH, 2, method=spawn)
    )


def test_pool_count_against_the_cheapest_correct_run() -> None:
    count = PoolCount(started=12, needed=1, defeated=11)
    assert (count.extra, count.avoidable) == (11, 0)
    kept = PoolCount(started=3, needed=1)
    assert (kept.extra, kept.avoidable) == (2, 2)
    assert PoolCount(started=2, needed=2).extra == 0
    assert cost.time_lost(11, 1.5) == pytest.approx(16.5)
    assert cost.time_lost(-1, 1.5) == 0.0


@pytest.mark.parametrize(
    ("test", "every"),
    [
        ("step % 500 == 0", "500"),
        ("global_step % args.eval_every == 0", "args.eval_every"),
        ("(i + 1) % K == 0", "K"),
        ("not step % eval_steps", "eval_steps"),
        ("epoch == 0", None),
        ("loader is None", None),
    ],
)
def test_every_k_steps_read_from_a_test(test: str, every: str | None) -> None:
    assert cost.every_k(test) == every


def test_retry_loop_by_its_header() -> None:
    assert cost.retry_loop("for attempt in range(3)")
    assert cost.retry_loop("for tries in range(args.max_tries)")
    assert cost.retry_loop("for retry in range(5)")
    assert not cost.retry_loop("for epoch in range(epochs)")
    assert not cost.retry_loop("for batch in loader")


def test_advisories_say_affected_only_for_a_defeated_pool_or_a_raise() -> None:
    from lintloader.analysis.advisories import known_advisories
    from lintloader.finding.findings import Advisory

    kinds = {entry.distribution: Kind(entry.cost_class) for entry in known_advisories()}
    assert {name for name, kind in kinds.items() if kind is Kind.AVOIDABLE} == {
        "flair", "simpletransformers", "torchio"
    }  # fmt: skip  # non-persistent loaders rebuilt per pass (issue 41)
    assert kinds["pytorch-lightning"] is Kind.DEFEATED and kinds["timm"] is Kind.RAISE
    for entry in known_advisories():
        kind = Kind(entry.cost_class)
        advisory = Advisory(
            entry.distribution, "1.0", entry.fixed, entry.summary, entry.reference, entry.kind
        )
        assert entry.kind == kind.advisory_label
        assert ("is affected" in advisory.message) is kind.defect, entry.distribution
        assert (": advice, an avoidable cost" in advisory.message) is not kind.defect


@pytest.mark.enumerates_rules
def test_every_rule_page_says_what_its_finding_costs() -> None:
    """Issue 41: each rule's documentation (docs/rules/, generated from the rule's module) has a
    **Cost** paragraph that points to the cost model."""
    from lintloader.rules.registry import all_rules

    docs = Path(__file__).resolve().parents[1] / "docs" / "rules"
    for rule in all_rules():
        page = (docs / f"{rule.code}.md").read_text("utf-8")
        assert "**Cost** ([cost model](../concepts.md#the-cost-model)):" in page, rule.code

"""Issue 14's DataLoader-construction shapes, through the real CLI's JSON: where a finding is
anchored, what its hops say, which other loops it lists, which fixes it offers.

The markers in fixtures/rules/ already pin every finding's line and severity; these tests pin
what the markers cannot see (chains, "also reached from", fixes)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

# single fixture files (each chain stays in its file), checked alone as fixtures/rules/README.md
# says: a one-file check inside the checkout would read all of it as its project
ITER_BUILDS = "fixtures/rules/LL202/iter_builds_pool.py"
KEYWORD_FLOW = "fixtures/rules/LL201/keyword_flow.py"
NONE_GUARD = "fixtures/rules/LL202/none_guard_unfilled.py"
AT_LEAST_WARNING = ("warning", "error")


def check_json(*args: str) -> list[dict]:
    result = run_cli("check", *args, "--output-format", "json", "--no-cache")
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def test_step_loop_is_the_anchor_and_the_eval_set_loop_is_also_listed() -> None:
    (finding,) = check_json("fixtures/check/eval_on_start", "--min-severity", "info")
    assert (finding["code"], finding["severity"]) == ("LL202", "warning")
    assert finding["path"].endswith("evalkit/trainer.py")
    chain = finding["chain"]
    assert chain[0]["verb"] == "loop"
    assert chain[0]["action"] == "for step in range(steps)"
    assert [h["verb"] for h in chain[1:-1]] == ["calls"] * (len(chain) - 2)
    assert chain[-1]["verb"] == "builds"
    assert chain[-1]["path"].endswith("evalkit/data.py")
    assert chain[-1]["action"] == "self.loader_cls(dataset, **params)"
    (also,) = finding["also_reaches"]
    assert also["verb"] == "also reached from"
    assert also["path"].endswith("evalkit/evaluation.py")
    assert "self.eval_sets.items()" in also["action"]


def test_text_hops_never_say_reset_for_a_construction() -> None:
    result = run_cli(
        "check", "fixtures/check/eval_on_start", "--min-severity", "info", "--no-cache"
    )
    hops = [line for line in result.stdout.splitlines() if line.startswith("    ")]
    assert hops, result.stdout
    assert not [h for h in hops if ": reset " in h or "calls for " in h]
    assert any(": loop for step in range(steps)" in h for h in hops)
    assert any(": builds self.loader_cls(dataset, **params)" in h for h in hops)


@pytest.fixture(scope="module")
def files_findings() -> list[dict]:
    """One check (at info) of the single files, each test taking its file's findings."""
    files = (ITER_BUILDS, KEYWORD_FLOW, NONE_GUARD)
    return check_json("--project-root", "none", *files, "--min-severity", "info")


def findings_in(findings: list[dict], path: str, severities: tuple[str, ...]) -> list[dict]:
    """The findings of ``path`` at the ``severities`` (the default shows warning and up)."""
    return [f for f in findings if f["path"] == path and f["severity"] in severities]


def test_iter_roots_start_pools_whatever_persistent_workers_says(files_findings: list) -> None:
    findings = findings_in(files_findings, ITER_BUILDS, AT_LEAST_WARNING)
    functions = sorted(f["chain"][0]["function"] for f in findings if f["code"] == "LL202")
    assert functions == [
        "FreshIterator.__iter__",
        "HandMadeIterator.__iter__",
        "Wrapper.__iter__",
    ]
    assert all("whatever `persistent_workers` says" in f["message"] for f in findings)


def test_keywords_through_a_dict_are_guarded_at_the_entry(files_findings: list) -> None:
    findings = [
        f
        for f in findings_in(files_findings, KEYWORD_FLOW, AT_LEAST_WARNING)
        if f["code"] == "LL201"
    ]
    assert len(findings) == 4
    # the guard rewrites the dict entry's value P as `P and <workers> > 0` (issue 43)
    assert all(f["fixes"] == ["persistent-workers-guard"] for f in findings)
    assert "(in `**cfg`)" in findings[2]["message"]
    assert "a parameter that defaults to True" in findings[0]["message"]


def test_a_none_guarded_build_is_still_reached_by_a_call_that_may_pass_none(
    files_findings: list,
) -> None:
    findings = findings_in(files_findings, NONE_GUARD, ("info", *AT_LEAST_WARNING))
    (built,) = [f for f in findings if f["chain"][-1]["function"] == "make_loader"]
    assert built["chain"][1]["action"] == "evaluate(model, dataset)"
    assert built["chain"][2]["action"] == "make_loader(dataset)"
    also = sorted(hop["action"].rsplit(": ", 1)[-1] for hop in built["also_reaches"])
    assert also == [
        "evaluate(model, dataset, dataloader=None)",
        "evaluate(model, dataset, dataloader=maybe_loader)",
        "evaluate(self.model, self.dataset, self.val_loader)",
    ]

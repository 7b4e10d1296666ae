"""Each fixture tree under fixtures/check/ is scanned by the real CLI and its text output must
match ``expected.txt`` beside it (TorchFix-style golden files). To re-bless after an intended
change: ``pytest tests/test_check_fixtures.py --bless`` writes each ``expected.txt`` from the run
(the same command line as the test's), then review the diff with ``git diff fixtures/check``."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, run_cli

CASES = sorted(p.name for p in (FIXTURES / "check").iterdir() if p.is_dir())


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("name", CASES)
def test_fixture_output_matches_expected(name: str, request: pytest.FixtureRequest) -> None:
    expected = FIXTURES / "check" / name / "expected.txt"
    result = run_cli("check", f"fixtures/check/{name}", "--min-severity", "info", "--no-cache")
    assert result.returncode in (0, 1), result.stderr
    if request.config.getoption("bless"):
        expected.write_text(result.stdout)
    assert result.stdout == expected.read_text()
    assert "Traceback" not in result.stderr


def findings(*args: str) -> list[dict]:
    result = run_cli("check", *args, "--output-format", "json", "--no-cache")
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_lightning150_shape_has_full_chain_across_modules() -> None:
    (finding,) = findings("fixtures/check/lightning150")
    assert finding["code"] == "LL101"
    assert finding["severity"] == "error"
    assert finding["path"].endswith("minilight/utilities/fetching.py")
    hops = finding["chain"]
    assert [h["function"] for h in hops] == [
        "DataFetcher.__iter__",
        "DataFetcher.reset",
        "CombinedLoader._shutdown_workers_and_reset_iterator",
    ]
    assert hops[0]["action"] == "self.reset()"
    assert hops[-1]["path"].endswith("minilight/trainer/supporters.py")
    assert hops[-1]["action"] == "dataloader._iterator = None"
    assert [h["action"] for h in finding["also_reaches"]] == [
        "dataloader._iterator._shutdown_workers()"
    ]


def test_lightning151_shape_is_clean_at_warning_and_above() -> None:
    result = run_cli("check", "fixtures/check/lightning151", "--no-cache")
    assert result.returncode == 0, result.stdout
    assert result.stdout == ""
    infos = findings("fixtures/check/lightning151", "--min-severity", "info")
    assert {f["code"] for f in infos} == {"LL103"}


def test_subclass_override_is_dispatched() -> None:
    (finding,) = findings("fixtures/check/override_dispatch")
    assert finding["chain"][-2]["function"] == "BaseFetcher.__iter__"
    assert finding["chain"][-1]["function"] == "PrefetchFetcher.reset"


def test_super_chain_reports_both_iters() -> None:
    roots = [f["chain"][0]["function"] for f in findings("fixtures/check/super_chain")]
    assert roots == ["Parent.__iter__", "Child.__iter__"]


def test_method_passed_by_reference_counts_as_call() -> None:
    (finding,) = findings("fixtures/check/method_reference")
    assert [h["function"] for h in finding["chain"]] == [
        "Wrapper.__iter__",
        "Combined.reset",
        "Combined._drop",
    ]


def test_reexport_through_init_is_resolved() -> None:
    (finding,) = findings("fixtures/check/reexport")
    assert finding["chain"][-1]["path"].endswith("loaderkit/_impl.py")


def test_name_traps_only_flag_the_dataloader_subclass() -> None:
    (finding,) = findings("fixtures/check/name_traps", "--min-severity", "info")
    assert finding["chain"][0]["function"] == "RestartingLoader.__iter__"


def test_persistent_workers_guard_lowers_severity_to_info() -> None:
    assert findings("fixtures/check/guarded") == []
    (finding,) = findings("fixtures/check/guarded", "--min-severity", "info")
    assert finding["severity"] == "info"

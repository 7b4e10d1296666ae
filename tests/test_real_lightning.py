"""The released PyTorch Lightning wheels: 1.5.0 has the bug, 1.5.1 does not.

The wheels are downloaded at test time (``pip download --no-deps``, cached under
``~/.cache/lintloader-tests``); the tests skip, saying why, only when that is impossible.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, unpacked_wheel


@pytest.fixture(scope="module")
def lightning(tmp_path_factory: pytest.TempPathFactory):
    def unpack(version: str) -> Path:
        target = tmp_path_factory.mktemp(f"pl{version}")
        return unpacked_wheel(f"pytorch-lightning=={version}", target) / "pytorch_lightning"

    return unpack


@pytest.fixture(scope="module")
def lightning150_at_info(lightning) -> list[dict]:
    """One ``check --min-severity info`` of Lightning 1.5.0, which both of its tests read: its
    one LL101 at error level, and no other LL101 at any level."""
    return check_json(lightning("1.5.0"), "--min-severity", "info")


def check_json(path: Path, *extra: str) -> list[dict]:
    result = run_cli("check", str(path), "--output-format", "json", "--no-cache", *extra)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def test_lightning_150_iter_reset_is_found_with_its_chain(lightning150_at_info) -> None:
    findings = lightning150_at_info
    errors = [f for f in findings if f["code"] == "LL101" and f["severity"] == "error"]
    assert len(errors) == 1, findings
    (error,) = errors
    assert error["path"].endswith("pytorch_lightning/utilities/fetching.py")
    chain = error["chain"]
    assert chain[0]["function"] == "AbstractDataFetcher.__iter__"
    assert chain[0]["action"] == "self.reset()"
    assert chain[1]["function"] == "AbstractDataFetcher.reset"
    assert chain[-1]["path"].endswith("pytorch_lightning/trainer/supporters.py")
    assert chain[-1]["function"] == "CombinedLoader._shutdown_workers_and_reset_iterator"
    assert chain[-1]["action"] == "dataloader._iterator = None"


def test_lightning_151_has_no_iter_reset(lightning) -> None:
    findings = check_json(lightning("1.5.1"), "--min-severity", "info")
    assert not [f for f in findings if f["code"] == "LL101" and f["severity"] != "info"]
    assert not [f for f in findings if f["severity"] == "error"]
    # The shutdown still exists (teardown uses it): listed at info level, no more.
    ends = [f["chain"][-1]["path"] for f in findings if f["chain"]]
    assert any(path.endswith("pytorch_lightning/trainer/supporters.py") for path in ends)


def test_lightning_150_has_exactly_one_ll101_at_any_severity(lightning150_at_info) -> None:
    findings = lightning150_at_info
    assert len([f for f in findings if f["code"] == "LL101"]) == 1, findings


def guessed(finding: dict) -> bool:
    """A finding whose chain has a step linked by method name (not proven by types)."""
    return any(hop["confidence"] != "high" for hop in finding["chain"])


@pytest.mark.parametrize("version", ["2.0.9", "2.1.4"])
def test_lightning_2x_is_clean_and_links_nothing_by_method_name(lightning, version) -> None:
    """Lightning 2.x keeps workers alive. Its `self.batch_progress.total.reset()` (a progress
    counter) and `self.dataset.reset()` (a sampler wrapper) once linked to
    `CombinedLoader.reset` by method name: 8 info findings on a clean release."""
    findings = check_json(lightning(version), "--min-severity", "info")
    assert [f for f in findings if f["severity"] != "info"] == []
    assert [f for f in findings if guessed(f)] == []
    assert not [f for f in findings if f["code"] in ("LL101", "LL102", "LL105")]

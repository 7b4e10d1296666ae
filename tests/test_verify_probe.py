"""The probe's judgement and measurements, in process: real records, real DataLoader workers."""

from __future__ import annotations

import json
import multiprocessing

import pytest

from lintloader.runtime.verify.config import ProbeConfig
from lintloader.runtime.verify.records import (
    DeviceInfo,
    EpochRecord,
    LoaderReport,
    ProbeResult,
    judge_loader,
)
from lintloader.runtime.verify.render import render_json, render_table


def epoch(
    number: int,
    samples: int,
    pids: tuple[int, ...] = (11, 12),
    started: tuple[int, ...] = (),
    unique: int | None = None,
) -> EpochRecord:
    return EpochRecord(
        epoch=number,
        batches=samples // 8,
        samples=samples,
        unique_samples=samples if unique is None else unique,
        expected_samples=64,
        worker_pids=pids,
        started_pids=started,
        pool_pids=pids,
        first_batch_s=0.01 if samples else None,
        duration_s=0.02,
    )


def report(*epochs: EpochRecord) -> LoaderReport:
    return LoaderReport("train", 2, True, 64, 8, "samples", list(epochs))


def test_reused_workers_and_full_epochs_pass() -> None:
    loader = report(epoch(1, 64, started=(11, 12)), epoch(2, 64), epoch(3, 64))
    assert judge_loader(loader) == []


def test_respawn_fails_naming_the_epoch_and_new_pids() -> None:
    loader = report(epoch(1, 64, started=(11, 12)), epoch(2, 64, (21, 22), (21, 22)))
    (problem,) = judge_loader(loader)
    assert problem.startswith("epoch 2: respawned workers: 2 started")
    assert "new pids 21,22" in problem and "11,12" in problem


def test_lost_samples_fail_even_with_stable_pids() -> None:
    loader = report(epoch(1, 64, started=(11, 12)), epoch(2, 8), epoch(3, 0, pids=()))
    problems = judge_loader(loader)
    assert problems == [
        "epoch 2: 56 of 64 samples missing (saw 8 in 1 batches; expected 64 = dataset size)",
        "epoch 3: 64 of 64 samples missing (saw 0 in 0 batches; expected 64 = dataset size)",
    ]


def test_duplicated_samples_fail() -> None:
    loader = report(epoch(1, 64, started=(11, 12)), epoch(2, 64, unique=56))
    problems = judge_loader(loader)
    assert "epoch 2: 8 of 64 samples missing" in problems[0]
    assert problems[1] == "epoch 2: 8 samples seen twice"


def test_table_and_json_carry_the_evidence() -> None:
    result = ProbeResult(
        engine="torch",
        target="t",
        device=DeviceInfo("cuda", 0, "NVIDIA H200"),
        versions={"torch": "2.13.0"},
        loaders=[report(epoch(1, 64, started=(11, 12)), epoch(2, 64, (21, 22), (21, 22)))],
    )
    table = render_table(result)
    assert "cuda:0 (NVIDIA H200)" in table
    assert "21,22" in table and "FAIL: 1 problem(s)" in table
    data = json.loads(render_json(result))
    assert data["verdict"] == "FAIL" and data["exit_code"] == 1
    assert data["loaders"][0]["epochs"][1]["workers_started"] == 2


# --- real workers, in this process -------------------------------------------------------

torch = pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")


def tensor_loader(persistent: bool, drop_last: bool = False) -> torch.utils.data.DataLoader:
    from torch.utils.data import DataLoader, TensorDataset

    data = TensorDataset(torch.arange(36, dtype=torch.float32).unsqueeze(1))
    return DataLoader(
        data, batch_size=8, num_workers=2, persistent_workers=persistent, drop_last=drop_last
    )


def test_plain_user_loader_is_measured_through_the_collate_log() -> None:
    from lintloader.runtime.verify.probe_factory import probe_factory

    result = probe_factory(lambda: tensor_loader(True), ProbeConfig(epochs=3), "test")
    assert result.verdict == "PASS", result.problems
    (loader,) = result.loaders
    assert loader.pid_source == "collate log"
    assert [e.samples for e in loader.epochs] == [36, 36, 36]
    assert [e.unique_samples for e in loader.epochs] == [None, None, None]
    assert len(loader.epochs[0].worker_pids) == 2
    assert loader.epochs[1].worker_pids == loader.epochs[0].worker_pids
    assert result.leftover_pids == [] and multiprocessing.active_children() == []


def test_drop_last_sets_the_expected_sample_count() -> None:
    from lintloader.runtime.verify.probe_factory import probe_factory

    result = probe_factory(lambda: tensor_loader(True, True), ProbeConfig(epochs=2), "test")
    assert result.verdict == "PASS", result.problems
    assert [e.expected_samples for e in result.loaders[0].epochs] == [32, 32]


def test_non_persistent_user_loader_fails_with_a_note() -> None:
    from lintloader.runtime.verify.probe_factory import probe_factory

    result = probe_factory(lambda: tensor_loader(False), ProbeConfig(epochs=2), "test")
    assert result.verdict == "FAIL"
    assert "epoch 2: respawned workers: 2 started" in result.problems[0]
    assert any("persistent_workers=False" in note for note in result.notes)
    assert multiprocessing.active_children() == []


def test_worker_init_delay_shows_in_first_batch_latency_of_a_respawn() -> None:
    from lintloader.runtime.verify.probe_torch import run_torch_probe

    config = ProbeConfig(epochs=2, samples=16, worker_init_delay=0.4, persistent_workers=False)
    result = run_torch_probe(config)
    epochs = result.loaders[0].epochs
    assert result.verdict == "FAIL"
    assert all(e.first_batch_s is not None and e.first_batch_s >= 0.4 for e in epochs)
    reused = run_torch_probe(ProbeConfig(epochs=2, samples=16, worker_init_delay=0.4))
    later = reused.loaders[0].epochs[1].first_batch_s
    assert reused.verdict == "PASS" and later is not None and later < 0.4


def test_cuda_request_without_cuda_exits_2_with_a_clear_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from lintloader.cli.verify import run_verify

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    code = run_verify("torch", None, ProbeConfig(device="cuda"), as_json=True)
    out, err = capsys.readouterr()
    assert code == 2
    assert json.loads(out)["verdict"] == "ERROR"
    assert "--device cuda: CUDA is not available" in err

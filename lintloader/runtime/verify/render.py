"""A probe result as a terminal table or as JSON."""

from __future__ import annotations

import json

from lintloader.runtime.verify.records import (
    EpochRecord,
    LoaderReport,
    ProbeResult,
    epoch_stalls,
    first_batch_ratio,
    mean_later_first_batch,
    median_stall,
    pools_started,
    steady_first_batch,
)

_HEADERS = (
    "epoch",
    "batches",
    "samples",
    "unique",
    "started",
    "batch pids",
    "pool pids",
    "first batch",
    "epoch time",
)


def render_json(result: ProbeResult) -> str:
    return json.dumps(result.to_dict(), indent=2)


def render_error_json(message: str, exit_code: int) -> str:
    return json.dumps({"verdict": "ERROR", "exit_code": exit_code, "error": message}, indent=2)


def render_table(result: ProbeResult) -> str:
    lines = [
        f"lintloader verify: {result.engine} engine -- {result.target}",
        f"versions: {_versions(result.versions)}; device: {result.device.label}",
    ]
    for loader in result.loaders:
        lines.append("")
        lines.extend(_loader_lines(loader))
    lines.append("")
    lines.extend(_summary_lines(result))
    return "\n".join(lines)


def _versions(versions: dict[str, str]) -> str:
    return ", ".join(f"{name} {version}" for name, version in versions.items())


def _loader_lines(loader: LoaderReport) -> list[str]:
    size = "?" if loader.dataset_size is None else str(loader.dataset_size)
    lines = [
        f"{loader.name} loader: num_workers={loader.num_workers}, "
        f"persistent_workers={loader.persistent_workers}, dataset size {size}, "
        f"batch_size {loader.batch_size}; batch pids from {loader.pid_source}"
    ]
    rows = [_HEADERS, *(_row(epoch) for epoch in loader.epochs)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADERS))]
    for row in rows:
        lines.append(
            "  " + "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        )
    lines.append("  " + _latency_line(loader))
    lines.append("  " + _stall_line(loader))
    return lines


def _stall_line(loader: LoaderReport) -> str:
    pools = pools_started(loader)
    steady = steady_first_batch(loader)
    median = median_stall(loader)
    count = len(epoch_stalls(loader))
    if median is None or steady is None:
        return f"worker pools started: {pools}; stall per epoch: not enough epochs to measure"
    few = " (fewer than 3 epochs)" if count < 3 else ""
    return (
        f"worker pools started: {pools}; stall per epoch (first batch minus the steady "
        f"{steady:.3f} s): median {median:.3f} s of {count} epochs{few}"
    )


def _row(epoch: EpochRecord) -> tuple[str, ...]:
    expected = "?" if epoch.expected_samples is None else str(epoch.expected_samples)
    return (
        str(epoch.epoch),
        str(epoch.batches),
        f"{epoch.samples}/{expected}",
        "-" if epoch.unique_samples is None else str(epoch.unique_samples),
        str(epoch.workers_started),
        _pids(epoch.worker_pids),
        _pids(epoch.pool_pids),
        _seconds(epoch.first_batch_s),
        _seconds(epoch.duration_s),
    )


def _pids(pids: tuple[int, ...]) -> str:
    return ",".join(str(pid) for pid in pids) if pids else "-"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f} s"


def _latency_line(loader: LoaderReport) -> str:
    first = loader.epochs[0].first_batch_s if loader.epochs else None
    later = mean_later_first_batch(loader)
    ratio = first_batch_ratio(loader)
    if first is None or later is None or ratio is None:
        return "first batch latency: not enough epochs with batches to compare"
    return (
        f"first batch latency: epoch 1 {first:.3f} s, later epochs {later:.3f} s on average "
        f"(later/first = {ratio:.2f})"
    )


def _summary_lines(result: ProbeResult) -> list[str]:
    lines = [f"note: {note}" for note in result.notes]
    if result.leftover_pids:
        lines.append(f"note: child processes still alive after the probe: {result.leftover_pids}")
    problems = result.problems
    if not problems:
        epochs = max((len(loader.epochs) for loader in result.loaders), default=0)
        lines.append(
            f"PASS: every epoch after the first reused epoch 1's workers and every epoch saw "
            f"all its samples ({epochs} epochs, {result.wall_s:.1f} s)"
        )
        return lines
    lines.append(f"FAIL: {len(problems)} problem(s)")
    lines.extend(f"  - {problem}" for problem in problems)
    return lines

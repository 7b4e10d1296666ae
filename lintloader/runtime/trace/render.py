"""The trace report as text (for stderr) and as JSON (``--json FILE``)."""

from __future__ import annotations

import json
import os
import shlex
from typing import Any

from lintloader.runtime.trace.records import Frame, PassRecord
from lintloader.runtime.trace.report import ProcessReport, TraceReport
from lintloader.runtime.trace.respawns import LoaderSummary, Respawn, culprit_frames


def frame_text(frame: Frame) -> str:
    return f"{display_path(frame.path)}:{frame.line} {frame.function}"


def display_path(path: str) -> str:
    """Relative to the working directory when inside it, else its last two components."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, os.getcwd())
    if not relative.startswith(os.pardir):
        return relative
    parts = absolute.split(os.sep)
    return os.sep.join(parts[-2:])


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f} s"


# -- text --------------------------------------------------------------------------------------
def render_text(report: TraceReport) -> str:
    command = shlex.join(report.command)
    status = "could not start" if report.command_exit is None else f"exit {report.command_exit}"
    lines = [f"lintloader trace: {command} ({status}, {report.wall_s:.1f} s)"]
    for process in report.processes:
        lines.extend(_process_lines(process, report))
    lines.extend(f"note: {note}" for note in report.notes)
    lines.append(_verdict(report))
    return "\n".join(lines) + "\n"


def _process_lines(process: ProcessReport, report: TraceReport) -> list[str]:
    lines = [f"{process.process.label}:"]
    for loader in process.loaders:
        lines.extend(_loader_lines(loader, report))
    return lines


def _loader_lines(loader: LoaderSummary, report: TraceReport) -> list[str]:
    trace = loader.trace
    where = frame_text(loader.created_at) if loader.created_at else "?"
    if len(loader.created_by) > 1:
        where += f", called from {frame_text(loader.created_by[1])}"
    method = f", start method {trace.start_method}" if trace.start_method else ""
    lines = [
        f"  DataLoader created at {where}",
        f"    num_workers={trace.num_workers}, persistent_workers={trace.persistent_workers}, "
        f"pin_memory={trace.pin_memory}{method}; device {loader.device}",
        f"    passes {len(trace.passes)}, pool starts {len(trace.pool_starts)}, "
        f"respawns {len(loader.respawns)}, cost {loader.cost_s:.3f} s "
        f"(steady first batch {_seconds(loader.steady_s)})",
        "    first batch per pass: " + "  ".join(_pass_cell(p) for p in trace.passes),
    ]
    if loader.empty_passes:
        empty = ", ".join(str(number) for number in loader.empty_passes)
        lines.append(f"    warning: passes {empty} yielded no batch (pass 1 did): data lost?")
    if trace.stopped:
        lines.append("    stopped here by --max-passes")
    for group in _grouped(loader.respawns):
        lines.extend(_respawn_lines(group, report))
    return lines


def _pass_cell(record: PassRecord) -> str:
    star = "*" if record.pool_start else ""
    return f"{record.number}:{_seconds(record.first_batch_s)}{star}"


def _grouped(respawns: list[Respawn]) -> list[list[Respawn]]:
    """Respawns with the same cause and frames, together, in order of first occurrence."""
    groups: dict[tuple[str, tuple[Frame, ...]], list[Respawn]] = {}
    for respawn in respawns:
        groups.setdefault((respawn.cause, respawn.frames), []).append(respawn)
    return list(groups.values())


def _respawn_lines(group: list[Respawn], report: TraceReport) -> list[str]:
    first = group[0]
    passes = ", ".join(str(r.pass_number) for r in group if r.pass_number is not None)
    cost = sum(r.cost_s for r in group)
    lines = [
        f"    respawn x{len(group)} (passes {passes or '?'}, {cost:.3f} s): {first.cause}"
        + (" at" if first.frames else "")
    ]
    lines.extend(f"      {frame_text(frame)}" for frame in first.frames)
    link = report.link_of(first.frames)
    if link is not None:
        lines.append(f"      static: {link.advice}")
    return lines


def _verdict(report: TraceReport) -> str:
    if report.command_exit is None:
        return "ERROR: the command could not start"
    failing = [loader for loader in report.loaders if loader.persistent_respawned]
    if failing:
        cost = sum(loader.cost_s for loader in failing)
        return (
            f"FAIL: {len(failing)} persistent loader(s) respawned their workers "
            f"({report.persistent_respawns} respawns, {cost:.3f} s lost)"
        )
    others = sum(len(loader.respawns) for loader in report.loaders)
    tail = f"; {others} pool start(s) of non-persistent loaders" if others else ""
    count = report.max_passes
    stopped = f"; stopped after {count} pass{'es' * (count != 1)}" if report.stopped else ""
    return f"OK: no persistent loader respawned its workers{tail}{stopped}"


# -- JSON --------------------------------------------------------------------------------------
def render_json(report: TraceReport) -> str:
    return json.dumps(report_dict(report), indent=2) + "\n"


def report_dict(report: TraceReport) -> dict[str, Any]:
    return {
        "command": list(report.command),
        "command_exit": report.command_exit,
        "exit_code": report.exit_code,
        "wall_s": round(report.wall_s, 3),
        "stopped_by_max_passes": report.stopped,
        "persistent_respawns": report.persistent_respawns,
        "processes": [_process_dict(process, report) for process in report.processes],
        "notes": list(report.notes),
    }


def _process_dict(process: ProcessReport, report: TraceReport) -> dict[str, Any]:
    return {
        "pid": process.process.pid,
        "ppid": process.process.ppid,
        "rank": process.process.rank,
        "argv": list(process.process.argv),
        "loaders": [_loader_dict(loader, report) for loader in process.loaders],
    }


def _loader_dict(loader: LoaderSummary, report: TraceReport) -> dict[str, Any]:
    trace = loader.trace
    created = loader.created_at
    return {
        "id": trace.id,
        "created_at": created.to_json() if created else None,
        "created_by": [frame.to_json() for frame in loader.created_by],
        "num_workers": trace.num_workers,
        "persistent_workers": trace.persistent_workers,
        "pin_memory": trace.pin_memory,
        "pin_memory_device": trace.pin_memory_device,
        "start_method": trace.start_method,
        "device": loader.device,
        "passes": [_pass_dict(p) for p in trace.passes],
        "pool_starts": [
            {
                "number": s.number,
                "t": s.t,
                "pids": list(s.pids),
                "start_s": s.start_s,
                "stack": [frame.to_json() for frame in culprit_frames(s.stack)],
            }
            for s in trace.pool_starts
        ],
        "shutdowns": [
            {
                "t": s.t,
                "pids": list(s.pids),
                "cause": s.cause,
                "stack": [frame.to_json() for frame in culprit_frames(s.stack)],
            }
            for s in trace.shutdowns
        ],
        "respawns": [_respawn_dict(r, report) for r in loader.respawns],
        "respawn_count": len(loader.respawns),
        "empty_passes": loader.empty_passes,
        "cost_s": round(loader.cost_s, 6),
        "steady_s": loader.steady_s,
        "stopped": trace.stopped,
    }


def _pass_dict(record: PassRecord) -> dict[str, Any]:
    return {
        "number": record.number,
        "batches": record.batches,
        "first_batch_s": record.first_batch_s,
        "pool_start": record.pool_start,
        "device": record.device,
        "ended": record.ended,
    }


def _respawn_dict(respawn: Respawn, report: TraceReport) -> dict[str, Any]:
    link = report.link_of(respawn.frames)
    return {
        "pass": respawn.pass_number,
        "pool_start": respawn.pool_start.number,
        "t": respawn.pool_start.t,
        "pids": list(respawn.pool_start.pids),
        "first_batch_s": respawn.first_batch_s,
        "cost_s": round(respawn.cost_s, 6),
        "cause": respawn.cause,
        "frames": [frame.to_json() for frame in respawn.frames],
        "static": link.to_json() if link else None,
    }

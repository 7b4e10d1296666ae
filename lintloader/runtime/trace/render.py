"""The trace report as text (for stderr) and as JSON (``--json FILE``)."""

from __future__ import annotations

import json
import os
import shlex
from typing import Any

from lintloader.runtime.trace.advice import site_advice
from lintloader.runtime.trace.records import Frame, PassRecord
from lintloader.runtime.trace.report import ProcessReport, TraceReport
from lintloader.runtime.trace.respawns import LoaderSummary, Respawn, culprit_frames
from lintloader.runtime.trace.sites import ExtraPool, PoolCost, Site


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
PASS_CELLS = 12  # first-batch cells shown per site


def render_text(report: TraceReport) -> str:
    command = shlex.join(report.command)
    status = "could not start" if report.command_exit is None else f"exit {report.command_exit}"
    lines = [f"lintloader trace: {command} ({status}, {report.wall_s:.1f} s)"]
    for site in report.sites:
        lines.extend(_site_lines(site, report))
    lines.extend(f"note: {note}" for note in report.notes)
    lines.append(_verdict(report))
    return "\n".join(lines) + "\n"


def _site_lines(site: Site, report: TraceReport) -> list[str]:
    tag = "FAIL" if site.failing else ("note" if site.extras else "ok")
    where = frame_text(site.created_at) if site.created_at else "?"
    if len(site.frames) > 1:
        where += f", called from {frame_text(site.frames[1])}"
    first = site.loaders[0].trace
    method = f", start method {first.start_method}" if first.start_method else ""
    passes = site.passes
    lines = [
        f"{tag} {where}",
        f"    loaders {len(site.loaders)}, worker pools {len(site.pools)} "
        f"({site.needed_pools} needed), passes {len(passes)} ({site.full_passes} full)"
        + _processes(site, report),
        f"    num_workers={first.num_workers}, persistent_workers={first.persistent_workers}, "
        f"pin_memory={first.pin_memory}{method}; device {site.loaders[-1].device}",
        "    first batch per pass: " + _pass_cells(passes) + f" (steady {_seconds(site.steady_s)})",
        f"    time starting pools {site.startup_s:.3f} s, lost {site.lost_s:.3f} s, "
        f"could save {site.could_save_s:.3f} s"
        + (f" ({len(site.extras)} pool(s) more than needed)" if site.extras else ""),
    ]
    for loader in site.loaders:
        if loader.empty_passes:
            empty = ", ".join(str(number) for number in loader.empty_passes)
            lines.append(f"    warning: passes {empty} yielded no batch (pass 1 did): data lost?")
    if any(loader.trace.stopped for loader in site.loaders):
        lines.append("    stopped here by --max-passes")
    for group in _grouped(site.extras):
        lines.extend(_extra_lines(group))
    lines.extend(f"    change: {line}" for line in site_advice(site, report.link_of, frame_text))
    return lines


def _processes(site: Site, report: TraceReport) -> str:
    labels = [p.process.label for p in report.processes
              if any(loader in p.loaders for loader in site.loaders)]  # fmt: skip
    return f", in {', '.join(labels)}" if len(labels) > 1 or site.processes > 1 else ""


def _pass_cells(passes: list[PassRecord]) -> str:
    cells = [_pass_cell(p) for p in passes[:PASS_CELLS]]
    more = f"  (+{len(passes) - PASS_CELLS} more)" if len(passes) > PASS_CELLS else ""
    return "  ".join(cells) + more


def _pass_cell(record: PassRecord) -> str:
    star = "*" if record.pool_start else ""
    peek = "" if record.full else " (peek)" if record.ended == "abandoned" else f" ({record.ended})"
    return f"{_seconds(record.first_batch_s)}{star}{peek}"


def _grouped(extras: list[ExtraPool]) -> list[list[ExtraPool]]:
    """Extra pools of the same kind, cause and frames, together, in order of occurrence."""
    groups: dict[tuple[str, str, tuple[Frame, ...]], list[ExtraPool]] = {}
    for extra in extras:
        groups.setdefault((extra.kind, extra.cause, extra.frames), []).append(extra)
    return list(groups.values())


def _extra_lines(group: list[ExtraPool]) -> list[str]:
    first = group[0]
    cost = sum(extra.cost_s for extra in group)
    paid = "lost" if first.defeated else "could save"
    lines = [
        f"    {first.kind} x{len(group)} ({cost:.3f} s {paid}): {first.cause}"
        + (" at" if first.frames else "")
    ]
    lines.extend(f"      {frame_text(frame)}" for frame in first.frames)
    if first.replaced_at is not None:
        lines.append(f"      replacing the loader built at {frame_text(first.replaced_at)}")
    return lines


def _verdict(report: TraceReport) -> str:
    if report.command_exit is None:
        return "ERROR: the command could not start"
    sites = report.sites
    count = report.max_passes
    stopped = f"; stopped after {max(count, 2)} full passes" if report.stopped and count else ""
    save = _could_save(report)
    if report.failing:
        defeated = sum(len(site.defeated) for site in report.failing)
        return (
            f"FAIL: {len(report.failing)} of {len(sites)} creation site(s) started "
            f"{defeated} worker pool(s) more than needed; {report.lost_s:.3f} s lost "
            f"({_share(report.lost_s, report.wall_s)} of the {report.wall_s:.1f} s run"
            f"{_slowest(report)}){save}{stopped}"
        )
    pools = sum(len(site.pools) for site in sites)
    if save:
        return (
            f"OK: no worker pool defeated ({len(sites)} site(s), {pools} pool(s)); "
            f"0.000 s lost{save}{stopped}"
        )
    return (
        f"OK: no creation site started more worker pools than it needed "
        f"({len(sites)} site(s), {pools} pool(s)); 0.000 s lost{stopped}"
    )


def _could_save(report: TraceReport) -> str:
    """``; could save X s (N% of the run) with persistent workers (K avoidable pools)``."""
    avoidable = sum(len(site.avoidable) for site in report.sites)
    if not avoidable:
        return ""
    saved = report.could_save_s
    return (
        f"; could save {saved:.3f} s ({_share(saved, report.wall_s)} of the run"
        f"{_slowest(report)}) with persistent workers ({avoidable} avoidable pool(s))"
    )


def _slowest(report: TraceReport) -> str:
    return f", the slowest of {report.ranks} ranks" if report.ranks > 1 else ""


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole > 0 else "-"


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
        "verdict": "FAIL" if report.failing else "OK",
        "lost_s": round(report.lost_s, 6),
        "lost_share": round(report.lost_s / report.wall_s, 4) if report.wall_s > 0 else None,
        "could_save_s": round(report.could_save_s, 6),
        "lost_by_process": {str(pid): round(s, 6) for pid, s in report.lost_by_process.items()},
        "could_save_by_process": {
            str(pid): round(s, 6) for pid, s in report.could_save_by_process.items()
        },
        "sites": [_site_dict(site, report) for site in report.sites],
        "processes": [_process_dict(process, report) for process in report.processes],
        "notes": list(report.notes),
    }


def _site_dict(site: Site, report: TraceReport) -> dict[str, Any]:
    return {
        "created_at": site.created_at.to_json() if site.created_at else None,
        "created_by": [frame.to_json() for frame in site.frames],
        "failing": site.failing,
        "persistent_workers": site.persistent,
        "loaders": [loader.trace.id for loader in site.loaders],
        "processes": site.processes,
        "worker_pools": len(site.pools),
        "needed_pools": site.needed_pools,
        "passes": len(site.passes),
        "full_passes": site.full_passes,
        "steady_first_batch_s": site.steady_s,
        "startup_s": round(site.startup_s, 6),
        "lost_s": round(site.lost_s, 6),
        "could_save_s": round(site.could_save_s, 6),
        "defeated_pools": len(site.defeated),
        "avoidable_pools": len(site.avoidable),
        "lightning_reload": site.lightning_reload,
        "pools": [_pool_dict(pool) for pool in site.pools],
        "pass_latencies": [_pass_dict(record) for record in site.passes],
        "extra_pools": [_extra_dict(extra, report) for extra in site.extras],
        "advice": site_advice(site, report.link_of, frame_text),
    }


def _pool_dict(pool: PoolCost) -> dict[str, Any]:
    record = pool.pass_record
    return {
        "loader": pool.loader.trace.id,
        "pass": record.number if record is not None else None,
        "t": pool.start.t,
        "pids": list(pool.start.pids),
        "first_batch_s": record.first_batch_s if record is not None else None,
        "cost_s": round(pool.cost_s, 6),
    }


def _extra_dict(extra: ExtraPool, report: TraceReport) -> dict[str, Any]:
    link = report.link_of(extra.frames, extra.kind == "respawn")
    return {
        "kind": extra.kind,
        "cost_kind": extra.cost_kind.value,
        "loader": extra.pool.loader.trace.id,
        "replaced_at": extra.replaced_at.to_json() if extra.replaced_at else None,
        "cause": extra.cause,
        "cost_s": round(extra.cost_s, 6),
        "frames": [frame.to_json() for frame in extra.frames],
        "static": link.to_json() if link else None,
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
        "full": record.full,
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

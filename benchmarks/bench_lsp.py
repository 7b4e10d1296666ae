#!/usr/bin/env python3
"""``lintloader server`` on the 5,400-file project of ``bench_scale.py``'s pre-commit case,
driven by a real LSP client (pytest-lsp): medians over ``--repeats`` of

* ``cold_s``: ``didOpen`` of a file on the chain to its first diagnostics, a fresh server on an
  empty cache (pulled by a client that supports ``workspace/diagnostic/refresh``: the open
  file checked alone, shown while the project is analyzed);
* ``cold_final_s``: ``didOpen`` to the project's diagnostics of that file (pulled again when
  the server asks for it, once the project's analysis lands);
* ``warm_s``: the same with the cache a server left (the run is replayed: the first answer
  is the project's);
* ``edit_s``: an unsaved edit of that file (a comment added) to its diagnostics again;
* ``rss_mib``: the server's resident memory after the warm analysis (``VmRSS``);
* ``initialize_s``: the server's start to its ``initialize`` result (every server started);
* ``cold_cpu_s``, ``warm_cpu_s``: CPU seconds (user and system) of a server and every process
  it started, from its start to its exit (the machine may be shared: wall times then say
  little without them); ``load_before``/``load_after``: the 1-minute load average;
* ``cold_first_cpu_s``, ``warm_first_cpu_s``: CPU seconds of the server's own process (not
  its helper) from its start to the first answer: the work on the way to that answer (its
  imports, the open file checked alone or the replay), the wall time it would take on a
  free core.

The issue's targets: cold <= 1 s, warm <= 0.2 s, an edit <= 150 ms, <= 200 MiB.

Usage (from the repository root; the project is built under ``--work`` the first time)::

    .venv/bin/python benchmarks/bench_lsp.py --repeats 3 --json benchmarks/results-lsp.json
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_scale import PRECOMMIT_PACKAGES, PROJECT_PACKAGE, git_project
from bench_site_packages import BIN, purelib, py_files, report
from lsp_support import capabilities, change_document, open_document
from lsprotocol import types
from pytest_lsp import make_test_lsp_client

TAKEN = Path(PROJECT_PACKAGE) / "utilities" / "combined_loader.py"


async def _pull(client, path: Path) -> list[types.Diagnostic]:
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(path.as_uri()))
    )
    return list(report.items)


async def _refreshed(client, count: int, wait: float = 120.0) -> bool:
    """Whether the server asks for a new pull (more than ``count`` refreshes) within ``wait``."""
    deadline = time.perf_counter() + wait
    while client.diagnostic_refresh_count <= count:
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(0.005)
    return True


def _children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _process_cpu_s(pid: int) -> float:
    """User and system CPU seconds of the process ``pid`` itself (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def one_server(
    project: Path, cache: Path, edit: bool, jobs: int | None = None
) -> dict[str, float]:
    """Open the taken file in a fresh server: seconds to its diagnostics (and after an edit)."""
    client = make_test_lsp_client()
    cpu_before = _children_cpu_s()
    env = {"LINTLOADER_CACHE_DIR": str(cache), "PATH": str(BIN)}
    command = ["server", *(("--jobs", str(jobs)) if jobs else ())]
    started = time.perf_counter()
    await client.start_io(str(BIN / "lintloader"), *command, env=env, cwd=str(project))
    caps = capabilities(pull=True)
    caps.window.work_done_progress = False
    await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="project")],
        )
    )
    initialize_s = time.perf_counter() - started
    taken = project / TAKEN
    started = time.perf_counter()
    refreshes = client.diagnostic_refresh_count
    open_document(client, taken)
    await _pull(client, taken)
    found = {"open_s": time.perf_counter() - started, "initialize_s": initialize_s}
    assert client._server is not None
    found["first_cpu_s"] = _process_cpu_s(client._server.pid)
    if not edit and await _refreshed(client, refreshes):  # cold: the project's answer follows
        await _pull(client, taken)
    found["final_s"] = time.perf_counter() - started
    found["rss_mib"] = _rss_mib(client._server.pid)
    if edit:
        text = taken.read_text(encoding="utf-8") + "\n# an unsaved edit\n"
        started = time.perf_counter()
        change_document(client, taken, text, 2)
        await _pull(client, taken)
        found["edit_s"] = time.perf_counter() - started
    await client.shutdown_session()
    await client.stop()
    found["cpu_s"] = _children_cpu_s() - cpu_before  # the server and what it started, reaped
    return found


async def measure(
    project: Path, work: Path, repeats: int, jobs: int | None = None
) -> dict[str, object]:
    cold, final, warm, edits, rss, starts = [], [], [], [], [], []
    cold_cpu, warm_cpu, cold_first_cpu, warm_first_cpu = [], [], [], []
    load_before = os.getloadavg()[0]
    for repeat in range(repeats):
        cache = work / f"cache-lsp-{repeat}"
        shutil.rmtree(cache, ignore_errors=True)
        first = await one_server(project, cache, edit=False, jobs=jobs)
        cold.append(first["open_s"])
        final.append(first["final_s"])
        cold_cpu.append(first["cpu_s"])
        cold_first_cpu.append(first["first_cpu_s"])
        again = await one_server(project, cache, edit=True, jobs=jobs)
        starts += [first["initialize_s"], again["initialize_s"]]
        warm.append(again["open_s"])
        warm_cpu.append(again["cpu_s"])
        warm_first_cpu.append(again["first_cpu_s"])
        edits.append(again["edit_s"])
        rss.append(again["rss_mib"])
    return {
        "project_files": len(py_files(project)),
        "repeats": repeats,
        "jobs": jobs,
        "cold_s": statistics.median(cold),
        "cold_final_s": statistics.median(final),
        "warm_s": statistics.median(warm),
        "edit_s": statistics.median(edits),
        "rss_mib": statistics.median(rss),
        "initialize_s": statistics.median(starts),
        "cold_cpu_s": statistics.median(cold_cpu),
        "warm_cpu_s": statistics.median(warm_cpu),
        "cold_first_cpu_s": statistics.median(cold_first_cpu),
        "warm_first_cpu_s": statistics.median(warm_first_cpu),
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "cold_each_s": cold,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/lintloader-bench"))
    parser.add_argument("--packages", nargs="*", default=list(PRECOMMIT_PACKAGES))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--jobs", type=int, default=None, help="the server's --jobs (default: its own choice)"
    )
    args = parser.parse_args()
    site = purelib(BIN / "python")
    name = "project-5k" if tuple(args.packages) == PRECOMMIT_PACKAGES else "project-lsp"
    project = git_project(site, args.work, name, tuple(args.packages))
    report(asyncio.run(measure(project, args.work, args.repeats, args.jobs)), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The whole run's report: every traced process (one per rank) with its loaders, the loaders
folded into their creation sites, the static links of the culprits, and the exit code
``lintloader trace`` ends with."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lintloader.runtime.exits import EXIT_CANNOT_RUN, EXIT_FAIL, EXIT_PASS
from lintloader.runtime.trace.records import Frame, ProcessTrace, read_run
from lintloader.runtime.trace.respawns import LoaderSummary, summarize
from lintloader.runtime.trace.sites import ExtraPool, Site, build_sites
from lintloader.runtime.trace.static_link import Findings, StaticLink, check_files


@dataclass
class ProcessReport:
    process: ProcessTrace
    loaders: list[LoaderSummary]


@dataclass
class TraceReport:
    """What ``trace`` prints and writes as JSON."""

    command: tuple[str, ...]
    command_exit: int | None  # None: the command could not start
    wall_s: float
    processes: list[ProcessReport] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)
    links: dict[tuple[str, int], StaticLink] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    max_passes: int | None = None

    @property
    def loaders(self) -> list[LoaderSummary]:
        return [loader for process in self.processes for loader in process.loaders]

    @property
    def failing(self) -> list[Site]:
        return [site for site in self.sites if site.failing]

    @property
    def extras(self) -> list[ExtraPool]:
        return [extra for site in self.sites for extra in site.extras]

    @property
    def lost_by_process(self) -> dict[int, float]:
        """pid -> the time its defeated pools cost (each rank of a job has its own)."""
        return _by_process(extra for extra in self.extras if extra.defeated)

    @property
    def could_save_by_process(self) -> dict[int, float]:
        return _by_process(extra for extra in self.extras if not extra.defeated)

    @property
    def lost_s(self) -> float:
        """The wall-clock time lost: the slowest process's (ranks run side by side)."""
        return max(self.lost_by_process.values(), default=0.0)

    @property
    def could_save_s(self) -> float:
        """The wall-clock time persistent workers, one loader each, would save."""
        return max(self.could_save_by_process.values(), default=0.0)

    @property
    def ranks(self) -> int:
        """How many processes ran loaders (the ranks of a job)."""
        return len(self.processes)

    @property
    def persistent_respawns(self) -> int:
        return sum(1 for extra in self.extras if extra.kind == "respawn")

    @property
    def stopped(self) -> bool:
        """``--max-passes`` ended the command (and so its exit code means nothing)."""
        return any(loader.trace.stopped for loader in self.loaders)

    @property
    def exit_code(self) -> int:
        if self.command_exit is None:
            return EXIT_CANNOT_RUN
        if self.failing:
            return EXIT_FAIL
        return EXIT_PASS if self.stopped else self.command_exit

    def link_of(self, frames: tuple[Frame, ...], hops: bool = True) -> StaticLink | None:
        return Findings(self.links).link(frames, hops)


def _by_process(extras: Iterable[ExtraPool]) -> dict[int, float]:
    totals: dict[int, float] = {}
    for extra in extras:
        totals[extra.pid] = totals.get(extra.pid, 0.0) + extra.cost_s
    return totals


def build_report(
    run_dir: Path,
    command: tuple[str, ...],
    command_exit: int | None,
    wall_s: float,
    cwd: str,
    max_passes: int | None = None,
    fix_safety: Mapping[str, bool] | None = None,
    neutral_dir: str | None = None,
) -> TraceReport:
    """Read the run directory, summarise each loader that ran a pass or started a pool, fold
    them into sites, and link every culprit to the static finding that covers it."""
    report = TraceReport(command, command_exit, wall_s, max_passes=max_passes)
    for process in read_run(run_dir):
        used = [
            summarize(loader)
            for loader in process.loaders.values()
            if loader.passes or loader.pool_starts or loader.stopped
        ]
        if used:
            report.processes.append(ProcessReport(process, used))
        if process.bad_lines:
            report.notes.append(f"{process.label}: {process.bad_lines} unreadable record(s)")
    report.sites = build_sites(report.loaders)
    culprits = [frame for site in report.sites for extra in site.extras for frame in extra.frames]
    if culprits:
        findings = check_files(culprits, cwd, neutral_dir or str(run_dir), fix_safety)
        report.links = findings.by_site
        if findings.error:
            report.notes.append(findings.error)
    if command_exit is not None and not report.processes:
        report.notes.append(
            "no DataLoader was iterated in a traced process (does the command run Python "
            "with -E, -I or -S, which skip the start-up hook?)"
        )
    return report

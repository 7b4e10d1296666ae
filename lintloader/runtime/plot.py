"""Per-epoch pictures of a runtime result: first-batch latency of each loader, epoch by epoch,
with the epochs where a worker pool started marked. One result or several side by side
(``lintloader plot bug.json fixed.json``). Needs matplotlib, the ``plot`` extra."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lintloader.install_hints import extra_hint

EXTRA_HINT = extra_hint("plot")


class PlotError(Exception):
    """A plot that cannot be made: matplotlib missing, a result that is not one (one line)."""


@dataclass(frozen=True)
class Series:
    """One loader's passes: first-batch latency (s) per epoch, and whether a pool started."""

    loader: str
    epochs: tuple[int, ...]
    first_batch_s: tuple[float, ...]
    pool_started: tuple[bool, ...]


@dataclass(frozen=True)
class Panel:
    title: str
    series: tuple[Series, ...]


def load_panel(path: Path) -> Panel:
    """A saved result (``verify --json`` or ``trace --json``) as a panel."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PlotError(f"{path}: not a readable JSON result ({exc})") from None
    return panel_of(data, path.stem)


def panel_of(data: Any, title: str) -> Panel:
    """A verify result (``loaders``) or a trace report (``processes`` with their loaders)."""
    if isinstance(data, Mapping) and isinstance(data.get("processes"), list):
        loaders = [_traced(p, loader) for p in data["processes"] for loader in _loaders_of(p)]
        verdict = "respawned" if data.get("persistent_respawns") else "no respawn"
        series = tuple(_series(loader, number) for number, loader in enumerate(loaders))
        return Panel(f"{title} ({verdict})", series)
    if not isinstance(data, Mapping) or not isinstance(data.get("loaders"), list):
        raise PlotError(f"{title}: not a verify or trace result (no 'loaders' list)")
    series = tuple(_series(loader, number) for number, loader in enumerate(data["loaders"]))
    stated = data.get("verdict")
    return Panel(f"{title} ({stated})" if isinstance(stated, str) else title, series)


def _loaders_of(process: Any) -> list[Any]:
    loaders = process.get("loaders") if isinstance(process, Mapping) else None
    if not isinstance(loaders, list):
        raise PlotError("a traced process without a 'loaders' list")
    return loaders


def _traced(process: Mapping[str, Any], loader: Any) -> Any:
    """A traced loader named after where it was created (and the rank, under DDP)."""
    if not isinstance(loader, Mapping):
        return loader
    created = loader.get("created_at")
    name = None
    if isinstance(created, Mapping):
        name = f"{'/'.join(str(created['path']).split('/')[-2:])}:{created['line']}"
    rank = process.get("rank")
    if name and rank is not None:
        name = f"rank {rank} {name}"
    return {**loader, "name": name or loader.get("id")}


def _series(loader: Any, number: int) -> Series:
    if not isinstance(loader, Mapping):
        raise PlotError(f"loader {number}: not an object")
    passes = loader.get("epochs", loader.get("passes"))
    if not isinstance(passes, list):
        raise PlotError(f"loader {number}: no 'epochs' or 'passes' list")
    epochs, latency, started = [], [], []
    for index, item in enumerate(passes, start=1):
        if not isinstance(item, Mapping):
            raise PlotError(f"loader {number}: pass {index} is not an object")
        first = item.get("first_batch_s")
        epochs.append(int(item.get("epoch", item.get("number", index))))
        latency.append(float(first) if isinstance(first, (int, float)) else float("nan"))
        started.append(bool(item.get("workers_started") or item.get("pool_start")))
    name = str(loader.get("name") or loader.get("created_at") or f"loader {number + 1}")
    return Series(name, tuple(epochs), tuple(latency), tuple(started))


def write_plot(panels: Sequence[Panel], target: Path) -> None:
    """Draw the panels side by side into ``target`` (the suffix picks the format: .svg,
    .png, .pdf)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        matplotlib.rcParams["svg.fonttype"] = "none"  # titles and labels stay text in an SVG
        from matplotlib import pyplot
    except ImportError:
        raise PlotError(f"plotting needs matplotlib: {EXTRA_HINT}") from None
    figure, axes = pyplot.subplots(
        1, len(panels), figsize=(5 * len(panels), 3.6), sharey=True, squeeze=False
    )
    for axis, panel in zip(axes[0], panels, strict=True):
        _draw(axis, panel)
    axes[0][0].set_ylabel("first-batch latency (s)")
    figure.tight_layout()
    try:
        figure.savefig(target)
    except (OSError, ValueError) as exc:
        raise PlotError(f"cannot write {target}: {exc}") from None
    finally:
        pyplot.close(figure)


def _draw(axis: Any, panel: Panel) -> None:
    for series in panel.series:
        (line,) = axis.plot(series.epochs, series.first_batch_s, marker="o", label=series.loader)
        starts = [(e, s) for e, s, p in zip(*_columns(series), strict=True) if p]
        if starts:
            axis.scatter(
                [e for e, _ in starts], [s for _, s in starts], marker="^", s=90,
                color=line.get_color(), zorder=3,
                label=f"{series.loader}: worker pool started",
            )  # fmt: skip
    from matplotlib.ticker import MaxNLocator

    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_title(panel.title)
    axis.set_xlabel("epoch (pass)")
    axis.grid(alpha=0.3)
    if panel.series:
        axis.legend(fontsize=8)


def _columns(series: Series) -> tuple[tuple[int, ...], tuple[float, ...], tuple[bool, ...]]:
    return series.epochs, series.first_batch_s, series.pool_started

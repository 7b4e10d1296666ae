"""Pictures of a runtime result: the first-batch latency (seconds, from 0) of every pass,
one series per creation site for a trace (per loader, train and val, for a verify), with the
passes whose first batch waited on a new worker pool marked. One result or several side by
side (``lintloader plot bug.json fixed.json``). Needs matplotlib, the ``plot`` extra.

Saved results are read as untrusted data: anything that is not a result gives one line
(:class:`PlotError`), never a traceback."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lintloader import extra_hint

EXTRA_HINT = extra_hint("plot")
MAX_POINTS = 100_000  # passes per picture: more is not a result we wrote
TITLE_CHARACTERS = 11  # per inch of a panel's width, at the title's font size
_BAD_DATA = (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError)


class PlotError(Exception):
    """A plot that cannot be made: matplotlib missing, a result that is not one (one line)."""


@dataclass(frozen=True)
class Series:
    """One site's (or loader's) passes: first-batch latency (s), and whether a pool started.
    A trace site's ``path`` is the file that created it: its label starts with as much of that
    path as tells the sites of the picture apart (see :func:`labels`)."""

    loader: str
    epochs: tuple[int, ...]
    first_batch_s: tuple[float, ...]
    pool_started: tuple[bool, ...]
    path: str = ""


@dataclass(frozen=True)
class Panel:
    title: str
    series: tuple[Series, ...]
    xlabel: str = "epoch"


def load_panel(path: Path) -> Panel:
    """A saved result (``verify --json`` or ``trace --json``) as a panel."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, *_BAD_DATA) as exc:
        reason = type(exc).__name__ if isinstance(exc, RecursionError) else str(exc)
        raise PlotError(f"{path}: not a readable JSON result ({reason})") from None
    try:
        return panel_of(data, path.stem)
    except PlotError as exc:
        raise PlotError(f"{path}: {exc}") from None


def panel_of(data: Any, title: str) -> Panel:
    """A verify result (``loaders``) or a trace report (``sites``)."""
    try:
        return _panel(data, title)
    except PlotError:
        raise
    except _BAD_DATA as exc:
        raise PlotError(f"{title}: not a verify or trace result ({type(exc).__name__})") from None


def _panel(data: Any, title: str) -> Panel:
    if isinstance(data, Mapping) and isinstance(data.get("sites"), list):
        series = tuple(_site_series(site, number) for number, site in enumerate(data["sites"]))
        verdict = str(data.get("verdict", "?"))
        lost = _number(data.get("lost_s"))
        extra = sum(len(s.get("extra_pools") or ()) for s in data["sites"])
        what = f"{verdict}: {extra} extra pool(s), {lost:.2f} s lost"
        return Panel(f"trace {title}: first batch per pass\n({what})", series, "pass of the site")
    if not isinstance(data, Mapping) or not isinstance(data.get("loaders"), list):
        raise PlotError(f"{title}: not a verify or trace result (no 'loaders' or 'sites' list)")
    series = tuple(_loader_series(loader, number) for number, loader in enumerate(data["loaders"]))
    pools = sum(_pools(loader) for loader in data["loaders"])
    stated = data.get("verdict")
    verdict = stated if isinstance(stated, str) else "?"
    return Panel(f"{title}: first batch per epoch\n({verdict}: {pools} pool(s) started)", series)


def _pools(loader: Any) -> int:
    value = loader.get("pools_started") if isinstance(loader, Mapping) else None
    return value if isinstance(value, int) else 0


def _site_series(site: Any, number: int) -> Series:
    if not isinstance(site, Mapping):
        raise PlotError(f"site {number}: not an object")
    created = site.get("created_at")
    name, path = f"site {number + 1}", ""
    if isinstance(created, Mapping):
        path = str(created.get("path", "?"))
        name = f":{created.get('line', '?')}"
        callers = site.get("created_by")
        if isinstance(callers, list) and len(callers) > 1 and isinstance(callers[1], Mapping):
            name += f" via {callers[1].get('function', '?')}"
    pools = site.get("pools")
    if not isinstance(pools, list):
        raise PlotError(f"site {number}: no 'pools' list")
    passes = site.get("pass_latencies")
    if not isinstance(passes, list):
        raise PlotError(f"site {number}: no 'pass_latencies' list")
    return replace(_series(name, passes, number), path=path)


def _loader_series(loader: Any, number: int) -> Series:
    if not isinstance(loader, Mapping):
        raise PlotError(f"loader {number}: not an object")
    passes = loader.get("epochs", loader.get("passes"))
    if not isinstance(passes, list):
        raise PlotError(f"loader {number}: no 'epochs' or 'passes' list")
    return _series(str(loader.get("name") or f"loader {number + 1}"), passes, number)


def _series(name: str, passes: list[Any], number: int) -> Series:
    if len(passes) > MAX_POINTS:
        raise PlotError(f"{name}: {len(passes)} passes, more than {MAX_POINTS}")
    epochs, latency, started = [], [], []
    for index, item in enumerate(passes, start=1):
        if not isinstance(item, Mapping):
            raise PlotError(f"{name}: pass {index} is not an object")
        first = item.get("first_batch_s")
        if first is not None and (isinstance(first, bool) or not isinstance(first, (int, float))):
            raise PlotError(f"{name}: pass {index}: first_batch_s is not a number")
        epochs.append(index)
        latency.append(_number(first, math.nan))
        started.append(bool(item.get("workers_started") or item.get("pool_start")))
    return Series(name, tuple(epochs), tuple(latency), tuple(started))


def _number(value: Any, default: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else default


def write_plot(panels: Sequence[Panel], target: Path) -> None:
    """Draw the panels side by side into ``target`` (the suffix picks the format: .svg,
    .png, .pdf), one y scale from 0 for all."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        matplotlib.rcParams["svg.fonttype"] = "none"  # titles and labels stay text in an SVG
        from matplotlib import pyplot
    except ImportError:
        raise PlotError(f"plotting needs matplotlib: {EXTRA_HINT}") from None
    figure = pyplot.figure(figsize=(5.5 * len(panels), 4.6))
    try:
        drawn(figure, panels)
        figure.savefig(target)
    except (OSError, ValueError, OverflowError) as exc:
        raise PlotError(f"cannot write {target}: {exc}") from None
    finally:
        pyplot.close(figure)


def drawn(figure: Any, panels: Sequence[Panel]) -> Any:
    """``figure`` (a matplotlib Figure) with one axis per panel, side by side, one y scale."""
    axes = figure.subplots(1, len(panels), sharey=True, squeeze=False)
    named = labels(panels)
    colours = {label: f"C{n % 10}" for n, label in enumerate(dict.fromkeys(named.values()))}
    for axis, panel in zip(axes[0], panels, strict=True):
        _draw(axis, panel, named, colours)
    axes[0][0].set_ylabel("first-batch latency (s)")
    axes[0][0].set_ylim(0, _top(panels))  # shared: every panel from 0 to the highest point
    figure.tight_layout()
    return figure


def _top(panels: Sequence[Panel]) -> float:
    values = [v for p in panels for s in p.series for v in s.first_batch_s if math.isfinite(v)]
    return max(values, default=0.0) * 1.12 or 1.0


def labels(panels: Sequence[Panel]) -> dict[Series, str]:
    """Each series' legend label: a loader's name, or a trace site's file and line, its file
    named by the fewest trailing path parts that tell the picture's files apart (``train.py``,
    not the folder it ran in)."""
    paths = {s.path for panel in panels for s in panel.series if s.path}
    return {
        s: f"{_shortest(s.path, paths)}{s.loader}" if s.path else s.loader
        for panel in panels
        for s in panel.series
    }


def _shortest(path: str, paths: set[str]) -> str:
    parts = path.replace("\\", "/").split("/")
    for count in range(1, len(parts) + 1):
        tail = parts[-count:]
        if sum(other.replace("\\", "/").split("/")[-count:] == tail for other in paths) == 1:
            return "/".join(tail)
    return path


def _draw(axis: Any, panel: Panel, named: Mapping[Series, str], colours: Mapping[str, str]) -> None:
    """One panel; a series has the same colour in every panel (``colours``, by label)."""
    from matplotlib.ticker import MaxNLocator

    marked = False
    for series in panel.series:
        label = named[series]
        (line,) = axis.plot(series.epochs, series.first_batch_s, marker="o", label=label,
                            color=colours[label])  # fmt: skip
        starts = [(e, s) for e, s, p in zip(*_columns(series), strict=True) if p]
        if starts:
            axis.scatter(
                [e for e, _ in starts], [s for _, s in starts], marker="^", s=120,
                facecolors="none", edgecolors=line.get_color(), linewidths=1.6, zorder=3,
            )  # fmt: skip
            marked = True
    if marked:  # one legend entry for the marker, whatever the colour
        axis.scatter([], [], marker="^", s=120, facecolors="none", edgecolors="black",
                     label="a worker pool started (the first batch waited on it)")  # fmt: skip
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_title(_wrapped(panel.title, axis.figure.get_figwidth() / len(axis.figure.axes)),
                   fontsize=10)  # fmt: skip
    axis.set_xlabel(panel.xlabel)
    axis.grid(alpha=0.3)
    if panel.series:  # below the axes: a legend there covers no data
        axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)


def _wrapped(title: str, inches: float) -> str:
    """``title`` with each line broken to fit a panel ``inches`` wide (a long path too)."""
    width = max(20, int(inches * TITLE_CHARACTERS))
    return "\n".join(
        "\n".join(textwrap.wrap(line, width, break_on_hyphens=False)) or line
        for line in title.splitlines()
    )


def _columns(series: Series) -> tuple[tuple[int, ...], tuple[float, ...], tuple[bool, ...]]:
    return series.epochs, series.first_batch_s, series.pool_started

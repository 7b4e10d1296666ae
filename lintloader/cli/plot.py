"""``lintloader plot``: saved runtime results side by side (e.g. the bug and its fix)."""

from __future__ import annotations

from pathlib import Path

import click

from lintloader.cli.options import Failure


@click.command("plot", short_help="Plot first-batch latency from saved verify/trace results.")
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    "target",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("lintloader-plot.svg"),
    show_default=True,
    help="The picture to write (.svg, .png or .pdf).",
)
def plot_command(results: tuple[Path, ...], target: Path) -> None:
    """Plot first-batch latency per epoch, with worker-pool starts marked, for saved results
    of `verify --json` or `trace --json` (one panel each). Needs lintloader[plot]."""
    from lintloader.runtime.plot import PlotError, load_panel, write_plot

    try:
        write_plot([load_panel(path) for path in results], target)
    except PlotError as exc:
        raise Failure(str(exc)) from None
    click.echo(f"Wrote {target}", err=True)

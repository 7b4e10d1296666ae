"""``lintloader verify``: watch real DataLoader workers across epochs. Torch is imported only
when the command runs, so ``lintloader --help`` works without the runtime extra."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from lintloader.cli.options import OutputError, emit, silence_stdout
from lintloader.runtime.exits import EXIT_CANNOT_RUN, EXIT_INTERRUPTED
from lintloader.runtime.verify.config import ProbeConfig
from lintloader.runtime.verify.errors import ProbeUnavailable
from lintloader.runtime.verify.records import ProbeResult
from lintloader.scan.environment.interpreter import is_running_interpreter

_DEFAULTS = ProbeConfig()
_OWN_LOADER_OPTIONS = ("workers", "batch_size", "samples", "val", "no_persistent_workers")

_HELP = """Run a short training probe with real DataLoader worker processes and check
that every epoch after the first reuses the first epoch's workers and sees every sample.

\b
Exit status: 0 PASS, 1 FAIL, 2 the probe cannot run (torch or Lightning
missing, no CUDA for --device cuda, a bad factory), 130 interrupted.
Needs the runtime extra: pip install -c constraints.txt -e ".[runtime]" (in a checkout)

\b
--dataloader MODULE:FACTORY imports and RUNS YOUR CODE; it is the only
lintloader command that does. FACTORY is called with no arguments and must
return a DataLoader or an iterable wrapping one (e.g. a fetcher); MODULE
may also be a path to a .py file.
"""


@click.command(
    "verify", help=_HELP, short_help="Check with real workers that a DataLoader's pool survives."
)
@click.option(
    "--engine",
    type=click.Choice(["lightning", "torch"]),
    default=None,
    help="lightning: the installed Lightning Trainer drives the probe (default); "
    "torch: a plain PyTorch loop, the baseline.",
)
@click.option(
    "--dataloader",
    "factory",
    metavar="MODULE:FACTORY",
    default=None,
    help="Probe the loader returned by your own factory (imports and runs your code).",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=2),
    default=_DEFAULTS.epochs,
    show_default=True,
    help="Epochs to run (reuse needs at least 2).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help=f"num_workers of the probe's loader [default: {_DEFAULTS.workers}].",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=None,
    help=f"Batch size of the probe's loader [default: {_DEFAULTS.batch_size}].",
)
@click.option(
    "--samples",
    type=click.IntRange(min=1),
    default=None,
    help=f"Size of the probe's dataset [default: {_DEFAULTS.samples}].",
)
@click.option(
    "--worker-init-delay",
    type=click.FloatRange(min=0.0),
    default=_DEFAULTS.worker_init_delay,
    show_default=True,
    metavar="SECONDS",
    help="Sleep this long in each worker's worker_init_fn, so a respawn shows in the "
    "first-batch latency.",
)
@click.option(
    "--device",
    default=_DEFAULTS.device,
    show_default=True,
    metavar="auto|cpu|cuda|cuda:N",
    help="Where batches go; cuda fails clearly (exit 2) when CUDA is not available.",
)
@click.option("--val", is_flag=True, help="Also probe a validation loader's workers.")
@click.option(
    "--no-persistent-workers",
    is_flag=True,
    help="Build the probe's loaders with persistent_workers=False (shows what a FAIL looks like).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--python",
    "python",
    metavar="PATH",
    default=None,
    help="Run the probe with this interpreter (its torch and Lightning; lintloader need not "
    "be installed there).",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also draw first-batch latency per epoch, worker starts marked (.svg/.png/.pdf; "
    "needs lintloader[plot]).",
)
def verify_command(
    engine: str | None,
    factory: str | None,
    epochs: int,
    workers: int | None,
    batch_size: int | None,
    samples: int | None,
    worker_init_delay: float,
    device: str,
    val: bool,
    no_persistent_workers: bool,
    as_json: bool,
    python: str | None,
    plot_path: Path | None,
) -> None:
    if python is not None and not is_running_interpreter(python):
        click.get_current_context().exit(run_elsewhere(python, as_json))
    given = {
        "workers": workers is not None,
        "batch_size": batch_size is not None,
        "samples": samples is not None,
        "val": val,
        "no_persistent_workers": no_persistent_workers,
    }
    _check_combination(engine, factory, given)
    config = ProbeConfig(
        epochs=epochs,
        workers=workers if workers is not None else _DEFAULTS.workers,
        batch_size=batch_size if batch_size is not None else _DEFAULTS.batch_size,
        samples=samples if samples is not None else _DEFAULTS.samples,
        worker_init_delay=worker_init_delay,
        device=device,
        val=val,
        persistent_workers=not no_persistent_workers,
    )
    code = run_verify(engine or "lightning", factory, config, as_json, plot_path)
    click.get_current_context().exit(code)


def run_elsewhere(python: str, as_json: bool) -> int:
    """``--python``: the same verify, run by another interpreter with this lintloader (and
    click) importable there through a temporary PYTHONPATH; its output passes through."""
    import os
    import subprocess
    import tempfile

    import lintloader

    context = click.get_current_context()
    args = _forwarded_args(context)
    with tempfile.TemporaryDirectory(prefix="lintloader-verify-") as shim:
        for package in (lintloader, click):
            folder = os.path.dirname(package.__file__ or "")
            os.symlink(folder, os.path.join(shim, os.path.basename(folder)))
        paths = [shim, *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        try:
            done = subprocess.run([python, "-m", "lintloader", "verify", *args], env=env)
        except OSError as exc:
            return _cannot_run(f"--python {python}: cannot run it ({exc.strerror})", as_json)
    return done.returncode


def _forwarded_args(context: click.Context) -> list[str]:
    """The options this verify was given, minus ``--python``, as command-line arguments."""
    args: list[str] = []
    for param in context.command.params:
        if not isinstance(param, click.Option) or param.name == "python":
            continue
        value = context.params.get(param.name or "")
        if param.is_flag:
            args += [param.opts[0]] if value else []
        elif value is not None and value != param.default:
            args += [param.opts[0], str(value)]
    return args


def _check_combination(engine: str | None, factory: str | None, given: dict[str, bool]) -> None:
    if factory is None:
        return
    if engine == "lightning":
        raise click.UsageError("--dataloader probes your loader with a plain loop; drop --engine")
    used = [name for name in _OWN_LOADER_OPTIONS if given[name]]
    if used:
        flags = ", ".join("--" + name.replace("_", "-") for name in used)
        raise click.UsageError(f"{flags}: only for the probe's own loader, not with --dataloader")


def run_verify(
    engine: str,
    factory: str | None,
    config: ProbeConfig,
    as_json: bool,
    plot_path: Path | None = None,
) -> int:
    """Run the probe, print its result (and plot it), return the exit status."""
    try:
        # Whatever the probe or user code prints must not end up in the JSON on stdout.
        with contextlib.redirect_stdout(sys.stderr):
            result = _probe(engine, factory, config)
    except ProbeUnavailable as exc:
        return _cannot_run(str(exc), as_json)
    except KeyboardInterrupt:
        click.echo("lintloader verify: interrupted; worker processes shut down", err=True)
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # user code (the factory, or a module it imports) called exit()
        return _cannot_run(f"the probed code called sys.exit({exc.code!r})", as_json)
    except Exception as exc:
        return _cannot_run(f"the probe crashed: {type(exc).__name__}: {exc}", as_json)
    from lintloader.runtime.verify.render import render_json, render_table

    code = _print(render_json(result) if as_json else render_table(result), result.exit_code)
    if plot_path is not None and code != EXIT_CANNOT_RUN:
        title = f"verify --dataloader {factory}" if factory else f"verify --engine {engine}"
        return _plot(result, plot_path, title) or code
    return code


def _print(text: str, code: int) -> int:
    """Print the result; exit 2 with one line when standard output cannot take it."""
    try:
        emit(text)
    except OutputError as exc:
        silence_stdout()
        click.echo(f"lintloader verify: cannot write output: {exc}", err=True)
        return EXIT_CANNOT_RUN
    return code


def _plot(result: ProbeResult, target: Path, title: str) -> int:
    """Draw the result under ``title`` (the command as the user gave it); 0, or exit 2 with
    one line when it cannot be drawn."""
    from lintloader.runtime.plot import PlotError, panel_of, write_plot

    try:
        write_plot([panel_of(result.to_dict(), title)], target)
    except PlotError as exc:
        click.echo(f"lintloader verify: cannot plot: {exc}", err=True)
        return EXIT_CANNOT_RUN
    return 0


def _probe(engine: str, factory: str | None, config: ProbeConfig) -> ProbeResult:
    if factory is not None:
        from lintloader.runtime.verify.probe_factory import run_factory_probe

        return run_factory_probe(factory, config)
    if engine == "torch":
        from lintloader.runtime.verify.probe_torch import run_torch_probe

        return run_torch_probe(config)
    from lintloader.runtime.verify.probe_lightning import run_lightning_probe

    return run_lightning_probe(config)


def _cannot_run(message: str, as_json: bool) -> int:
    click.echo(f"lintloader verify: cannot run: {message}", err=True)
    if as_json:
        from lintloader.runtime.verify.render import render_error_json

        return _print(render_error_json(message, EXIT_CANNOT_RUN), EXIT_CANNOT_RUN)
    return EXIT_CANNOT_RUN


if __name__ == "__main__":
    verify_command()

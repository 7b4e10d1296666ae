"""The ``lintloader`` command line: thin wrappers that parse options and call the library.

Exit codes (as ruff): 0 no finding at or above the threshold, 1 findings, 2 usage, configuration
or internal error.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys

import click

from lintloader import __version__
from lintloader.cli.exits import CheckDone

# Every command lives in its own module, imported only when used (``verify`` needs torch).
LAZY_COMMANDS = {
    "check": ("lintloader.cli.check", "check"),
    "clean": ("lintloader.cli.clean", "clean_command"),
    "rule": ("lintloader.cli.rule", "rule_command"),
    "server": ("lintloader.cli.server", "server_command"),
    "fix": ("lintloader.cli.fix", "fix_command"),
    "plot": ("lintloader.cli.plot", "plot_command"),
    "verify": ("lintloader.cli.verify", "verify_command"),
    "trace": ("lintloader.cli.trace", "trace_command"),
}


class LazyGroup(click.Group):
    """A click group that imports a command's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY_COMMANDS and name not in self.commands:
            module_name, attribute = LAZY_COMMANDS[name]
            module = importlib.import_module(module_name)
            self.add_command(getattr(module, attribute), name)
        return super().get_command(ctx, name)


def run() -> None:
    """The console script: :func:`main`; for a ``check``, with the garbage collector off, and
    leaving without tearing the interpreter down. A check of a site-packages leaves hundreds
    of thousands of objects; freeing them one by one and a last garbage collection took
    40-70 ms of a one-changed-file run. Only ``check`` ends this way: it leaves no process
    and registers no exit handler (``verify``'s DataLoader workers, for one, are cleaned up
    by ``atexit``). In-process callers of :func:`main` keep the collector and the teardown."""
    if sys.argv[1:2] == ["check"]:
        # a short-lived process whose objects hold no cycles (see engine.collector_paused):
        # the collector stays off until it exits, rather than walking everything the run
        # allocated once when run_check re-enables it (45 ms after a one-file change in a
        # whole site-packages)
        gc.disable()
    try:
        main()
    except CheckDone as done:
        code = done.code if isinstance(done.code, int) else 1
        for stream in (sys.stdout, sys.stderr):
            # a closed pipe (`lintloader check | head`): nothing left to flush to
            with contextlib.suppress(OSError):
                stream.flush()
        os._exit(code)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lintloader")
def main() -> None:
    """Find and fix code that throws away a PyTorch DataLoader's worker pool between epochs."""


if __name__ == "__main__":  # pragma: no cover
    run()

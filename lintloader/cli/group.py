"""The ``lintloader`` click group: each command lives in its own module, imported only when
used (``verify`` needs torch). The console script (``cli/main.py``) imports this only when the
warm fast path (``cli/fast.py``) did not answer."""

from __future__ import annotations

import importlib

import click

from lintloader import __version__

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


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lintloader")
def main() -> None:
    """Find and fix code that throws away a PyTorch DataLoader's worker pool between epochs."""

"""The option tables of docs/, generated from the click commands, so that a table cannot lack
an option or say something its ``--help`` does not.

A table sits between ``<!-- options-table: COMMAND ... -->`` and ``<!-- /options-table -->``;
``python -m lintloader.dev regenerate`` rewrites every such table in docs/*.md and
``tests/unit/test_option_docs.py`` fails when a committed one differs from what this makes.
"""

from __future__ import annotations

import importlib
import re

import click

from lintloader.cli.main import LAZY_COMMANDS

SCRIPT = "python -m lintloader.dev regenerate"
BEGIN = "<!-- options-table: {name} (generated from `lintloader {name} --help` by `{script}`) -->"
END = "<!-- /options-table -->"
TABLE = re.compile(r"<!-- options-table: (?P<name>[\w-]+) .*?-->\n.*?<!-- /options-table -->", re.S)


def command(name: str) -> click.Command:
    module_name, attribute = LAZY_COMMANDS[name]
    found = getattr(importlib.import_module(module_name), attribute)
    assert isinstance(found, click.Command)
    return found


def _names(option: click.Option) -> str:
    flags = [*option.opts, *option.secondary_opts]
    metavar = "" if option.is_flag else f" {option.metavar or option.type.name.upper()}"
    if isinstance(option.type, click.Choice) and not option.metavar:
        metavar = " " + "\\|".join(str(choice) for choice in option.type.choices)
    metavar = metavar.replace("|", "\\|") if "\\|" not in metavar else metavar
    return ", ".join(f"`{flag}{metavar if flag == flags[-1] else ''}`" for flag in flags)


def _help(option: click.Option) -> str:
    text = " ".join((option.help or "").split())
    if option.multiple:
        text += " (repeatable)" if "epeat" not in text else ""
    return text.replace("|", "\\|")


def table(name: str) -> str:
    """The Markdown table of ``lintloader NAME``'s options, in ``--help``'s order."""
    rows = [
        f"| {_names(param)} | {_help(param)} |"
        for param in command(name).params
        if isinstance(param, click.Option) and not param.hidden
    ]
    rows.append("| `-h`, `--help` | Show the help and exit. |")
    head = [BEGIN.format(name=name, script=SCRIPT), "| Option | Meaning |", "| --- | --- |"]
    return "\n".join([*head, *rows, END])


def with_tables(text: str) -> str:
    """``text`` with every options table regenerated."""
    return TABLE.sub(lambda match: table(match["name"]), text)

"""``lintloader server``: the language server, over standard input and output (the
``[lsp]`` extra: pygls and lsprotocol). Set-up for each editor: docs/editors.md."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import click

from lintloader import extra_hint

INSTALL_HINT = f"lintloader server needs the [lsp] extra: {extra_hint('lsp')}"


@click.command("server", short_help="Run the language server (editors: docs/editors.md).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the summary cache.")
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path),
    help="Where summaries are cached (default: $LINTLOADER_CACHE_DIR or ~/.cache).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    metavar="N",
    default=None,
    help="Processes a cold analysis parses in, forked by a helper the server starts "
    "(default: the CPU count, at most 8; 1: in the server's own process).",
)
def server_command(no_cache: bool, cache_dir: Path | None, jobs: int | None) -> None:
    """Run the language server over stdio (editor set-up: docs/editors.md).

    Diagnostics with their chains, hover, quick fixes and fix-all for the project the editor
    has open; the same findings `lintloader check` gives for it.
    """
    import importlib.util
    import sys

    from lintloader import __version__
    from lintloader.integrations.lsp.handshake import answer_initialize, rest_of

    if any(importlib.util.find_spec(name) is None for name in ("pygls", "lsprotocol")):
        _missing_extra()
    # the editor waits for this answer: given before pygls and the analysis are imported
    handshake = answer_initialize(sys.stdin.buffer, sys.stdout.buffer, __version__)
    try:
        from lintloader.integrations.lsp.server import adopt_handshake, build_server
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] in ("pygls", "lsprotocol", "cattrs", "attrs"):
            _missing_extra()
        raise
    from lintloader.integrations.lsp.analysis import Settings, cold_jobs, warm_cache
    from lintloader.workers.prefork import Helper

    jobs = jobs or cold_jobs()
    settings = Settings(use_cache=not no_cache, cache_dir=cache_dir, cold_jobs=jobs)
    # forked now, before the server starts a thread: cold analyses parse in forked shards
    helper = Helper.start(warm_cache) if settings.use_cache and jobs > 1 else None
    try:
        server = build_server(settings, helper)
        if handshake.params is not None:
            adopt_handshake(server, handshake.params)
        server.start_io(stdin=rest_of(sys.stdin.buffer, handshake))
    finally:
        if helper is not None:
            helper.close()


def _missing_extra() -> NoReturn:
    from lintloader.cli.options import Failure  # the analysis' imports: only on this path

    raise Failure(INSTALL_HINT) from None

"""``lintloader clean``: remove lintloader's own entries from the cache directory."""

from __future__ import annotations

from pathlib import Path

import click

from lintloader.cache.files import NotACache, clean_cache, default_cache_dir
from lintloader.cli.options import Failure, guarded
from lintloader.text.wording import counted


@click.command("clean", short_help="Remove lintloader's own cache entries.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The cache to remove (default: $LINTLOADER_CACHE_DIR or ~/.cache/lintloader).",
)
@guarded
def clean_command(cache_dir: Path | None) -> None:
    """Remove the summary cache and stat index (only lintloader's own entries)."""
    directory = cache_dir or default_cache_dir()
    try:
        removed = clean_cache(directory)
    except NotACache as exc:
        raise Failure(f"{exc}: nothing removed") from None
    click.echo(f"Removed {counted(removed, 'cache entry', 'cache entries')} from {directory}.")

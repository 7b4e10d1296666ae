"""``lintloader clean``: remove lintloader's own entries from the cache directory."""

from __future__ import annotations

from pathlib import Path

import click

from lintloader.cache.files import clean_cache, default_cache_dir
from lintloader.cli.options import guarded


@click.command("clean")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The cache to remove (default: $LINTLOADER_CACHE_DIR or ~/.cache/lintloader).",
)
@guarded
def clean_command(cache_dir: Path | None) -> None:
    """Remove the summary cache and stat index (only lintloader's own entries)."""
    directory = cache_dir or default_cache_dir()
    removed = clean_cache(directory)
    click.echo(f"Removed {removed} cache entr{'y' if removed == 1 else 'ies'} from {directory}.")

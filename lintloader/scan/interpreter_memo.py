"""What another interpreter answered about its site directories, remembered by its stat."""

from __future__ import annotations

import hashlib
from pathlib import Path

from lintloader import __version__
from lintloader.cache.files import read_pickle
from lintloader.scan import site_query


def answer_file(cache_dir: Path, stamp: tuple[object, ...]) -> Path:
    name = hashlib.sha256(str(stamp[0]).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return Path(cache_dir) / f"interpreters-{__version__}" / f"{name}.pickle"


def remembered_answer(cache_dir: Path, stamp: tuple[object, ...]) -> dict | None:
    stored = read_pickle(answer_file(cache_dir, stamp))
    if not isinstance(stored, tuple) or len(stored) != 2 or stored[0] != stamp:
        return None
    answer = stored[1]
    if not site_query.is_answer(answer) or not isinstance(answer.get("candidates"), list):
        return None
    return {**answer, "sites": site_query.existing_sites(answer["candidates"])}

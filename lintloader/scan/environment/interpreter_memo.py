"""What another interpreter answered about its site directories, remembered by its stat."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from lintloader import __version__
from lintloader.cache.files import read_entry, write_entry
from lintloader.scan.environment import site_query

if TYPE_CHECKING:  # the answer's shape (site_query.py runs without typing)
    from lintloader.scan.environment.site_query import Answer


def answer_file(cache_dir: Path, stamp: tuple[object, ...]) -> Path:
    name = hashlib.sha256(str(stamp[0]).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return Path(cache_dir) / f"interpreters-{__version__}" / f"{name}.json"


# (path, then stat stamps of the interpreter and its pyvenv.cfg files, None where missing),
# and the answer (JSON from the interpreter, checked by site_query.is_answer)
Stored = tuple[tuple[str | tuple[int, int, int, int] | None, ...], object]
KIND = "interpreter answer"


def remembered_answer(cache_dir: Path, stamp: tuple[object, ...]) -> Answer | None:
    stored = read_entry(Path(cache_dir), answer_file(cache_dir, stamp), KIND, Stored)
    if stored is None or stored[0] != stamp:
        return None
    answer = stored[1]
    if not site_query.is_answer(answer) or not isinstance(answer.get("candidates"), list):
        return None
    return {**answer, "sites": site_query.existing_sites(answer["candidates"])}


def remember_answer(cache_dir: Path, stamp: tuple[object, ...], answer: Answer) -> None:
    write_entry(Path(cache_dir), answer_file(cache_dir, stamp), KIND, Stored, (stamp, answer))

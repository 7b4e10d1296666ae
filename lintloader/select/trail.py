"""The trail of a selection: what each demand round asked for and which files it took.

A check stores the trail with its findings (``incremental/replay.py``). Selection depends on
the files' content only through the answers to these questions, and the findings only on the
summaries of the files taken, so when a few files change, the stored findings still hold if each
changed file answers every round as before (:func:`first_taking_round`) and, if it was taken,
summarizes as before (``incremental/revisit.py``).

This module is imported when a stored run is loaded: it stays clear of the analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from lintloader.analysis.context import TokenGroup
from lintloader.scan.model import SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.select.query import GroupQuery, chosen_by


class Round(NamedTuple):
    """One round: the token groups of its query (None: it asked for modules by name only),
    the modules it asked for by name, and the paths of the files it took."""

    groups: tuple[TokenGroup, ...] | None
    modules: frozenset[str]
    taken: tuple[str, ...]

    def query(self) -> GroupQuery | None:
        return None if self.groups is None else GroupQuery.build(self.groups)


def as_trail(value: object) -> tuple[Round, ...] | None:
    """``value`` (a stored run's rounds, read back as plain tuples: ``incremental/replay.py``) as
    a trail of :class:`Round` records; None when it is not a well-formed trail."""
    if not isinstance(value, tuple):
        return None
    if not all(isinstance(item, tuple) and len(item) == len(Round._fields) for item in value):
        return None
    trail = tuple(Round._make(item) for item in value)
    return trail if is_trail(trail) else None


def is_trail(value: object) -> bool:
    """Whether ``value`` (read from disk, so not trusted) is a well-formed trail."""
    return isinstance(value, tuple) and all(_is_round(item) for item in value)


def _is_round(value: object) -> bool:
    if not isinstance(value, Round):
        return False
    groups, modules, taken = value
    groups_ok = groups is None or (
        isinstance(groups, tuple)
        and all(
            isinstance(group, tuple) and all(isinstance(token, bytes) for token in group)
            for group in groups
        )
    )
    return (
        groups_ok
        and isinstance(modules, frozenset)
        and all(isinstance(module, str) for module in modules)
        and isinstance(taken, tuple)
        and all(isinstance(path, str) for path in taken)
    )


def first_taking_round(
    rounds: Sequence[Round],
    queries: Sequence[GroupQuery | None],
    sources: SourceSet,
    file: SourceFile,
) -> int | None:
    """The number of the first round whose question ``file`` answers yes to (None: none does),
    as the file is now. ``queries``: each round's :meth:`Round.query`, built once."""
    for number, (round_, query) in enumerate(zip(rounds, queries, strict=True)):
        if chosen_by(query, round_.modules, sources, [file]):
            return number
    return None

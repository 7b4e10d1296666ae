"""What every rule's check and demand hook is given, and what a demand hook answers.

A token group is the byte tokens a file must all contain to be worth parsing (a cheap byte
search, ``scan/read/tokens.py``); a :class:`Demand` names the groups and modules to parse next; the
:class:`AnalysisContext` is the linked program plus the analyses rules share. Nothing here
imports the linker at run time, so the selection's query engine can name a token group
without loading it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from lintloader.analysis.vocabulary import Vocabulary
from lintloader.domain.cost import Branch, StartMethod, lowest_python, start_method
from lintloader.settings.config import requires_python

if TYPE_CHECKING:
    from lintloader.analysis.reachability import Reachability
    from lintloader.link.program import Program

TokenGroup = tuple[bytes, ...]
TokenGroups = tuple[TokenGroup, ...]


class Demand(NamedTuple):
    """What a rule needs parsed next, given what is linked so far: files that contain every
    token of one of ``token_groups``, and the modules named in ``modules`` (dotted paths)."""

    token_groups: frozenset[TokenGroup] = frozenset()
    modules: frozenset[str] = frozenset()


@dataclass(eq=False, repr=False)
class AnalysisContext:
    """The linked program plus analyses shared between rules (computed on first use)."""

    program: Program
    display: Callable[[str], str] = str
    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    # directory -> the lowest Python its nearest pyproject.toml's requires-python allows
    targets: dict[str, tuple[int, int] | None] = field(default_factory=dict, repr=False)

    def start_method(self, path: str, explicit: Sequence[Branch] | None) -> StartMethod:
        """The start method of a loader built in ``path``: ``explicit`` (what its
        ``multiprocessing_context`` names on each branch) when it names one, else the default of the
        Python the project targets (the lowest its ``requires-python`` allows), else of the
        running one."""
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in self.targets:
            spec = requires_python(folder)
            self.targets[folder] = lowest_python(spec) if spec else None
        return start_method(explicit, self.targets[folder])

    @cached_property
    def reachability(self) -> Reachability:
        from lintloader.analysis.reachability import Reachability

        return Reachability(self.program, self.vocabulary)

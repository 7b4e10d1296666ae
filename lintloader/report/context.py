"""What a renderer may know besides the findings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

SortKey = tuple[str, int, int, int, str]  # Finding.sort_key


@dataclass(frozen=True)
class Replacement:
    """A safe fix's edit in the finding's own file, line-wise: lines ``start`` up to (not
    including) ``end`` (1-based) become ``text``."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class ReportContext:
    color: bool = False
    show_chain: bool = True
    root: str = "."  # the directory paths are relative to (SARIF's base)
    # the safe fix of a finding as replacements (only formats that carry edits ask for them)
    replacements: Mapping[SortKey, tuple[Replacement, ...]] = field(default_factory=dict)

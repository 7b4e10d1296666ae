"""What a renderer may know besides the findings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportContext:
    color: bool = False
    show_chain: bool = True
    root: str = "."  # the directory paths are relative to (SARIF's base)

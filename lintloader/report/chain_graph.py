"""A finding's chain as graph nodes: root -> hops -> sink, each with ``file:line``; shared by
the picture formats (``markdown`` with mermaid, ``dot``)."""

from __future__ import annotations

from dataclasses import dataclass

from lintloader.finding.findings import Finding, Hop


@dataclass(frozen=True)
class Node:
    place: str  # path:line (path:cell N:line in a notebook)
    function: str
    action: str
    guessed: bool = False  # the edge into this node was guessed by method name (not typed)


def chain_nodes(finding: Finding) -> list[Node]:
    """The chain's hops as nodes; a finding without a chain is one node at its location."""
    if not finding.chain:
        return [Node(_place_of(finding.path, finding.cell, finding.line), "", finding.message)]
    return [
        Node(_place_of(hop.path, hop.cell, hop.line), hop.function, hop.action, _guessed(hop))
        for hop in finding.chain
    ]


def also_nodes(finding: Finding) -> list[Node]:
    """Other resets the same root reaches."""
    return [Node(_place_of(h.path, h.cell, h.line), h.function, h.action) for h in finding.also]


def _place_of(path: str, cell: int, line: int) -> str:
    return f"{path}:cell {cell}:{line}" if cell else f"{path}:{line}"


def _guessed(hop: Hop) -> bool:
    return hop.confidence.label != "high"

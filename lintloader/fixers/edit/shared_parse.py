"""The libcst parse of a file that a fix trial's strategies share: one per text, kept on the
requests of one run of fix rounds (``FixRequest.parsed``), so that the strategies tried on a file,
and the next round's look at a file no fix changed, do not parse and resolve it again."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from lintloader.fixers.base import FixRequest, Parsed
from lintloader.fixers.edit.parsing import parse_module


def parsed(request: FixRequest, path: str, source: bytes) -> Parsed:
    """``path``'s text ``source`` parsed with its positions and parents, once for all the
    strategies and rounds that read that text: they share the tree (libcst nodes are never
    changed in place; an edit makes new ones), so a finding's second strategy, or the next
    round's look at a file no fix changed, does not parse and resolve it again. One text is kept
    per path: an edited file's old tree is dropped."""
    known = request.parsed.get(path)
    if known is None or known.source != source:
        wrapper = MetadataWrapper(parse_module(source))
        positions = wrapper.resolve(PositionProvider)
        calls: dict[tuple[int, int], cst.Call] = {}
        for node, where in positions.items():
            if isinstance(node, cst.Call):
                calls.setdefault((where.start.line, where.start.column + 1), node)
        parents = wrapper.resolve(ParentNodeProvider)
        known = request.parsed[path] = Parsed(source, wrapper.module, positions, parents, calls)
    return known

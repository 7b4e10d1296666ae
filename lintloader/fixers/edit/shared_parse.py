"""The libcst parse of a file that a fix trial's strategies share: one per text, kept on the
requests of one run of fix rounds (``FixRequest.parsed``), so that the strategies tried on a file,
and the next round's look at a file no fix changed, do not parse and resolve it again."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

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
        module = parse_module(source)
        parents = parents_of(module)
        if parents is None:  # a node in two places: positions need a copy with each once
            wrapper = MetadataWrapper(module)
            module = wrapper.module
            parents = parents_of(module) or {}
        else:  # each node once, as a fresh parse has it: no copy needed
            wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        positions = wrapper.resolve(PositionProvider)
        calls: dict[tuple[int, int], cst.Call] = {}
        for node, where in positions.items():
            if isinstance(node, cst.Call):
                calls.setdefault((where.start.line, where.start.column + 1), node)
        known = request.parsed[path] = Parsed(source, module, positions, parents, calls)
    return known


def parents_of(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode] | None:
    """Each node's parent in ``module`` (what libcst's ``ParentNodeProvider`` answers), read
    from the nodes' fields: a libcst visit rebuilds every node it passes, which cost more than
    the parse; None when a node is in the tree twice (a tree built by hand may share one),
    where a parent is not one node's."""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    names: dict[type[cst.CSTNode], tuple[str, ...]] = {}  # each node class's field names
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        for child in _children(node, names):
            if child in parents:
                return None
            parents[child] = node
            stack.append(child)
    return parents


def _children(
    node: cst.CSTNode, names: dict[type[cst.CSTNode], tuple[str, ...]]
) -> Iterator[cst.CSTNode]:
    """The nodes in ``node``'s fields, alone or in a sequence (a libcst node's children)."""
    kind = type(node)
    fields = names.get(kind)
    if fields is None:
        fields = names[kind] = tuple(f.name for f in dataclasses.fields(node))
    for name in fields:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from (item for item in value if isinstance(item, cst.CSTNode))

"""Loops over a fixed set of things written out in the loop (issue 29, shape 8):
``for ds in (train_ds, val_ds):``, ``for split in ["train", "val"]:``. Such a loop runs a few
times, once per item, not once per epoch: a construction in it is one loader per item (info
at most), and its value is one of the items, not an object whose class a method name could
guess."""

from __future__ import annotations

import ast

from lintloader.summary.model import LoopInfo


def over_fixed_set(loop: LoopInfo) -> bool:
    """The loop iterates a tuple, list or set literal (``for ds in (a, b)``): as recorded from
    the tree (a header over :data:`~lintloader.summary.helpers.TEXT_LIMIT` is cut), else as
    its header reads."""
    if loop.kind != "for":
        return False
    if loop.fixed:
        return True
    try:
        node = ast.parse(loop.header + ": pass").body[0]
    except SyntaxError:
        return False
    return isinstance(node, ast.For) and isinstance(node.iter, (ast.Tuple, ast.List, ast.Set))


def only_fixed_sets(loops: list[LoopInfo]) -> bool:
    """Every loop of a chain (a loop and those around it) is over a fixed set: nested in an
    epoch loop, a loop over two datasets still runs every epoch."""
    return bool(loops) and all(over_fixed_set(loop) for loop in loops)


def fixed_set_value(loops: list[LoopInfo], index: int, name: str) -> bool:
    """``name`` is the value of an enclosing loop (from ``index`` outwards) over a fixed set."""
    while 0 <= index < len(loops):
        loop = loops[index]
        if name in loop.targets or _header_binds(loop.header, name):
            return over_fixed_set(loop)
        index = loop.parent
    return False


def _header_binds(header: str, name: str) -> bool:
    target, _, _ = header.removeprefix("for ").partition(" in ")
    return name in {part.strip(" ()[]") for part in target.split(",")}

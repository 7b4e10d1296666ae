"""Loops over a fixed set of things written out in the loop (issue 29, shape 8):
``for ds in (train_ds, val_ds):``, ``for split in ["train", "val"]:``. Such a loop runs a few
times, once per item, not once per epoch: a construction in it is one loader per item (info
at most), and its value is one of the items, not an object whose class a method name could
guess."""

from __future__ import annotations

from lintloader.summary.model import LoopInfo


def over_fixed_set(loop: LoopInfo) -> bool:
    """The loop iterates a tuple, list or set display (``for ds in (a, b)``), or a local only
    ever bound to such displays, as the summary read it from the tree (``LoopInfo.fixed``:
    summary/fixed_loops.py), whatever the length of its header."""
    return loop.kind == "for" and loop.fixed


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

"""How lintloader counts things in what it prints: ``1 finding``, ``2 findings``.

The one home of a plural: the CLI, the reports, the rules' messages and the language server
ask :func:`counted` (a count and its noun) or :func:`plural` (the noun alone) instead of
writing ``'s' * (n != 1)`` again. It imports nothing, so any layer may use it.
"""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str = "") -> str:
    """``noun`` for a count of 1, else its plural: ``nouns``, or ``noun`` + "s" by default
    (``plural(2, "entry", "entries")``: "entries")."""
    return noun if count == 1 else nouns or f"{noun}s"


def counted(count: int, noun: str, nouns: str = "") -> str:
    """The count and its noun: ``counted(1, "finding")`` "1 finding", ``counted(0, "file")``
    "0 files"."""
    return f"{count} {plural(count, noun, nouns)}"

"""What a call passes and a loop iterates, read off the tree while the summarizer walks it
(``summary/calls.py``): the facts that binding a call to its callee (``link/arguments.py``)
and LL202's value flow (``analysis/repetition.py``) need, so that neither parses a call's or a
loop's text again.

A value's names are the dotted names its text, as ``ast.unparse`` writes it, reads
(``load(files[i], n=k)``: "load files i", "k"), keyword names and words inside strings
included: the very names LL202 read off the text before the summary kept them.
"""

from __future__ import annotations

import ast
import re

from lintloader.summary.dataloaders.bounds import lower_bound
from lintloader.summary.helpers import dotted
from lintloader.summary.model import Dotted, Passed
from lintloader.summary.none_guards import may_be_none
from lintloader.summary.walk import walk_order
from lintloader.summary.written import written

_READ_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def names_in(text: str) -> str:
    """The dotted names ``text`` reads, space-separated."""
    return " ".join(_READ_NAME.findall(text))


def passed(node: ast.Call) -> tuple[Passed, ...]:
    """A call's arguments, positional ones (``*args`` among them) then keywords."""
    found = [
        _passed(a.value, None, "*") if isinstance(a, ast.Starred) else _passed(a, None, "")
        for a in node.args
    ]
    found += [_passed(k.value, k.arg, "" if k.arg else "**") for k in node.keywords]
    return tuple(found)


def receiver(node: ast.Call, callee: Dotted | None = None) -> str:
    """The names the object of a method call reads (``self.data.load(x)``: "self.data");
    ``callee``: the call's dotted name, when it has one (its object's is all but its last)."""
    func = node.func
    if func.__class__ is not ast.Attribute:
        return ""
    if callee and callee[0] != "super()":  # ``super(C, self).m``: its arguments are read
        text = ".".join(callee[:-1])
        return text if text.isascii() else names_in(text)
    return _read(func.value)[1]


def _read(value: ast.expr) -> tuple[str, str, Dotted | None]:
    """``value``'s text as :func:`written` writes it, the names it reads, and its dotted name
    when it is a name or an attribute chain (``self.data``): that text, when ASCII, is its
    own names (the pattern reads ASCII identifiers joined by dots whole)."""
    kind = value.__class__
    name = dotted(value) if kind is ast.Name or kind is ast.Attribute else None
    if name:
        text = ".".join(name)
        return text, text if text.isascii() and name[0] != "super()" else names_in(text), name
    text = written(value)
    return text, names_in(text), None


def loop_reads(node: ast.For | ast.AsyncFor | ast.While) -> tuple[tuple[str, ...], str]:
    """What a ``for`` binds (every name in its target) and what its iterable reads (a
    ``while``: nothing)."""
    if isinstance(node, ast.While):
        return (), ""
    binds = tuple(n.id for n in walk_order(node.target) if isinstance(n, ast.Name))
    return binds, names_in(written(node.iter))


def _passed(value: ast.expr, keyword: str | None, star: str) -> Passed:
    text, names, name = _read(value)
    called = (dotted(value.func) or ()) if isinstance(value, ast.Call) else None
    zero = isinstance(value, ast.Constant) and value.value == 0
    bound = lower_bound(value)
    fields = (keyword, star, text, names, name, called, bound, zero, may_be_none(value))
    return _new(Passed, fields)  # all its fields: without the named tuple's keyword handling


_new = tuple.__new__

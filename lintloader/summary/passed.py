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
import copy
import re

from lintloader.summary.dataloaders.bounds import lower_bound
from lintloader.summary.helpers import dotted
from lintloader.summary.model import Passed
from lintloader.summary.none_guards import may_be_none
from lintloader.summary.walk import descendants

_READ_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def written(value: ast.expr) -> str:
    """``value`` as ``ast.unparse`` writes it (a plain name or attribute chain without it),
    an f-string as a call of ``f`` on the values it formats (see :class:`_FStringsAsCalls`)."""
    name = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    if name:
        return ".".join(name)
    if isinstance(value, ast.JoinedStr) or any(
        isinstance(node, ast.JoinedStr) for node in descendants(value)
    ):
        value = _FStringsAsCalls().visit(copy.deepcopy(value))
    return ast.unparse(value)


class _FStringsAsCalls(ast.NodeTransformer):
    """``f"{a!r:>{w}} b"`` as ``f(a, w)``: ``ast.unparse`` writes an f-string one way on
    Python 3.11 and another on 3.12+ (PEP 701's quotes), and a summary must not depend on the
    interpreter that made it; a call keeps every name the f-string reads."""

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        formatted = [n for n in ast.walk(node) if isinstance(n, ast.FormattedValue)]
        values = [self.visit(f.value) for f in formatted]
        return ast.Call(ast.Name("f", ast.Load()), values, [])


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


def receiver(node: ast.Call) -> str:
    """The names the object of a method call reads (``self.data.load(x)``: "self.data")."""
    func = node.func
    return names_in(written(func.value)) if isinstance(func, ast.Attribute) else ""


def loop_reads(node: ast.For | ast.AsyncFor | ast.While) -> tuple[tuple[str, ...], str]:
    """What a ``for`` binds (every name in its target) and what its iterable reads (a
    ``while``: nothing)."""
    if isinstance(node, ast.While):
        return (), ""
    binds = tuple(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    return binds, names_in(written(node.iter))


def _passed(value: ast.expr, keyword: str | None, star: str) -> Passed:
    text = written(value)
    name = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    called = (dotted(value.func) or ()) if isinstance(value, ast.Call) else None
    zero = isinstance(value, ast.Constant) and value.value == 0
    bound = lower_bound(value)
    return Passed(
        keyword, star, text, names_in(text), name, called, bound, zero, may_be_none(value)
    )

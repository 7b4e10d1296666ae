"""One home for binding a call's arguments to the parameters of the function it calls.

:func:`bind` reads a call as written (its text, parsed once; the summary's shape of it when the
text was cut) against the callee's signature and says, per parameter, what the call passes:

* which of its positional parameters the call's positional arguments fill: ``self`` is left
  out for a call on an object (``self.m(x)``, ``loader.m(x)``, ``super().m(x)``, a classmethod's
  ``cls.m(x)`` or ``Class.m(x)``) and filled by the first argument of a call through the class
  (``Base.m(self, x)``);
* :meth:`Binding.written`: the argument written for a parameter, by keyword or by position
  before any ``*args``; :meth:`Binding.passes`: whether the call passes a value for it (None:
  a ``*args``/``**kwargs`` may fill it, "maybe filled");
* :attr:`Binding.slots`: every argument with the parameters it may reach, a starred one any
  of them ("maybe tainted": what flows from the caller into the callee).

An analysis asks :func:`binding` for an edge of the program (worked out once per call).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from lintloader.link.calls import Edge
from lintloader.link.program import Program
from lintloader.summary.model import CallSite, FunctionSummary, LoaderCall


class Slot(NamedTuple):
    """One argument as written (``x`` of ``*x``/``**x``), and the parameters it may fill:
    None for any of them (a ``*args``/``**kwargs``, a positional one past every parameter of
    a callee without ``*args``)."""

    argument: ast.expr
    fills: tuple[str, ...] | None


@dataclass(frozen=True)
class Binding:
    """What one call passes to the parameters of its callee.

    ``params``: the callee's positional parameters that the call's positional arguments fill,
    in order (``self`` left out for a call on an object). ``keywords``: the names passed by
    keyword; ``positional``: how many positional arguments come before any ``*args``;
    ``stars``: a ``*args`` or ``**kwargs`` may fill more. ``parsed``: the call's text was read
    whole (``written`` and ``slots`` are there); ``reference``: the function is passed as a
    value, not called (what it will be passed is up to whoever calls it)."""

    params: tuple[str, ...]
    keywords: frozenset[str] = frozenset()
    positional: int = 0
    stars: bool = False
    parsed: bool = False
    reference: bool = False
    arguments: dict[str, ast.expr] = field(default_factory=dict)
    slots: tuple[Slot, ...] = ()

    def passes(self, name: str) -> bool | None:
        """Whether the call passes parameter ``name``: True when written (by keyword or by
        position), None when a ``*args``/``**kwargs`` may fill it (or a reference is called
        later with anything), False when it surely does not."""
        if self.reference:
            return None
        if name in self.keywords:
            return True
        if name in self.params and self.params.index(name) < self.positional:
            return True
        return None if self.stars else False

    def written(self, name: str) -> ast.expr | None:
        """The argument written for parameter ``name`` (by keyword, or by position before any
        ``*args``); None when none is, or the call's text was cut."""
        return self.arguments.get(name)


def bind(call: CallSite, callee: FunctionSummary) -> Binding:
    """How ``call`` binds its arguments to ``callee``'s parameters (its text parsed once)."""
    params = tuple(callee.params[_offset(call, callee) :])
    if call.is_reference:
        return Binding(params, reference=True)
    node = _parsed(call.site.text)
    if node is None:  # cut at the text limit: the summary kept its shape
        positional = call.positional
        stars = positional < 0 or "**" in call.keywords
        keywords = frozenset(k for k in call.keywords if k != "**")
        return Binding(params, keywords, max(positional, 0), stars)
    if not isinstance(node, ast.Call):
        return Binding(params, parsed=True)
    return _bind_parsed(node, call, callee, params)


def bind_loader_call(call: LoaderCall, init: FunctionSummary) -> Binding:
    """How a construction (``MyLoader(ds, batch_size=8)``, recorded with its arguments) binds
    them to the class's ``__init__`` (``self`` left out): its shape only."""
    params = tuple(init.params[1 if init.self_name else 0 :])
    stars = any(a.star for a in call.arguments)
    keywords = frozenset(a.keyword for a in call.arguments if a.keyword is not None)
    positional = _before_star(a.star for a in call.arguments if a.keyword is None)
    return Binding(params, keywords, positional, stars)


def binding(program: Program, edge: Edge) -> Binding:
    """:func:`bind` for the call ``edge`` makes, worked out once per call of the program."""
    memo = program.derived(_memo)
    key = (edge.call, edge.callee)
    if key not in memo:
        memo[key] = bind(edge.call, program.functions[edge.callee].function)
    return memo[key]


def _memo(program: Program) -> dict[tuple[CallSite, str], Binding]:
    return {}


def _parsed(text: str) -> ast.expr | None:
    if text.endswith("..."):
        return None  # cut at the text limit: what it passes is not all there
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


def _offset(call: CallSite, callee: FunctionSummary) -> int:
    """How many leading parameters the call's positional arguments skip: the ``self`` (or
    ``cls``) of a method called on an object, none for ``Class.method(obj, ...)``."""
    if callee.self_name is None:
        return 0
    owner = (callee.class_qualname or "").rsplit(".", 1)[-1]
    target = call.target
    unbound = callee.kind == "method" and len(target) > 1 and target[-2] == owner
    return 0 if unbound else 1


def _before_star(stars: Iterable[str]) -> int:
    count = 0
    for star in stars:
        if star:
            break
        count += 1
    return count


def _bind_parsed(
    node: ast.Call, call: CallSite, callee: FunctionSummary, params: tuple[str, ...]
) -> Binding:
    arguments = {k.arg: k.value for k in node.keywords if k.arg is not None}
    positional = _before_star("*" if isinstance(a, ast.Starred) else "" for a in node.args)
    for index, argument in enumerate(node.args[: min(positional, len(params))]):
        arguments.setdefault(params[index], argument)
    stars = positional < len(node.args) or any(k.arg is None for k in node.keywords)
    keywords = frozenset(k.arg for k in node.keywords if k.arg is not None)
    slots = _slots(node, call, callee, params)
    return Binding(params, keywords, positional, stars, True, False, arguments, slots)


def _slots(
    node: ast.Call, call: CallSite, callee: FunctionSummary, params: tuple[str, ...]
) -> tuple[Slot, ...]:
    """Every argument with the parameters it may reach: the object of a method called on one
    (``ds.train_dataloader()``: the method reads ``ds``) its ``self``; a positional one the
    parameter at its place (past them: ``*args``); a keyword its parameter, else ``**kwargs``;
    a ``*``/``**`` one any."""
    found: list[Slot] = []
    bound = len(params) < len(callee.params)
    if bound and isinstance(node.func, ast.Attribute) and callee.self_name:
        found.append(Slot(node.func.value, (callee.self_name,)))
    for index, argument in enumerate(node.args):
        if isinstance(argument, ast.Starred):
            found.append(Slot(argument.value, None))
        elif index < len(params):
            found.append(Slot(argument, (params[index],)))
        else:  # past the named ones: into ``*args``
            found.append(Slot(argument, (callee.star_args,) if callee.star_args else None))
    for keyword in node.keywords:
        if keyword.arg is None:
            found.append(Slot(keyword.value, None))
        else:
            found.append(Slot(keyword.value, (_keyword_target(callee, keyword.arg),)))
    return tuple(found)


def _keyword_target(callee: FunctionSummary, name: str) -> str:
    """The parameter a keyword argument lands in: its own, else ``**kwargs``."""
    named = name in callee.params or name in callee.keyword_only
    return callee.star_kwargs if callee.star_kwargs and not named else name

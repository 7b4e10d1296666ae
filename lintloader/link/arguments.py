"""One home for binding a call's arguments to the parameters of the function it calls.

:func:`bind` reads a call as the summary recorded it (``CallSite.passed``: every argument as
written, read from the tree; no text is parsed again) against the callee's signature and says,
per parameter, what the call passes:

* which of its positional parameters the call's positional arguments fill: ``self`` is left
  out for a call on an object (``self.m(x)``, ``loader.m(x)``, ``super().m(x)``, a classmethod's
  ``cls.m(x)`` or ``Class.m(x)``) and filled by the first argument of a call through the class
  (``Base.m(self, x)``);
* :meth:`Binding.written`: the argument written for a parameter (a
  :class:`~lintloader.summary.model.Passed`), by keyword or by position before any ``*args``;
  :meth:`Binding.passes`: whether the call passes a value for it (None:
  a ``*args``/``**kwargs`` may fill it, "maybe filled");
* :attr:`Binding.slots`: every argument with the parameters it may reach, a starred one any
  of them ("maybe tainted": what flows from the caller into the callee).

An analysis asks :func:`binding` for an edge of the program (worked out once per call).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from lintloader.link.calls import Edge
from lintloader.link.program import Program
from lintloader.summary.model import CallSite, FunctionSummary, LoaderCall, Passed


class Slot(NamedTuple):
    """One argument as written (``x`` of ``*x``/``**x``), and the parameters it may fill:
    None for any of them (a ``*args``/``**kwargs``, a positional one past every parameter of
    a callee without ``*args``)."""

    argument: Passed
    fills: tuple[str, ...] | None


@dataclass(frozen=True)
class Binding:
    """What one call passes to the parameters of its callee.

    ``params``: the callee's positional parameters that the call's positional arguments fill,
    in order (``self`` left out for a call on an object). ``keywords``: the names passed by
    keyword; ``positional``: how many positional arguments come before any ``*args``;
    ``stars``: a ``*args`` or ``**kwargs`` may fill more. ``parsed``: the call's text reads
    back whole (``slots`` are there; a text cut at the summary's limit, or one a comment runs
    on, keeps its shape and ``written``, read from the tree); ``reference``: the
    function is passed as a value, not called (what it will be passed is up to whoever calls
    it)."""

    params: tuple[str, ...]
    keywords: frozenset[str] = frozenset()
    positional: int = 0
    stars: bool = False
    parsed: bool = False
    reference: bool = False
    arguments: dict[str, Passed] = field(default_factory=dict)
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

    def written(self, name: str) -> Passed | None:
        """The argument written for parameter ``name`` (by keyword, or by position before any
        ``*args``; read from the tree, so also for a call whose text was cut); None when none
        is."""
        return self.arguments.get(name)


def bind(call: CallSite, callee: FunctionSummary) -> Binding:
    """How ``call`` binds its arguments to ``callee``'s parameters (from the summary's facts)."""
    params = tuple(callee.params[_offset(call, callee) :])
    if call.is_reference:
        return Binding(params, reference=True)
    if not call.whole:  # cut at the text limit, or a comment in it: its shape and arguments
        whole = _bind_whole(call, callee, params)
        return Binding(
            params, whole.keywords, whole.positional, whole.stars, arguments=whole.arguments
        )
    return _bind_whole(call, callee, params)


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


def _bind_whole(call: CallSite, callee: FunctionSummary, params: tuple[str, ...]) -> Binding:
    named = [p for p in call.passed if p.keyword is not None]
    ordered = [p for p in call.passed if p.keyword is None and p.star != "**"]
    arguments = {p.keyword: p for p in named if p.keyword is not None}
    positional = _before_star(p.star for p in ordered)
    for index, argument in enumerate(ordered[: min(positional, len(params))]):
        arguments.setdefault(params[index], argument)
    stars = positional < len(ordered) or any(p.star == "**" for p in call.passed)
    keywords = frozenset(p.keyword for p in named if p.keyword is not None)
    slots = _slots(call, callee, params, ordered)
    return Binding(params, keywords, positional, stars, True, False, arguments, slots)


def _slots(
    call: CallSite, callee: FunctionSummary, params: tuple[str, ...], ordered: list[Passed]
) -> tuple[Slot, ...]:
    """Every argument with the parameters it may reach: the object of a method called on one
    (``ds.train_dataloader()``: the method reads ``ds``) its ``self``; a positional one the
    parameter at its place (past them: ``*args``); a keyword its parameter, else ``**kwargs``;
    a ``*``/``**`` one any."""
    found: list[Slot] = []
    bound = len(params) < len(callee.params)
    if bound and len(call.target) > 1 and callee.self_name:  # the object of ``obj.m(...)``
        receiver = Passed(text=".".join(call.target[:-1]), reads=call.receiver)
        found.append(Slot(receiver, (callee.self_name,)))
    for index, argument in enumerate(ordered):
        if argument.star:
            found.append(Slot(argument, None))
        elif index < len(params):
            found.append(Slot(argument, (params[index],)))
        else:  # past the named ones: into ``*args``
            found.append(Slot(argument, (callee.star_args,) if callee.star_args else None))
    for argument in call.passed[len(ordered) :]:
        if argument.keyword is None:
            found.append(Slot(argument, None))
        else:
            found.append(Slot(argument, (_keyword_target(callee, argument.keyword),)))
    return tuple(found)


def _keyword_target(callee: FunctionSummary, name: str) -> str:
    """The parameter a keyword argument lands in: its own, else ``**kwargs``."""
    named = name in callee.params or name in callee.keyword_only
    return callee.star_kwargs if callee.star_kwargs and not named else name

"""Loaders that provably start no workers on one way of calling them (issue 42, shape 11).

``DataLoader(ds, num_workers=num_workers)`` in ``def load(ds, num_workers=0)`` has no workers
when the call that runs it leaves ``num_workers`` out; so does one whose caller hands on a
parameter of its own that defaults to 0 and is left out above it, any number of calls up; and
``DataLoader(ds, **kwargs)`` in ``def load(ds, **kwargs)`` when the calls pass no keyword that
``**kwargs`` collects (torch's default is 0 workers). ``num_workers=self.workers``, stored
from an ``__init__`` parameter of the same name that defaults to 0, has none on every way
when each construction of the class in the program leaves it out or passes a literal 0.
0 workers start no pool: the way is no repeated pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from lintloader.analysis.config_defaults import config_default
from lintloader.analysis.loaders import LoaderSite
from lintloader.link.arguments import Binding, binding
from lintloader.link.program import Edge, Program
from lintloader.summary.model import FunctionSummary

WORKERS = "num_workers"  # the keyword of torch's DataLoader that a ``**kwargs`` may carry


class Carrier(NamedTuple):
    """The name that holds the loader's worker count in a function on the way: a parameter
    that defaults to 0, or its ``**kwargs`` (``kwargs``: true)."""

    name: str
    kwargs: bool


def zero_along(program: Program, site: LoaderSite, chain: Sequence[Edge]) -> bool:
    """Whether the loader ``site`` builds surely has 0 workers when it is reached through
    ``chain`` (its edges from the outermost call down to ``site``'s function)."""
    if constructed_without_workers(program, site):
        return True
    carrier = _carrier(site)
    for edge in reversed(chain):
        if carrier is None:
            return False
        bound = binding(program, edge)
        if bound.reference or not _binds_as_written(bound, program.functions[edge.callee].function):
            return False
        if _left_out(bound, carrier):
            return True
        if not bound.parsed:  # what it writes for the carrier is not all there
            return False
        carrier = _handed_on(program, edge, bound, carrier)
    return False


def _carrier(site: LoaderSite) -> Carrier | None:
    function = site.info.function
    argument = site.num_workers
    if argument is not None:
        zero = argument.from_default and argument.literal == 0
        return Carrier(argument.text, False) if zero else None
    if site.subclass or site.pool or not function.star_kwargs:
        return None
    stars = [a for a in site.call.arguments if a.star]
    if len(stars) == 1 and stars[0].star == "**" and stars[0].text == function.star_kwargs:
        return Carrier(function.star_kwargs, True)
    return None


def _binds_as_written(bound: Binding, callee: FunctionSummary) -> bool:
    """Whether the call can bind to the callee's signature as written: more positional
    arguments than it has positional parameters (and no ``*args``) say a decorator maps the
    call onto another signature (a config-mapping builder called with ``(cfg, name)``), whose
    defaults are not the ones written."""
    return callee.star_args != "" or bound.positional <= len(bound.params)


def _left_out(bound: Binding, carrier: Carrier) -> bool:
    """The call surely passes nothing for the carrier (for ``**kwargs``: no ``num_workers=``
    keyword and no ``*``/``**`` argument; other keywords it collects are no worker count)."""
    if not carrier.kwargs:
        return bound.passes(carrier.name) is False
    return WORKERS not in bound.keywords and not bound.stars


def _handed_on(program: Program, edge: Edge, bound: Binding, carrier: Carrier) -> Carrier | None:
    """What holds the worker count in the caller: the caller's own 0-defaulted parameter the
    call passes on for the carrier (``num_workers=num_workers``), or the caller's ``**kwargs``
    passed on whole (``**kwargs``, the only starred argument, and no ``num_workers=``); else
    None."""
    caller = program.functions[edge.caller].function
    if not carrier.kwargs:
        written = bound.written(carrier.name)
        name = written.name if written is not None else None
        if name is not None and len(name) == 1 and name[0] in caller.zero_names:
            return Carrier(name[0], False)
        return None
    reaching = [s for s in bound.slots if s.fills is None]
    if len(reaching) == 1 and WORKERS not in bound.keywords:
        name = reaching[0].argument.name
        if name is not None and len(name) == 1 and name[0] == caller.star_kwargs and name[0]:
            return Carrier(name[0], True)
    return None


def constructed_without_workers(program: Program, site: LoaderSite) -> bool:
    """``num_workers=self.<attr>`` where ``<attr>`` defaults to 0 (a stored ``__init__``
    parameter of that name, :func:`config_default`), and every construction of the class and
    of its scanned subclasses (one at least) leaves it out or passes a literal 0."""
    argument, info = site.num_workers, site.info
    if argument is None or info.class_key is None or site.subclass or site.pool:
        return False
    path = argument.text.split(".")
    if len(path) != 2 or path[0] != info.function.self_name:
        return False
    found = config_default(program, info, argument.text)
    if found is None or type(found.value) is not int or found.value != 0:
        return False
    attribute = path[1]
    classes = (info.class_key, *program.subclasses.get(info.class_key, ()))
    inits = {program.lookup_method(key, "__init__") for key in classes}
    edges = []
    for init in inits:
        if init is None or attribute not in program.functions[init].function.zero_names:
            return False
        edges += program.edges_into(init)
    return bool(edges) and all(_zero_or_left_out(binding(program, e), attribute) for e in edges)


def _zero_or_left_out(bound: Binding, name: str) -> bool:
    if bound.reference or not bound.parsed:
        return False
    passed = bound.passes(name)
    if passed is False:
        return True
    written = bound.written(name)
    return passed is True and written is not None and written.zero

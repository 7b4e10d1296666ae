"""Loader factories a team declares (``extend-loaders = ["mypkg.data.make_loader"]``): each
call of one returns a DataLoader with workers, so LL202 treats the factory as a construction
of its own (the chain ends at its definition) and reports the loops that call it."""

from __future__ import annotations

from lintloader.analysis.loader_cost import DECLARED
from lintloader.analysis.loaders import LoaderSite, facts_of
from lintloader.analysis.vocabulary import function_keys
from lintloader.link.program import Program
from lintloader.summary.dataloaders import RETURNED
from lintloader.summary.model import Argument, CallContext, FunctionFacts, LoaderCall, Site

_WORKERS = Argument("num_workers", DECLARED, lower_bound=1)


def declared_loader_sites(program: Program, paths: tuple[str, ...]) -> list[LoaderSite]:
    """A construction at the definition of every declared factory the program defines."""
    found: list[LoaderSite] = []
    for key in function_keys(program, paths):
        info = program.functions[key]
        function = info.function
        text = f"{info.display_name}() (a loader factory named in extend-loaders)"
        site = Site(function.line, 1, text, function.line)
        call = LoaderCall((function.name,), site, (_WORKERS,), CallContext(), RETURNED)
        facts = facts_of(info) or FunctionFacts()
        found.append(LoaderSite(info, facts, call, subclass=False))
    return found

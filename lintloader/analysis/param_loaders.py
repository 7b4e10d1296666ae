"""Loaders that arrive as untyped parameters (issue 29, shape 7): ``def train_steps(model,
loader, steps)`` iterates ``loader``; when every call of the function in the scanned program
passes a DataLoader (a name bound to one, one annotated as one, or a ``DataLoader(...)`` built
in the call), the parameter is treated as one, with the confidence of that step lowered."""

from __future__ import annotations

from typing import NamedTuple

from lintloader.analysis.loaders import (
    LoaderSite,
    Workers,
    is_dataloader_name,
    loader_bound_to,
    resolves_to_dataloader,
)
from lintloader.finding.findings import Confidence
from lintloader.link.arguments import binding
from lintloader.link.program import FunctionInfo, Program
from lintloader.summary.model import Dotted, Passed


class PassedLoader(NamedTuple):
    """Every caller passes a DataLoader; ``site``: one of their constructions, if known."""

    site: LoaderSite | None
    callers: int


def passed_loader(
    program: Program, sites: list[LoaderSite], info: FunctionInfo, name: Dotted
) -> PassedLoader | None:
    """How ``name``, an unannotated parameter of ``info``, is known to hold a DataLoader with
    workers from all of its callers; None when one caller may pass something else."""
    function = info.function
    if len(name) != 1 or name[0] not in function.params or name[0] == function.self_name:
        return None
    if name[0] in function.local_types:
        return None  # annotated: read as written
    found: list[LoaderSite | None] = []
    for edge in program.edges_into(info.key, Confidence.HIGH):
        if edge.call.is_reference:
            return None
        caller = program.functions[edge.caller]
        argument = binding(program, edge).written(name[0])
        if argument is None:
            return None
        passed = _loader_of(program, sites, caller, argument, edge.call.site.line)
        if passed is False:
            return None
        found.append(passed if isinstance(passed, tuple) else None)
    if not found:
        return None
    known = [site for site in found if site is not None]
    if known and all(site.workers is Workers.ZERO for site in known):
        return None
    return PassedLoader(known[0] if known else None, len(found))


def _loader_of(
    program: Program,
    sites: list[LoaderSite],
    caller: FunctionInfo,
    argument: Passed,
    line: int,
) -> LoaderSite | bool:
    """The construction a passed argument holds (True: a DataLoader, construction unknown;
    False: not known to be one). ``line``: where the call, on one line as the summary keeps
    it, starts in the caller's file."""
    if argument.called is not None:
        func = argument.called
        if not func or resolves_to_dataloader(program, caller, func) is False:
            return False
        built = [s for s in sites if s.info.key == caller.key and s.call.site.line == line]
        return built[0] if len(built) == 1 else True
    name = argument.name
    if not name:
        return False
    bound = loader_bound_to(sites, caller, name)
    if bound is not None:
        return bound
    return is_dataloader_name(program, caller, name)

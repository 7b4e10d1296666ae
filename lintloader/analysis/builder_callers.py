"""A builder's ``persistent_workers=True`` default kept by its callers (issue 29, shape 2).

``def build_loader(dataset, workers_per_gpu, persistent_workers=True, **kwargs)`` passes both
to ``DataLoader``. LL201 reports the definition; the ValueError fires at a caller that passes a
worker count that can be 0 (``cfg.get("workers", 0)``) and leaves ``persistent_workers`` at its
default, which is where upstream fixes it. A caller that passes ``persistent_workers`` itself
(``persistent_workers=workers > 0``) or a worker count that cannot be 0 is not one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from lintloader.analysis.loaders import LoaderSite
from lintloader.finding.findings import Confidence
from lintloader.link.arguments import binding
from lintloader.link.program import Edge, FunctionInfo, Program


class KeptDefault(NamedTuple):
    """A call of the builder that keeps its True default."""

    edge: Edge
    caller: FunctionInfo
    workers: str  # the worker count the caller passes, as written (or the builder's default)
    zero: bool  # a literal 0, passed or defaulted


def callers_keeping_default(program: Program, site: LoaderSite) -> Iterator[KeptDefault]:
    """The calls of ``site``'s function that keep its ``persistent_workers`` default of True
    and pass a worker count that can be 0."""
    persistent, workers = site.persistent, site.num_workers
    function = site.info.function
    if persistent is None or not persistent.from_default or persistent.literal is not True:
        return
    if workers is None or workers.text not in function.params or persistent.text == workers.text:
        return
    for edge in program.edges_into(site.key, Confidence.HIGH):
        bound = binding(program, edge)
        if not bound.parsed or bound.passes(persistent.text) is not False:
            continue  # a reference, a cut text, or it may pass the flag itself
        passed = bound.written(workers.text)
        if passed is None:  # the builder's own default
            if not workers.from_default or not isinstance(workers.literal, int):
                continue
            text, zero = f"{workers.text}={workers.literal}", workers.literal == 0
        else:
            lowest = passed.lower_bound
            if lowest is not None and lowest > 0:
                continue
            text, zero = passed.text, lowest == 0 and passed.zero
        yield KeptDefault(edge, program.functions[edge.caller], text, zero)


def default_never_used(program: Program, site: LoaderSite) -> bool:
    """Whether ``site``'s ``persistent_workers`` comes from the True default of a private
    function (``_build``, not a dunder) that every call in the program overrides
    (``self._build(ds, num_workers=n, persistent_workers=n > 0)``): no user reaches that
    default, so the definition raises nothing. A public function's default stays reachable."""
    persistent = site.persistent
    function = site.info.function
    if persistent is None or not persistent.from_default or persistent.literal is not True:
        return False
    name = function.qualname.rsplit(".", 1)[-1]
    if not name.startswith("_") or name.endswith("__"):
        return False
    edges = program.edges_into(site.key)
    return bool(edges) and all(binding(program, e).passes(persistent.text) is True for e in edges)


def defaults_agree(program: Program, site: LoaderSite) -> bool:
    """Whether ``site`` passes its function's own defaults, a working pair (a worker count
    that defaults to a literal > 0, ``persistent_workers`` that defaults to True), and every
    call of the function in the program (one at least) passes both itself: the ValueError needs a
    caller that is not there (one that passes 0 workers and leaves persistence on)."""
    persistent, workers = site.persistent, site.num_workers
    params = site.info.function.params
    if persistent is None or not persistent.from_default or persistent.literal is not True:
        return False
    if workers is None or not workers.from_default or workers.text not in params:
        return False
    count = workers.literal
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return False
    names = (persistent.text, workers.text)
    edges = program.edges_into(site.key)
    return bool(edges) and all(
        binding(program, e).passes(name) is True for e in edges for name in names
    )

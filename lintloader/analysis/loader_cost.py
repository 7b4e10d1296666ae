"""A loader site's cost in the words of the one cost model (lintloader/domain/cost.py): how often
the code that builds or iterates it runs, its start method and the severity and phrase that follow.
The LL2xx rules ask here; the model itself knows nothing of the program.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.loaders import LoaderSite
from lintloader.analysis.repetition import Place, loop_frequency
from lintloader.domain.cost import Frequency, Kind, StartMethod, cost_phrase, every_k, retry_loop
from lintloader.domain.cost import extra_kind as model_kind
from lintloader.domain.cost import severity as model_severity
from lintloader.finding.findings import Severity
from lintloader.summary.model import Condition, LoopInfo

_EVALUATION = re.compile(r"eval|valid|test", re.IGNORECASE)


class SiteCost(NamedTuple):
    """What one finding costs: its kind, how often, the start method, and N workers."""

    kind: Kind
    frequency: Frequency
    method: StartMethod
    workers: int | None
    every: str | None = None  # the K of a build under ``if step % K == 0``
    rebuilt: bool = False  # a new loader each time (not one loader iterated again)

    @property
    def severity(self) -> Severity:
        return Severity[model_severity(self.kind, self.frequency, self.method).upper()]

    @property
    def phrase(self) -> str:
        text = cost_phrase(self.kind, self.frequency, self.workers, self.every, self.method)
        if self.rebuilt and self.kind is Kind.AVOIDABLE:
            text = text.replace("avoidable with ", "avoidable with one loader and ")
        return text


def start_method_of(ctx: AnalysisContext, site: LoaderSite) -> StartMethod:
    context = site.call.keyword("multiprocessing_context")
    return ctx.start_method(site.info.file.path, context.methods if context is not None else None)


def workers_of(site: LoaderSite) -> int | None:
    argument = site.num_workers
    if argument is None or not argument.is_literal:
        return None
    value = argument.literal
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def loop_cost(
    ctx: AnalysisContext,
    site: LoaderSite,
    loop: LoopInfo,
    conditions: tuple[Condition, ...] = (),
    evaluation: bool = False,
) -> SiteCost:
    """The cost of ``site`` rebuilt once per iteration of ``loop`` (under ``conditions``)."""
    every = next((k for c in conditions if not c.negated and (k := every_k(c.text))), None)
    if every is not None:  # an evaluation or a checkpoint every K steps
        frequency = Frequency.EVALUATION
    elif loop.retry or retry_loop(loop.header):
        frequency = Frequency.RETRY
    else:
        frequency = _loop_frequency(loop, evaluation)
    return _cost(ctx, site, frequency, every)


def place_cost(ctx: AnalysisContext, site: LoaderSite, place: Place) -> SiteCost:
    """The cost of ``site`` built once per run of ``place`` (a loop, hook or ``__iter__``)."""
    names = [ctx.program.functions[edge.callee].function.name for edge in place.edges]
    evaluation = any(_EVALUATION.search(name) for name in (*names, site.info.function.name))
    every = next((edge.call.every for edge in place.edges if edge.call.every), None)
    if every is not None:  # a call on the way runs under `if step % K == 0:`
        return _cost(ctx, site, Frequency.EVALUATION, every)
    if place.kind == "loop" and place.loop is not None:
        return loop_cost(ctx, site, place.loop, evaluation=evaluation)
    if place.kind in STUB_HOOK_FREQUENCY:  # how often the framework's stubs say it calls it
        return _cost(ctx, site, STUB_HOOK_FREQUENCY[place.kind], None)
    frequency = Frequency.EVALUATION if evaluation else Frequency.EPOCH
    return _cost(ctx, site, frequency, None)


# a stubbed framework's hook (analysis/frameworks.py's Place kinds) -> how often it runs
STUB_HOOK_FREQUENCY = {
    "per-step hook": Frequency.STEP,
    "per-interval hook": Frequency.EVALUATION,
    "per-evaluation hook": Frequency.EVALUATION,
    "per-epoch hook": Frequency.EPOCH,
}


def kept_cost(ctx: AnalysisContext, site: LoaderSite) -> SiteCost:
    """A non-persistent loader kept and iterated every epoch: one pool per epoch."""
    method = start_method_of(ctx, site)
    return SiteCost(Kind.AVOIDABLE, Frequency.EPOCH, method, workers_of(site))


_STEPS = re.compile(r"\b(step|steps|batch|batches|iteration|iterations|it|itr|iter)\b")


def may_be_persistent(site: LoaderSite) -> bool:
    """The loader may ask for persistent workers: ``persistent_workers=True`` (or a parameter
    that defaults to True), an expression (``args.persistent``), or a call whose keywords are
    not all known (``**kwargs``, a declared factory, a scanned subclass): a rebuild then may
    throw persistence away, the worse of the two costs. Only a missing or literal false
    ``persistent_workers`` is torch's default."""
    if site.persistent_true:
        return True
    argument = site.persistent
    if argument is not None:
        return not argument.is_literal and not argument.from_default
    workers = site.num_workers
    declared = workers is not None and workers.text == DECLARED
    return declared or site.subclass or site.call.has_star_kwargs


DECLARED = "declared"  # the num_workers text of a factory named in extend-loaders


def _loop_frequency(loop: LoopInfo, evaluation: bool) -> Frequency:
    """A step loop (its header names steps or batches) runs every step; an epoch loop, or a
    loop that says nothing (``for x in items``, ``while not done``), once per epoch, or per
    evaluation when an evaluation builds the loader: one cost whether the loop is a ``for``
    or a ``while``."""
    if not loop.epoch_like and loop_frequency(loop) >= 4 and _STEPS.search(loop.header.lower()):
        return Frequency.STEP
    return Frequency.EVALUATION if evaluation else Frequency.EPOCH


def _cost(
    ctx: AnalysisContext, site: LoaderSite, frequency: Frequency, every: str | None
) -> SiteCost:
    kind = model_kind(may_be_persistent(site), frequency)
    method = start_method_of(ctx, site)
    return SiteCost(kind, frequency, method, workers_of(site), every, rebuilt=True)


def iterator_cost(
    ctx: AnalysisContext, site: LoaderSite | None, path: str, every: str | None
) -> SiteCost:
    """A fresh iterator for one batch of a non-persistent loader (``site``, None when only its
    type is known), taken in a step loop: a one-batch pass repeated within an epoch, a
    defeated pool every step, or every K steps under ``if step % K == 0``."""
    frequency = Frequency.EVALUATION if every else Frequency.STEP
    kind = model_kind(False, frequency, one_batch=True)
    if site is None:
        return SiteCost(kind, frequency, ctx.start_method(path, None), None, every)
    return SiteCost(kind, frequency, start_method_of(ctx, site), workers_of(site), every)

"""The one cost model: what a DataLoader site costs, counted in worker pool starts.

Every judgement lintloader makes about a loader (``check``'s severity and message, ``trace``'s
verdict and advice, the advisories' label) is made here, from the same few facts:

- **The unit** is the worker pool start. A site starts some pools; the **cheapest correct run**
  needs one per loader the program genuinely needs (other datasets, splits, configurations, or
  data that changes by design, count apart; the same loader rebuilt over the same data does
  not), kept alive with ``persistent_workers=True``. The rest are **extra**.
- **Two kinds of extra pool**: :attr:`Kind.DEFEATED` (persistence was asked for and thrown away:
  a reset, a rebuild or a reload of a persistent loader; or a pool per step, one-batch passes
  repeated within an epoch, persistent or not) is a bug; :attr:`Kind.AVOIDABLE` (torch's
  default, non-persistent, one pool per epoch, kept or rebuilt) is advice with a price and
  caveats. :attr:`Kind.RAISE` (``persistent_workers=True`` with 0 workers: torch raises) is an
  error of its own.
- **The price** of one extra pool grows with ``num_workers``, the start method (an explicit
  ``multiprocessing_context``, else the platform's and Python's default: ``fork`` on Linux up
  to Python 3.13, ``forkserver`` from 3.14, ``spawn`` on macOS and Windows; a ``spawn`` or
  ``forkserver`` worker imports torch and the dataset code again) and how often it is paid
  (:class:`Frequency`: every step > every evaluation > once per epoch).

This module imports nothing of lintloader: the rules, the analyses and the runtime trace all
stand above it.
"""

from __future__ import annotations

import enum
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace


class Kind(enum.Enum):
    """What kind of cost a site has."""

    DEFEATED = "defeated"  # persistence asked for and thrown away, or a pool per step: a bug
    AVOIDABLE = "avoidable"  # torch's default: one pool per epoch, kept or rebuilt: advice
    RAISE = "raise"  # persistent_workers=True with num_workers=0: torch raises ValueError

    @property
    def defect(self) -> bool:
        """A defeated pool or a raise is a defect; an avoidable pool is advice."""
        return self is not Kind.AVOIDABLE

    @property
    def advisory_label(self) -> str:
        """What an advisory calls a release with this cost: ``affected`` or ``advice``."""
        return "affected" if self.defect else "advice"

    @property
    def verdict(self) -> str:
        """``trace``'s verdict on a site with an extra pool of this kind."""
        return "FAIL" if self.defect else "could save"


class Frequency(enum.IntEnum):
    """How often a site starts its extra pool, ordered: more often is greater."""

    ONCE = 0  # built once per item of a fixed set, or in a set-up function
    RETRY = 1  # a bounded retry loop: only when an attempt fails
    EPOCH = 2  # once per epoch (an epoch loop, a per-epoch hook, every pass over a loader)
    CALL = 3  # every call of a function whose callers' frequency is not known
    EVALUATION = 4  # every evaluation
    STEP = 5  # every step or batch


COSTLY_METHODS = frozenset({"spawn", "forkserver"})
METHODS = ("forkserver", "spawn", "fork")  # longest first: "forkserver" before "fork"
FORKSERVER_DEFAULT = (3, 14)  # Python's default start method on Linux from this version
# one branch of a ``multiprocessing_context``: the method it names (None: the default) and
# the condition of that branch (None: every branch)
Branch = tuple[str | None, str | None]


@dataclass(frozen=True)
class StartMethod:
    """The start method of a loader's workers, and where it comes from. ``name`` prices the
    pool: when ``multiprocessing_context`` picks a method by a condition
    (``"spawn" if flag else None``), the costly branch's method, known only ``when`` its
    condition holds (every other branch is cheaper); ``others`` the other methods when every
    branch is costly (``"spawn" if flag else "forkserver"``)."""

    name: str
    explicit: bool  # an explicit ``multiprocessing_context``
    python: tuple[int, int] | None = None  # the Python whose default it is
    platform: str = "linux"
    when: str | None = None  # the condition the method needs; None: on every branch
    others: tuple[StartMethod, ...] = ()  # the other branches' methods, all costly too

    @property
    def costly(self) -> bool:
        """``spawn`` and ``forkserver`` start every worker from a fresh interpreter, which
        imports torch and the dataset code again (seconds per pool, not milliseconds): on
        every branch of the ``multiprocessing_context``, not only under a condition."""
        return self.name in COSTLY_METHODS and self.when is None

    @property
    def costly_when(self) -> str | None:
        """The condition under which, alone, the method is costly (the severity stays)."""
        return self.when if self.name in COSTLY_METHODS else None

    def describe(self) -> str:
        """``start method spawn, from multiprocessing_context``; with every branch's method when
        each is costly (``... spawn, from multiprocessing_context, or forkserver, Python 3.14's
        default on Linux``)."""
        by_source: dict[str, list[str]] = {}
        for method in (self, *self.others):
            names = by_source.setdefault(method.source(), [])
            names += [] if method.name in names else [method.name]
        said = [f"{' or '.join(names)}, {source}" for source, names in by_source.items()]
        return "start method " + ", or ".join(said)

    def source(self) -> str:
        """Where the method comes from: the argument, or the Python's default."""
        if self.explicit:
            return "from multiprocessing_context"
        version = f"Python {self.python[0]}.{self.python[1]}" if self.python else "Python"
        return f"{version}'s default on {_platform_name(self.platform)}"


def _platform_name(platform: str) -> str:
    if platform.startswith(("win", "cygwin")):
        return "Windows"
    return "macOS" if platform == "darwin" else "Linux"


def default_start_method(platform: str, python: tuple[int, int]) -> str:
    """``multiprocessing``'s default: spawn on macOS (3.8+) and Windows, forkserver on Linux
    from Python 3.14, fork before."""
    if platform == "darwin" or platform.startswith(("win", "cygwin")):
        return "spawn"
    return "forkserver" if python >= FORKSERVER_DEFAULT else "fork"


def start_method(
    explicit: Sequence[Branch] | None,
    python: tuple[int, int] | None = None,
    platform: str | None = None,
) -> StartMethod:
    """The start method of a loader: ``explicit`` (what its ``multiprocessing_context`` names on
    each branch, as the summary recorded it: ``summary/start_methods.py``) when it names one, else
    the default of ``python`` (the running one when None) on ``platform``. A context chosen by a
    condition (``"spawn" if flag else None``) is costly only when every branch is; else it is
    priced by its costly branch ``when`` that branch's condition holds."""
    platform = platform or sys.platform
    version = python or (sys.version_info[0], sys.version_info[1])
    default = StartMethod(default_start_method(platform, version), False, version, platform)
    branches = list(explicit) if explicit else [(None, None)]
    methods = [
        (StartMethod(name, True, python, platform) if name else default, condition)
        for name, condition in branches
    ]
    if all(method.costly for method, _ in methods):
        first = methods[0][0]
        return replace(first, others=tuple(dict.fromkeys(m for m, _ in methods[1:] if m != first)))
    costly = [(method, condition) for method, condition in methods if method.costly]
    if not costly:  # a single explicit method (fork), else the default
        return methods[0][0] if len(methods) == 1 else default
    first = costly[0][0]
    when = " or ".join(dict.fromkeys(c for m, c in costly if m.name == first.name and c))
    return replace(first, when=when or None)


_LOWER_BOUND = re.compile(r"(>=|~=|==|>)\s*3\s*\.\s*(\d+)")


def lowest_python(requires_python: str) -> tuple[int, int] | None:
    """The lowest Python 3 a ``requires-python`` specifier allows (``>=3.10,<4`` -> (3, 10);
    ``>3.9`` -> (3, 10)), else None."""
    bounds = []
    for operator, minor in _LOWER_BOUND.findall(requires_python):
        bounds.append((3, int(minor) + (operator == ">")))
    return min(bounds) if bounds else None


@dataclass(frozen=True)
class PoolCount:
    """A site's pools against the cheapest correct run: ``started`` and ``needed`` (one per
    loader the program genuinely needs), the extra ones by kind."""

    started: int
    needed: int
    defeated: int = 0

    @property
    def extra(self) -> int:
        return max(0, self.started - self.needed)

    @property
    def avoidable(self) -> int:
        return self.extra - min(self.defeated, self.extra)


def extra_kind(
    persistent: bool,
    frequency: Frequency,
    num_workers_zero: bool = False,
    one_batch: bool = False,
) -> Kind:
    """The kind of a site's extra pools. ``persistent``: the loader asked for persistent
    workers (its rebuild, reset or reload throws them away). A pool per step is defeated
    whatever ``persistent_workers`` says, and so is a ``one_batch`` pass (a fresh iterator
    for one batch) repeated within an epoch, every step or every K steps; torch's default
    once per epoch (or per evaluation, per call) is avoidable."""
    if persistent and num_workers_zero:
        return Kind.RAISE
    if persistent or frequency is Frequency.STEP:
        return Kind.DEFEATED
    if one_batch and frequency > Frequency.EPOCH:
        return Kind.DEFEATED
    return Kind.AVOIDABLE


def severity(kind: Kind, frequency: Frequency, method: StartMethod | None = None) -> str:
    """``info``, ``warning`` or ``error`` for a static finding with this cost: a raise is an
    error; a defeated pool a warning; an avoidable one info; a pool paid only on the retry of
    a bounded retry loop info (a run whose first attempt works starts it once). A costly start
    method (spawn, forkserver) raises a defeated or avoidable pool one level, unless it is paid
    only on a retry or once per item."""
    if kind is Kind.RAISE:
        return "error"
    if frequency is Frequency.RETRY:  # a run whose first attempt works starts no extra pool
        return "info"
    levels = ("info", "warning", "error")
    level = 1 if kind is Kind.DEFEATED else 0
    if method is not None and method.costly and frequency > Frequency.RETRY:
        level += 1
    return levels[level]


def cost_phrase(
    kind: Kind,
    frequency: Frequency,
    workers: int | None = None,
    every: str | None = None,
    method: StartMethod | None = None,
) -> str:
    """What a site costs, in words: "a new pool of 8 workers every step", "... every 500
    steps", "... once per epoch: avoidable with persistent_workers=True"; with the start method
    when it is a costly one, and the condition when only one branch of it is costly."""
    pool = f"a new pool of {workers} workers" if workers else "a new worker pool"
    when = {
        Frequency.ONCE: "once per item",
        Frequency.RETRY: (
            "once, and again on every retry of a bounded retry loop (only when an attempt fails)"
        ),
        Frequency.EPOCH: "once per epoch",
        Frequency.CALL: "on every call",
        Frequency.EVALUATION: "every evaluation",
        Frequency.STEP: "every step",
    }[frequency]
    when = f"every {every} steps" if every else when
    text = f"{pool} {when}"
    if method is not None and method.costly:
        text += f", each worker a fresh interpreter: {method.describe()}"
    elif method is not None and method.costly_when:
        text += (
            f", and under {method.name} when {method.costly_when} each worker a fresh"
            f" interpreter ({method.source()})"
        )
    if kind is Kind.AVOIDABLE:
        text += ": avoidable with persistent_workers=True"
    return text


def time_lost(extra_pools: int, start_cost_s: float) -> float:
    """Seconds an extra pool count costs at a measured start cost per pool."""
    return max(0, extra_pools) * max(0.0, start_cost_s)


_EVERY_K = re.compile(r"%\s*(\w+(?:\.\w+)*)\s*==\s*0|(?<![=!<>])0\s*==\s*\w[\w.]*\s*%\s*(\w+)")


def every_k(test: str) -> str | None:
    """``K`` of a test that runs its branch every K steps (``step % 500 == 0``,
    ``not step % args.eval_every``), else None."""
    match = _EVERY_K.search(test)
    if match:
        return match.group(1) or match.group(2)
    bare = re.match(r"\s*not\s+\(?\s*\w[\w.]*\s*%\s*(\w+(?:\.\w+)*)", test)
    return bare.group(1) if bare else None


_RETRY = re.compile(r"\b(attempt|attempts|retry|retries|tries|try|trial|trials)\b")


def retry_loop(header: str) -> bool:
    """A bounded retry loop (``for attempt in range(3):``), by its header."""
    return bool(_RETRY.search(header.lower()))

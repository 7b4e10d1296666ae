"""The plain data of a file summary: what the linker and the rules read, and the cache stores.

A :class:`FileSummary` depends only on a file's bytes and its module name, holds no syntax
nodes and pickles cleanly, so summaries are what worker processes return; the cache stores
them as JSON read back along these very types (``cache/codec.py``). Everything the linker
and the rules need from a file is in here; nothing downstream reparses. :class:`LoaderFacts`
(for the LL2xx rules) is filled by a second visitor (:mod:`lintloader.summary.dataloaders`).

The immutable records (a call, its site, a loop...) are ``NamedTuple`` classes, the containers
a summarizer fills are dataclasses. A record is a tuple: it unpickles about twice as fast as a
frozen dataclass and takes half the bytes (a one-file commit loads dozens of summaries from
the cache, tens of thousands of records), and defining one costs a fraction of a dataclass's
import time. Change a record with ``record._replace(...)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from lintloader.domain.cost import Branch, every_k

Dotted = tuple[str, ...]  # ("self", "dataloader", "reset"); ("super()", "reset") for super calls

MODULE_SCOPE = "<module>"
SUMMARY_SCHEMA = 41  # part of the cache key: bump when FileSummary gains or changes fields


class ImportBinding(NamedTuple):
    """What a local name refers to: ``module`` (absolute) and, for ``from`` imports, ``name``."""

    module: str
    name: str | None = None


class Site(NamedTuple):
    """Where something happens: 1-based line and column, plus the source text (shortened)."""

    line: int
    column: int
    text: str
    end_line: int = 0
    statement_line: int = 0  # first line of the enclosing simple statement
    end_column: int = 0  # 1-based character column just after the node's last character


class Comprehended(NamedTuple):
    """A ``for`` clause of a comprehension around a call: the names it binds and the dotted
    names that what it iterates reads, space-separated (``[load(p) for p in paths]``:
    ``("p",)``, ``"paths"``)."""

    targets: tuple[str, ...]
    reads: str


class Passed(NamedTuple):
    """One argument of a call, as the summarizer read it from the tree (``summary/calls.py``),
    so that nothing downstream parses the call's text again (``link/arguments.py`` binds it).

    ``keyword``: its keyword (None: positional, or ``**``); ``star``: ``*`` or ``**``;
    ``text``: the value as ``ast.unparse`` writes it; ``reads``: the dotted names that text
    reads, space-separated; ``name``: the value is a plain name or attribute chain
    (``("self", "loader")``); ``called``: the value is a call, of that dotted name (``()``: of
    something else); ``lower_bound``: a proven minimum (``summary/dataloaders/bounds.py``);
    ``zero``: the literal 0; ``none``: it may be None or another false literal
    (``summary/none_guards.py``'s ``may_be_none``)."""

    keyword: str | None = None
    star: str = ""
    text: str = ""
    reads: str = ""
    name: Dotted | None = None
    called: Dotted | None = None
    lower_bound: int | None = None
    zero: bool = False
    none: bool = False


class CallSite(NamedTuple):
    """A call (``is_reference`` false) or a function passed as a value (``is_reference`` true)."""

    target: Dotted
    site: Site
    is_reference: bool = False
    persistent_guard: bool = False
    in_loop: bool = False  # inside a loop's header or body
    loop: int = -1  # innermost loop whose body holds it (index into FunctionSummary.loops)
    # its arguments as written, positional ones then keywords (a reference: none)
    passed: tuple[Passed, ...] = ()
    # the dotted names the object of a method call reads (``self.data.load(x)``: "self.data")
    receiver: str = ""
    # inside the body of an ``if`` that holds only with persistent workers on
    # (``if ... and args.persistent_workers:``): it runs only when pools are kept alive
    persistent_only: bool = False
    # parameters of its function that must be None (or false) for it to run: it sits in the
    # body of ``if p is None:``, the ``else`` of ``if p:``, the right of ``p or ...``, and the
    # function never sets ``p`` to None itself (summary/none_guards.py)
    none_guard: tuple[str, ...] = ()
    # the test of an ``if`` inside its innermost loop that lets it run only every N-th pass
    # (``step % 500 == 0``; summary/periodic.py), or empty
    periodic: str = ""
    # the ``for`` clauses of the comprehensions around it, outermost first
    comprehended: tuple[Comprehended, ...] = ()
    # the local its value is assigned to, whole (``ds = FileDataset(files)``: ``"ds"``), or empty
    binds: str = ""

    @property
    def every(self) -> str:
        """K of the every-K-steps test the call runs under (``step % K == 0``: "K"), or empty
        (read from ``periodic``: lintloader/domain/cost.py's every_k)."""
        return (every_k(self.periodic) or "") if self.periodic else ""

    @property
    def whole(self) -> bool:
        """Its text reads back as the call: not cut at TEXT_LIMIT, no comment run on."""
        return reads_back_whole(self.site.text)

    @property
    def keywords(self) -> tuple[str, ...]:
        """Its keyword names, in order ("**" for ``**kw``)."""
        return tuple(p.keyword or "**" for p in self.passed if p.keyword or p.star == "**")

    @property
    def positional(self) -> int:
        """How many positional arguments it passes (-1 when a ``*args`` hides it)."""
        found = [p for p in self.passed if p.keyword is None and p.star != "**"]
        return -1 if any(p.star for p in found) else len(found)

    @property
    def reads(self) -> tuple[str, ...]:
        """Per argument (positional ones, then ``keywords``'s), the dotted names it reads,
        space-separated."""
        return tuple(p.reads for p in self.passed)

    @property
    def names_read(self) -> frozenset[str]:
        """Every dotted name its arguments read."""
        return frozenset(name for argument in self.passed for name in argument.reads.split())


def reads_back_whole(text: str) -> bool:
    """Whether a site's one-line text is all of it: not cut at TEXT_LIMIT (``...``), and no
    comment inside it (``#``: collapsed on one line, a comment would run on to the end)."""
    return not text.endswith("...") and "#" not in text


class SinkSite(NamedTuple):
    """A candidate DataLoader iterator reset.

    ``kind`` is one of ``assign-none``, ``delete``, ``setattr``, ``shutdown-workers``; ``receiver``
    is the dotted object whose ``_iterator`` is reset (``("dataloader",)``), if it is a plain name.
    """

    kind: str
    receiver: Dotted | None
    site: Site
    persistent_guard: bool = False
    loop: int = -1  # innermost loop whose body holds it (index into FunctionSummary.loops)


@dataclass
class FunctionSummary:
    qualname: str  # "AbstractDataFetcher.__iter__", "outer.<locals>.inner", "<module>"
    name: str
    class_qualname: str | None
    kind: str  # "function", "method", "staticmethod", "classmethod", "property", "module"
    line: int
    column: int
    end_line: int
    params: list[str] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    sinks: list[SinkSite] = field(default_factory=list)
    local_types: dict[str, Dotted] = field(default_factory=dict)
    # its for/while loops (kind, position, header and enclosing loop; no DataLoader facts)
    loops: list[LoopInfo] = field(default_factory=list)
    # parameters that default to None and locals bound to None, sorted: an argument that is
    # one of them may pass nothing (summary/none_guards.py)
    none_names: tuple[str, ...] = ()
    # parameters that default to a literal 0 and are never bound again in the body, sorted
    zero_names: tuple[str, ...] = ()
    # the parameters ``params`` leaves out: keyword-only ones, ``*args`` and ``**kwargs`` ("": none)
    keyword_only: list[str] = field(default_factory=list)
    star_args: str = ""
    star_kwargs: str = ""
    # locals assigned a value read without a call (``dataset = loader.dataset``): local -> the
    # dotted names it reads, space-separated (LL202's value flow)
    read_aliases: dict[str, str] = field(default_factory=dict)

    def loop_chain(self, index: int) -> list[LoopInfo]:
        """The loop at ``index`` and every loop around it, innermost first."""
        return loop_chain(self.loops, index)

    @property
    def self_name(self) -> str | None:
        """The name bound to the instance (or class) inside a method, if any."""
        if self.kind in ("method", "classmethod", "property") and self.params:
            return self.params[0]
        return None


@dataclass
class ClassSummary:
    qualname: str
    name: str
    line: int
    bases: list[Dotted] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    attr_types: dict[str, Dotted] = field(default_factory=dict)
    # attributes bound to None in the class body or by its methods
    # (``self.val_loader = None``), sorted: passing one may pass nothing (summary/none_guards.py)
    none_attrs: tuple[str, ...] = ()


# -- DataLoader facts, per function (for the LL2xx rules) ------------------------------------
class Argument(NamedTuple):
    """One argument of a call. ``keyword`` is None for a positional one; ``star`` is ``*``/``**``.

    ``literal`` holds the value of a literal (int, bool, None) when ``is_literal``; ``lower_bound``
    is a proven minimum for an int expression (``max(1, n)`` -> 1), ``names`` the dotted names the
    expression reads (``("args.workers", "args")``). ``from_default``: the expression is a
    parameter and ``literal`` is that parameter's literal default (``persistent=True``).
    ``via``: the argument is not written in the call but reaches it through ``**via``, a dict
    the same function fills (``kwargs["num_workers"] = n``; ``dict(...)`` written inline: ``dict``).
    ``methods``: of a ``multiprocessing_context``, the start method each branch names
    (``summary/start_methods.py``); empty for any other argument.
    """

    keyword: str | None
    text: str
    is_literal: bool = False
    literal: int | bool | None = None
    lower_bound: int | None = None
    names: tuple[str, ...] = ()
    star: str = ""
    from_default: bool = False
    via: str = ""
    methods: tuple[Branch, ...] = ()


class Condition(NamedTuple):
    """An enclosing ``if`` (or ``except StopIteration``) of a call, inside the same function.

    ``negated``: the call is in the ``else`` branch. ``once``: the test looks like a one-shot
    check (``x is None``, ``not x``, ``hasattr``, a bare flag). ``loop_depth``: how many loops of
    the function enclose the ``if`` itself. ``dead``: a remainder test no value passes
    (``n % 30 == 220``, summary/periodic.py), so its branch never runs.
    """

    text: str
    negated: bool
    once: bool
    persistent: bool
    stop_iteration: bool
    loop_depth: int
    dead: bool = False


class LoopInfo(NamedTuple):
    """A ``for``/``while`` loop. ``body_line``/``body_column``: where its body starts (a call
    at or after that position and not after ``end_line`` runs once per iteration)."""

    kind: str
    line: int
    column: int
    end_line: int
    body_line: int
    body_column: int
    header: str
    targets: tuple[str, ...] = ()
    iterable: Dotted | None = None
    assigned: frozenset[str] = frozenset()
    parent: int = -1  # index of the enclosing loop in the same function, -1 for none
    # where the header's iterable (or test) ends: a finding on the loop spans the header
    header_end: tuple[int, int] = (0, 0)
    # a ``for`` over a fixed set of items written in its function (``for ds in (a, b)``, or a
    # local only ever bound to such a display), read from the tree (summary/fixed_loops.py):
    # a long header is cut, so its text cannot always say
    fixed: bool = False
    # a ``for`` that tries something and breaks out once it worked (summary/helpers.py's
    # retry_shaped): a bounded retry loop, whatever its header says
    retry: bool = False
    # of a ``for`` (in a call summary's loops): the names its target binds and the dotted
    # names its iterable reads, space-separated (LL202's value flow)
    binds: tuple[str, ...] = ()
    reads: str = ""

    def contains(self, line: int, column: int) -> bool:
        return (line, column) >= (self.body_line, self.body_column) and line <= self.end_line

    @property
    def epoch_like(self) -> bool:
        return "epoch" in self.header.lower()


class CallContext(NamedTuple):
    """Where a call sits: innermost enclosing loop (index into ``FunctionFacts.loops``, -1 for
    none), enclosing conditions (outermost first), and whether the function caches its result."""

    loop: int = -1
    conditions: tuple[Condition, ...] = ()
    cached: bool = False


class LoaderCall(NamedTuple):
    """A call that may construct a DataLoader. ``bound_to``: the dotted target it is assigned to
    (``("self", "loader")``), ``RETURNED`` when returned, ``UNPACKED`` when assigned to a tuple
    of targets, None otherwise."""

    target: Dotted
    site: Site
    arguments: tuple[Argument, ...]
    context: CallContext
    bound_to: Dotted | None = None

    def keyword(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.keyword == name), None)

    def positional(self, index: int) -> Argument | None:
        found = [a for a in self.arguments if a.keyword is None and not a.star]
        return found[index] if index < len(found) else None

    @property
    def has_star_kwargs(self) -> bool:
        """Some keyword may come from a ``**mapping`` whose keys are not all known."""
        return any(a.star == "**" for a in self.arguments)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(n for a in self.arguments for n in a.names)


class IterCall(NamedTuple):
    """``iter(argument)``; ``in_next`` when it is ``next(iter(argument))``."""

    argument: Dotted | None
    site: Site
    context: CallContext
    in_next: bool = False
    bound_to: Dotted | None = None


class TrainerCall(NamedTuple):
    target: Dotted
    site: Site
    arguments: tuple[Argument, ...]
    context: CallContext

    def keyword(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.keyword == name), None)


@dataclass
class FunctionFacts:
    loops: list[LoopInfo] = field(default_factory=list)
    loader_calls: list[LoaderCall] = field(default_factory=list)
    iter_calls: list[IterCall] = field(default_factory=list)
    trainer_calls: list[TrainerCall] = field(default_factory=list)
    returns: list[Dotted] = field(default_factory=list)
    cached: bool = False
    # Line of an early return of a kept value (`if key in self._cache: return self._cache[key]`):
    # what the function calls after it runs once per key, not on every call. 0: none.
    cached_after: int = 0
    # locals assigned from an attribute of the instance (`args = self.args`): name -> dotted
    attribute_aliases: dict[str, Dotted] = field(default_factory=dict)
    # Bodies (first line, last line) of `if` statements that test a value and keep it
    # (`if self._loader is None: self._loader = self._build()`): a call in one runs once.
    kept_blocks: list[tuple[int, int]] = field(default_factory=list)

    def innermost_loop_at(self, line: int, column: int) -> int:
        """Index of the innermost loop whose body holds ``line:column``, -1 if none."""
        best = -1
        for index, loop in enumerate(self.loops):
            if loop.contains(line, column) and (
                best < 0 or (loop.body_line, loop.body_column) >= self._start(best)
            ):
                best = index
        return best

    def _start(self, index: int) -> tuple[int, int]:
        loop = self.loops[index]
        return (loop.body_line, loop.body_column)

    def loop_chain(self, index: int) -> list[LoopInfo]:
        """The loop at ``index`` and every loop around it, innermost first."""
        return loop_chain(self.loops, index)


@dataclass
class LoaderFacts:
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    loader_aliases: frozenset[str] = frozenset()  # local names bound to an imported DataLoader
    # class qualname -> attribute -> literal default (summary/config_defaults.py)
    class_defaults: dict[str, dict[str, int | bool | str | None]] = field(default_factory=dict)
    # class qualname -> attribute -> annotation of the ``__init__`` parameter stored in it
    class_stores: dict[str, dict[str, Dotted]] = field(default_factory=dict)

    def facts(self, qualname: str) -> FunctionFacts | None:
        return self.functions.get(qualname)


# -- the whole file --------------------------------------------------------------------------
@dataclass
class FileSummary:
    path: str
    module: str
    is_package: bool = False
    imports: dict[str, ImportBinding] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)
    classes: dict[str, ClassSummary] = field(default_factory=dict)
    functions: dict[str, FunctionSummary] = field(default_factory=dict)
    noqa: dict[int, frozenset[str] | None] = field(default_factory=dict)
    error: str | None = None
    error_line: int = 1
    error_column: int = 1
    loaders: LoaderFacts | None = None  # DataLoader facts for LL2xx (below)

    @property
    def ok(self) -> bool:
        return self.error is None


def loop_chain(loops: list[LoopInfo], index: int) -> list[LoopInfo]:
    """``loops[index]`` and every loop around it (``parent`` links), innermost first."""
    chain = []
    while index >= 0:
        chain.append(loops[index])
        index = loops[index].parent
    return chain

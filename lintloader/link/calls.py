"""Call resolution: where each call of a function can land, with how sure the link is.

A call lands where its receiver's type says (``self``, a typed local, an attribute whose type
is recorded, ``super()``), where its name resolves through the imports, or, when nothing types
the receiver, in the classes its name agrees with (a guess by name: medium or low confidence).
Calls are read only through :meth:`CallGraph.edges_from`, :meth:`~CallGraph.edges_into`,
:meth:`~CallGraph.calls_named` and :meth:`~CallGraph.calls_of`, none of which records
anything: what the analysis read of them is recorded, when a run is stored, by a program that
wraps these (``incremental/recording.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from lintloader.finding.findings import Confidence
from lintloader.link.call_kinds import EVERY_CALL, CallKind
from lintloader.link.fixed_sets import fixed_set_value
from lintloader.link.hierarchy import FOREIGN, Hierarchy
from lintloader.link.receiver_names import agreement, is_distinctive, words
from lintloader.link.symbols import FunctionInfo, symbol_key
from lintloader.summary.model import CallSite, Dotted, FunctionSummary

MEGAMORPHIC_DISPATCH = 4  # more possible targets than this: overrides become low-confidence
Landing = list[tuple[str, Confidence]]  # function keys a call may land in, how sure each is


class Edge(NamedTuple):
    """``caller`` calls (or passes along) ``callee`` at ``call``."""

    caller: str
    callee: str
    call: CallSite
    confidence: Confidence


class CallGraph(Hierarchy):
    """The class hierarchy, with call edges worked out on demand."""

    _edges: dict[str, list[Edge]]
    _call_edges: dict[tuple[str, int], list[Edge]]  # (caller, call index)
    _guesses: dict[tuple[str, str], Landing]
    _answered: dict[str, tuple[str, ...]]  # method key -> the classes it answers for
    _runs_along: dict[tuple[str, str], frozenset[str]]  # (class, name) -> methods that run

    def _forget(self) -> None:
        super()._forget()
        self._edges, self._call_edges, self._guesses = {}, {}, {}
        self._answered, self._runs_along = {}, {}

    # -- the calls as linked -----------------------------------------------------------------
    def edges_from(self, key: str) -> list[Edge]:
        if key not in self._edges:
            info = self.functions[key]
            calls = range(len(info.function.calls))
            self._edges[key] = [edge for index in calls for edge in self._edges_at(info, index)]
        return self._edges[key]

    def _edges_at(self, info: FunctionInfo, index: int) -> list[Edge]:
        """The edges of the ``index``-th call of a function."""
        at = (info.key, index)
        found = self._call_edges.get(at)
        if found is None:
            call = info.function.calls[index]
            landing = self.callees(info, call)
            found = self._call_edges[at] = [Edge(info.key, key, call, c) for key, c in landing]
        return found

    def edges_into(self, key: str, confidence: Confidence | None = None) -> list[Edge]:
        """Edges into function ``key`` (of at least ``confidence``, if given), callers in
        scan order.
        Only the calls that could name ``key`` are linked, not every call of the program:
        a call lands only in a function that bears its name, or that an import gives its
        name (``link/linkable.py``; ``tests/test_rule_contract.py`` checks every edge)."""
        names = self._with_renames(self.called_names(key))  # names_landing_in(key)
        found = []
        for caller, indexes in self._named_calls(names):
            info = self.functions[caller]
            found += [
                edge
                for index in indexes
                for edge in self._edges_at(info, index)
                if edge.callee == key and (confidence is None or edge.confidence >= confidence)
            ]
        return found

    # -- the calls as written ----------------------------------------------------------------
    def calls_named(self, names: Iterable[str]) -> Iterator[tuple[FunctionInfo, CallSite]]:
        """Every call whose target ends in one of ``names`` (``self.loader.reset()`` ends in
        ``reset``), with the function that makes it; each function's calls in order."""
        for name in names:
            for key, indexes in self._named_calls((name,)):
                info = self.functions[key]
                yield from ((info, info.function.calls[index]) for index in indexes)

    def calls_of(self, key: str, kind: CallKind = EVERY_CALL) -> list[CallSite]:
        """The calls of function ``key`` of one ``kind``, for an analysis that reads them as
        written (where they land: :meth:`edges_from`)."""
        function = self.functions[key].function
        if kind is EVERY_CALL:
            return function.calls
        return [call for call in function.calls if kind.matches(function, call)]

    def called_names(self, key: str) -> set[str]:
        """The names a call that lands in ``key`` is made by: its own, or for a constructor,
        its class's or a subclass's that inherits it (before imports rename them)."""
        info = self.functions[key]
        names = {info.function.name}
        class_key = info.class_key
        if info.function.name == "__init__" and class_key is not None:
            for holder in {class_key, *self.subclasses.get(class_key, ())}:
                names.add(self.classes[holder].klass.name)
        return names

    def names_landing_in(self, key: str) -> set[str]:
        """The names a call that lands in ``key`` can end in: :meth:`called_names`, and
        every local name an import gives one of them, to any depth."""
        return self._with_renames(self.called_names(key))

    # -- where one call lands ----------------------------------------------------------------
    def callees(self, info: FunctionInfo, call: CallSite) -> Iterator[tuple[str, Confidence]]:
        """Functions a call site can land in, each with how sure the link is."""
        target = call.target
        resolved = self._resolve_call(info, target)
        if resolved is not None:
            # A call that many subclass overrides could answer (a megamorphic dispatch) is only
            # sure of the definition it inherits: which override runs depends on the object.
            megamorphic = len(resolved) > MEGAMORPHIC_DISPATCH
            for index, key in enumerate(resolved):
                sure = not megamorphic or index == 0
                yield key, Confidence.HIGH if sure else Confidence.LOW
            return
        if call.is_reference or len(target) < 2:
            return
        if len(target) == 2 and fixed_set_value(info.function.loops, call.loop, target[0]):
            return  # one of the items written in the loop: its class is no guess by name
        yield from self.guess(target[-2], target[-1])

    def guess(self, receiver: str, method: str) -> Landing:
        """Methods ``receiver.method()`` may land in when nothing types ``receiver``: the
        definitions of ``method`` in the classes the receiver's name agrees with best
        (:mod:`lintloader.link.receiver_names`), or, for a distinctive method name called
        on a receiver whose name says nothing (``x``, ``obj``), in the classes that define it.
        One hierarchy: MEDIUM (a guess that may carry a warning); several: LOW. A receiver
        whose name agrees with none of them is left unlinked: its name says it is another
        kind of object."""
        memo = self._guesses
        key = (receiver, method)
        if key not in memo:
            memo[key] = self._guess(receiver, method)
        return memo[key]

    def _guess(self, receiver: str, method: str) -> Landing:
        owners: dict[str, str] = {}  # class key -> its definition of the method
        for key in self.methods_by_name.get(method, ()):
            owner = self.functions[key].class_key
            if owner is not None and owner in self.classes:
                owners[owner] = key
        scores = {owner: agreement(receiver, self.lineage_names(owner)) for owner in owners}
        best = max(scores.values(), default=0)
        if best > 0:
            chosen = [owner for owner, score in scores.items() if score == best]
        elif is_distinctive(method) and not words(receiver):
            chosen = list(owners)  # `x.next_epoch_itr()`: the name says nothing either way
        else:
            return []  # `self.model.load_state_dict()`: the name says it is something else
        confidence = Confidence.MEDIUM if self.one_hierarchy(chosen) else Confidence.LOW
        return [(owners[owner], confidence) for owner in chosen]

    def _resolve_call(self, info: FunctionInfo, target: Dotted) -> list[str] | None:
        """The functions a call resolves to; ``[]`` when it is known to land outside the
        scanned code (or nowhere), None when its receiver's type is unknown."""
        function, class_key = info.function, info.class_key
        head, rest = target[0], target[1:]
        if head == "super()" and class_key and len(rest) == 1:
            found = self.lookup_method(class_key, rest[0], skip_self=True)
            return [found] if found else []
        if head == function.self_name and class_key and len(rest) == 1:
            targets = self.dispatch(class_key, rest[0])
            return [key for key in targets if self._runs_for_owner(info, key)]
        if head == function.self_name and class_key and rest:
            return self._dispatch_through(class_key, rest)
        if head in function.local_types and rest:
            typed = self.class_of_type(info, function.local_types[head])
            if typed is None:  # a factory function's result, a builtin: unknown
                return None
            exact = typed in self.classes and _constructed_here(function, head)
            if len(rest) == 1 and exact:
                found = self.lookup_method(typed, rest[0])  # an exact class: no override
                return [found] if found else []
            return self._dispatch_through(typed, rest)
        nested = symbol_key(info.file.module, f"{function.qualname}.<locals>.{head}")
        if not rest and nested in self.functions:
            return [nested]
        symbol = self.resolve(info.file.module, target)
        if symbol is None:
            return None
        if symbol.kind == "function":
            return [symbol.key]
        if symbol.kind == "class":
            init = self.lookup_method(symbol.key, "__init__")
            return [init] if init else []
        return [] if symbol.kind == "external" else None

    def _runs_for_owner(self, info: FunctionInfo, target: str) -> bool:
        """Whether the method ``info`` (its ``self.m()`` landing in ``target``) can run for an
        object that ``target`` answers: ``Base.f``'s ``self.m()`` lands in ``Sub.m`` only
        when ``Base.f`` runs for a ``Sub`` (or a subclass of it that keeps ``Sub.m``), that
        is when no override of ``f`` along that class's MRO cuts the way to ``Base.f``
        (one that never calls ``super().f()``)."""
        owner = self.functions[target].class_key
        if owner is None or owner == info.class_key:
            return True
        name = self.functions[target].function.name
        kept = self._answered_by(target, owner, name)
        return any(info.key in self._runs(key, info.function.name) for key in kept)

    def _answered_by(self, target: str, owner: str, name: str) -> tuple[str, ...]:
        """The classes (``owner``, that defines method ``target``, and its scanned
        subclasses, sorted: :meth:`_runs_for_owner` stops at the first that answers, and
        what it read must not depend on the process's hash seed) whose objects answer a
        call of ``name`` with ``target``."""
        found = self._answered.get(target)
        if found is None:
            found = self._answered[target] = tuple(
                key
                for key in (owner, *sorted(self.subclasses.get(owner, ())))
                if self.lookup_method(key, name) == target
            )
        return found

    def _runs(self, class_key: str, name: str) -> frozenset[str]:
        """The methods that calling ``name`` on a ``class_key`` object runs: its MRO's
        definitions, each handing on to the next with ``super()`` (or through a base named
        in the call), up to the first that does not."""
        found = self._runs_along.get((class_key, name))
        if found is None:
            ran = []
            for holder in self.mro(class_key):
                klass = self.classes[holder]
                if name not in klass.klass.methods:
                    continue
                key = symbol_key(klass.file.module, f"{klass.klass.qualname}.{name}")
                ran.append(key)
                if key not in self.functions or not self._hands_on(key, name):
                    break
            found = self._runs_along[(class_key, name)] = frozenset(ran)
        return found

    def _hands_on(self, key: str, name: str) -> bool:
        """Whether method ``key`` calls its own name on something other than its ``self``
        (``super().f()``, ``Base.f(self)``): the definitions after it may run too."""
        self_name = self.functions[key].function.self_name
        return any(
            call.target[-1] == name and len(call.target) > 1 and call.target[0] != self_name
            for call in self.calls_of(key)
        )

    def _dispatch_through(self, type_: str, rest: Dotted) -> list[str] | None:
        """``obj.a.b.method()`` with ``obj`` of type ``type_``: follow the recorded attribute
        types; an attribute nothing types (or one of an unscanned class) makes the receiver
        unknown (None). A receiver of an unscanned class lands in the scanned subclasses of it
        that define the method, or outside the scanned code ([])."""
        for attribute in rest[:-1]:
            held = None if type_.startswith(FOREIGN) else self.attribute_class(type_, attribute)
            if held is None:
                return None
            type_ = held
        if type_.startswith(FOREIGN):
            return self._external_dispatch(type_[len(FOREIGN) :], rest[-1])
        return self.dispatch(type_, rest[-1])


def _constructed_here(function: FunctionSummary, name: str) -> bool:
    """``name`` is a local (no parameter) the function binds to a construction of its recorded
    class (``x = Sub(...)``): an object of exactly that class, whose methods its subclasses'
    overrides never answer."""
    if name in function.params or name in function.keyword_only:
        return False
    type_ = function.local_types[name]
    return any(call.target == type_ and not call.is_reference for call in function.calls)

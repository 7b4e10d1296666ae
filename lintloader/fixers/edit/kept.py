"""A loader built once and kept on the instance, shared by the LL202 strategies that keep one
(keep-iter-loader: one loader; keep-eval-loader: one per dataset)::

    if self._loader is None:                       # Slot("_loader")
        self._loader = DataLoader(...)
    if id(dataset) not in self._eval_loaders:      # Slot("_eval_loaders", "id(dataset)")
        self._eval_loaders[id(dataset)] = DataLoader(...)

The construction becomes the kept value where it stood, and the attribute starts in the class's
``__init__`` (``None``, or ``{}`` for one per key). cache-loader-per-dataset keeps its loaders in
a dict of the module instead (``Slot("_run_eval_loaders", "id(item.data)", owner="")``),
kept and declared by :func:`keep_in_module` (keep-builder-loader keeps its loaders the same
way).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from lintloader.fixers.base import FixError
from lintloader.fixers.edit.cst_edit import body_of
from lintloader.fixers.edit.epoch_state import reads
from lintloader.fixers.edit.loader_calls import Target
from lintloader.fixers.edit.names import bound_at_each_call, collect, first_free
from lintloader.fixers.edit.rewrite import EditFn


@dataclass(frozen=True)
class Slot:
    """Where the kept loader lives: ``self.<attribute>``, or ``self.<attribute>[<key>]``
    (``<attribute>[<key>]`` for a name of the module: ``owner=""``)."""

    attribute: str
    key: str | None = None
    owner: str = "self."

    @property
    def value(self) -> str:
        kept = f"{self.owner}{self.attribute}"
        return kept if self.key is None else f"{kept}[{self.key}]"

    @property
    def missing(self) -> str:
        kept = f"{self.owner}{self.attribute}"
        return f"{kept} is None" if self.key is None else f"{self.key} not in {kept}"

    @property
    def start(self) -> str:
        return "None" if self.key is None else "{}"


def method_of(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    found = (s for s in body_of(cls) if isinstance(s, cst.FunctionDef) and s.name.value == name)
    return next(found, None)


def free_attribute(cls: cst.ClassDef, names: tuple[str, ...]) -> str:
    """The first of ``names`` (then ``<last>_2``, ...) that the class does not use on ``self``."""
    used = {r.split(".")[1] for r in reads(cls) if r.startswith("self.")}
    return first_free(names, used.__contains__)


def keep(
    call: cst.Call,
    statement: cst.SimpleStatementLine,
    slot: Slot,
    prelude: Sequence[cst.SimpleStatementLine] = (),
) -> dict[cst.CSTNode, EditFn]:
    """``if <missing>: <slot> = <call>`` before ``statement`` (which gives the ``if`` the comment
    lines above it); the call becomes the kept value. The statements of ``prelude`` (just before
    ``statement``, preparing only the call's arguments) move into the ``if``, the first giving it
    its lines above."""
    built: list[cst.BaseExpression] = []

    def take(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.BaseExpression)
        built.append(updated)
        return cst.parse_expression(slot.value)

    def before(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        assert isinstance(updated, cst.SimpleStatementLine)
        kept = cst.parse_expression(slot.value)
        assert isinstance(kept, (cst.Attribute, cst.Subscript))
        store = cst.Assign([cst.AssignTarget(kept)], built[0])
        moved = [s.with_changes(leading_lines=()) for s in prelude]
        guard = cst.If(
            test=cst.parse_expression(slot.missing),
            body=cst.IndentedBlock([*moved, cst.SimpleStatementLine([store])]),
            leading_lines=(prelude[0] if prelude else updated).leading_lines,
        )
        return cst.FlattenSentinel([guard, updated.with_changes(leading_lines=())])

    edits: dict[cst.CSTNode, EditFn] = {s: _removed for s in prelude}
    edits.update({call: take, statement: before})
    return edits


def _removed(updated: cst.CSTNode) -> cst.RemovalSentinel:
    return cst.RemovalSentinel.REMOVE


def start(init: cst.FunctionDef, module: cst.Module, slot: Slot) -> dict[cst.CSTNode, EditFn]:
    """``self.<attribute> = None`` (or ``{}``) at the end of ``__init__``."""
    text = f"self.{slot.attribute} = {slot.start}\n"
    line = cst.parse_statement(text, module.config_for_parsing)

    def append(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.IndentedBlock)
        return updated.with_changes(body=[*updated.body, line])

    return {init.body: append}


def keep_in_module(
    target: Target,
    function: cst.FunctionDef,
    statement: cst.SimpleStatementLine,
    key: str,
    prelude: Sequence[cst.SimpleStatementLine] = (),
    per: str = "one per dataset",
) -> tuple[Slot, dict[cst.CSTNode, EditFn]]:
    """:func:`keep` in a dict of the module, keyed by ``key``: the dict named after
    ``function`` (``_<function>_loaders``, a name the module does not use) and declared before
    the module statement that holds it, its comment saying what it keeps ``per`` key."""
    cache = _free_name(target.module, f"_{function.name.value.lstrip('_')}_loaders")
    slot = Slot(cache, key, owner="")
    edits = keep(target.call, statement, slot, prelude)
    declared = _declared(target.module, cache, f"`{function.name.value}`, {per}")
    edits[_top_level(target, function)] = declared
    return slot, edits


def check_sets_given(loop: cst.For, function: cst.FunctionDef) -> None:
    """The sets a loop goes over come from outside ``function``'s call: sets it binds at each
    call (``datasets = build_dataset(...)``) are new each time, and their loaders, kept in the
    module, would pile up, a pool each (FixError)."""
    made = sorted(collect([loop.iter]).used & bound_at_each_call(function))
    if made:
        raise FixError(
            f"the sets `{made[0]}` are bound in `{function.name.value}` at each call: new "
            "sets each time would each keep a pool of their own"
        )


def _free_name(module: cst.Module, wanted: str) -> str:
    """``wanted`` (then ``wanted_2``, ...) when the module's text has no such word."""
    code = module.code
    return first_free((wanted,), lambda name: re.search(rf"\b{name}\b", code) is not None)


def _top_level(target: Target, function: cst.FunctionDef) -> cst.CSTNode:
    """The statement of the module that holds ``function`` (itself, or a class around it)."""
    node: cst.CSTNode = function
    parent = target.parent(node)
    while parent is not None and not isinstance(parent, cst.Module):
        node, parent = parent, target.parent(parent)
    return node


def _declared(module: cst.Module, cache: str, kept: str) -> EditFn:
    """``<cache> = {}``, with a comment, before the module statement (its blank lines above)."""
    text = f"{cache} = {{}}\n"
    statement = cst.parse_statement(text, module.config_for_parsing)

    def declare(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        assert isinstance(updated, cst.BaseCompoundStatement)
        blank = []
        for line in updated.leading_lines:
            if line.comment is not None:
                break
            blank.append(line)
        comment = cst.EmptyLine(
            comment=cst.Comment(f"# the loaders of {kept}, kept with their workers for the run")
        )
        declared = statement.with_changes(leading_lines=[*blank, comment])
        return cst.FlattenSentinel([declared, updated])

    return declare

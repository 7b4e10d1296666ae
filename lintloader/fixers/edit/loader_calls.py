"""Shared by the LL2xx fix strategies: find the call a finding points at, and the statement and
loop around it, in a freshly parsed module (matched by position, edited by node identity)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from lintloader.fixers.base import FixError, FixRequest
from lintloader.fixers.edit.parsing import parse_module
from lintloader.fixers.edit.shared_parse import parsed

Loop = cst.For | cst.While
Node = TypeVar("Node", bound=cst.CSTNode)
Block = cst.IndentedBlock | cst.Module


@dataclass
class Target:
    """The call at a finding's position, with what encloses it."""

    path: str
    module: cst.Module
    call: cst.Call
    parents: Mapping[cst.CSTNode, cst.CSTNode]
    positions: Mapping[cst.CSTNode, CodeRange] = field(default_factory=dict)
    calls: Mapping[tuple[int, int], cst.Call] = field(default_factory=dict)

    def call_at(self, line: int, column: int) -> cst.Call | None:
        """Another call of the same module, at ``line:column`` (1-based)."""
        return self.calls.get((line, column))

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def enclosing(self, kind: type[Node], what: str) -> Node:
        """The nearest node of ``kind`` around the call (else FixError: not in ``what``)."""
        node: cst.CSTNode | None = self.call
        while node is not None and not isinstance(node, kind):
            node = self.parent(node)
        if node is None:
            raise FixError(f"the call is not in {what}")
        return node

    def statement(self) -> cst.SimpleStatementLine:
        return self.enclosing(cst.SimpleStatementLine, "a simple statement")

    def assignment(self, statement: cst.SimpleStatementLine) -> cst.Assign | None:
        """``statement`` as ``target = <the call>`` (one statement, one target), else None."""
        small = statement.body
        if (
            len(small) == 1
            and isinstance(small[0], cst.Assign)
            and len(small[0].targets) == 1
            and small[0].value is self.call
        ):
            return small[0]
        return None

    def loop_of(self, statement: cst.BaseStatement) -> Loop:
        """The loop whose body holds ``statement`` directly."""
        block = self.parent(statement)
        loop = self.parent(block) if block is not None else None
        if not isinstance(block, cst.IndentedBlock) or not isinstance(loop, (cst.For, cst.While)):
            raise FixError("the statement is not directly in a loop body")
        if loop.body is not block:
            raise FixError("the statement is in the loop's else block")
        return loop

    def block_of(self, statement: cst.BaseStatement) -> Block:
        block = self.parent(statement)
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            raise FixError("the loop is not a statement of a block")
        return block

    def result(self, new_module: cst.Module) -> dict[str, bytes]:
        data = new_module.bytes
        parse_module(data)  # a fix never writes code that does not parse
        return {self.path: data}


def target_call(request: FixRequest, source: bytes | None = None) -> Target:
    """The call a finding points at (in ``source`` when given: the file after an earlier edit
    that kept its positions)."""
    finding = request.finding
    path = request.displays.get(finding.path, finding.path)
    return call_at(request, path, finding.line, finding.column, source)


def call_at(
    request: FixRequest, path: str, line: int, column: int, source: bytes | None = None
) -> Target:
    """The call that starts at ``path:line:column`` (1-based, as findings and hops count)."""
    display = next((d for d, p in request.displays.items() if p == path), path)
    if source is None:
        source = request.sources.get(path)
    if source is None:
        raise FixError(f"{display}: source not available")
    read = parsed(request, path, source)
    found = read.calls.get((line, column))
    if found is None:
        raise FixError(f"{display}:{line}:{column}: no call there")
    return Target(path, read.module, found, read.parents, read.positions, read.calls)


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword and a.keyword.value == name), None)


def without(block: cst.BaseSuite, statement: cst.BaseStatement) -> cst.BaseSuite:
    """``block`` minus ``statement``; ``pass`` if nothing is left."""
    assert isinstance(block, cst.IndentedBlock)
    body = [s for s in block.body if s is not statement]
    return block.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])])


def insert_before(block: Block, anchor: cst.CSTNode, new: list[cst.BaseStatement]) -> Block:
    body: list[cst.BaseStatement] = []
    for statement in block.body:
        if statement is anchor:
            body.extend(new)
        body.append(statement)
    return block.with_changes(body=body)


def next_of_iter(call: cst.Call) -> cst.BaseExpression | None:
    """``loader`` of ``next(iter(loader))`` (a default for ``next`` allowed), else None."""
    inner = call.args[0].value if call.args else None
    if (
        isinstance(call.func, cst.Name)
        and call.func.value == "next"
        and isinstance(inner, cst.Call)
        and isinstance(inner.func, cst.Name)
        and inner.func.value == "iter"
        and len(inner.args) == 1
    ):
        return inner.args[0].value
    return None

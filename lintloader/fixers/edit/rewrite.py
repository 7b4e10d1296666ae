"""One pass over a module that edits nodes by identity: each node of ``edits`` is replaced by
what its function makes of the node as rewritten below it (so two edits, one inside the other,
compose: a construction made persistent inside the statement that moves). A block whose
statements were all removed gets ``pass``.

Nodes the pass does not touch are kept as they are: the module's bytes round-trip everything
else (see :mod:`lintloader.fixers.edit.cst_edit`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import libcst as cst

from lintloader.fixers.edit.cst_edit import comment_lines, pass_line

Result = cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]
EditFn = Callable[[cst.CSTNode], Result]


class Rewrite(cst.CSTTransformer):
    def __init__(self, edits: Mapping[cst.CSTNode, EditFn]) -> None:
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Result:  # type: ignore[override]
        edit = self.edits.get(original_node)
        result = edit(updated_node) if edit is not None else updated_node
        if isinstance(result, cst.IndentedBlock) and not result.body:
            return result.with_changes(body=[pass_line()])
        return result


def rewritten(module: cst.Module, edits: Mapping[cst.CSTNode, EditFn]) -> cst.Module:
    return module.visit(Rewrite(edits))


def moved_before(
    statements: Sequence[cst.SimpleStatementLine], anchor: cst.CSTNode
) -> dict[cst.CSTNode, EditFn]:
    """Edits that move ``statements`` (as rewritten) to just before ``anchor`` (a loop), in
    their order, each with the comment lines above it."""
    moved: list[cst.CSTNode] = []

    def take(original: cst.SimpleStatementLine) -> EditFn:
        def edit(updated: cst.CSTNode) -> cst.RemovalSentinel:
            assert isinstance(updated, cst.SimpleStatementLine)
            lines = comment_lines(original.leading_lines)
            moved.append(updated.with_changes(leading_lines=lines))
            return cst.RemovalSentinel.REMOVE

        return edit

    def before(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        return cst.FlattenSentinel([*moved, updated])

    edits: dict[cst.CSTNode, EditFn] = {line: take(line) for line in statements}
    edits[anchor] = before
    return edits

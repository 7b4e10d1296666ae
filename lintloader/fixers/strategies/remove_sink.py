"""remove-sink (unsafe): delete a DataLoader iterator reset written directly in ``__iter__``:
``loader._iterator = None``, ``del loader._iterator``, ``setattr(loader, "_iterator", None)``,
``loader._iterator._shutdown_workers()``.

Unsafe unless the loader is known to use persistent workers: with ``persistent_workers=False``
the reset may be what releases the previous epoch's workers early.
"""

from __future__ import annotations

import libcst as cst

from lintloader.domain.torch_api import SHUTDOWN_METHOD, SINK_ATTRIBUTE
from lintloader.fixers.base import Edits, FixRequest, FixStrategy
from lintloader.fixers.edit.statements import remove_statement_at


def is_reset(small: cst.BaseSmallStatement, module: cst.Module) -> bool:
    """Exactly one reset and nothing else: no chained targets, no other effects."""
    code = module.code_for_node(small)
    if isinstance(small, cst.Assign):
        return (
            len(small.targets) == 1
            and isinstance(small.value, cst.Name)
            and small.value.value == "None"
            and _is_iterator_attribute(small.targets[0].target)
        )
    if isinstance(small, cst.Del):
        return _is_iterator_attribute(small.target)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        function = small.value.func
        if isinstance(function, cst.Attribute):
            return function.attr.value == SHUTDOWN_METHOD and not small.value.args
        if isinstance(function, cst.Name) and function.value == "setattr":
            return SINK_ATTRIBUTE in code and len(small.value.args) == 3
    return False


def _is_iterator_attribute(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == SINK_ATTRIBUTE


def apply(request: FixRequest) -> Edits | None:
    chain = request.finding.chain
    if len(chain) != 1:
        return None
    return remove_statement_at(request, chain[0], is_reset, "DataLoader iterator reset")


STRATEGY = FixStrategy(
    name="remove-sink",
    safe=False,
    description="delete a DataLoader iterator reset written directly in __iter__",
    apply=apply,
)

"""``deep_replace`` below the root, typed as what it returns then: the root's own type.

libcst types ``root.deep_replace(old, new)`` as the root's type or the new node's, since
``old`` may be the root itself; a fix always replaces a node below the root it edits.
"""

from __future__ import annotations

from typing import TypeVar, cast

import libcst as cst

Root = TypeVar("Root", bound=cst.CSTNode)


def replaced(root: Root, old: cst.CSTNode, new: cst.CSTNode) -> Root:
    """``root`` with ``old`` (a node below it, by identity) replaced by ``new``."""
    return cast(Root, root.deep_replace(old, new))

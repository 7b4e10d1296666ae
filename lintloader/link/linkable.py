"""The names a call must end in to land in a file's code.

A call lands in scanned code only through a name its file or another defines: ``f()`` in a
module-level or nested function ``f`` or a class ``f``, ``obj.f()`` in a method ``f`` too, and
through a local name an import gives either (``from m import f as g``: ``g()``). A call
bearing none of the names of the linked files links nowhere (``Program.linkable_names``;
``incremental/reads.py`` sets such calls aside).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a replayed run never loads the summary model
    from lintloader.summary.model import FileSummary


def defined_names(summary: FileSummary, bare: bool = False) -> set[str]:
    """The names of the file's functions and classes (with ``bare``, only of those a bare
    name call can land in: at module level or nested in a function), and the local names
    its imports give under another name."""
    names = {
        function.name
        for function in summary.functions.values()
        if not bare or function.class_qualname is None
    }
    classes = summary.classes.values()
    names.update(k.name for k in classes if not bare or k.name == k.qualname)
    names.update(local for local, b in summary.imports.items() if b.name and b.name != local)
    return names

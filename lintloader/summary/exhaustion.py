"""Which ``except`` handlers catch an iterator's exhaustion.

The iterator-reuse idiom takes the next batch in a ``try`` and re-creates the iterator only
when the pass is over::

    try:
        batch = next(it)
    except StopIteration:          # or a bare ``except:``, ``except Exception:``
        it = iter(loader)
        batch = next(it)

Written with ``except StopIteration`` the handler names what it catches. Written with a bare
``except:`` or ``except Exception:`` (common in research code) it catches the same exhaustion
when the ``try`` body advances an iterator (``next(it)``, ``it.next()``, ``it.__next__()``):
the ``iter(loader)`` in it runs once per pass, not once per step.
"""

from __future__ import annotations

import ast

from lintloader.summary.walk import walk_order

# what a handler that catches everything an exhausted iterator raises is written as
_CATCH_ALL = frozenset({"Exception", "BaseException"})
_ADVANCE_METHODS = frozenset({"next", "__next__"})


def catches_exhaustion(body: list[ast.stmt], handler: ast.ExceptHandler) -> bool:
    """``handler`` (of a ``try`` whose body is ``body``) catches an iterator's exhaustion:
    it names ``StopIteration``, or it catches everything while ``body`` advances an iterator."""
    caught = _caught_names(handler.type)
    if "StopIteration" in caught:
        return True
    catch_all = handler.type is None or bool(caught & _CATCH_ALL)
    return catch_all and any(_advances(node) for stmt in body for node in walk_order(stmt))


def _caught_names(node: ast.expr | None) -> set[str]:
    items = node.elts if isinstance(node, ast.Tuple) else [node] if node is not None else []
    names = set()
    for item in items:
        if isinstance(item, ast.Name):
            names.add(item.id)
        elif isinstance(item, ast.Attribute):
            names.add(item.attr)
    return names


def _advances(node: ast.AST) -> bool:
    """``next(x)``, ``x.next()`` or ``x.__next__()``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "next" and len(node.args) >= 1
    return isinstance(func, ast.Attribute) and func.attr in _ADVANCE_METHODS and not node.args

"""Which fix strategies exist and whether each is safe, read from their modules' source.

Reporting needs to know which findings a fix would act on (ruff's ``[*]`` and "N fixable"), but
a check must not import the fixers (libcst and the linker: a replayed run imports neither). So
each ``fixers/strategies/*.py`` is read with ``ast`` for its literal
``STRATEGY = FixStrategy(name=..., safe=...)``; the registry imports the same modules, and a
test checks that both agree.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import lintloader.fixers.strategies as _package


@cache
def strategy_safety() -> dict[str, bool]:
    """Strategy name -> safe, for every strategy module."""
    found: dict[str, bool] = {}
    for folder in _package.__path__:
        for path in sorted(Path(folder).glob("*.py")):
            declared = _declared(path.read_text(encoding="utf-8"))
            if declared is not None:
                found[declared[0]] = declared[1]
    return found


def _declared(source: str) -> tuple[str, bool] | None:
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        if not any(isinstance(t, ast.Name) and t.id == "STRATEGY" for t in node.targets):
            continue
        keywords = {k.arg: k.value for k in node.value.keywords}
        name, safe = keywords.get("name"), keywords.get("safe")
        if isinstance(name, ast.Constant) and isinstance(safe, ast.Constant):
            return str(name.value), bool(safe.value)
    return None


def fix_kind(fixes: tuple[str, ...]) -> str:
    """``safe`` when a safe strategy is named, ``unsafe`` when only unsafe ones are, else ``""``."""
    safety = strategy_safety()
    named = [safety[name] for name in fixes if name in safety]
    if any(named):
        return "safe"
    return "unsafe" if named else ""

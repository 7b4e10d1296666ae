"""The fix-strategy registry: every module in ``fixers/strategies/`` defines ``STRATEGY``.

Strategies are found, not listed, the way rules are (:mod:`lintloader.rules.registry`). A rule
declares the strategies its findings may name in ``Rule.fixes``; the tests check every declared
name against this registry, and a finding that names an unknown strategy is an error, never
silently dropped. What a rule's documentation says about fix safety is derived from here.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import lintloader.fixers.strategies as _package
from lintloader.fixers.base import FixStrategy, Registry
from lintloader.rules.base import Rule


def strategy_module_names() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(_package.__path__))


@cache
def all_strategies() -> tuple[FixStrategy, ...]:
    found = []
    for name in strategy_module_names():
        module = importlib.import_module(f"{_package.__name__}.{name}")
        strategy = getattr(module, "STRATEGY", None)
        if not isinstance(strategy, FixStrategy):
            raise TypeError(f"{module.__name__} defines no STRATEGY")
        found.append(strategy)
    return tuple(found)


def load_registry() -> Registry:
    registry = Registry()
    for strategy in all_strategies():
        registry.add(strategy)
    return registry


def unknown_fixes(rule: Rule) -> list[str]:
    """Names a rule declares that no strategy has."""
    known = {strategy.name for strategy in all_strategies()}
    return [name for name in rule.fixes if name not in known]


def fix_safety(rule: Rule) -> str:
    """``safe (relocate) / unsafe (remove-call, remove-sink)``, from the declared strategies."""
    by_name = {strategy.name: strategy for strategy in all_strategies()}
    declared = [by_name[name] for name in rule.fixes if name in by_name]
    parts = [
        f"{label} ({', '.join(s.name for s in declared if s.safe == safe)})"
        for label, safe in (("safe", True), ("unsafe", False))
        if any(s.safe == safe for s in declared)
    ]
    return " / ".join(parts) or "no fix"

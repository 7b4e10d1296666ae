"""The rule registry: every ``llNNN_<name>.py`` module in this package defines one rule.

Rules are found, not listed: a module whose name starts with ``ll`` and a digit is imported and
must define ``RULE``. Adding a rule is one module plus its fixtures folder
(``fixtures/rules/LLNNN/``); the tests are driven by this registry and by those folders.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache

import lintloader.rules as _package
from lintloader.rules.base import Rule

_RULE_MODULE = re.compile(r"^ll\d{3}_\w+$")


def rule_module_names() -> list[str]:
    """The rule modules of this package, in code order (``ll101_...`` before ``ll201_...``)."""
    names = (info.name for info in pkgutil.iter_modules(_package.__path__))
    return sorted(name for name in names if _RULE_MODULE.match(name))


@cache
def all_rules() -> tuple[Rule, ...]:
    rules = []
    for name in rule_module_names():
        module = importlib.import_module(f"{_package.__name__}.{name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            raise TypeError(f"{module.__name__} defines no RULE")
        rules.append(rule)
    return tuple(rules)


def rules_by_code() -> dict[str, Rule]:
    return {rule.code: rule for rule in all_rules()}


def rule_for(code_or_name: str) -> Rule | None:
    key = code_or_name.strip()
    return rules_by_code().get(key.upper()) or next(
        (rule for rule in all_rules() if rule.name == key), None
    )

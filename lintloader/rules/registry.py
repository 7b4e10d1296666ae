"""The rule registry: every ``llNNN_<name>.py`` module in this package defines one rule.

Rules are found, not listed: a module whose name starts with ``ll`` and a digit is imported and
must define ``RULE``. Adding a rule is one module plus its fixtures folder
(``fixtures/rules/LLNNN/``); the tests are driven by this registry and by those folders.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

import lintloader.rules as _package
from lintloader.rules.codes import rule_module_names

if TYPE_CHECKING:  # rule_codes() must not import the rules (nor what they import)
    from lintloader.rules.base import Rule


@cache
def all_rules() -> tuple[Rule, ...]:
    from lintloader.rules.base import Rule

    rules = []
    for name in rule_module_names():
        module = importlib.import_module(f"{_package.__name__}.{name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            raise TypeError(f"{module.__name__} defines no RULE")
        if rule.code != f"LL{name[2:5]}":  # the code is read from the file name, too
            raise TypeError(f"{module.__name__} defines {rule.code}; its name says LL{name[2:5]}")
        rules.append(rule)
    return tuple(rules)


def rules_by_code() -> dict[str, Rule]:
    return {rule.code: rule for rule in all_rules()}


def rule_for(code_or_name: str) -> Rule | None:
    key = code_or_name.strip()
    return rules_by_code().get(key.upper()) or next(
        (rule for rule in all_rules() if rule.name == key), None
    )

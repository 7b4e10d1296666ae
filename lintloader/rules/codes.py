"""Which rule modules exist, and their codes, found from the package's file names alone.

The registry (:mod:`lintloader.rules.registry`) imports these modules; selector validation
only needs the codes, and a replayed run must not import the rules or what they import.
"""

from __future__ import annotations

import pkgutil
import re

import lintloader.rules as _package

_RULE_MODULE = re.compile(r"^ll\d{3}_\w+$")


def rule_module_names() -> list[str]:
    """The rule modules of this package, in code order (``ll101_...`` before ``ll201_...``)."""
    names = (info.name for info in pkgutil.iter_modules(_package.__path__))
    return sorted(name for name in names if _RULE_MODULE.match(name))


def rule_codes() -> set[str]:
    """Every registered rule's code, from the module names alone (``ll101_...`` -> ``LL101``):
    what selector validation needs, without importing the rules (a replayed run never does)."""
    return {f"LL{name[2:5]}" for name in rule_module_names()}

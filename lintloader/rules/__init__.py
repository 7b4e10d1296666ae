"""The rule registry. To add a rule: write `llNNN_<name>.py` next to the others (docstring,
``check``, ``VALID``/``INVALID``, ``RULE``) and list its module in ``_MODULES`` below."""

from __future__ import annotations

from lintloader.rules import (
    ll101_iter_resets_iterator,
    ll102_epoch_hook_resets_iterator,
    ll103_unreached_reset,
    ll104_unresolved_reset_call,
    ll201_persistent_without_workers,
    ll202_dataloader_in_loop,
    ll203_iter_in_loop,
    ll204_workers_not_persistent,
    ll205_reload_with_persistent,
)
from lintloader.rules.base import AnalysisContext, Rule

_MODULES = (
    ll101_iter_resets_iterator,
    ll102_epoch_hook_resets_iterator,
    ll103_unreached_reset,
    ll104_unresolved_reset_call,
    ll201_persistent_without_workers,
    ll202_dataloader_in_loop,
    ll203_iter_in_loop,
    ll204_workers_not_persistent,
    ll205_reload_with_persistent,
)

ALL_RULES: tuple[Rule, ...] = tuple(module.RULE for module in _MODULES)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}

__all__ = ["ALL_RULES", "RULES_BY_CODE", "AnalysisContext", "Rule", "rule_for"]


def rule_for(code_or_name: str) -> Rule | None:
    key = code_or_name.strip()
    return RULES_BY_CODE.get(key.upper()) or next(
        (rule for rule in ALL_RULES if rule.name == key), None
    )

"""Keyword arguments that flow through dicts: what ``**name`` passes at a call, when the function
built ``name`` itself (``cfg = {...}``, ``dict(k=v)``, ``kwargs["k"] = v``, ``cfg.update(...)``,
``cfg.pop("k")``, ``del cfg["k"]``)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from lintloader.summary.helpers import dotted

Entry = tuple[str, ast.expr]  # a key put into a dict, with its value


def dict_entries(node: ast.expr) -> tuple[list[tuple[str, ast.expr]], bool] | None:
    """Keys and values of ``{"k": v}`` / ``dict(k=v)``, and whether every key is known."""
    if isinstance(node, ast.Dict):
        entries, complete = [], True
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                entries.append((key.value, value))
            else:
                complete = False  # `**other` or a computed key
        return entries, complete
    if isinstance(node, ast.Call) and dotted(node.func) == ("dict",) and not node.args:
        entries = [(k.arg, k.value) for k in node.keywords if k.arg]
        return entries, all(k.arg for k in node.keywords)
    return None


@dataclass(eq=False, repr=False)
class DictFlow:
    """What a function has put into a dict by name so far (for ``**name`` at a call)."""

    entries: list[Entry]
    complete: bool


@dataclass(eq=False, repr=False)
class DictFlows:
    """Every dict a function fills by name, as its body is walked; ``dropped``: keys dropped
    inside a branch, with its depth (the number of open conditions), back after it."""

    flows: dict[str, DictFlow] = field(default_factory=dict)
    dropped: list[tuple[int, str, Entry]] = field(default_factory=list)

    def passed(self, value: ast.expr) -> tuple[str, list[Entry], bool] | None:
        """What ``**value`` passes, when the function built it: a dict literal, ``dict(...)``,
        or a name the function filled (``cfg = {...}``, ``kwargs["k"] = v``): where it comes
        from (``dict`` or the name), its entries and whether they are all its keys."""
        literal = dict_entries(value)
        if literal is not None:
            return "dict", *literal
        if isinstance(value, ast.Name) and value.id in self.flows:
            flow = self.flows[value.id]
            return value.id, list(flow.entries), flow.complete
        return None

    def assigned(self, name: str, value: ast.expr) -> bool:
        """``name = value``: whether ``value`` is a dict whose entries are now followed."""
        self.flows.pop(name, None)
        entries = dict_entries(value)
        if entries is not None:
            self.flows[name] = DictFlow(entries=entries[0], complete=entries[1])
        return entries is not None

    def item_set(self, target: ast.Subscript, value: ast.expr) -> None:
        """``kwargs["persistent_workers"] = value``: a parameter dict gains a known key."""
        key = target.slice
        if not isinstance(target.value, ast.Name):
            return
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return
        flow = self.flows.get(target.value.id)
        if flow is None:  # a `**kwargs` parameter or a dict from elsewhere: other keys unknown
            flow = self.flows[target.value.id] = DictFlow(entries=[], complete=False)
        flow.entries = [(k, v) for k, v in flow.entries if k != key.value]
        flow.entries.append((key.value, value))

    def key_dropped(self, name: str, key: ast.expr, depth: int, back_after: bool) -> None:
        """``cfg.pop("k")`` / ``del cfg["k"]`` under ``depth`` open conditions: a later
        ``**cfg`` in the same branch no longer passes ``k``; after the branch it does again
        when ``back_after`` (the other path kept it)."""
        flow = self.flows.get(name)
        if flow is None or not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return
        removed = [(k, v) for k, v in flow.entries if k == key.value]
        flow.entries = [(k, v) for k, v in flow.entries if k != key.value]
        if depth and back_after:
            self.dropped.extend((depth, name, entry) for entry in removed)

    def updated(self, name: str, node: ast.Call) -> None:
        """``cfg.update(k=v)`` / ``cfg.update({"k": v})``."""
        flow = self.flows.get(name)
        if flow is None:
            return
        added = dict_entries(node.args[0]) if len(node.args) == 1 else ([], not node.args)
        if added is None:
            flow.complete = False
            return
        entries, complete = added
        entries = entries + [(k.arg, k.value) for k in node.keywords if k.arg]
        keys = {key for key, _ in entries}
        flow.entries = [(k, v) for k, v in flow.entries if k not in keys] + entries
        flow.complete = flow.complete and complete and all(k.arg for k in node.keywords)

    def branch_left(self, depth: int) -> None:
        """Leave a branch (``depth`` conditions still open): keys it dropped are back."""
        if not self.dropped:  # most branches: nothing was dropped
            return
        for name, entry in [(n, e) for d, n, e in self.dropped if d > depth]:
            flow = self.flows.get(name)
            if flow is not None and all(key != entry[0] for key, _ in flow.entries):
                flow.entries.append(entry)
        self.dropped = [item for item in self.dropped if item[0] <= depth]

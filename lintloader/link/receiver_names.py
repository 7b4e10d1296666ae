"""What the name of a receiver of unknown type says about its class (guesses by method name).

``epoch_itr.next_epoch_itr()`` on an object that came from a factory cannot be typed. The linker
may still guess which scanned class it is, but only when the receiver's own name agrees with
the class: ``epoch_itr`` with ``EpochBatchIterator`` (``epoch``, ``iter``), ``self.dataset`` with
``_DatasetSamplerWrapper``; never ``self.batch_progress.total`` with ``CombinedLoader``. Words are
split from snake_case and CamelCase, lower-cased, and a few abbreviations are spelled out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Abbreviations and compounds, spelled the way class names spell them.
_SYNONYMS = {
    "itr": ("iter",),
    "iterator": ("iter",),
    "it": ("iter",),
    "dl": ("loader",),
    "dataloader": ("loader",),
    "dataloaders": ("loader",),
    "loaders": ("loader",),
    "fetchers": ("fetcher",),
}
# Words every other class name has: they say nothing about which class an object is.
_GENERIC = frozenset(
    {"base", "abstract", "default", "simple", "custom", "my", "new", "old", "data", "self",
     "get", "the", "impl", "mixin", "wrapper", "object", "cls", "obj", "batch"}
)  # fmt: skip


def words(name: str) -> frozenset[str]:
    """The meaningful words of an identifier: ``_EpochBatchIterator`` -> {epoch, iter}."""
    found: set[str] = set()
    for part in name.split("_"):
        for word in _CAMEL.findall(part):
            lower = word.lower()
            for spelled in _SYNONYMS.get(lower, (lower,)):
                if len(spelled) >= 3 and spelled not in _GENERIC:
                    found.add(spelled)
    return frozenset(found)


def agreement(receiver: str, class_names: Iterable[str]) -> int:
    """How many words the receiver's name shares with a class (and its ancestors' names)."""
    mine = words(receiver)
    if not mine:
        return 0
    theirs: set[str] = set()
    for name in class_names:
        theirs |= words(name)
    return len(mine & theirs)


def is_distinctive(method: str) -> bool:
    """A method name specific enough to identify its class on its own (``next_epoch_itr``):
    two or more words. ``reset``, ``run``, ``close`` are every other class's. (Used only for a
    receiver whose own name says nothing, ``x`` or ``obj``.)"""
    return len(words(method)) >= 2 and not method.startswith("__")

"""Whether each fix strategy is safe and, when it is not, why: plain data that reports, rule
pages and ``--statistics`` read without importing a strategy (libcst and the linker).

Every strategy module in ``fixers/strategies/`` has an entry here; a test checks that the
entries agree with the imported strategies' ``safe``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True, eq=False)
class FixSafety:
    name: str  # the strategy's name, as findings list it in ``fixes``
    safe: bool  # unsafe ones run only with --unsafe-fixes
    why: str = ""  # for an unsafe one: what may change in behaviour

    @property
    def applicability(self) -> str:
        return "safe" if self.safe else "unsafe"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"fix": self.name, "applicability": self.applicability}
        if not self.safe:
            data["why"] = self.why
        return data


_ENTRIES = (
    FixSafety("relocate", True),
    FixSafety("persistent-workers-guard", True),
    FixSafety("remove-reset-call", True),
    FixSafety("move-reset-after-loop", True),
    FixSafety("persistent-workers-stateless", True),
    FixSafety("hoist-loader-call", True),
    FixSafety("hoist-loader-sampler", True),
    FixSafety("keep-iter-loader", True),
    FixSafety("pass-loader-in", True),
    FixSafety("keep-eval-loader", True),
    FixSafety("persistent-sample-loader", True),
    FixSafety(
        "remove-call",
        False,
        "the deleted call may also reset per-iteration state (counters, done flags); without it "
        "a second iteration of the same object can see stale state",
    ),
    FixSafety(
        "remove-sink",
        False,
        "code after the deleted reset may expect a fresh iterator; the next epoch goes on with "
        "the running one",
    ),
    FixSafety(
        "add-persistent-workers",
        False,
        "with persistent workers the workers keep their copy of the dataset: a change made between "
        "epochs in the main process (IterableDataset.set_epoch, curriculum, resampling) is no "
        "longer seen by them, and the pool holds its memory while other loaders run",
    ),
    FixSafety(
        "hoist-dataloader",
        False,
        "the loader is built once: arguments that changed every iteration stop changing, and "
        "with persistent workers IterableDataset.set_epoch is no longer seen by the workers",
    ),
    FixSafety(
        "cache-loader-per-dataset",
        False,
        "every dataset's loader keeps its workers and their memory for the rest of the run; a "
        "dataset changed in place afterwards, or other arguments of a later call, are not seen: "
        "the first call's loader is reused",
    ),
    FixSafety(
        "keep-builder-loader",
        False,
        "a kept loader's workers keep their copy of the dataset and their memory for the run (a "
        "set changed afterwards, or other arguments of a later call, are not seen), and the "
        "builder's signature changes: it gains a persistent_workers keyword",
    ),
    FixSafety(
        "keep-builder-result",
        False,
        "the kept loaders' workers keep their copy of the data and their memory for the run; "
        "they are found by the identity of the call's arguments, so an argument changed in place "
        "(a config edited between evaluations) is not seen, and one freed then made anew at the "
        "same address would find the first one's loaders; and the builder's signature changes: "
        "it gains a persistent_workers keyword",
    ),
    FixSafety(
        "reuse-iterator",
        False,
        "reusing an iterator shifts the random stream: the loop walks through the data (shuffling "
        "and augmentation draw other numbers) instead of taking the first batch again each step",
    ),
)

FIX_SAFETY: MappingProxyType[str, FixSafety] = MappingProxyType({e.name: e for e in _ENTRIES})


def safety_of(names: tuple[str, ...]) -> list[FixSafety]:
    """The known entries of the strategies ``names`` lists, in its order."""
    return [FIX_SAFETY[name] for name in names if name in FIX_SAFETY]


def unsafe_names() -> str:
    """``add-persistent-workers, hoist-dataloader, ...``: every unsafe strategy, sorted."""
    return ", ".join(sorted(name for name, entry in FIX_SAFETY.items() if not entry.safe))


def fix_text(names: tuple[str, ...]) -> str:
    """``safe (relocate) / unsafe (remove-call, remove-sink)``, or ``no fix``."""
    entries = safety_of(names)
    parts = [
        f"{label} ({', '.join(e.name for e in entries if e.safe == safe)})"
        for label, safe in (("safe", True), ("unsafe", False))
        if any(e.safe == safe for e in entries)
    ]
    return " / ".join(parts) or "no fix"

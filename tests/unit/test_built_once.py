"""'Built once' is one test (``summary/guards.py``'s ``built_once``), so every fact the summary
records of it agrees: a call's ``Condition.once``, the function's ``kept_blocks`` and whether a
call under a ``persistent_workers`` branch still counts as running only with persistent workers
(``CallSite.persistent_only``). The analyses read those facts through ``analysis/built_once.py``
only (checked below by source)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from lintloader.summary.model import FileSummary
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[2]

SOURCE = """
from torch.utils.data import DataLoader

class Holder:
    def get(self, args, ds):
        for _ in range(3):
            if args.persistent_workers:
                if self._loader is None:  # built once: a one-shot test of the value kept
                    self._loader = DataLoader(ds, num_workers=2)
                if self.count > 3:  # keeps what it tests, but not a one-shot test
                    self.count = DataLoader(ds, num_workers=2)
"""


def summarize(source: str) -> FileSummary:
    summary = summarize_source(textwrap.dedent(source).encode(), "example.py", "example")
    assert summary.ok, summary.error
    return summary


def test_every_recorded_fact_of_a_built_once_guard_agrees() -> None:
    summary = summarize(SOURCE)
    assert summary.loaders is not None
    facts = summary.loaders.functions["Holder.get"]
    once, every = sorted(facts.loader_calls, key=lambda call: call.site.line)
    assert once.context.conditions[-1].once and not every.context.conditions[-1].once
    assert facts.kept_blocks == [(once.site.line, once.site.line)]
    calls = {
        c.site.line: c
        for c in summary.functions["Holder.get"].calls
        if c.target[-1] == "DataLoader"
    }
    assert not calls[once.site.line].persistent_only
    assert calls[every.site.line].persistent_only


_FACTS = re.compile(r"\.(cached|cached_after|kept_blocks)\b|\bc\.once\b|\.once and")


def test_the_analyses_read_built_once_facts_in_one_module() -> None:
    home = ROOT / "lintloader" / "analysis" / "built_once.py"
    readers = [
        path.relative_to(ROOT).as_posix()
        for folder in ("analysis", "rules", "link", "fixers")
        for path in sorted((ROOT / "lintloader" / folder).rglob("*.py"))
        if path != home and _FACTS.search(path.read_text(encoding="utf-8"))
    ]
    assert readers == [], f"read built-once facts outside analysis/built_once.py: {readers}"

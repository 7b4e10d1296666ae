"""What the rules need of a call and the code around it comes from the summary, read from the
tree once: a dead remainder test (``Condition.dead``) and a loop over a fixed set of items
(``LoopInfo.fixed``), whatever the length of the text the summary keeps. The analyses parse no
source text again (issue 40: "call text is re-parsed in five places"): binding a call reads
the arguments the summary recorded (``CallSite.passed``), LL202's value flow the names they
and a loop's iterable read."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from lintloader.link.fixed_sets import over_fixed_set
from lintloader.summary.model import FileSummary
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast

PACKAGE = Path(__file__).resolve().parents[2] / "lintloader"
# module -> why it still parses text after summarizing (none left)
STILL_PARSED: dict[str, str] = {}
_PARSES = re.compile(r"\bast\.parse\(|(?<![.\w])compile\(|\bast\.unparse\(")


def summarize(source: str) -> FileSummary:
    summary = summarize_source(textwrap.dedent(source).encode(), "example.py", "example")
    assert summary.ok, summary.error
    return summary


def test_a_dead_remainder_test_is_read_from_the_tree_whatever_its_length() -> None:
    long_name = "s" * 130  # the condition's text is cut at the summary's text limit
    summary = summarize(f"""
        from torch.utils.data import DataLoader

        def train(ds, {long_name}, step):
            for _ in range(9):
                if {long_name} % 30 == 220:
                    next(iter(DataLoader(ds, num_workers=2)))
                if step % 30 == 0:
                    next(iter(DataLoader(ds, num_workers=2)))
    """)
    assert summary.loaders is not None
    calls = summary.loaders.functions["train"].iter_calls
    dead = [call.context.conditions[-1] for call in calls]
    assert dead[0].text.endswith("...") and dead[0].dead
    assert not dead[1].dead


def test_a_fixed_set_loop_is_known_from_the_tree_with_a_cut_header() -> None:
    items = ", ".join(f"split_{n}" for n in range(30))
    summary = summarize(f"""
        def build(ds):
            for split in ({items}):
                pass
            for split in splits(ds):
                pass
    """)
    fixed, computed = summary.functions["build"].loops
    assert fixed.header.endswith("...") and over_fixed_set(fixed)
    assert not over_fixed_set(computed)


def test_no_analysis_parses_source_text_but_the_known_places() -> None:
    """The stages after summarizing, and the ground-floor modules they share (``domain/cost.py``
    prices a ``multiprocessing_context`` from the branches the summary recorded)."""
    # with the folders the top-level modules moved to (the glob below reads the rest)
    tops = ("conclude", "domain", "finding", "pipeline", "settings", "text", "trust")
    after = [
        path
        for folder in ("analysis", "link", "rules", "incremental", "select", "report", *tops)
        for path in (PACKAGE / folder).rglob("*.py")
    ]
    parsing = {
        path.relative_to(PACKAGE).as_posix()
        for path in [*after, *PACKAGE.glob("*.py")]
        if _PARSES.search(path.read_text(encoding="utf-8"))
    }
    assert parsing == set(STILL_PARSED)


def test_what_a_call_passes_is_recorded_from_the_tree() -> None:
    summary = summarize("""
        def train(ds, n, rest, options, flag):
            build(ds, max(1, n), *rest, None if flag else ds, key=load(ds.path), **options)
            for step, (x, y) in enumerate(ds.items()):
                self.data.fit(0, [p for p in ds.parts])
    """)
    calls = {c.target[-1]: c for c in summary.functions["train"].calls if not c.is_reference}
    build, fit = calls["build"], calls["fit"]
    assert [(p.keyword, p.star, p.text, p.reads) for p in build.passed] == [
        (None, "", "ds", "ds"),
        (None, "", "max(1, n)", "max n"),
        (None, "*", "rest", "rest"),
        (None, "", "None if flag else ds", "None if flag else ds"),
        ("key", "", "load(ds.path)", "load ds.path"),
        (None, "**", "options", "options"),
    ]
    ds, bounded, _, maybe, loaded, _ = build.passed
    facts = (ds.name, bounded.lower_bound, maybe.none, loaded.called)
    assert facts == (("ds",), 1, True, ("load",))
    assert (build.positional, build.keywords) == (-1, ("key", "**"))
    assert fit.receiver == "self.data" and fit.passed[0].zero
    (loop,) = summary.functions["train"].loops
    assert (loop.binds, loop.reads) == (("step", "x", "y"), "enumerate ds.items")
    assert fit.comprehended == ()  # the comprehension is inside the call, not around it


def test_a_start_method_is_read_from_the_tree_on_each_branch() -> None:
    """A ``multiprocessing_context`` chosen by a condition too long for the text the summary
    keeps is still known on each branch: the cost model reads the branches, not the text."""
    flag = "use_" + "s" * 130
    summary = summarize(f"""
        from torch.utils.data import DataLoader

        def train(ds, {flag}):
            return DataLoader(
                ds, num_workers=2, multiprocessing_context="spawn" if {flag} else None
            )
    """)
    assert summary.loaders is not None
    (call,) = summary.loaders.functions["train"].loader_calls
    context = call.keyword("multiprocessing_context")
    assert context is not None and context.text.endswith("...")
    assert context.methods == (("spawn", flag), (None, f"not {flag}"))
    workers = call.keyword("num_workers")
    assert workers is not None and workers.methods == ()

"""Which calls a stored run's analysis cannot have seen (``incremental/reads.py``), on real
summaries of real source, linked into a real program whose rules ran: a call is set aside
only when no round and no rule could have read it."""

from __future__ import annotations

import pytest

from lintloader.incremental.reads import DemandReads, recorded, unread_view
from lintloader.incremental.recording import RecordingProgram
from lintloader.pipeline.engine import CheckOptions, analyze
from lintloader.scan.model import SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.summary.model import FileSummary
from lintloader.summary.summarize import summarize_source
from lintloader.workers.progress import ParseStats

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

STATE = """
def shutdown(loader):
    loader._iterator = None
"""
FETCH = """
import state
from state import shutdown as halt
from torch.utils.data import DataLoader


class Fetcher:
    def __iter__(self):
        self.reset()
        return self

    def reset(self):
        state.shutdown(self.loader)

    def print(self):
        pass


class Trainer:
    def fit(self, files):
        for epoch in range(3):
            for batch in self.build(files, epoch):
                pass

    def build(self, files, epoch):
        dataset = make_dataset(files, epoch)
        return DataLoader(dataset, num_workers=2)


def unrelated(value):
    return value
"""


def reads_of(sources: dict[str, str]) -> DemandReads:
    """What the analysis of ``sources`` (module name -> code) read, as a stored run keeps it."""
    files = [SourceFile(f"/p/{m}.py", m, False, f"{m}.py") for m in sources]
    data = {f.path: sources[f.module].encode() for f in files}
    options = CheckOptions(sources=data, jobs=1)
    source_set = SourceSet(lambda path, size=-1: data[path], data, None, ["/p"])
    loaded = source_set.load(files, [])
    # a run given `rounds` is one that will be stored: linked as the program that records
    result = analyze(loaded, [], source_set, None, ParseStats(), options, rounds=[])
    assert isinstance(result.program, RecordingProgram)
    return recorded(result.program)


@pytest.fixture(scope="module")
def reads() -> DemandReads:
    return reads_of({"state": STATE, "fetch": FETCH})


def summary(source: str) -> FileSummary:
    return summarize_source(source.encode(), "/p/fetch.py", "fetch")


def calls_left(source: str, reads: DemandReads, qualname: str) -> list[str]:
    view = unread_view(summary(source), reads)
    assert view is not None
    return [".".join(call.target) for call in view.functions[qualname].calls]


def added(statement: str, before: str = "        state.shutdown(self.loader)\n") -> str:
    """``FETCH`` with ``statement`` after the line ``before`` (by default in
    ``Fetcher.reset``)."""
    return FETCH.replace(before, before + statement + "\n")


def test_the_rounds_read_the_calls_of_the_chain(reads: DemandReads) -> None:
    assert {"fetch:Fetcher.__iter__", "fetch:Fetcher.reset"} <= reads.functions
    assert "shutdown" in reads.names and "halt" in reads.names  # a renaming import
    assert ("fetch:Fetcher.__iter__", "reset-like") in reads.kinds  # LL104 reads these
    assert {"print", "Fetcher", "halt", "shutdown"} <= reads.linkable
    assert "print" not in reads.bare and "shutdown" in reads.bare  # a method is no bare name


def test_a_call_that_links_nowhere_is_set_aside(reads: DemandReads) -> None:
    left = calls_left(added("        print(self)"), reads, "Fetcher.reset")
    assert "print" not in left and "state.shutdown" in left


def test_calls_that_could_link_or_were_read_stay(reads: DemandReads) -> None:
    for call in ("self.print()", "halt(self)", "state.shutdown(self)", "Fetcher()"):
        left = calls_left(added(f"        {call}"), reads, "Fetcher.reset")
        assert call.split("(")[0] in left, call


def test_a_reset_like_call_of_a_root_stays(reads: DemandReads) -> None:
    """LL104 reads an ``__iter__``'s reset-like calls as written, linked or not."""
    source = added("        reset_state()", before="        self.reset()\n")
    assert "reset_state" in calls_left(source, reads, "Fetcher.__iter__")
    source = added("        print(self)", before="        self.reset()\n")
    assert "print" not in calls_left(source, reads, "Fetcher.__iter__")


def test_a_call_that_types_a_local_stays_where_the_value_flow_read(reads: DemandReads) -> None:
    """LL202's value flow reads the calls a local is typed by (``analysis/repetition.py``)."""
    assert ("fetch:Trainer.build", "local-builders") in reads.kinds
    before = "        dataset = make_dataset(files, epoch)\n"
    source = added("        make_dataset(epoch)\n        print(epoch)", before=before)
    assert calls_left(source, reads, "Trainer.build").count("make_dataset") == 2
    assert "print" not in calls_left(source, reads, "Trainer.build")


def test_a_kind_lintloader_does_not_know_keeps_every_call(reads: DemandReads) -> None:
    crafted = reads._replace(kinds=reads.kinds | {("fetch:Fetcher.reset", "from-elsewhere")})
    assert "print" in calls_left(added("        print(self)"), crafted, "Fetcher.reset")


def test_a_call_starting_where_another_site_starts_stays(reads: DemandReads) -> None:
    """``analysis/ranges.py`` ends a finding where the widest site at its start ends: the
    reset ``print(self)._iterator = None`` starts where its ``print`` call does."""
    source = added("        print(self)._iterator = None")
    assert "print" in calls_left(source, reads, "Fetcher.reset")


def test_a_looked_up_name_in_a_function_nobody_read_means_analyze(reads: DemandReads) -> None:
    assert "fetch:unrelated" not in reads.functions
    source = FETCH.replace("    return value\n", "    shutdown(value)\n    return value\n")
    assert unread_view(summary(source), reads) is None
    source = FETCH.replace("    return value\n", "    print(value)\n    return value\n")
    assert calls_left(source, reads, "unrelated") == []

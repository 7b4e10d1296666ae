"""The reset rules' seeds take every file that can hold a reset, and not the files that only
name an ``_iterator`` or a ``*Loader`` of their own (issue 45 item 5): the shapes of
``scan/read/shapes.py`` on real snippets, and the seed decision on a real tree."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from lintloader.analysis.reset_demand import ITER_RESET_SEEDS, SINK_SEEDS
from lintloader.pipeline.engine import CheckOptions, read_source, run_check
from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.read.shapes import iter_reset, iterator_reset
from lintloader.scan.read.sources import SourceSet
from lintloader.scan.read.stamps import RACY_NS
from lintloader.select.query import GroupQuery
from lintloader.settings.config import Config
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

# Every one-line spelling of a reset that the summarizer records as a sink.
RESETS = (
    "loader._iterator = None",
    "self.trainer.train_dataloader._iterator=None",
    "loader._iterator, count = None, 0",
    "count, loader._iterator = 0, None",
    "del loader._iterator",
    "del (self.loader._iterator)",
    'setattr(loader, "_iterator", None)',
    "delattr(self.loader, '_iterator')",
)
# A class's own iterator, and what is no reset at all: no sink, and not the shape.
NOT_RESETS = (
    "self._iterator = self._to_iterator(iterable)",
    "self._after = next(self._iterator, missing)",
    "self._iterator: Optional[Iterator[int]] = None",
    'state["_iterator"] = None',
    "if self._iterator == None: pass",
)


def _sinks(line: str) -> int:
    text = f"def f(loader, self, state, count, iterable, missing):\n    {line}\n"
    summary = summarize_source(text.encode(), "m.py", "m")
    assert summary.error is None, summary.error
    return sum(len(function.sinks) for function in summary.functions.values())


@pytest.mark.parametrize("line", RESETS)
def test_every_reset_written_on_a_line_has_the_shape(line: str) -> None:
    assert _sinks(line) == 1
    assert iterator_reset(f"x = 1\n{line}\n".encode())


@pytest.mark.parametrize("line", NOT_RESETS)
def test_an_iterator_of_its_own_is_no_reset_shape(line: str) -> None:
    assert not iterator_reset(f"{line}\n".encode())


ITER_RESETS = (
    """
    class Fetcher:
        def __iter__(self):
            self.state.reset()
            return iter(self.loader)
    """,
    """
    class Fetcher:
        @property
        def size(self):
            return 1

        def __iter__(
            self,
        ) -> Iterator[int]:
            '''Docstring
    at column 0.'''
            self._reset_counters()
            return iter(self.loader)
    """,
)
NO_ITER_RESETS = (
    # the reset is in another method: LL104 never reports it
    """
    class Directory:
        def __iter__(self):
            return iter(self._tags)

        def load(self, data):
            self.reset()
    """,
    """
    class Directory:
        def __iter__(self):
            return iter(self._tags)

        @staticmethod
        def _register(loader):
            loader.reset()
    """,
)


@pytest.mark.parametrize("text", ITER_RESETS)
def test_an_iter_that_resets_has_the_shape(text: str) -> None:
    assert iter_reset(textwrap.dedent(text).encode())


@pytest.mark.parametrize("text", NO_ITER_RESETS)
def test_a_reset_outside_iter_is_not_the_shape(text: str) -> None:
    assert not iter_reset(textwrap.dedent(text).encode())


TREE = {
    # taken: a loader subclass named *Loader whose only reset is `._iterator = None`
    "pkg/fast.py": """
        from torch.utils.data import DataLoader as Base

        class FastLoader(Base):
            def __iter__(self):
                self._iterator = None
                return super().__iter__()
        """,
    # taken: a reset split over lines, a loader in sight
    "pkg/split.py": """
        class Restart:
            def __iter__(self):
                setattr(
                    self.loader, "_iterator", None
                )
                return self
        """,
    # taken: an __iter__ that calls a reset no scanned code defines (LL104)
    "pkg/fetch.py": """
        class Fetcher:
            def __iter__(self):
                self.state.reset()
                return iter(self.loader)
        """,
    # not taken: an iterator of its own, no loader (jinja2's LoopContext, more_itertools)
    "pkg/loop.py": """
        class LoopContext:
            def __init__(self, iterable):
                self._iterator = iter(iterable)
                self._after: object = None

            def __iter__(self):
                return self

            def __next__(self):
                return next(self._iterator)
        """,
    # not taken: an annotated attribute of its own and a pickled state (Lightning's sampler);
    # its __iter__'s reset is not LL104's business either: the file never mentions a loader
    # (before, the `._iterator` seed took it and LL104 reported that reset)
    "pkg/sampler.py": """
        class Sampler:
            def __init__(self, batches):
                self._iterator: object = None
                self.batches = batches

            def __iter__(self):
                self.batches.reset()
                self._iterator = iter(self.batches)
                return self

            def __getstate__(self):
                state = dict(self.__dict__)
                state["_iterator"] = None
                return state
        """,
    # not taken: a TestLoader and an __iter__, its reset elsewhere (torch's common_utils)
    "pkg/testing.py": """
        import unittest

        class Cases:
            def __iter__(self):
                return iter(unittest.TestLoader().getTestCaseNames(Cases))

            def setUp(self):
                self.dynamo.reset()
        """,
}


def _tree(root: Path) -> None:
    for name, text in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))


def test_the_seeds_take_the_resets_and_leave_the_iterators_of_their_own(tmp_path: Path) -> None:
    _tree(tmp_path)
    result = run_check(discover_paths([str(tmp_path)], ()), CheckOptions(config=Config(), jobs=1))
    parsed = {Path(path).relative_to(tmp_path).as_posix() for path in result.summaries}
    assert parsed == {"pkg/fast.py", "pkg/split.py", "pkg/fetch.py"}
    found = {(f.code, Path(f.path).name) for f in result.findings}
    assert {("LL101", "fast.py"), ("LL101", "split.py"), ("LL104", "fetch.py")} == found


def test_shape_answers_are_remembered_in_the_stat_index(tmp_path: Path) -> None:
    _tree(tmp_path)
    old = time.time_ns() - 10 * RACY_NS
    for path in (tmp_path / "pkg").iterdir():
        os.utime(path, ns=(old, old))
    time.sleep(RACY_NS / 1e9 + 0.2)
    discovery = discover_paths([str(tmp_path)], ())
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    query = GroupQuery.build([*SINK_SEEDS, *ITER_RESET_SEEDS])
    first = SourceSet(read_source, cache_dir=cache, roots=discovery.roots)
    files = first.load(discovery.files, [])
    taken = sorted(Path(f.path).name for f in files if query.matches(first, f))
    assert taken == ["fast.py", "fetch.py", "split.py"]
    first.save()
    second = SourceSet(read_source, cache_dir=cache, roots=discovery.roots)
    again = second.load(discovery.files, [])
    assert sorted(Path(f.path).name for f in again if query.matches(second, f)) == taken
    assert second.read_count == 0  # the shapes' answers came from the index too

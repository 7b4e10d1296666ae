"""The bucketed token search that demand selection uses answers exactly as the plain definition
("the file contains every token of some group"), and its answers survive in the stat index."""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

from conftest import FIXTURES

from lintloader.demand import GroupQuery
from lintloader.discover import discover_paths
from lintloader.engine import read_source
from lintloader.sources import SourceSet
from lintloader.statindex import RACY_NS

TOKENS = (b"._iterator", b"reset", b"__iter__", b"teardown", b"DataLoader", b"self", b"nothing!")


def plain(data: bytes, groups: list[tuple[bytes, ...]]) -> bool:
    return any(all(token in data for token in group) for group in groups)


def all_groups() -> list[list[tuple[bytes, ...]]]:
    singles = [(t,) for t in TOKENS]
    pairs = list(itertools.combinations(TOKENS, 2))
    return [singles[:2], pairs, pairs[::3] + singles[-1:], [(b"nothing!",)], [], singles + pairs]


def test_group_query_agrees_with_the_definition_on_real_files() -> None:
    discovery = discover_paths([str(FIXTURES / "check")], ())
    sources = SourceSet(read_source)
    files = sources.load(discovery.files, [])
    assert len(files) > 10
    for groups in all_groups():
        query = GroupQuery.build(groups)
        for file in files:
            expected = plain(read_source(file.path) or b"", groups)
            assert query.matches(sources, file.path) == expected, (groups, file.path)


def test_token_answers_are_remembered_across_runs(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "a.py").write_text("class A:\n    def reset(self):\n        self._iterator = None\n")
    (root / "b.py").write_text("x = 1\n")
    old = time.time_ns() - 10 * RACY_NS
    for path in root.iterdir():  # mtime far in the past; ctime is "now", so wait it out
        os.utime(path, ns=(old, old))
    time.sleep(RACY_NS / 1e9 + 0.2)
    discovery = discover_paths([str(root)], ())
    cache = tmp_path / "cache"
    first = SourceSet(read_source, cache_dir=cache, roots=discovery.roots)
    files = first.load(discovery.files, [])
    query = GroupQuery.build([(b"reset", b"._iterator")])
    assert [f.path.endswith("a.py") for f in files if query.matches(first, f.path)] == [True]
    first.save()
    second = SourceSet(read_source, cache_dir=cache, roots=discovery.roots)
    again = second.load(discovery.files, [])
    assert [f.path.endswith("a.py") for f in again if query.matches(second, f.path)] == [True]
    assert second.read_count == 0  # every answer came from the index
    unknown = GroupQuery.build([(b"teardown",)])
    assert not any(unknown.matches(second, f.path) for f in again)
    assert second.read_count == len(again)  # a new token needs the bytes

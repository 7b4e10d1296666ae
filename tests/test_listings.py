"""Remembered directory listings (``listings.py``): a warm site walk that stats directories
instead of listing them finds exactly what a fresh walk finds, and notices every change."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from test_fast_paths import odd_site, reference_site_files

from lintloader.cache.statindex import RACY_NS
from lintloader.scan import site_packages
from lintloader.scan.model import Discovery
from lintloader.scan.site_packages import discover_site_packages


def age(root: Path) -> None:
    """Make every directory under ``root`` older than the racy window (mtime in the past)."""
    old = time.time_ns() - 10 * RACY_NS
    for folder, _, _ in os.walk(root):
        os.utime(folder, ns=(old, old))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = odd_site(tmp_path)
    answer = {"sites": [str(site)], "dists": {}, "names": [], "broken": []}
    monkeypatch.setattr(site_packages, "query_interpreter", lambda python, dists, cache: answer)
    age(site)
    return site


def walk(site: Path, cache: Path) -> Discovery:
    return discover_site_packages(None, [], (), cwd=str(site), cache_dir=cache)


def stored_listings(cache: Path) -> dict:
    from lintloader.cache.files import read_pickle

    (entry,) = cache.glob("listings-*/*.pickle")
    return read_pickle(entry)[1]


def test_a_warm_walk_finds_what_a_fresh_walk_finds(site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold, warm = walk(site, cache), walk(site, cache)
    files, problems = reference_site_files(str(site), (), str(site))
    for found in (cold, warm):
        assert found.files == files
        assert found.problems == problems  # broken links reported on every run
    remembered = stored_listings(cache)
    assert str(site / "pkg" / "sub") in remembered
    assert str(site) not in remembered  # it holds links: listed on every run


def test_added_removed_and_renamed_files_are_noticed(site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    walk(site, cache)
    sub = site / "pkg" / "sub"
    assert str(sub) in stored_listings(cache)
    (sub / "new.py").write_text("z = 3\n")
    (sub / "x.py").rename(sub / "renamed.py")
    names = {Path(f.path).name for f in walk(site, cache).files if Path(f.path).parent == sub}
    assert names == {"new.py", "renamed.py"}
    assert str(sub) not in stored_listings(cache)  # just modified: racy, not remembered
    age(site)
    walk(site, cache)
    assert str(sub) in stored_listings(cache)
    again = {Path(f.path).name for f in walk(site, cache).files if Path(f.path).parent == sub}
    assert again == names


def test_a_new_link_in_a_remembered_directory_is_seen(site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    walk(site, cache)
    sub = site / "pkg" / "sub"
    (sub / "gone.py").symlink_to(sub / "missing.py")
    found = walk(site, cache)
    assert [p.display for p in found.problems if "gone.py" in p.display] == [str(sub / "gone.py")]
    age(site)
    walk(site, cache)
    assert str(sub) not in stored_listings(cache)  # holds a link now: never remembered

"""Remembered directory listings (``listings.py``): a warm site walk that stats directories
instead of listing them finds exactly what a fresh walk finds, and notices every change."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from child_processes import run_once
from harness import environment, lintloader_command
from test_fast_paths import odd_site, reference_site_files

from lintloader.cache.files import read_entry, write_entry
from lintloader.cli import fast_record
from lintloader.pipeline.engine import CheckOptions, run_check
from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.discover.walk.listings import KIND as LISTINGS_KIND
from lintloader.scan.discover.walk.listings import StoredListing
from lintloader.scan.discover.walk.tree_memo import KIND as MEMO_KIND
from lintloader.scan.discover.walk.tree_memo import MemoDirectory, TreeMemo
from lintloader.scan.discover.walk.tree_memo import Stored as MemoStored
from lintloader.scan.environment import site_packages
from lintloader.scan.environment.site_packages import discover_site_packages
from lintloader.scan.model import Discovery
from lintloader.scan.read.stamps import RACY_NS, stamp_of


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


LISTINGS = tuple[str, dict[str, StoredListing]]


def stored_listings(cache: Path) -> dict:
    (entry,) = cache.glob("listings-*/*.listing")
    return read_entry(cache, entry, LISTINGS_KIND, LISTINGS)[1]


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


def test_a_walk_stamps_every_directory_the_warm_answer_depends_on(
    site: Path, tmp_path: Path
) -> None:
    """The warm fast path stores the stamps the walk took (``Discovery.directories``) instead
    of listing the site again: they are those of every directory below it but the ones no
    file is scanned from (``__pycache__``, links to directories, excluded names), taken
    before each was listed, on a cold walk and on one that takes remembered listings."""
    cache = tmp_path / "cache"
    every = set(fast_record._tree(str(site), files=False))
    assert {str(site / "pkg" / "sub"), str(site / "skipme"), str(site / "d.py")} <= every
    for _ in ("cold", "warm"):
        found = walk(site, cache)
        assert set(found.directories) == every
        assert all(found.directories[path] == stamp_of(os.stat(path)) for path in every)
    excluded = discover_site_packages(None, [], ("skip*",), cwd=str(site), cache_dir=cache)
    assert set(excluded.directories) == every - {str(site / "skipme")}
    before = found.directories[str(site / "pkg")]
    (site / "pkg" / "new.py").write_text("z = 3\n")  # after the walk's stat: its stamp stays
    assert found.directories[str(site / "pkg")] == before != stamp_of(os.stat(site / "pkg"))
    assert walk(site, cache).directories[str(site / "pkg")] != before


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


# -- source trees ------------------------------------------------------------------------------
def git(root: Path, *args: str) -> None:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
    subprocess.run(command, cwd=root, check=True, capture_output=True)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A git project with what a tree walk must get right: packages, a notebook, excluded and
    ignored folders, tracked and untracked files, links to a file, to a folder and to nothing."""
    root = tmp_path / "tree"
    for name in ("pkg/__init__.py", "pkg/a.py", "pkg/sub/b.py", "build/x.py", "ignored/skip.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("X = 1\n")
    (root / "nb.ipynb").write_text("{}")
    (root / "data.txt").write_text("not python\n")
    (root / ".gitignore").write_text("ignored/\n*_ignored.py\n")
    (root / "pkg" / "link.py").symlink_to(root / "pkg" / "a.py")
    (root / "pkg" / "gone.py").symlink_to(root / "pkg" / "missing.py")
    (root / "build" / "gone.py").symlink_to(root / "build" / "missing.py")
    (root / "pkg" / "dirlink").symlink_to(root / "pkg" / "sub")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "x")
    (root / "pkg" / "sub" / "untracked.py").write_text("Y = 2\n")
    (root / "pkg" / "sub" / "also_ignored.py").write_text("Z = 3\n")
    age(root)
    return root


def walk_tree(root: Path, cache: Path | None, path: Path | None = None) -> Discovery:
    return discover_paths([str(path or root)], (), cwd=str(root), cache_dir=cache)


def assert_walks_agree(root: Path, cache: Path, path: Path | None = None) -> Discovery:
    fresh = walk_tree(root, None, path)
    for _ in range(2):  # the first may list and remember, the second reuses
        remembered = walk_tree(root, cache, path)
        assert remembered.files == fresh.files
        assert remembered.problems == fresh.problems
    return fresh


def stored_memo(cache: Path) -> tuple[Path, str, TreeMemo]:
    """The one entry a tree's walk remembers (scan/discover/walk/tree_memo.py): path, scope,
    memo."""
    (entry,) = cache.glob("listings-*/*.walk")
    scope, memo = read_entry(cache, entry, MEMO_KIND, MemoStored)
    return entry, scope, memo


def write_memo(cache: Path, entry: Path, scope: str, memo: TreeMemo) -> None:
    write_entry(cache, entry, MEMO_KIND, MemoStored, (scope, memo))


def tree_listings(cache: Path) -> dict[str, MemoDirectory]:
    """The directories whose listing the tree's memo holds."""
    return {directory.path: directory for directory in stored_memo(cache)[2].directories}


def replaced(memo: TreeMemo, path: str, **fields: object) -> TreeMemo:
    """``memo`` with fields of its directory ``path`` replaced."""
    directories = tuple(d._replace(**fields) if d.path == path else d for d in memo.directories)
    return memo._replace(directories=directories)


def test_a_warm_tree_walk_finds_what_a_fresh_walk_finds(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    found = assert_walks_agree(tree, cache)
    names = sorted(f.display for f in found.files)
    assert names == [
        "nb.ipynb",
        "pkg/__init__.py",
        "pkg/a.py",
        "pkg/link.py",
        "pkg/sub/b.py",
        "pkg/sub/untracked.py",
    ]
    assert [p.display for p in found.problems] == ["pkg/gone.py"]  # not the excluded one
    remembered = tree_listings(cache)
    assert str(tree / "pkg" / "sub") in remembered
    assert str(tree / "pkg") not in remembered  # it holds links: listed on every run
    sub = assert_walks_agree(tree, cache, tree / "pkg" / "sub")  # git asked from below
    assert sorted(f.display for f in sub.files) == ["pkg/sub/b.py", "pkg/sub/untracked.py"]


def test_tree_changes_and_ignore_rules_are_noticed(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert_walks_agree(tree, cache)
    sub = tree / "pkg" / "sub"
    (sub / "new.py").write_text("N = 1\n")
    (sub / "b.py").rename(sub / "renamed.py")
    (tree / "ignored" / "more.py").write_text("M = 1\n")
    found = assert_walks_agree(tree, cache)
    assert {"pkg/sub/new.py", "pkg/sub/renamed.py"} <= {f.display for f in found.files}
    age(tree)
    assert_walks_agree(tree, cache)
    (tree / ".gitignore").write_text("ignored/\n*_ignored.py\nnew.py\n")  # no folder changes
    found = assert_walks_agree(tree, cache)
    assert "pkg/sub/new.py" not in {f.display for f in found.files}


def test_a_crafted_tree_listing_adds_no_file(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert_walks_agree(tree, cache)
    entry, scope, memo = stored_memo(cache)
    sub = str(tree / "pkg" / "sub")
    outside = tmp_path / "outside.py"
    outside.write_text("SECRET = 1\n")
    for files in ((str(outside),), ("../outside.py",), ("..",)):
        write_memo(cache, entry, scope, replaced(memo, sub, files=files))
        found = assert_walks_agree(tree, cache)
        assert "outside" not in " ".join(f.path for f in found.files)


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0,
    reason="runs as root (or not on POSIX): chmod 000 does not stop root from reading",
)
def test_an_unreadable_tree_directory_is_not_remembered_as_empty(
    tree: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    sub = tree / "pkg" / "sub"
    sub.chmod(0)
    try:
        found = assert_walks_agree(tree, cache)
        assert not [f for f in found.files if f.display.startswith("pkg/sub/")]
    finally:
        sub.chmod(0o755)  # readable again, its mtime unchanged: it must be listed now
    found = assert_walks_agree(tree, cache)
    assert "pkg/sub/b.py" in {f.display for f in found.files}


# -- what a walk made of each directory (scan/discover/walk/named_files.py) ----------------
def named_entries(cache: Path) -> tuple[Path, str, TreeMemo, dict[str, MemoDirectory]]:
    """The tree's memo, and its directories that have their files remembered."""
    entry, scope, memo = stored_memo(cache)
    known = {d.path: d for d in memo.directories if d.named is not None}
    return entry, scope, memo, known


def tracked_dir(tree: Path) -> Path:
    """A directory of the tree whose every file git tracks: ``lib/inner``."""
    inner = tree / "lib" / "inner"
    inner.mkdir(parents=True)
    (inner / "m.py").write_text("M = 1\n")
    (inner / "n.py").write_text("N = 1\n")
    git(tree, "add", "lib")
    git(tree, "commit", "-qm", "lib")
    age(tree)
    return inner


def test_a_warm_walk_names_remembered_directories_from_the_cache(
    tree: Path, tmp_path: Path
) -> None:
    inner, cache = tracked_dir(tree), tmp_path / "cache"
    assert_walks_agree(tree, cache)
    entry, scope, memo, known = named_entries(cache)
    assert str(inner) in known
    assert str(tree / "pkg") not in known  # links: worked out on every run
    # a file git does not track: whether git ignores it is not in the key
    assert str(tree / "pkg" / "sub") not in known
    # what is stored is what the next walk serves: a renamed module shows it was used
    first = (known[str(inner)].named or ())[0]
    stored = (first._replace(module="stored.name"),)
    write_memo(cache, entry, scope, replaced(memo, str(inner), named=stored))
    served = {f.path: f.module for f in walk_tree(tree, cache).files}
    assert served[str(inner / "m.py")] == "stored.name"


def test_what_keeps_a_remembered_directory_is_noticed(tree: Path, tmp_path: Path) -> None:
    """The excludes, and which files git tracks, with no directory of the walk changed."""
    inner, cache = tracked_dir(tree), tmp_path / "cache"
    assert_walks_agree(tree, cache)
    assert str(inner) in named_entries(cache)[3]
    excluded = discover_paths([str(tree)], ("m.py",), cwd=str(tree), cache_dir=cache)
    assert str(inner / "m.py") not in {f.path for f in excluded.files}
    assert str(inner / "m.py") in {f.path for f in assert_walks_agree(tree, cache).files}
    git(tree, "rm", "-q", "--cached", "lib/inner/m.py")  # the index changes, no directory
    (tree / ".gitignore").write_text("ignored/\n*_ignored.py\nm.py\n")  # edited in place
    assert str(inner / "m.py") not in {f.path for f in assert_walks_agree(tree, cache).files}


def test_a_package_made_above_a_directory_renames_its_modules(tmp_path: Path) -> None:
    """Its own listing did not change, the package path above it did: inside the walk (a
    parent directory gains ``__init__.py``) or above the walk's root."""
    outer = tmp_path / "outer"
    root = outer / "proj"
    (root / "pkg" / "deep").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "pkg" / "deep" / "__init__.py").write_text("")
    (root / "pkg" / "deep" / "mod.py").write_text("X = 1\n")
    age(outer)
    cache = tmp_path / "cache"

    def module() -> str:
        found = assert_walks_agree(root, cache)
        return {f.display: f.module for f in found.files}["pkg/deep/mod.py"]

    assert module() == "deep.mod"
    (root / "pkg" / "__init__.py").write_text("")
    assert module() == "proj.pkg.deep.mod"
    age(outer)
    assert module() == "proj.pkg.deep.mod"
    (outer / "__init__.py").write_text("")  # outside the walk: no listing of it changes
    assert module() == "outer.proj.pkg.deep.mod"


@pytest.mark.parametrize(
    "crafted",
    [
        "a file of another directory",
        "a file the listing does not hold",
        "a display that forges output",
        "a module that is not a string",
        "not an entry",
    ],
)
def test_a_crafted_named_entry_is_ignored(tree: Path, tmp_path: Path, crafted: str) -> None:
    inner, cache = tracked_dir(tree), tmp_path / "cache"
    fresh = assert_walks_agree(tree, cache)
    entry, scope, memo, known = named_entries(cache)
    first = (known[str(inner)].named or ())[0]
    (tmp_path / "secret.py").write_text("SECRET = 1\n")
    entries: dict[str, object] = {
        "a file of another directory": first._replace(path=str(tmp_path / "secret.py")),
        "a file the listing does not hold": first._replace(path=str(inner / "secret.py")),
        "a display that forges output": first._replace(display="lib/inner/m.py\n\x1b[2J"),
        "a module that is not a string": first._replace(module=None),
        "not an entry": "not an entry",
    }
    write_memo(cache, entry, scope, replaced(memo, str(inner), named=(entries[crafted],)))
    assert walk_tree(tree, cache).files == fresh.files


def test_git_is_waited_for_only_when_a_walked_file_is_untracked(tree: Path, tmp_path: Path) -> None:
    """Every file tracked: the slow answer (untracked files, ignore rules) is never read, and
    the walk agrees with one that reads it."""
    from lintloader.scan.discover.git_files import GitFiles

    inner = tracked_dir(tree)
    with GitFiles(str(inner)) as git_files:
        answer = git_files.result()
        assert answer is not None
        assert answer.keeps(str(inner / "m.py")) and answer.keeps(str(inner / "n.py"))
        assert answer.untracked_read is False
    sub = tree / "pkg" / "sub"
    with GitFiles(str(sub)) as git_files:
        answer = git_files.result()
        assert answer is not None
        assert answer.keeps(str(sub / "untracked.py")) and answer.untracked_read
        assert not answer.keeps(str(sub / "also_ignored.py"))


# -- a whole walk remembered (scan/discover/walk/tree_memo.py) ------------------------------
@pytest.fixture
def plain_tree(tmp_path: Path) -> Path:
    """A git project without links, every file tracked: a walk of it is remembered whole."""
    root = tmp_path / "plain"
    for name in ("pkg/__init__.py", "pkg/a.py", "pkg/sub/__init__.py", "pkg/sub/b.py", "top.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("X = 1\n")
    (root / ".gitignore").write_text("*_ignored.py\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "x")
    age(root)
    return root


def with_module(memo: TreeMemo, marked: dict[str, str]) -> TreeMemo:
    """``memo`` with the module of each file whose display ``marked`` names replaced."""
    directories = []
    for directory in memo.directories:
        named = tuple(
            f._replace(module=marked.get(f.display, f.module)) for f in directory.named or ()
        )
        directories.append(directory._replace(named=named))
    return memo._replace(directories=tuple(directories))


def test_a_warm_walk_of_an_unchanged_tree_is_the_remembered_one(
    plain_tree: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    assert_walks_agree(plain_tree, cache)
    entry, scope, memo = stored_memo(cache)
    assert memo.whole
    assert [d.path for d in memo.directories] == [
        str(plain_tree),
        str(plain_tree / "pkg"),
        str(plain_tree / "pkg" / "sub"),
    ]
    # what is stored is what the next walk serves: a renamed module shows it was used
    write_memo(cache, entry, scope, with_module(memo, {"top.py": "stored.name"}))
    assert walk_tree(plain_tree, cache).files[0].module == "stored.name"


def test_a_checks_discovery_leaves_its_memo_for_the_check_to_write(
    plain_tree: Path, tmp_path: Path
) -> None:
    """The check's discovery (``defer_stores``) writes nothing; ``run_check`` writes what it
    left (its resident child, or at the end of the run this process: ``cache/pending.py``),
    and the next walk takes it whole."""
    cache = tmp_path / "cache"
    found = discover_paths([str(plain_tree)], (), cache_dir=cache, defer_stores=True)
    assert len(found.stores.writes) == 1 and not list(cache.glob("listings-*/*.walk"))
    run_check(found, CheckOptions(cache_dir=cache, jobs=1))
    assert not found.stores.writes
    _, _, memo = stored_memo(cache)
    assert memo.whole
    again = discover_paths([str(plain_tree)], (), cache_dir=cache, defer_stores=True)
    assert again.files == found.files and not again.stores.writes  # the memo, unchanged


def test_what_a_remembered_walk_depends_on_is_noticed(plain_tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"

    def displays() -> set[str]:
        return {f.display for f in assert_walks_agree(plain_tree, cache).files}

    assert "pkg/sub/b.py" in displays()
    (plain_tree / "pkg" / "sub" / "new.py").write_text("N = 1\n")  # a directory changes
    git(plain_tree, "add", "-A")
    assert "pkg/sub/new.py" in displays()
    age(plain_tree)
    assert "pkg/sub/new.py" in displays()
    git(plain_tree, "rm", "-q", "--cached", "top.py")  # git's index, no directory
    (plain_tree / ".gitignore").write_text("*_ignored.py\ntop.py\n")
    assert "top.py" not in displays()
    excluded = discover_paths([str(plain_tree)], ("sub",), cwd=str(plain_tree), cache_dir=cache)
    assert "pkg/sub/b.py" not in {f.display for f in excluded.files}
    assert "pkg/sub/b.py" in displays()


def test_an_untracked_file_keeps_a_walk_from_being_remembered(
    plain_tree: Path, tmp_path: Path
) -> None:
    """Whether git ignores an untracked file is asked on every walk, not remembered."""
    cache = tmp_path / "cache"
    (plain_tree / "pkg" / "scratch.py").write_text("S = 1\n")
    age(plain_tree)
    assert "pkg/scratch.py" in {f.display for f in assert_walks_agree(plain_tree, cache).files}
    assert not stored_memo(cache)[2].whole
    (plain_tree / ".gitignore").write_text("*_ignored.py\nscratch.py\n")  # edited in place
    assert "pkg/scratch.py" not in {f.display for f in assert_walks_agree(plain_tree, cache).files}


def test_a_package_made_above_the_root_renames_a_remembered_walk(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    root = outer / "proj"
    (root / "pkg").mkdir(parents=True)
    for name in ("__init__.py", "pkg/__init__.py", "pkg/mod.py"):
        (root / name).write_text("")
    age(outer)
    cache = tmp_path / "cache"
    assert_walks_agree(root, cache)
    assert stored_memo(cache)[2].whole  # not a git tree: remembered too
    (outer / "__init__.py").write_text("")
    modules = {f.display: f.module for f in assert_walks_agree(root, cache).files}
    assert modules["pkg/mod.py"] == "outer.proj.pkg.mod"


@pytest.mark.parametrize(
    "craft",
    [
        "a directory outside the root",
        "a file outside its directories",
        "a display that forges output",
        "a module that is not a string",
        "a directory with '..'",
        "a directory twice",
    ],
)
def test_a_crafted_snapshot_is_walked_again(plain_tree: Path, tmp_path: Path, craft: str) -> None:
    cache = tmp_path / "cache"
    fresh = assert_walks_agree(plain_tree, cache)
    entry, scope, memo = stored_memo(cache)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET = 1\n")
    root, last = memo.directories[0], memo.directories[-1]
    first, *rest = root.named or ()
    directories = memo.directories
    if craft == "a directory outside the root":
        mtime = outside.stat().st_mtime_ns
        secret = first._replace(path=str(outside / "secret.py"), display="secret.py")
        stranger = last._replace(path=str(outside), mtime_ns=mtime, files=("secret.py",))
        directories = (*directories, stranger._replace(subdirs=(), named=(secret,)))
    elif craft == "a file outside its directories":
        named = (first._replace(path=str(outside / "secret.py")), *rest)
        directories = (root._replace(named=named), *directories[1:])
    elif craft == "a display that forges output":
        named = (first._replace(display="top.py\n\x1b[2J"), *rest)
        directories = (root._replace(named=named), *directories[1:])
    elif craft == "a module that is not a string":
        named = (first._replace(module=None), *rest)
        directories = (root._replace(named=named), *directories[1:])
    elif craft == "a directory twice":  # well-formed, but its files are found once
        directories = (*directories, last)
    else:
        dotted = f"{plain_tree}/pkg/../pkg"
        mtime = os.stat(dotted).st_mtime_ns
        directories = (*directories, last._replace(path=dotted, mtime_ns=mtime, named=()))
    write_memo(cache, entry, scope, memo._replace(directories=directories))
    assert walk_tree(plain_tree, cache).files == fresh.files


def rewrite(path: Path, text: str) -> None:
    """As an editor that saves by renaming, or git: the directory's mtime changes."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def test_a_changed_directory_is_patched_into_a_remembered_walk(
    plain_tree: Path, tmp_path: Path
) -> None:
    """A file saved by renaming (its directory's mtime changes, git's list of files does
    not): that directory is listed again, the others come from the snapshot."""
    cache = tmp_path / "cache"
    assert_walks_agree(plain_tree, cache)
    entry, scope, memo = stored_memo(cache)
    # mark a file in each of two directories: which marks stay shows where each came from
    marked = {"top.py": "stored.top", "pkg/sub/b.py": "stored.pkg.sub.b"}
    write_memo(cache, entry, scope, with_module(memo, marked))
    rewrite(plain_tree / "pkg" / "sub" / "b.py", "X = 2\n")
    walked = {f.display: f.module for f in walk_tree(plain_tree, cache).files}
    assert walked["top.py"] == "stored.top"  # the unchanged root: from the snapshot
    assert walked["pkg/sub/b.py"] == "pkg.sub.b"  # the changed directory: listed again
    assert sorted(walked) == sorted(f.display for f in walk_tree(plain_tree, None).files)


@pytest.mark.parametrize("change", ["a new subdirectory", "a package no more", "a link"])
def test_a_directory_that_changed_shape_makes_a_walk(
    plain_tree: Path, tmp_path: Path, change: str
) -> None:
    """Other subdirectories or another package path: the names below it may change too."""
    cache = tmp_path / "cache"
    assert_walks_agree(plain_tree, cache)
    age(plain_tree)
    assert_walks_agree(plain_tree, cache)
    if change == "a new subdirectory":
        (plain_tree / "pkg" / "more").mkdir()
        (plain_tree / "pkg" / "more" / "m.py").write_text("M = 1\n")
    elif change == "a package no more":
        (plain_tree / "pkg" / "__init__.py").unlink()  # pkg/sub, unchanged, is renamed
    else:
        (plain_tree / "pkg" / "gone.py").symlink_to(plain_tree / "pkg" / "missing.py")
    # nothing staged: git's list of tracked files, part of the key, is as it was
    found = assert_walks_agree(plain_tree, cache)
    modules = {f.display: f.module for f in found.files}
    if change == "a new subdirectory":
        assert modules["pkg/more/m.py"] == "m"
    elif change == "a package no more":
        assert modules["pkg/sub/b.py"] == "sub.b"
    else:
        assert [p.display for p in found.problems] == ["pkg/gone.py"]


# -- one memo for every working directory ------------------------------------------------------
def test_a_walk_from_another_folder_takes_the_remembered_walk(
    plain_tree: Path, tmp_path: Path
) -> None:
    """The memo holds display paths relative to the folder its walk ran in; a walk run in
    another folder takes it (no new walk) with its own display paths."""
    cache = tmp_path / "cache"
    assert_walks_agree(plain_tree, cache)
    entry, scope, memo = stored_memo(cache)
    write_memo(cache, entry, scope, with_module(memo, {"top.py": "stored.name"}))
    elsewhere = discover_paths([str(plain_tree)], (), cwd=str(tmp_path), cache_dir=cache)
    fresh = discover_paths([str(plain_tree)], (), cwd=str(tmp_path), cache_dir=None)
    assert [f.display for f in elsewhere.files] == [f.display for f in fresh.files]
    assert "plain/pkg/sub/b.py" in {f.display for f in elsewhere.files}
    modules = {f.display: f.module for f in elsewhere.files}
    assert modules["plain/top.py"] == "stored.name"  # the remembered walk, not a new one
    outside = discover_paths([str(plain_tree)], (), cwd=str(plain_tree / "pkg"), cache_dir=cache)
    assert str(plain_tree / "top.py") in {f.display for f in outside.files}


# strace -y: the folder a relative path is opened in follows its descriptor, in <...>
_OPENED_DIRECTORY = re.compile(r'openat\((?:AT_FDCWD|\d+)<([^>]*)>, "([^"]*)", [^)]*O_DIRECTORY')


def directories_listed(root: Path, cwd: Path, cache: Path) -> set[str]:
    """The directories of ``root`` (outside ``.git``) that ``lintloader check ROOT``, run in
    ``cwd``, or a process it starts (git) opens to list, as strace sees them; ``git ls-files
    --others`` (which walks the tree: started only when the walk meets an untracked file) as
    ``"git --others"``."""
    log = cache.parent / f"strace-{time.monotonic_ns()}.log"  # not in the tree: it would change
    command = ["strace", "-f", "-qq", "-y", "-e", "trace=openat,execve", "-o", str(log)]
    command += [*lintloader_command(), "check", "--output-format", "json", str(root)]
    env = environment({"LINTLOADER_CACHE_DIR": str(cache)})
    done = run_once(command, cwd=str(cwd), env=env, timeout=600, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    listed = set()
    for line in log.read_text(encoding="utf-8").splitlines():
        if "execve(" in line and '"--others"' in line:
            listed.add("git --others")
        found = _OPENED_DIRECTORY.search(line)
        if found is None:
            continue
        folder, path = found.groups()
        absolute = os.path.normpath(os.path.join(folder, path))  # path: absolute, or in folder
        if absolute.startswith(str(root)) and ".git" not in Path(absolute).parts:
            listed.add(os.path.relpath(absolute, root))
    return listed


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_a_second_process_lists_no_unchanged_directory(plain_tree: Path, tmp_path: Path) -> None:
    """Two real processes one after the other, the second run from another folder (a server
    started in the project, then ``check`` from elsewhere): it lists no directory of the tree
    (neither itself nor git), all of them unchanged since the first listed them."""
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    elsewhere.mkdir()
    everything = {".", "pkg", os.path.join("pkg", "sub")}
    # what strace sees: the first process lists every directory (no memo yet); git walks
    # none of them (every file is tracked: its untracked files are not asked for)
    assert directories_listed(plain_tree, plain_tree, cache) == everything
    assert directories_listed(plain_tree, elsewhere, cache) == set()
    assert directories_listed(plain_tree, plain_tree, cache) == set()
    (plain_tree / "pkg" / "sub" / "c.py").write_text("C = 1\n")  # a directory changes
    git(plain_tree, "add", "-A")
    assert os.path.join("pkg", "sub") in directories_listed(plain_tree, elsewhere, cache)


def test_a_run_from_each_folder_replays_its_own_stored_run(
    plain_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stored run's findings name files relative to the working directory: runs from two
    folders keep one each, and neither replaces the other's (a server started in the project,
    ``check`` run elsewhere)."""
    from lintloader.integrations.lsp.analysis import Settings, analyze

    (plain_tree / "pkg" / "a.py").write_text(
        "class Fetcher:\n    def __iter__(self):\n"
        "        self.loader._iterator = None\n        return iter(self.loader)\n"
    )
    git(plain_tree, "add", "-A")
    settings, elsewhere = Settings(cache_dir=tmp_path / "cache"), tmp_path / "elsewhere"
    elsewhere.mkdir()

    def routes(folder: Path) -> list[str]:
        monkeypatch.chdir(folder)
        return [analyze(str(plain_tree), {}, settings).result.route for _ in range(2)]

    assert routes(plain_tree) == ["analyzed", "replayed"]
    assert routes(elsewhere) == ["analyzed", "replayed"]
    assert routes(plain_tree) == ["replayed", "replayed"]
    monkeypatch.chdir(plain_tree)
    found = analyze(str(plain_tree), {}, settings).result.findings
    assert [(f.path, f.code) for f in found] == [("pkg/a.py", "LL101")]  # its own displays

"""The shortcuts that keep a run over a whole site-packages cheap give the same answers as the
plain definitions: the directory walk (``os.scandir``, names built by slicing) finds what
``os.walk`` finds, the in-process interpreter query answers as the subprocess does (and another
interpreter's answer is remembered only while it cannot have changed), a token whose
prerequisite is absent is never searched for, a whole word is found as the regular expression
finds it, and a replayed run imports no analysis code."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

from lintloader.pipeline.engine import read_source
from lintloader.scan.discover.directories import link_problem
from lintloader.scan.discover.display import display_path
from lintloader.scan.discover.excludes import DEFAULT_EXCLUDES, is_excluded
from lintloader.scan.discover.module_names import (
    distinct_scripts,
    module_name_for,
    module_name_in_site,
)
from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.environment import interpreter, site_packages
from lintloader.scan.environment.interpreter import query_interpreter
from lintloader.scan.environment.site_packages import discover_site_packages
from lintloader.scan.model import FileProblem, SourceFile
from lintloader.scan.read import sources
from lintloader.scan.read.code_view import code_view
from lintloader.scan.read.sources import SourceSet
from lintloader.scan.read.tokens import package_scope, whole_word, whole_word_in
from lintloader.select.query import GroupQuery

PIPELINES = ("FillMask", "TextGeneration", "AudioClassification")
SEED_TOKENS = (
    b'"_iterator"',
    b"._iterator",
    b"DataLoader",
    b"DataLoader(",
    b"= DataLoader",
    b"oader",
    b"reload_dataloaders_every_n_epochs",
    b"_shutdown_workers",
    b"\bDataLoader",
    b"def __iter__",
)


ODD_FILES = (  # with the links, FIFO and folders that odd_site adds
    *("pkg/__init__.py", "pkg/mod.py", "pkg/sub/x.py", "pkg/__pycache__/c.py", "__pycache__/c.py"),
    *("d.py/inner.py", "skipme/e.py", "deep/a/b/z.py", ".py", "..py", ".hidden.py", "top.py"),
    *("__init__.py", "notes.txt", "B.py"),
)


def reference_site_files(
    site: str, excludes: tuple[str, ...], cwd: str
) -> tuple[list[SourceFile], list[FileProblem]]:
    """What discovery found with ``os.walk`` (the definition the fast walk must keep)."""
    patterns = ("__pycache__", *excludes)
    files: list[SourceFile] = []
    problems: list[FileProblem] = []
    for directory, dirnames, filenames in os.walk(site, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not is_excluded(d, patterns))
        for name in sorted(filenames):
            full = os.path.join(directory, name)
            if not name.endswith(".py"):
                continue
            if os.path.islink(full) and not os.path.exists(full):
                problems.append(FileProblem(full, link_problem(full)))
            elif os.path.isfile(full):
                module, is_package = module_name_in_site(full, site)
                files.append(SourceFile(full, module, is_package, display_path(full, cwd, site)))
    return files, problems


def odd_site(root: Path) -> Path:
    """A site directory with every kind of entry the walk must classify."""
    site = root / "site-packages"
    for folder in ("pkg/sub", "pkg/__pycache__", "__pycache__", "d.py", "skipme", "deep/a/b"):
        (site / folder).mkdir(parents=True)
    for name in ODD_FILES:
        (site / name).write_text("x = 1\n")
    (root / "outside.py").write_text("y = 2\n")
    (site / "linked.py").symlink_to(root / "outside.py")
    (site / "broken.py").symlink_to(site / "nowhere.py")
    (site / "loop.py").symlink_to(site / "loop.py")
    os.mkfifo(site / "fifo.py")
    (site / "tofifo.py").symlink_to(site / "fifo.py")
    (site / "linkdir").symlink_to(site / "pkg")
    (site / "linkdir.py").symlink_to(site / "pkg")
    return site


@pytest.mark.parametrize("where", ["elsewhere", "/", "site", "site/pkg"])
@pytest.mark.parametrize("excludes", [(), ("skip*", "b/")])
def test_site_walk_finds_what_os_walk_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, excludes: tuple[str, ...]
) -> None:
    site = str(odd_site(tmp_path))
    answer = {"sites": [site], "dists": {}, "names": [], "broken": []}
    monkeypatch.setattr(site_packages, "query_interpreter", lambda python, dists, cache: answer)
    cwd = {"elsewhere": str(FIXTURES), "/": "/", "site": site, "site/pkg": f"{site}/pkg"}[where]
    found = discover_site_packages(None, [], excludes, cwd=cwd)
    files, problems = reference_site_files(site, excludes, cwd)
    assert found.files == files
    assert found.problems == problems
    assert {f.module for f in files} >= {"pkg", "pkg.sub.x", ".py", "..py", ".hidden", ""}


def reference_tree_files(
    root: str, excludes: tuple[str, ...], cwd: str
) -> tuple[list[SourceFile], list[FileProblem]]:
    """What a source-tree walk finds, by ``os.walk`` and :func:`is_excluded` on each path
    relative to the root (the definition the walk's shortcuts must keep: a package flag from
    the listing, patterns matched whole only when they can match more than the last name)."""
    patterns = (*DEFAULT_EXCLUDES, *excludes)
    files: list[SourceFile] = []
    problems: list[FileProblem] = []
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        relative = os.path.relpath(directory, root).replace(os.sep, "/")
        prefix = "" if relative == "." else relative + "/"
        dirnames[:] = sorted(d for d in dirnames if not is_excluded(prefix + d, patterns))
        for name in sorted(filenames):
            full = os.path.join(directory, name)
            if not name.endswith((".py", ".ipynb")) or is_excluded(prefix + name, patterns):
                continue
            if os.path.islink(full) and not os.path.exists(full):
                problems.append(FileProblem(display_path(full, cwd), link_problem(full)))
            elif os.path.isfile(full):
                module, is_package = module_name_for(full)
                files.append(SourceFile(full, module, is_package, display_path(full, cwd)))
    return distinct_scripts(files), problems


@pytest.mark.parametrize(
    "excludes",
    [
        (),
        ("skip*", "b/"),
        ("deep/a*", "p*/sub", "*.hidden.py", "?kipme", "t*p.py"),
        ("*op.py", "..py", "*ynb", "B*"),  # by the last name only, which can end in .py
    ],
)
def test_tree_walk_finds_what_os_walk_finds(tmp_path: Path, excludes: tuple[str, ...]) -> None:
    tree = str(odd_site(tmp_path))
    (Path(tree) / "deep" / "axb.py").write_text("z = 3\n")  # 'deep/a*' matches it whole only
    found = discover_paths([tree], excludes, cwd=str(tmp_path))
    files, problems = reference_tree_files(tree, excludes, str(tmp_path))
    assert found.files == files
    assert sorted(found.problems, key=str) == sorted(problems, key=str)
    shown = {f.display for f in found.files}
    whole_only = {"site-packages/deep/axb.py", "site-packages/deep/a/b/z.py"}
    if not excludes:
        assert whole_only <= shown
    if "deep/a*" in excludes:  # matched against the whole path only
        assert not whole_only & shown


@pytest.mark.parametrize("where", ["elsewhere", "/", "tree", "tree/pkg", "tree/deep/a"])
def test_tree_walk_shows_paths_from_any_working_directory(tmp_path: Path, where: str) -> None:
    """Display paths (and the problems') from a working directory that holds the tree, lies
    outside it, is the tree, or lies below it (then some folders are shown relative to it)."""
    tree = str(odd_site(tmp_path))
    cwd = {"elsewhere": str(FIXTURES), "/": "/", "tree": tree}.get(where, tree + where[4:])
    found = discover_paths([tree], (), cwd=cwd)
    files, problems = reference_tree_files(tree, (), cwd)
    assert found.files == files
    assert sorted(found.problems, key=str) == sorted(problems, key=str)


def test_running_interpreter_is_asked_in_process_with_the_same_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for dists in ([], ["click"]):
        direct = query_interpreter(None, dists)
        monkeypatch.setattr(interpreter, "is_running_interpreter", lambda python: False)
        asked = query_interpreter(None, dists)
        monkeypatch.undo()
        assert direct == asked
    assert query_interpreter(None, [])["sites"]


def test_absent_prerequisite_spares_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "plain.py").write_text("value = compute(1)\n")
    discovery = discover_paths([str(tmp_path)], ())
    searched: list[bytes] = []
    real = sources.found_in
    monkeypatch.setattr(sources, "found_in", lambda data, t: searched.append(t) or real(data, t))
    source_set = SourceSet(read_source)
    (file,) = source_set.load(discovery.files, [])
    query = GroupQuery.build([(t,) for t in SEED_TOKENS if t != b"\bDataLoader"])
    assert not query.matches(source_set, file)
    assert sorted(searched) == [b"__iter__", b"_iterator", b"_shutdown_workers", b"oader"]


def test_a_plain_token_known_absent_spares_later_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "plain.py").write_text("value = compute(1)\n")
    discovery = discover_paths([str(tmp_path)], ())
    source_set = SourceSet(read_source)
    (file,) = source_set.load(discovery.files, [])
    assert not source_set.contains(file.path, b"oader")  # a seed search found it absent
    searched: list[bytes] = []
    real = sources.found_in
    monkeypatch.setattr(sources, "found_in", lambda data, t: searched.append(t) or real(data, t))
    assert not source_set.contains(file.path, whole_word("train_dataloader"))
    assert not source_set.contains(file.path, b"DataLoader(")
    assert searched == []
    assert source_set.contains(file.path, whole_word("compute"))
    assert searched == [whole_word("compute")]


def test_group_query_with_prerequisites_agrees_with_the_definition() -> None:
    discovery = discover_paths([str(FIXTURES)], ())
    source_set = SourceSet(read_source)
    files = source_set.load(discovery.files, [])
    groups = [(t,) for t in SEED_TOKENS] + [(b"DataLoader", b"iter("), (b"oader", b".reset")]
    query = GroupQuery.build(groups)
    assert query.needs  # the seed tokens do have prerequisites
    matched = 0
    for file in files:
        data = read_source(file.path) or b""
        code = code_view(data)  # a group's tokens are asked of the code (comments left out)
        expected = any(all(sources.found_in(code, t) for t in group) for group in groups)
        assert query.matches(source_set, file) == expected, file.path
        matched += expected
    assert 0 < matched < len(files)


def test_rests_known_or_implied_absent_cost_no_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside its scope package a file is asked every rest of the bucket: a rest with a token
    known absent is passed over without a search of its other tokens, and the rests of
    ``__call__``, whose class names all need ``Pipeline``, fail on one search of it, each
    absence remembered: asked again, the file is answered by its bits alone."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "calls.py").write_text("class A:\n    def __call__(self):\n        return Trainer\n")
    scope = package_scope("pkg.calls")
    groups = [(scope, whole_word("__call__"), whole_word(f"{n}Pipeline")) for n in PIPELINES]
    groups.append((scope, whole_word("Trainer"), whole_word("evaluate")))
    query = GroupQuery.build(groups)
    assert list(query.buckets) == [scope]
    source_set = SourceSet(read_source)
    (file,) = [
        f
        for f in source_set.load(discover_paths([str(tmp_path)], ()).files, [])
        if f.module == "pkg.calls"
    ]
    assert not source_set.contains(file.path, whole_word("evaluate"))
    searched: list[bytes] = []
    real = sources.found_in
    monkeypatch.setattr(sources, "found_in", lambda data, t: searched.append(t) or real(data, t))
    assert not query.matches(source_set, file)
    assert searched == [whole_word("__call__"), b"Pipeline"]  # not ``Trainer``
    searched.clear()
    assert not query.matches(source_set, file)
    assert searched == []


def test_replayed_check_imports_no_analysis_code(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "fetch.py").write_text(
        "class Fetcher:\n    def __iter__(self):\n        self.loader._iterator = None\n"
    )
    script = (
        "import sys\n"
        "from lintloader.cli.main import main\n"
        "try:\n"
        f"    main(['check', '.', '--cache-dir', {str(tmp_path / 'cache')!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('libcst', 'lintloader.summary.calls', 'lintloader.select.parse',\n"
        "         'lintloader.rules.registry', 'lintloader.link.program',\n"
        "         'lintloader.select.policy', 'concurrent', 'lintloader.summary.model')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)), file=sys.stderr)\n"
    )
    (root / "other.py").write_text("def helper(x):\n    return x\n")  # no rule asks of it

    def run() -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", script]
        return subprocess.run(
            command, cwd=root, capture_output=True, text=True, timeout=120, check=False
        )

    runs = [run(), run()]
    assert "lintloader.summary.calls" in runs[0].stderr  # the first run analyzes
    assert runs[1].stderr.splitlines()[-1] == "[]", runs[1].stderr  # the second replays
    (root / "other.py").write_text("def helper(x):\n    return x + 1\n")
    runs.append(run())  # a file no round takes changed: replayed after a byte search
    assert runs[2].stderr.splitlines()[-1] == "[]", runs[2].stderr
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout != ""
    # a summarized file changed (a comment): the findings hold, but the fixes edit that file,
    # so what is fixable is tried again (the fixers and libcst imported), then stored again
    with (root / "fetch.py").open("a") as fetch:
        fetch.write("# a comment\n")
    runs.append(run())
    assert "libcst" in runs[3].stderr.splitlines()[-1], runs[3].stderr
    runs.append(run())
    assert runs[4].stderr.splitlines()[-1] == "[]", runs[4].stderr
    assert runs[3].stdout == runs[4].stdout == runs[0].stdout
    assert runs[4].stderr.splitlines()[-2] == runs[0].stderr.splitlines()[-2]  # N fixable


def test_fix_trial_writes_nothing_to_the_cache(tmp_path: Path) -> None:
    """check tries the fixes in memory: the edited bytes are summarized, but their summaries
    are never read again, so only the files on disk fill the summary cache; and the stat index
    keeps the edited file as it is on disk, so the next run replays it unchanged."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "fetch.py").write_text(
        "class Fetcher:\n    def __iter__(self):\n        self.loader._iterator = None\n"
    )
    cache = tmp_path / "cache"
    command = [sys.executable, "-m", "lintloader", "check", ".", "-v", "--cache-dir", str(cache)]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, cwd=root, capture_output=True, text=True, timeout=120, check=False
        )

    first = run()
    assert "fixable with `--fix --unsafe-fixes`" in first.stderr  # the trial ran
    assert "(1 parsed, 0 from cache" in first.stderr, first.stderr
    assert len(list(cache.glob("summaries-*/*/*.json"))) == 1  # fetch.py's alone
    second = run()
    assert "(0 parsed, 1 from cache" in second.stderr, second.stderr  # replayed, not revisited
    assert second.stdout == first.stdout
    assert second.stderr.splitlines()[-1] == first.stderr.splitlines()[-1]  # fixable, stored


def test_whole_word_search_agrees_with_the_regular_expression() -> None:
    def definition(data: bytes, word: bytes) -> bool:
        return re.search(rb"(?<!\w)" + re.escape(word) + rb"(?!\w)", data) is not None

    generator = random.Random(6)
    for _ in range(20_000):
        data = bytes(generator.choice(b"ab_ .(\n9\xff") for _ in range(generator.randint(0, 12)))
        word = bytes(generator.choice(b"ab_.") for _ in range(generator.randint(1, 3)))
        assert whole_word_in(data, word) == definition(data, word), (data, word)
    words = (b"dataloader", b"reset", b"self", b"DataLoader", b"_iterator", b"x", b"__iter__")
    for path in sorted(FIXTURES.rglob("*.py")):
        data = path.read_bytes()
        for word in words:
            assert whole_word_in(data, word) == definition(data, word), (path, word)


def fake_python(root: Path, candidates: list[Path]) -> tuple[Path, Path]:
    """A program that answers the site query as an interpreter would, logging each run."""
    log = root / "runs.log"
    answer = {
        "sites": [str(c) for c in candidates if c.is_dir()],
        "candidates": [str(c) for c in candidates],
        "dists": {},
        "names": [],
        "broken": [],
        "python": "3.11.0",
    }
    script = root / "env" / "bin" / "python"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!/bin/sh\necho run >> '{log}'\necho '{json.dumps(answer)}'\n")
    script.chmod(0o755)
    return script, log


def test_another_interpreters_answer_is_remembered_until_it_changes(tmp_path: Path) -> None:
    kept, gone = tmp_path / "site-a", tmp_path / "site-b"
    kept.mkdir()
    gone.mkdir()
    python, log = fake_python(tmp_path, [kept, gone])
    cache = tmp_path / "cache"

    def runs() -> int:
        return len(log.read_text().splitlines())

    first = query_interpreter(str(python), [], cache)
    assert first["sites"] == [str(kept), str(gone)] and runs() == 1
    assert query_interpreter(str(python), [], cache) == first and runs() == 1
    gone.rmdir()  # which candidates exist is checked on every use
    assert query_interpreter(str(python), [], cache)["sites"] == [str(kept)] and runs() == 1
    query_interpreter(str(python), [], None)  # no cache: asked
    query_interpreter(str(python), ["torch"], cache)  # distributions: always asked
    assert runs() == 3
    # now a venv: never run, its site directories worked out from its prefix and version
    (python.parent.parent / "pyvenv.cfg").write_text("home = /nowhere\nversion = 3.11.0\n")
    site = python.parent.parent / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    venv = query_interpreter(str(python), [], cache)
    assert venv["sites"] == [str(site)] and venv["python"] == "3.11.0" and runs() == 3

"""The shortcuts that keep a run over a whole site-packages cheap give the same answers as the
plain definitions: the directory walk (``os.scandir``, names built by slicing) finds what
``os.walk`` finds, and the in-process interpreter query answers as the subprocess does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import FIXTURES

from lintloader import discover
from lintloader.discover import (
    FileProblem,
    SourceFile,
    discover_site_packages,
    display_path,
    is_excluded,
    link_problem,
    module_name_in_site,
    query_interpreter,
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
    monkeypatch.setattr(discover, "query_interpreter", lambda python, dists: answer)
    cwd = {"elsewhere": str(FIXTURES), "/": "/", "site": site, "site/pkg": f"{site}/pkg"}[where]
    found = discover_site_packages(None, [], excludes, cwd=cwd)
    files, problems = reference_site_files(site, excludes, cwd)
    assert found.files == files
    assert found.problems == problems
    assert {f.module for f in files} >= {"pkg", "pkg.sub.x", ".py", "..py", ".hidden", ""}


def test_running_interpreter_is_asked_in_process_with_the_same_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for dists in ([], ["click"]):
        direct = query_interpreter(None, dists)
        monkeypatch.setattr(discover, "is_running_interpreter", lambda python: False)
        asked = query_interpreter(None, dists)
        monkeypatch.undo()
        assert direct == asked
    assert query_interpreter(None, [])["sites"]

"""The shortcuts of a tree walk's naming against their definitions: the exclude patterns kept
for a walk's files (only those that can match a name ending in the walk's suffixes) exclude
what :func:`is_excluded` excludes, and a directory's module names made as columns are what
:func:`module_name_for` gives each file."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from lintloader.scan.discover.excludes import DEFAULT_EXCLUDES, Excluder, is_excluded
from lintloader.scan.discover.module_names import module_columns, module_name_for
from lintloader.scan.discover.paths import SUFFIXES

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

# plain names, a star and a name (whose tail may or may not end a suffix), wildcards, paths
PATTERNS = (
    *("top.py", "top", "py", "ipynb", "notes.ipynb", "b/", "", "*", "*y", "*py", "*.py"),
    *("*b", "*ynb", "*.ipynb", "*.pyc", "*_test.py", "*test", "t?p.py", "[tx]op.py"),
    *("deep/a*", "deep/*.py", "*/top.py", "*.hidden.py", "..py", ".py"),
)
NAMES = (
    *("top.py", "x_test.py", ".py", "..py", ".hidden.py", "notes.ipynb", ".ipynb", "a.b.py"),
    *("xop.py", "py.py", "b.py"),
)
FOLDERS = ("", "deep/", "deep/a/", "b/", "top/")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_files_excluder_excludes_what_is_excluded_does(pattern: str) -> None:
    for patterns in ((pattern,), (*DEFAULT_EXCLUDES, pattern)):
        excluder = Excluder.of(patterns, SUFFIXES)
        for folder, name in itertools.product(FOLDERS, NAMES):
            # the folders above were checked on the way down: the walk never lists a file
            # below an excluded one
            if folder and is_excluded(folder.rstrip("/"), patterns):
                continue
            relative = folder + name
            assert excluder(relative, name) == is_excluded(relative, patterns), (patterns, relative)
            kept = excluder.kept([(name, "/r/" + relative)], folder)
            assert (not kept) == is_excluded(relative, patterns)


def test_patterns_that_cannot_match_a_file_leave_the_files_as_listed() -> None:
    entries = [("a.py", "/r/a.py"), ("build.py", "/r/build.py")]
    excluder = Excluder.of((*DEFAULT_EXCLUDES, "tests", "*.txt"), SUFFIXES)
    assert excluder.name is None and excluder.whole is None
    assert excluder.kept(entries, "") is entries
    assert Excluder.of(("*.py",), SUFFIXES).kept(entries, "") == []


ODD_NAMES = ("a.py", "__init__.py", ".py", "..py", ".hidden.py", "a.b.py", "n.ipynb", ".ipynb")


@pytest.mark.parametrize("package", [False, True])
def test_module_columns_name_each_file_as_module_name_for(tmp_path: Path, package: bool) -> None:
    folder = tmp_path / "pkg" / "sub"
    folder.mkdir(parents=True)
    for name in ODD_NAMES:
        (folder / name).write_text("")
    if package:
        (tmp_path / "pkg" / "__init__.py").write_text("")
    else:
        (folder / "__init__.py").unlink()
    names = [name for name in ODD_NAMES if (folder / name).exists()]
    prefix = ("pkg", "sub") if package else ()
    modules, packages = module_columns(prefix, names)
    expected = [module_name_for(str(folder / name)) for name in names]
    assert list(zip(modules, packages, strict=True)) == expected
    # a file named on the command line may have any name
    odd = ["Makefile", "x.", "a.b.c"]
    assert module_columns((), odd)[0] == [Path(name).stem for name in odd]

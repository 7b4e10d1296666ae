"""docs/architecture.md matches the code: every module and folder it names exists.

A path with a folder (``link/program.py``, ``scan/discover/walk/``) must exist under
``lintloader/`` or the repository root; a bare module name (``reachability.py``, listed under
its folder) must be some module of the package, or a file of the tests and fixtures the doc's
rule steps name.
"""

from __future__ import annotations

import re

import pytest
from conftest import REPO

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

DOC = REPO / "docs" / "architecture.md"
_MODULE = re.compile(r"(?<![\w./-])((?:[A-Za-z_][\w-]*/)*[A-Za-z_]\w*\.py)\b")
_FOLDER = re.compile(r"(?<![\w./-])((?:[a-z_]+/)+)(?=[\s`),.:;]|$)")
_TEMPLATE = re.compile(r"NNN|<|\*")


def named_modules(text: str) -> set[str]:
    return {name for name in _MODULE.findall(text) if not _TEMPLATE.search(name)}


def named_folders(text: str) -> set[str]:
    return set(_FOLDER.findall(text))


def _exists(path: str) -> bool:
    return (REPO / "lintloader" / path).exists() or (REPO / path).exists()


def _bare_exists(name: str) -> bool:
    return any(next((REPO / top).rglob(name), None) for top in ("lintloader", "tests", "fixtures"))


def test_every_module_the_architecture_names_exists() -> None:
    modules = named_modules(DOC.read_text(encoding="utf-8"))
    assert {"link/program.py", "incremental/reuse.py", "conclude/checking.py"} <= modules
    missing = [
        name
        for name in sorted(modules)
        if not (_exists(name) if "/" in name else _bare_exists(name))
    ]
    assert missing == []


def test_every_folder_the_architecture_names_exists() -> None:
    folders = named_folders(DOC.read_text(encoding="utf-8"))
    assert {"incremental/", "workers/", "scan/discover/walk/", "scan/read/", "link/"} <= folders
    assert [folder for folder in sorted(folders) if not _exists(folder)] == []


def test_the_check_sees_a_moved_module() -> None:
    """The module names are read the way a reader would: one that moved is missing."""
    text = "link        program.py  and select/revisit.py, the walk's memos in cache/listings.py"
    assert named_modules(text) == {"program.py", "select/revisit.py", "cache/listings.py"}
    assert not _exists("select/revisit.py") and not _exists("cache/listings.py")
    assert named_folders("parts: `scan/discover/walk/` and cli/ (commands)") == {
        "scan/discover/walk/",
        "cli/",
    }

"""One file's failure is that file's LL000, never the run's end (issue 39): with libcst before
1.8 (no ``TemplatedString``) a file written for Python 3.12 stopped the whole run with an
internal error. The run below takes the node away from the libcst it imports, as such a
release lacks it, and checks a project with one such file and one real finding."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from child_processes import Processes
from trust_support import ORIGINAL

# a 3.12 f-string (the same quotes nested), implicitly concatenated: `ast` of an older Python
# rejects it and the libcst path reads it; the token makes the file one the analysis parses
NEWER = 'def reset(loader):\n    loader._iterator = None\n    print(f"{"nested"}" f"{loader!r}")\n'
WITHOUT_NODE = (
    "import libcst, runpy, sys; vars(libcst).pop('TemplatedString', None); "
    "sys.argv[0] = 'lintloader'; runpy.run_module('lintloader', run_name='__main__')"
)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python reads 3.12 f-strings itself")
def test_a_file_the_parser_library_fails_on_is_its_own_ll000(
    tmp_path: Path, processes: Processes
) -> None:
    (tmp_path / "mod.py").write_bytes(ORIGINAL)  # one LL101
    (tmp_path / "newer.py").write_text(NEWER)
    done = processes.run(
        [sys.executable, "-c", WITHOUT_NODE, "check", "--no-cache", "."], cwd=tmp_path, timeout=300
    )
    assert "lintloader: error: internal error" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    assert (
        "newer.py:1:1: LL000 [error] internal error reading this file: AttributeError: "
        "module 'libcst' has no attribute 'TemplatedString'"
    ) in done.stdout
    assert "mod.py:12:9: LL101" in done.stdout
    # with the node there, the same file reads cleanly
    clean = processes.run([sys.executable, "-m", "lintloader", "check", "--no-cache", "."],
                          cwd=tmp_path, timeout=300)  # fmt: skip
    assert clean.returncode == 1 and "LL000" not in clean.stdout, clean.stdout
    assert "mod.py:12:9: LL101" in clean.stdout

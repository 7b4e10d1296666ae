"""Notebooks and odd encodings through ``fix`` and ``check --add-noqa`` (issue 28, part B):
comments go into a cell's source, untouched cells stay byte for byte as they were, a notebook
that does not validate is one line and the run goes on, a BOM and a coding cookie are kept."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from conftest import run_cli
from hypothesis import assume, given, settings
from hypothesis import strategies as st

CRLF_CELL = '["x = 1\\r\\n", "y = 2\\r\\n"]'
SPLIT_CELL = '["a = (1,\\n", "     2)\\n", "b", " = 3"]'  # not split the way nbformat would
BUGGY_CELL = json.dumps(
    [
        "from torch.utils.data import DataLoader\r\n",
        "ds = list(range(8))\r\n",
        "for epoch in range(3):\r\n",
        "    loader = DataLoader(ds, num_workers=2, persistent_workers=True)\r\n",
        "    for batch in loader:\r\n",
        "        pass\r\n",
    ]
)
PY_BUG = (
    "from torch.utils.data import DataLoader\n"
    "ds = []\n"
    "for epoch in range(3):\n"
    "    loader = DataLoader(ds, num_workers=2, persistent_workers=True)\n"
    "    for batch in loader:\n"
    "        pass\n"
)


def cell(source: str, extra: str = "") -> str:
    return (
        '  {\n   "cell_type": "code",\n   "execution_count": null,\n   "metadata": {},\n'
        f'   "outputs": [],{extra}\n   "source": {source}\n  }}'
    )


def notebook_text(*cells: str) -> str:
    """nbformat 4.4 (no cell ids), laid out by hand: the test knows every byte."""
    return (
        '{\n "cells": [\n' + ",\n".join(cells) + '\n ],\n "metadata": {},\n'
        ' "nbformat": 4,\n "nbformat_minor": 4\n}\n'
    )


def test_fix_rewrites_only_the_edited_cell(tmp_path: Path) -> None:
    untouched = (cell(CRLF_CELL), cell(SPLIT_CELL))
    text = notebook_text(untouched[0], cell(BUGGY_CELL), untouched[1])
    path = tmp_path / "train.ipynb"
    path.write_bytes(text.encode())
    done = run_cli("fix", "--no-cache", "--unsafe-fixes", "train.ipynb", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "train.ipynb:cell 2:4: LL202 fixed by hoist-loader-call" in done.stderr
    written = path.read_text()
    assert written != text
    for kept in untouched:
        assert kept in written  # byte for byte: CRLF, the odd split, no id added
    assert '"id"' not in written
    edited = json.loads(written)["cells"][1]["source"]
    assert all(line.endswith("\r\n") for line in edited)  # the edited cell keeps its CRLF
    assert any("persistent_workers=True" in line for line in edited)
    nbformat.validate(nbformat.reads(written, as_version=nbformat.NO_CONVERT))
    again = run_cli("check", "--no-cache", "train.ipynb", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_notebook_that_does_not_validate_is_one_line_and_the_rest_is_fixed(
    tmp_path: Path,
) -> None:
    bad = notebook_text(cell(BUGGY_CELL, extra='\n   "bogus": 1,'))
    (tmp_path / "bad.ipynb").write_text(bad)
    (tmp_path / "other.py").write_text(PY_BUG)
    for command in (["fix"], ["check", "--fix"]):
        done = run_cli(*command, "--no-cache", "--unsafe-fixes", ".", cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        errors = [line for line in done.stderr.splitlines() if "bad.ipynb" in line]
        assert errors[0].startswith("lintloader: bad.ipynb: not written: not a valid notebook")
        assert "internal error" not in done.stderr and "fixed by" not in errors[0]
        assert not any("bad.ipynb" in e and "fixed by" in e for e in errors)
        assert (tmp_path / "bad.ipynb").read_text() == bad
        assert "persistent_workers=True" in (tmp_path / "other.py").read_text()
        (tmp_path / "other.py").write_text(PY_BUG)
    assert "note: bad.ipynb:cell 1:4:14: LL202 not fixed: its file was not written" in (done.stderr)


def test_add_noqa_comments_a_notebook_cell(tmp_path: Path) -> None:
    text = notebook_text(cell(CRLF_CELL), cell(BUGGY_CELL))
    path = tmp_path / "train.ipynb"
    path.write_text(text)
    done = run_cli("check", "--no-cache", "--add-noqa", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Added 1 noqa directive." in done.stderr
    written = path.read_text()
    assert cell(CRLF_CELL) in written
    notebook = nbformat.reads(written, as_version=nbformat.NO_CONVERT)
    nbformat.validate(notebook)
    assert "# noqa: LL202" in notebook.cells[1].source
    assert written.rstrip().endswith("}")  # nothing after the JSON
    again = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr


def test_add_noqa_refuses_a_notebook_it_cannot_write_and_goes_on(tmp_path: Path) -> None:
    bad = notebook_text(cell(BUGGY_CELL, extra='\n   "bogus": 1,'))
    (tmp_path / "bad.ipynb").write_text(bad)
    (tmp_path / "other.py").write_text(PY_BUG)
    done = run_cli("check", "--no-cache", "--add-noqa", ".", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if "bad.ipynb" in line]
    assert len(lines) == 1 and lines[0].startswith("lintloader: error: bad.ipynb: ")
    assert (tmp_path / "bad.ipynb").read_text() == bad
    assert "# noqa: LL202" in (tmp_path / "other.py").read_text()


def test_add_noqa_keeps_a_bom_and_a_coding_cookie(tmp_path: Path) -> None:
    bom = b"\xef\xbb\xbf" + PY_BUG.encode()
    latin = b"# -*- coding: latin-1 -*-\n" + PY_BUG.replace("ds = []", 'ds = ["\xe9"]').encode(
        "latin-1"
    )
    (tmp_path / "bom.py").write_bytes(bom)
    (tmp_path / "latin.py").write_bytes(latin)
    done = run_cli("check", "--no-cache", "--add-noqa", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Added 2 noqa directives." in done.stderr
    written = (tmp_path / "bom.py").read_bytes()
    assert written.startswith(b"\xef\xbb\xbf") and b"# noqa: LL202" in written
    written = (tmp_path / "latin.py").read_bytes()
    assert b'["\xe9"]' in written and b"# noqa: LL202" in written  # still latin-1
    again = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr


def test_check_fix_on_a_full_disk_exits_2_and_says_not_written(tmp_path: Path) -> None:
    from trust_support import fill, tmpfs

    with tmpfs(tmp_path / "disk") as disk:
        (disk / "train.py").write_text(PY_BUG)
        fill(disk)
        done = run_cli(
            "check", "--fix", "--show-fixes", "--no-cache", "--unsafe-fixes", ".", cwd=disk
        )
        assert done.returncode == 2, done.stderr
        assert "No fixes applied." in done.stderr
        assert "lintloader: train.py: not written:" in done.stderr
        assert "fixed by" not in done.stderr
        assert "train.py:4:14: LL202 not fixed: its file was not written" in done.stderr
        assert (disk / "train.py").read_text() == PY_BUG
        fixed = run_cli("fix", "--no-cache", "--unsafe-fixes", ".", cwd=disk)
        assert fixed.returncode == 2 and "fixed by" not in fixed.stderr, fixed.stderr


def test_a_syntax_error_in_a_cell_is_placed_by_cell_in_its_message(tmp_path: Path) -> None:
    unterminated = json.dumps(["s = '''abc\n", "def\n"])
    (tmp_path / "nb.ipynb").write_text(notebook_text(cell(BUGGY_CELL), cell(unterminated)))
    done = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.startswith(
        "nb.ipynb:cell 2:1:5: LL000 [error] syntax error: unterminated triple-quoted string "
        "literal (detected at cell 2, line 2)\n"
    ), done.stdout


def test_a_hostile_key_in_a_notebook_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    bad = notebook_text(cell(BUGGY_CELL, extra='\n   "\\u001b]0;pwned\\u0007": 1,'))
    (tmp_path / "bad.ipynb").write_text(bad)
    for command in (["fix", "--unsafe-fixes"], ["check", "--add-noqa"]):
        done = run_cli(*command, "--no-cache", ".", cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert "\x1b" not in done.stderr and "\x07" not in done.stderr
        assert "\\x1b]0;pwned\\x07" in done.stderr
        assert (tmp_path / "bad.ipynb").read_text() == bad


LINE = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\r\n"),
    max_size=12,
)
CELL = st.tuples(st.lists(LINE, max_size=4), st.sampled_from(["\n", "\r\n"]), st.booleans())


@settings(max_examples=30, deadline=None, database=None)
@given(cells=st.lists(CELL, min_size=1, max_size=4), indent=st.sampled_from([1, 2, 4]))
def test_an_edit_of_one_cell_keeps_every_other_byte(cells: list, indent: int) -> None:
    """Notebooks in any layout (indentation, CRLF, a final newline or not): writing back the
    unedited Python changes nothing; an edit of one cell changes only that cell's source."""
    from lintloader.scan.read.notebooks import notebook_to_python, python_to_notebook

    sources = [
        newline.join(lines) + (newline if ends and lines else "") for lines, newline, ends in cells
    ]
    assume(not sources[0].lstrip().startswith("%%"))  # a cell magic: not Python, not edited
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    text = json.dumps(json.loads(nbformat.writes(notebook)), indent=indent, ensure_ascii=False)
    data = text.encode()
    python = notebook_to_python(data)
    assert python_to_notebook(data, python) == data
    marker = b"# %% lintloader cell 1\n"
    edited = python_to_notebook(data, python.replace(marker, marker + b"edited = 1\n", 1))
    before, after = json.loads(data)["cells"], json.loads(edited)["cells"]
    assert after[1:] == before[1:]
    assert "".join(after[0]["source"]).splitlines()[0] == "edited = 1"
    nbformat.validate(nbformat.reads(edited.decode(), as_version=nbformat.NO_CONVERT))

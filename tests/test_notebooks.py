"""Jupyter notebooks through the real CLI: code cells are checked (magics and shell escapes
skipped, as ruff does), locations read ``train.ipynb:cell 3:2:14``, and ``fix`` writes a
notebook that the nbformat validator accepts, with outputs untouched."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
from child_processes import run_once
from conftest import run_cli

LOOP = (
    "ds = list(range(8))\n"
    "for epoch in range(3):\n"
    "    loader = DataLoader(ds, num_workers=2, persistent_workers=True)\n"
    "    for batch in loader:\n"
    "        pass\n"
)


def notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Training\nfor epoch in range(3): DataLoader(x)"),
        nbformat.v4.new_code_cell(
            "%matplotlib inline\nfrom torch.utils.data import DataLoader\n!pip install tqdm"
        ),
        nbformat.v4.new_code_cell("%%bash\nfor i in 1 2; do echo DataLoader; done"),
        nbformat.v4.new_code_cell(
            LOOP,
            execution_count=3,
            outputs=[nbformat.v4.new_output("stream", text="epoch done\n")],
        ),
        nbformat.v4.new_code_cell("probe = DataLoader(ds, num_workers=0, persistent_workers=True)"),
    ]
    path.write_text(nbformat.writes(nb), encoding="utf-8")  # nbformat 5.0 takes no Path
    return path


def findings(cwd: Path, *args: str) -> list[dict]:
    done = run_cli("check", "--no-cache", "--output-format", "json", *args, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_code_cells_are_checked_and_located_by_cell(tmp_path: Path) -> None:
    notebook(tmp_path / "train.ipynb")
    got = [
        (f["code"], f["path"], f["cell"], f["line"], f["column"]) for f in findings(tmp_path, ".")
    ]
    assert got == [("LL202", "train.ipynb", 4, 3, 14), ("LL201", "train.ipynb", 5, 1, 9)]
    text = run_cli("check", "--no-cache", "train.ipynb", cwd=tmp_path).stdout
    assert text.startswith("train.ipynb:cell 4:3:14: LL202 [warning] ")
    assert "(cell 4, line 2)" in text  # the loop line, counted in its cell
    assert "    train.ipynb:cell 4:2:1 <module>: " in text


def test_fix_writes_a_valid_notebook_and_keeps_outputs(tmp_path: Path) -> None:
    path = notebook(tmp_path / "train.ipynb")
    before = nbformat.read(path, as_version=4)
    done = run_cli("fix", "--no-cache", "--unsafe-fixes", "train.ipynb", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    after = nbformat.read(path, as_version=4)
    nbformat.validate(after)
    assert [c.cell_type for c in after.cells] == [c.cell_type for c in before.cells]
    assert after.cells[3].outputs == before.cells[3].outputs
    assert after.cells[3].execution_count == 3
    assert after.cells[1].source == before.cells[1].source  # magics restored
    assert after.cells[2].source == before.cells[2].source  # the %%bash cell untouched
    assert after.cells[3].source.startswith("ds = list(range(8))\nloader = DataLoader(")
    assert "persistent_workers=False" in after.cells[4].source
    left = {f["code"] for f in findings(tmp_path, "train.ipynb")}
    assert not left & {"LL201", "LL202"}


def test_an_unreadable_notebook_is_one_ll000(tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text("{not json")
    got = findings(tmp_path, ".")
    assert [(f["code"], f["path"]) for f in got] == [("LL000", "broken.ipynb")]
    assert "not a readable notebook" in got[0]["message"]


# the CLI with nbformat made unimportable, as after the README's install without the extra
WITHOUT_NBFORMAT = (
    "import sys; sys.modules['nbformat'] = None; from lintloader.cli.main import main; main()"
)


def run_without_nbformat(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_once([sys.executable, "-c", WITHOUT_NBFORMAT, *args], cwd=cwd, timeout=120)


def test_without_nbformat_notebooks_give_the_same_findings(tmp_path: Path) -> None:
    notebook(tmp_path / "train.ipynb")
    (tmp_path / "broken.ipynb").write_text("{not json")
    (tmp_path / "old.ipynb").write_text(json.dumps({"nbformat": 3, "worksheets": []}))
    (tmp_path / "plain.py").write_text("x = 1\n")
    args = ("check", "--no-cache", "--output-format", "json", ".")
    without = run_without_nbformat(tmp_path, *args)
    got = json.loads(without.stdout)
    assert without.returncode == 1, without.stderr
    expected = findings(tmp_path, ".")

    def located(found: list[dict]) -> list[tuple]:
        return [(f["code"], f["path"], f.get("cell"), f["line"], f["column"]) for f in found]

    assert located(got) == located(expected)
    assert [f["message"] for f in got if f["code"] != "LL000"] == [
        f["message"] for f in expected if f["code"] != "LL000"
    ]
    assert [(f["code"], f["path"]) for f in got if f["code"] == "LL000"] == [
        ("LL000", "broken.ipynb"),
        ("LL000", "old.ipynb"),
    ]
    (old,) = [f for f in got if f["path"] == "old.ipynb"]
    assert "format 3 (lintloader reads 4)" in old["message"]


def test_without_nbformat_fix_writes_the_same_notebook(tmp_path: Path) -> None:
    original = notebook(tmp_path / "train.ipynb").read_bytes()  # cell ids are random: one copy
    for name in ("with", "without"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.ipynb").write_bytes(original)
    args = ("fix", "--no-cache", "--unsafe-fixes", "train.ipynb")
    assert run_cli(*args, cwd=tmp_path / "with").returncode == 0
    done = run_without_nbformat(tmp_path / "without", *args)
    assert done.returncode == 0, done.stderr
    fixed = (tmp_path / "with" / "train.ipynb").read_bytes()
    assert (tmp_path / "without" / "train.ipynb").read_bytes() == fixed
    assert b"persistent_workers=False" in fixed


def test_a_fix_diff_shows_the_notebook_cell_by_cell(tmp_path: Path) -> None:
    path = notebook(tmp_path / "train.ipynb")
    before = path.read_bytes()
    done = run_cli("fix", "--no-cache", "--diff", "train.ipynb", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout == (
        "--- a/train.ipynb:cell 4\n"
        "+++ b/train.ipynb:cell 4\n"
        "@@ -1,5 +1,5 @@\n"
        " ds = list(range(8))\n"
        "+loader = DataLoader(ds, num_workers=2, persistent_workers=True)\n"
        " for epoch in range(3):\n"
        "-    loader = DataLoader(ds, num_workers=2, persistent_workers=True)\n"
        "     for batch in loader:\n"
        "         pass\n"
        "--- a/train.ipynb:cell 5\n"
        "+++ b/train.ipynb:cell 5\n"
        "@@ -1 +1 @@\n"
        "-probe = DataLoader(ds, num_workers=0, persistent_workers=True)\n"
        "+probe = DataLoader(ds, num_workers=0, persistent_workers=False)\n"
    )
    assert "lintloader cell" not in done.stdout + done.stderr  # the internal form stays inside
    assert path.read_bytes() == before

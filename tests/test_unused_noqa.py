"""LL001, an unused ``# noqa: LLxxx`` (flake8-noqa's NQA102, ruff's RUF100): on by default,
reported through the real CLI, and removed by ``check --fix``."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

SOURCE = """\
class Fetcher:
    def __iter__(self):
        self.loader._iterator = None  # noqa: LL101
        return iter(self.loader)  # noqa: LL101, E501


loader = make(  # noqa: LL201
    persistent=True,
)
x = 1  # noqa: LL202
y = 2  # noqa
"""


def write(tmp_path: Path) -> Path:
    path = tmp_path / "fetcher.py"
    path.write_text(SOURCE)
    return path


UNUSED = [
    "fetcher.py:4:35: LL001 [warning] unused `noqa` directive (unused: LL101)",
    "fetcher.py:7:17: LL001 [warning] unused `noqa` directive (unused: LL201)",
    "fetcher.py:10:8: LL001 [warning] unused `noqa` directive (unused: LL202)",
]


def test_unused_directives_are_reported_by_default(tmp_path: Path) -> None:
    """A plain ``check`` prints them at the default threshold (a warning) and exits 1; the bare
    ``# noqa`` and ``E501`` (maybe another tool's) are not judged."""
    write(tmp_path)
    done = run_cli("check", "--no-cache", "--output-format", "concise", "fetcher.py",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    assert done.stdout.splitlines() == UNUSED
    assert done.stderr.startswith("Found 3 findings (3 warning) in 1 file (1 suppressed).")


def test_unused_directives_follow_the_rule_selection(tmp_path: Path) -> None:
    """Off with ``--ignore LL001``, or when LL001 is not selected; a disabled rule's code is not
    judged (it ran on nothing), so ``--select LL001,LL101`` reports LL101 only."""
    write(tmp_path)
    for options in (["--ignore", "LL001"], ["--select", "LL101"]):
        off = run_cli("check", "--no-cache", *options, "fetcher.py", cwd=tmp_path)
        assert off.returncode == 0 and off.stdout == "", options
    some = run_cli("check", "--no-cache", "--select", "LL001,LL101", "--output-format",
                   "concise", "fetcher.py", cwd=tmp_path)  # fmt: skip
    assert some.stdout.splitlines() == UNUSED[:1]


def test_a_directive_for_a_finding_below_the_threshold_is_used(tmp_path: Path) -> None:
    """LL205 is an info finding, hidden at the default threshold: its ``# noqa`` still
    suppresses it (``--min-severity info`` shows nothing), so it is not reported unused, at either
    threshold."""
    (tmp_path / "train.py").write_text(
        "import pytorch_lightning as pl\n"
        "from torch.utils.data import DataLoader\n\n\n"
        "class Model(pl.LightningModule):\n"
        "    def train_dataloader(self):\n"
        "        return DataLoader(self.dataset, num_workers=4, persistent_workers=True)\n\n\n"
        "trainer = pl.Trainer(reload_dataloaders_every_n_epochs=1)  # noqa: LL205\n"
    )
    hidden = run_cli("check", "--no-cache", "train.py", cwd=tmp_path)
    assert hidden.returncode == 0 and hidden.stdout == "", hidden.stdout
    assert "(0 suppressed). 1 finding below warning hidden" in hidden.stderr
    shown = run_cli("check", "--no-cache", "--min-severity", "info", "train.py", cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout == "", shown.stdout
    assert "(1 suppressed)" in shown.stderr


def test_json_links_ll001_to_the_noqa_docs(tmp_path: Path) -> None:
    """LL001 has no rule page: its ``url`` (JSON, and the editor's link) is the ``# noqa``
    section of docs/configuration.md, a heading that exists."""
    import json

    write(tmp_path)
    done = run_cli("check", "--no-cache", "--output-format", "json", "fetcher.py", cwd=tmp_path)
    urls = {finding["url"] for finding in json.loads(done.stdout)}
    (url,) = urls
    page, anchor = url.rsplit("/", 1)[1].split("#")
    assert (page, anchor) == ("configuration.md", "noqa")
    docs = Path(__file__).resolve().parents[1] / "docs" / page
    assert "\n## `# noqa`\n" in docs.read_text()  # GitHub's anchor of this heading: noqa


def test_fix_removes_the_unused_codes(tmp_path: Path) -> None:
    path = write(tmp_path)
    done = run_cli("check", "--no-cache", "--fix", "fetcher.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Removed 3 unused noqa directives." in done.stderr
    assert path.read_text() == (
        SOURCE.replace("  # noqa: LL101, E501", "  # noqa: E501")
        .replace("make(  # noqa: LL201", "make(")
        .replace("x = 1  # noqa: LL202", "x = 1")
    )
    again = run_cli("check", "--no-cache", "fetcher.py", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == ""


def test_ll001_in_sarif_has_a_rule(tmp_path: Path) -> None:
    import json

    write(tmp_path)
    done = run_cli(
        "check", "--no-cache", "--output-format", "sarif",
        "fetcher.py", cwd=tmp_path,
    )  # fmt: skip
    run = json.loads(done.stdout)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {r["ruleId"] for r in run["results"]} == {"LL001"}
    assert all(rules[r["ruleIndex"]]["id"] == "LL001" for r in run["results"])


def test_fix_takes_unused_codes_out_of_a_notebook_cell(tmp_path: Path) -> None:
    """A notebook's lines are its cells' (the cell mapping of fix and --add-noqa): the code is
    taken out of the cell's source, the other cell and the JSON around it stay as they were."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("x = 1  # noqa: LL202"),
        nbformat.v4.new_code_cell(
            "class F:\n    def __iter__(self):\n"
            "        self.loader._iterator = None  # noqa: LL101, LL102\n"
            "        return iter(())\n"
        ),
    ]
    path = tmp_path / "train.ipynb"
    nbformat.write(notebook, path)
    before = path.read_text()
    done = run_cli("check", "--no-cache", "--fix", path.name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Removed 2 unused noqa directives." in done.stderr
    after = path.read_text()
    assert after == before.replace("  # noqa: LL202", "").replace("LL101, LL102", "LL101")
    cells = [cell.source for cell in nbformat.read(path, as_version=4).cells]
    assert cells[0] == "x = 1"
    assert "self.loader._iterator = None  # noqa: LL101\n" in cells[1]
    again = run_cli("check", "--no-cache", path.name, cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == "", again.stdout

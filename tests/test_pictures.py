"""The chain as a picture: ``--output-format markdown`` (a mermaid flowchart per finding, for
PR comments and job summaries) and ``--output-format dot`` (rendered by Graphviz's real
``dot`` where it is installed)."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli

LOOP = """\
from torch.utils.data import DataLoader


def fit(ds, epochs):
    for epoch in range(epochs):
        loader = DataLoader(ds, num_workers=2, persistent_workers=True)
        for batch in loader:
            pass
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pictures")
    shutil.copytree(FIXTURES / "check" / "lightning150" / "minilight", root / "minilight")
    (root / "train.py").write_text(LOOP)
    return root


def output(project: Path, kind: str) -> str:
    done = run_cli("check", "--no-cache", "--output-format", kind, ".", cwd=project)
    assert done.returncode == 1, done.stderr
    return done.stdout


def test_markdown_has_one_mermaid_block_per_finding_with_the_chain(project: Path) -> None:
    text = output(project, "markdown")
    blocks = re.findall(r"```mermaid\n(.*?)```", text, re.S)
    assert text.startswith("## lintloader: 2 findings (1 error, 1 warning)")
    assert len(blocks) == 2
    ll101 = blocks[0]
    nodes = re.findall(r'n\d+\["([^"]*)"\]', ll101)
    places = [node.split("<br/>")[0] for node in nodes]
    assert places == [
        "minilight/utilities/fetching.py:16",
        "minilight/utilities/fetching.py:31",
        "minilight/trainer/supporters.py:22",
        "minilight/trainer/supporters.py:21",  # also reaches
    ]
    assert "n0 --> n1" in ll101 and "n1 --> n2" in ll101 and "class n2 sink" in ll101
    assert "n0 -. also reaches .-> n3" in ll101
    ll202 = blocks[1]
    assert re.findall(r'n\d+\["(train\.py:\d+)', ll202) == ["train.py:5", "train.py:6"]
    assert "| [1](#finding-1) | `LL101` | `minilight/utilities/fetching.py:16:9` |" in text


def test_markdown_escapes_what_mermaid_would_misread(tmp_path: Path) -> None:
    (tmp_path / "q.py").write_text(
        'class F:\n    def __iter__(self):\n        setattr(self.l, "_iterator", None)\n'
    )
    text = output(tmp_path, "markdown")
    (block,) = re.findall(r"```mermaid\n(.*?)```", text, re.S)
    assert "#quot;_iterator#quot;" in block and '"_iterator"' not in block


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_dot_renders_with_graphviz(project: Path, tmp_path: Path) -> None:
    source = output(project, "dot")
    assert source.count("subgraph cluster_") == 2
    svg = tmp_path / "chains.svg"
    subprocess.run(["dot", "-Tsvg", "-o", str(svg)], input=source, text=True, check=True)
    root = ElementTree.parse(svg).getroot()
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "minilight/trainer/supporters.py:22" in texts
    assert "train.py:6" in texts

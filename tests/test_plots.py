"""Per-epoch plots from real runtime results: ``verify --plot``, and ``lintloader plot`` of
saved results side by side; the pictures are parsed as SVG."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from conftest import run_cli

SVG = "{http://www.w3.org/2000/svg}svg"


def verify(tmp_path: Path, name: str, *args: str) -> Path:
    done = run_cli(
        "verify", "--engine", "torch", "--epochs", "3", "--worker-init-delay", "0.2", "--json",
        *args, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    path = tmp_path / f"{name}.json"
    path.write_text(done.stdout)
    return path


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("plots")
    return verify(folder, "bug", "--no-persistent-workers"), verify(folder, "fixed")


def svg_texts(path: Path) -> list[str]:
    root = ElementTree.parse(path).getroot()
    assert root.tag == SVG
    return [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]


def test_verify_plot_writes_an_svg(tmp_path: Path) -> None:
    target = tmp_path / "epochs.svg"
    done = run_cli("verify", "--engine", "torch", "--epochs", "2", "--plot", str(target),
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    root = ElementTree.parse(target).getroot()
    assert root.tag == SVG
    assert "verify --engine torch (PASS)" in ElementTree.tostring(root, encoding="unicode")


def test_plot_puts_saved_results_side_by_side(results: tuple[Path, Path], tmp_path: Path) -> None:
    bug, fixed = results
    assert json.loads(bug.read_text())["verdict"] == "FAIL"
    target = tmp_path / "compare.svg"
    done = run_cli("plot", str(bug), str(fixed), "-o", str(target), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = ElementTree.tostring(ElementTree.parse(target).getroot(), encoding="unicode")
    assert "bug (FAIL)" in text and "fixed (PASS)" in text
    assert "train: worker pool started" in text


def test_plot_refuses_what_is_not_a_result(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"findings": []}')
    done = run_cli("plot", str(other), "-o", str(tmp_path / "x.svg"), cwd=tmp_path)
    assert done.returncode == 2 and "not a verify or trace result" in done.stderr
    assert not (tmp_path / "x.svg").exists()


def test_without_matplotlib_plot_says_which_extra(results: tuple[Path, Path], tmp_path: Path):
    blocked = (
        "import sys; sys.modules['matplotlib'] = None\nfrom lintloader.cli.main import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked, "plot", str(results[1]), "-o", str(tmp_path / "p.svg")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "lintloader[plot]" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_trace_plot_marks_every_respawn(tmp_path: Path) -> None:
    runtime = Path(__file__).resolve().parents[1] / "fixtures" / "runtime"
    target, report = tmp_path / "trace.svg", tmp_path / "trace.json"
    done = run_cli(
        "trace", "--plot", str(target), "--json", str(report), "--",
        sys.executable, str(runtime / "trace" / "fetcher_loop.py"),
        str(runtime / "buggy_fetcher.py"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    text = ElementTree.tostring(ElementTree.parse(target).getroot(), encoding="unicode")
    assert "trace (respawned)" in text
    assert "runtime/buggy_fetcher.py:60: worker pool started" in text
    again = run_cli("plot", str(report), "-o", str(tmp_path / "again.svg"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr

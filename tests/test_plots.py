"""Per-epoch plots from real runtime results: ``verify --plot``, and ``lintloader plot`` of
saved results side by side; the pictures are parsed as SVG."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli

SVG = "{http://www.w3.org/2000/svg}svg"
# drawing needs the `plot` extra; without it these tests skip (the one-line refusals still run)
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
NO_MATPLOTLIB = "matplotlib is not installed (pip install 'lintloader[plot]')"
needs_matplotlib = pytest.mark.skipif(not HAS_MATPLOTLIB, reason=NO_MATPLOTLIB)


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
    """verify's JSON of the bug and of the fixed loop; the fixed run also draws its plot
    (``fixed.svg`` beside its JSON)."""
    folder = tmp_path_factory.mktemp("plots")
    plot = ("--plot", str(folder / "fixed.svg"))
    return verify(folder, "bug", "--no-persistent-workers"), verify(folder, "fixed", *plot)


def svg_texts(path: Path) -> list[str]:
    root = ElementTree.parse(path).getroot()
    assert root.tag == SVG
    return [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]


@needs_matplotlib
def test_verify_plot_writes_an_svg(results: tuple[Path, Path]) -> None:
    fixed = results[1]
    assert json.loads(fixed.read_text())["exit_code"] == 0
    target = fixed.with_suffix(".svg")
    root = ElementTree.parse(target).getroot()
    assert root.tag == SVG
    text = ElementTree.tostring(root, encoding="unicode")
    assert "verify --engine torch: first batch per epoch" in text
    assert "(PASS: 1 pool(s) started)" in text and "first-batch latency (s)" in text


@needs_matplotlib
def test_a_factory_plot_is_titled_with_the_command_given(tmp_path: Path) -> None:
    target = tmp_path / "factory.svg"
    spec = (
        str(Path(__file__).parents[1] / "fixtures" / "runtime" / "plain_loader.py") + ":make_loader"
    )
    done = run_cli("verify", "--dataloader", spec, "--epochs", "2", "--plot", str(target),
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    texts = svg_texts(target)
    start = next(n for n, t in enumerate(texts) if t.startswith("verify --dataloader"))
    end = next(n for n, t in enumerate(texts) if t.startswith("(PASS") or t.startswith("(FAIL"))
    title = texts[start:end]  # wrapped to the panel's width: the long path is not cut off
    assert len(title) > 1 and max(map(len, title)) <= 5.5 * 11, title
    whole = f"verify --dataloader {spec}: first batch per epoch"
    assert "".join(title).replace(" ", "") == whole.replace(" ", "")
    assert not any("--engine factory" in t for t in texts)  # the title says what was run
    assert texts[end + 1] == "train"  # the legend: the loader's own name, no folder


@needs_matplotlib
def test_plot_puts_saved_results_side_by_side(results: tuple[Path, Path], tmp_path: Path) -> None:
    bug, fixed = results
    assert json.loads(bug.read_text())["verdict"] == "FAIL"
    target = tmp_path / "compare.svg"
    done = run_cli("plot", str(bug), str(fixed), "-o", str(target), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = ElementTree.tostring(ElementTree.parse(target).getroot(), encoding="unicode")
    assert "(FAIL: 3 pool(s) started)" in text and "(PASS: 1 pool(s) started)" in text
    assert "a worker pool started (the first batch waited on it)" in text


def test_plot_refuses_what_is_not_a_result(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"findings": []}')
    done = run_cli("plot", str(other), "-o", str(tmp_path / "x.svg"), cwd=tmp_path)
    assert done.returncode == 2 and "not a verify or trace result" in done.stderr
    assert not (tmp_path / "x.svg").exists()


HOSTILE = {
    "deep": "[" * 100_000 + "]" * 100_000,
    "binary": b"\xff\xfe\x00garbage",
    "strings": '{"loaders": [{"epochs": [{"first_batch_s": "x", "epoch": "abc"}]}]}',
    "overflow": '{"sites": [{"pools": [], "pass_latencies": [{"first_batch_s": 1e999}]}]}',
    "sites_not_list": '{"sites": [1, 2]}',
    "loader_not_object": '{"loaders": [null]}',
    "passes_not_list": '{"loaders": [{"epochs": {"a": 1}}]}',
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_plot_of_hostile_json_is_one_line(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.json"
    content = HOSTILE[name]
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    done = run_cli("plot", str(path), "-o", str(tmp_path / "x.png"), cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    if name == "overflow":  # an infinite latency is drawn as no point, not an error
        if not HAS_MATPLOTLIB:
            pytest.skip(NO_MATPLOTLIB)
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"lintloader: error: {path}: ")


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


@needs_matplotlib
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
    assert "trace fetcher_loop.py: first batch per pass" in text
    assert "(FAIL: 2 extra pool(s)," in text
    assert "buggy_fetcher.py:60 via main" in svg_texts(target)  # not the folder it ran in
    again = run_cli("plot", str(report), "-o", str(tmp_path / "again.svg"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr


@needs_matplotlib
def test_a_series_has_one_colour_in_every_panel(results: tuple[Path, Path]) -> None:
    """verify's bug and fixed results side by side: ``train`` is one colour in both panels
    (the matplotlib lines drawn), whatever else a panel holds."""
    from matplotlib.figure import Figure

    from lintloader.runtime.plot import drawn, load_panel

    bug, fixed = (load_panel(path) for path in results)
    lonely = replace(fixed, series=(replace(fixed.series[0], loader="val"), *fixed.series))
    for panels in ((bug, fixed), (lonely, bug)):
        figure = drawn(Figure(figsize=(11, 4.6)), panels)
        colours = [{line.get_label(): line.get_color() for line in a.lines} for a in figure.axes]
        assert all(c["train"] == colours[0]["train"] for c in colours), colours
        assert len({c for panel in colours for c in panel.values()}) == len(panels[0].series)


def test_trace_labels_name_the_file_not_its_folder() -> None:
    """A site is labelled by its file's name, with as many folders as tell two files of the
    same name apart (``p3/train.py``, ``p4/train.py``), never the folder alone."""
    from lintloader.runtime.plot import labels, panel_of

    def trace(*paths: str) -> dict[str, object]:
        sites = [{"created_at": {"path": p, "line": 5}, "pools": [], "pass_latencies": []}
                 for p in paths]  # fmt: skip
        return {"sites": sites, "verdict": "OK"}

    one = panel_of(trace("/tmp/p3/train.py"), "one")
    two = panel_of(trace("/tmp/p3/train.py", "/tmp/p4/train.py", "/tmp/p4/data.py"), "two")
    assert list(labels([one]).values()) == ["train.py:5"]
    assert list(labels([two]).values()) == ["p3/train.py:5", "p4/train.py:5", "data.py:5"]

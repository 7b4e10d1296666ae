"""``check --site-packages`` on the test environment itself (torch 2.13 + pytorch-lightning 2.x):
it must finish without a crash and report no error-severity finding (Lightning 2.x keeps workers
alive), and it must scan installed distributions by name through their metadata."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli

needs_torch_and_lightning = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None
    or importlib.util.find_spec("pytorch_lightning") is None,
    reason="needs torch and pytorch-lightning installed (the `runtime` extra)",
)


@needs_torch_and_lightning
def test_installed_torch_and_lightning_have_no_error_findings() -> None:
    result = run_cli(
        "check",
        "--site-packages",
        "torch",
        "pytorch-lightning",
        "--output-format",
        "json",
        "--no-cache",
    )
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    findings = json.loads(result.stdout)
    assert [f for f in findings if f["severity"] == "error" and f["code"] != "LL000"] == []


def whole_site_packages(*options: str) -> subprocess.CompletedProcess[str]:
    """``check --site-packages`` of the whole environment, every finding (info included)."""
    return run_cli(
        "check", "--site-packages", "--output-format", "json", "--exit-zero",
        "--min-severity", "info", *options,
    )  # fmt: skip


@pytest.fixture(scope="module")
def cold_scans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """A cold scan of the whole environment with -j1 and with -j2 (its forked shards): each
    one's cache folder and output, which the tests below read."""
    scans = {}
    for jobs in ("1", "2"):
        cache = tmp_path_factory.mktemp(f"cache-{jobs}")
        result = whole_site_packages("-j", jobs, "--cache-dir", str(cache))
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
        scans[jobs] = (cache, result.stdout)
    return scans


@needs_torch_and_lightning
def test_whole_site_packages_runs_without_a_crash(cold_scans: dict[str, tuple[Path, str]]) -> None:
    findings = json.loads(cold_scans["1"][1])
    assert findings  # info included: the environment has findings, the scan read them
    assert [f for f in findings if f["code"] == "LL101" and f["severity"] == "error"] == []


@needs_torch_and_lightning
def test_whole_site_packages_same_findings_in_forked_shards_and_one_process(
    cold_scans: dict[str, tuple[Path, str]],
) -> None:
    """A cold scan of the whole environment shards its demand rounds over forked children
    with -j2 (rounds.py) and runs them in one process with -j1: same findings, info
    included, and the warm replay of the sharded run agrees too."""
    (cache, sharded), (_, one_process) = cold_scans["2"], cold_scans["1"]
    warm = whole_site_packages("-v", "-j", "2", "--cache-dir", str(cache))
    assert one_process == sharded == warm.stdout
    assert "(0 parsed" in warm.stderr


def make_venv_with(tmp_path: Path, package_dir: Path, dist: str) -> Path:
    """A venv (no pip) whose site-packages holds a copy of ``package_dir`` and a minimal
    .dist-info with a RECORD, like an installed distribution."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    archive = tmp_path / "pkg.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for file in package_dir.rglob("*.py"):
            zipped.write(file, file.relative_to(package_dir.parent))
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(site)
        names = zipped.namelist()
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "RECORD").write_text("".join(f"{n},,\n" for n in names))
    return python


def test_other_interpreter_and_distribution_by_name(tmp_path: Path) -> None:
    package = FIXTURES / "check" / "lightning150" / "minilight"
    python = make_venv_with(tmp_path, package, "mini-light")
    result = run_cli(
        "check",
        "--site-packages",
        "mini_light",
        "--python",
        str(python),
        "--output-format",
        "json",
        "--no-cache",
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    (finding,) = json.loads(result.stdout)
    # The venv lies inside the working directory, so paths are relative to it.
    assert finding["path"].startswith("venv/") and not Path(finding["path"]).is_absolute()
    assert finding["path"].endswith("site-packages/minilight/utilities/fetching.py")
    assert finding["chain"][-1]["path"].endswith("site-packages/minilight/trainer/supporters.py")


def test_python_that_is_not_a_python_is_a_clear_error(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho hello\n")
    fake.chmod(0o755)
    result = run_cli("check", "--site-packages", "--python", str(fake))
    assert result.returncode == 2
    assert "not a usable Python" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

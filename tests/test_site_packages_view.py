"""``check --site-packages``: one line per installed distribution with findings, through the
real CLI on a venv that holds the released pytorch-lightning 1.5.0 wheel (its bundled
``tests/`` included) and a distribution of our own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import run_cli, unpacked_wheel


def venv_site(tmp_path: Path) -> tuple[Path, Path]:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    query = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    done = subprocess.run([str(python), "-c", query], capture_output=True, text=True, check=True)
    return python, Path(done.stdout.strip())


def test_one_line_per_distribution_with_its_advisory(tmp_path: Path) -> None:
    python, site = venv_site(tmp_path)
    unpacked_wheel("pytorch-lightning==1.5.0", site)
    loose = site / "loose_fetcher.py"  # a file no RECORD lists
    loose.write_text(
        "class Fetcher:\n    def __iter__(self):\n        self.loader._iterator = None\n"
        "        return iter(self.loader)\n"
    )
    done = run_cli(
        "check", "--site-packages", "--python", str(python), "--no-cache",
        "--output-format", "concise", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    (line,) = [line for line in lines if line.startswith("pytorch_lightning 1.5.0: ")]
    assert line.startswith("pytorch_lightning 1.5.0: 5 findings (1 error, 4 warning)")
    assert line.endswith(
        f"; affected, fixed in 1.5.1: {python} -m pip install -U 'pytorch-lightning>=1.5.1'"
    )
    # the bundled tests/ are the wheel's (its RECORD lists them): 2 of the 5 findings
    assert sum("venv/lib/" in out and "/site-packages/tests/" in out for out in
               done.stdout.splitlines()) == 2  # fmt: skip
    assert "(no distribution): 1 finding (1 error)" in lines
    assert lines[-2].startswith("Found ")  # the summary comes after the distributions

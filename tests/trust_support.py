"""Helpers of the trust tests: a throwaway environment with one patchable installed package,
the CLI run as a user runs it, and small tmpfs mounts to fill a disk."""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import io
import json
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import run_cli

REPO = Path(__file__).resolve().parent.parent
FIX = REPO / "fixtures" / "fix"
ORIGINAL = (FIX / "relocate_close.in.py").read_bytes()
FIXED = (FIX / "relocate_close.out.py").read_bytes()
CLI = [sys.executable, "-m", "lintloader"]


@dataclass(frozen=True)
class Env:
    """A venv (no pip) whose site directory holds the distribution ``fakefetch``."""

    root: Path
    python: Path
    site: Path

    @property
    def target(self) -> Path:
        return self.site / "fakefetch" / "fetching.py"

    @property
    def backups(self) -> Path:
        return self.site / ".lintloader-backups"

    @property
    def manifest(self) -> Path:
        return self.backups / "manifest.json"

    def fix(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run("fix", "--site-packages", *args, "--python", str(self.python), cwd=self.root)

    def entries(self) -> dict[str, dict[str, object]]:
        return json.loads(self.manifest.read_text())["files"]


def run(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, "--no-cache", cwd=cwd, timeout=timeout)


def make_env(root: Path) -> Env:
    env = root / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    site = Path(purelib)
    package = site / "fakefetch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "fetching.py").write_bytes(ORIGINAL)
    info = site / "fakefetch-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakefetch\nVersion: 1.0\n")
    (info / "RECORD").write_text("fakefetch/__init__.py,,\nfakefetch/fetching.py,,\n")
    return Env(root, python, site)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def wheel(folder: Path, version: str, module: bytes) -> Path:
    """A wheel of ``fakewheel`` ``version`` whose ``fakewheel/fetching.py`` is ``module``."""
    info = f"fakewheel-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: fakewheel\nVersion: {version}\n"
    files = {
        "fakewheel/__init__.py": b"",
        "fakewheel/fetching.py": module,
        f"{info}/METADATA": metadata.encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    rows = io.StringIO()
    writer = csv.writer(rows)
    for name, data in files.items():
        writer.writerow([name, f"sha256={b64(data)}", len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    path = folder / f"fakewheel-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/RECORD", rows.getvalue())
    return path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "256k") -> Iterator[Path]:
    """A small tmpfs mounted on ``where`` (skips the test where mounting is not possible)."""
    where.mkdir(parents=True, exist_ok=True)
    if not sys.platform.startswith("linux") or not shutil.which("mount"):
        pytest.skip("tmpfs mounts need Linux and mount(8)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path) -> None:
    """Fill the file system of ``folder`` to the last byte."""
    for index, size in enumerate((65536, 4096, 512, 1)):
        with (
            open(folder / f"filler{index}", "wb", buffering=0) as handle,
            contextlib.suppress(OSError),
        ):
            while True:
                handle.write(b"\0" * size)

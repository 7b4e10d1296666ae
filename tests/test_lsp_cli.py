"""``lintloader server`` without the ``[lsp]`` extra: one line that names it, exit 2."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

from lintloader import extra_hint

# the core dependencies (and libcst's own)
CORE = ("click", "libcst", "yaml", *(("tomli",) if sys.version_info < (3, 11) else ()))


def test_without_the_extra_one_line_names_it(tmp_path: Path) -> None:
    """An interpreter that sees lintloader and its core dependencies only (no site
    directory: pygls and lsprotocol are not importable)."""
    for name in CORE:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        (tmp_path / name).symlink_to(Path(spec.origin).parent)
    (tmp_path / "lintloader").symlink_to(REPO / "lintloader")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-S", "-m", "lintloader", "server"],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    hint = extra_hint("lsp")  # a checkout's, or git's: lintloader is on no package index
    assert hint.startswith(
        'pip install -e ".[lsp]" (in a checkout), or pip install "lintloader[lsp] @ git+'
    )
    assert done.stderr == f"lintloader: error: lintloader server needs the [lsp] extra: {hint}\n"

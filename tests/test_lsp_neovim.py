"""A real editor: headless Neovim (Debian's ``neovim``) runs ``lintloader server`` on a buggy
project, shows LL101 with its chain as related locations, and applies the safe quick fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, lintloader_command
from lsp_support import FETCHING, SUPPORTERS, buggy_project

pytest.importorskip("pygls", reason="the [lsp] extra is not installed")
NVIM = shutil.which("nvim")
SCRIPT = REPO / "tests" / "editors" / "neovim_quickfix.lua"
pytestmark = pytest.mark.skipif(
    NVIM is None, reason="Neovim is not installed (apt-get install neovim; .ci/run does)"
)


def test_neovim_shows_the_chain_and_applies_the_fix(tmp_path: Path, cli) -> None:
    root = buggy_project(tmp_path)
    expected = tmp_path / "expected"
    shutil.copytree(root, expected)
    cache = {"LINTLOADER_CACHE_DIR": str(tmp_path / "cache")}
    assert cli("fix", ".", cwd=expected, env=cache).returncode == 0
    out = tmp_path / "neovim.json"
    env = {
        **os.environ,
        **cache,
        "LL_ROOT": str(root),
        "LL_OUT": str(out),
        "LL_CMD": json.dumps([*lintloader_command(), "server"]),
        # Neovim's lsp.log and state stay in the test's folder (0.7: the cache, later: state)
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
    }
    subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-c", f"luafile {SCRIPT}"],
        cwd=root, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=400,
        check=False,
    )  # fmt: skip
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["published"] is True
    [diagnostic] = results["diagnostics"]
    assert (diagnostic["code"], diagnostic["lnum"], diagnostic["col"]) == ("LL101", 15, 8)
    related = [(Path(r["path"]), r["line"]) for r in diagnostic["related"]]
    assert related == [
        (root / FETCHING, 15),
        (root / FETCHING, 30),
        (root / SUPPORTERS, 21),
        (root / SUPPORTERS, 20),
    ]
    assert diagnostic["related"][2]["message"].endswith("resets dataloader._iterator = None")
    assert results["titles"][0].startswith("Fix LL101 (safe, relocate)")
    assert results["cleared"] is True
    # the file Neovim wrote is the one `lintloader fix` writes
    assert (root / FETCHING).read_text("utf-8") == (expected / FETCHING).read_text("utf-8")

"""``lintloader server``'s processes: with ``--jobs`` above 1, a cold analysis runs in a child
of a helper forked at the start (``workers/prefork.py``), which parses in forked shards; none
of them outlives the server, whether it exits cleanly or is killed in the middle of that
analysis. Without it (1 job), the server runs no other process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import pytest
from conftest import lintloader_command
from lsp_support import (
    FETCHING,
    buggy_project,
    capabilities,
    codes,
    lsp_session,
    open_document,
    pytest_lsp,
    types,
    until,
    uri,
)

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the helper forks on Linux"),
]
HELPED = ("--jobs", "2")  # a cold analysis in the helper's child, in 2 shards
EPOCH_LOOP = """from torch.utils.data import DataLoader


def train_{n}(dataset):
    for epoch in range(3):
        loader = DataLoader(dataset, num_workers=2, persistent_workers=True)
        for batch in loader:
            pass
"""


def _parents() -> dict[int, int]:
    """pid -> parent pid of every live process (a zombie is not alive)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                state, parent = stat.rpartition(")")[2].split()[:2]
                if state != "Z":
                    found[int(entry)] = int(parent)
    return found


def descendants(pid: int) -> set[int]:
    parents, found, queue = _parents(), set(), [pid]
    while queue:
        parent = queue.pop()
        children = {child for child, of in parents.items() if of == parent}
        queue += list(children - found)
        found |= children
    return found


async def gone(pids: set[int]) -> set[int]:
    """Those of ``pids`` still alive after waiting up to 20 s for them to end."""
    for _ in range(200):
        alive = pids & set(_parents())
        if not alive:
            return set()
        await asyncio.sleep(0.1)
    return alive


async def test_a_clean_exit_leaves_no_process(tmp_path):
    root = buggy_project(tmp_path)
    async with lsp_session(root, tmp_path / "cache", args=HELPED) as client:
        assert client._server is not None
        server = client._server.pid
        open_document(client, root / FETCHING)
        await until(lambda: codes(client, uri(root, FETCHING)) == ["LL101"], "LL101")
        helpers = descendants(server)
    assert helpers  # the helper, forked at the start (after the initialize answer)
    assert await gone(helpers) == set()


async def test_a_killed_server_takes_its_cold_analysis_along(tmp_path):
    root = tmp_path / "project"
    (root / "train").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "big"\n', encoding="utf-8")
    for n in range(1500):  # each is parsed: the cold analysis takes a while
        (root / "train" / f"loop_{n}.py").write_text(EPOCH_LOOP.format(n=n), encoding="utf-8")
    client = pytest_lsp.make_test_lsp_client()
    env = {**os.environ, "LINTLOADER_CACHE_DIR": str(tmp_path / "cache")}
    await client.start_io(*lintloader_command(), "server", *HELPED, env=env, cwd=str(root))
    assert client._server is not None
    server = client._server
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities(),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="project")],
            )
        )
        # the helper, its job's child and that child's shards, while the analysis runs
        await until(lambda: len(descendants(server.pid)) >= 2, "the cold analysis's child")
        running = descendants(server.pid)
        os.kill(server.pid, signal.SIGKILL)
        assert await gone(running) == set()
        # killed, not finished: the analysis never stored its run
        assert not list((tmp_path / "cache").rglob("*.replay"))
    finally:
        if server.returncode is None:
            server.kill()
        with contextlib.suppress(Exception):
            await client.stop()


async def test_one_job_runs_no_other_process(tmp_path):
    root = buggy_project(tmp_path)
    async with lsp_session(root, tmp_path / "cache", args=("--jobs", "1")) as client:
        assert client._server is not None
        open_document(client, root / FETCHING)
        await until(lambda: codes(client, uri(root, FETCHING)) == ["LL101"], "LL101")
        assert descendants(client._server.pid) == set()

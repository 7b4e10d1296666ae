"""``lintloader server`` answers ``initialize`` before it imports pygls
(``integrations/lsp/handshake.py``): the capabilities it announces must be what pygls would
have announced for the features the server registers, for every client pytest-lsp knows, and
a first message that is not ``initialize`` must reach pygls as sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import lintloader_command

pytest_lsp = pytest.importorskip("pytest_lsp", reason="the [lsp] test tools are not installed")
types = pytest.importorskip("lsprotocol.types", reason="the [lsp] extra is not installed")

from lintloader import __version__  # noqa: E402
from lintloader.integrations.lsp import handshake  # noqa: E402
from lintloader.integrations.lsp.analysis import Settings  # noqa: E402
from lintloader.integrations.lsp.server import build_server  # noqa: E402

CLIENTS = sorted(
    path.stem.replace("_v", "@v")
    for path in (Path(pytest_lsp.__file__).parent / "clients").glob("*.json")
)


def pygls_answer(client: dict[str, Any]) -> dict[str, Any]:
    """What pygls answers ``initialize`` with, for a client with capabilities ``client``."""
    server = build_server(Settings(use_cache=False, cache_dir=None, cold_jobs=1))
    converter = server.protocol._converter
    params = converter.structure({"capabilities": client}, types.InitializeParams)
    steps = server.protocol.lsp_initialize(params)
    while True:
        try:
            next(steps)
        except StopIteration as done:  # pygls' own steps end with the InitializeResult
            return converter.unstructure(done.value)


def client_capabilities(spec: str) -> dict[str, Any]:
    found = pytest_lsp.client_capabilities(spec)
    return build_server(Settings(False, None, 1)).protocol._converter.unstructure(found)


@pytest.mark.parametrize("spec", CLIENTS)
def test_announced_capabilities_are_pygls_own(spec: str) -> None:
    client = client_capabilities(spec)
    assert handshake.initialize_result({"capabilities": client}, __version__) == pygls_answer(
        client
    )


@pytest.mark.parametrize(
    "client",
    [
        {},
        {"general": {"positionEncodings": ["utf-7", "utf-32", "utf-8"]}},
        {"general": {"positionEncodings": ["utf-7"]}},
        {"textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": False}}},
        {"notebookDocument": {"synchronization": {}}},
    ],
)
def test_announced_capabilities_for_edge_clients(client: dict[str, Any]) -> None:
    assert handshake.initialize_result({"capabilities": client}, __version__) == pygls_answer(
        client
    )


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream) -> dict[str, Any]:
    length = None
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    assert length is not None, "the server closed its output"
    return json.loads(stream.read(length))


def exchange(messages: list[dict[str, Any]], answers: int, tmp_path: Path) -> list[Any]:
    """Send ``messages`` to a real ``lintloader server``, read ``answers`` replies."""
    env = {**os.environ, "LINTLOADER_CACHE_DIR": str(tmp_path / "cache")}
    server = subprocess.Popen(
        [*lintloader_command(), "server", "--jobs", "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=tmp_path, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(b"".join(frame(m) for m in messages))
        server.stdin.flush()
        replies = [read_message(server.stdout) for _ in range(answers)]
        server.stdin.close()
        assert server.wait(60) == 0
        return replies
    finally:
        if server.poll() is None:
            os.killpg(server.pid, 9)
            server.wait()


def test_the_handshake_then_pygls_answers(tmp_path: Path) -> None:
    initialize = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
    replies = exchange(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        ],
        answers=2,
        tmp_path=tmp_path,
    )
    assert replies[0]["id"] == 1
    assert replies[0]["result"]["serverInfo"] == {"name": "lintloader", "version": __version__}
    assert replies[0]["result"]["capabilities"]["positionEncoding"] == "utf-16"
    assert {"jsonrpc": "2.0", "id": 2, "result": None}.items() <= replies[1].items()


def test_a_first_message_other_than_initialize_reaches_pygls(tmp_path: Path) -> None:
    replies = exchange(
        [
            {"jsonrpc": "2.0", "id": 7, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        ],
        answers=1,
        tmp_path=tmp_path,
    )
    assert replies[0]["id"] == 7 and replies[0]["result"] is None


def test_the_server_is_built_without_the_fixers() -> None:
    """The fixers and libcst are imported when a code action is made, not to start the server
    and show its first diagnostics (a third of its start-up imports, round 8)."""
    script = (
        "import sys\n"
        "from lintloader.integrations.lsp.analysis import Settings\n"
        "from lintloader.integrations.lsp.server import build_server\n"
        "build_server(Settings(use_cache=False, cache_dir=None, cold_jobs=1))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('libcst', 'lintloader.fixers.'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.strip()
    assert "libcst" not in loaded and "lintloader.fixers.runner" not in loaded, loaded

"""The LSP handshake, answered before pygls and lsprotocol are imported.

Importing pygls and lsprotocol takes most of a second (seconds on a busy machine), and an
editor waits for the ``initialize`` result before it sends anything else. So ``lintloader
server`` reads the first message itself, answers ``initialize`` with the capabilities the
server registers (the same JSON pygls' ``ServerCapabilitiesBuilder`` makes of them:
``tests/test_lsp_handshake.py`` compares the two for every client in pytest-lsp's
catalogue), and then hands the request to pygls, which sets up its workspace from it and
reads on from the next message. A first message that is not ``initialize`` is handed to
pygls unread, as if nothing had read it.

Standard library only: this module runs before anything heavy is imported.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any, BinaryIO

ENCODINGS = ("utf-8", "utf-16", "utf-32")  # pygls' supported position encodings
SERVER_NAME = "lintloader"
MAX_HEADER_LINES = 32
MAX_BODY = 64 * 1024 * 1024  # an initialize request is a few KB; anything near this is not one

# what the server registers (integrations/lsp/server.py), as pygls announces it
CODE_ACTION_KINDS = ("quickfix", "source.fixAll", "source.fixAll.lintloader")
NOTEBOOK_SYNC = {
    "notebookSelector": [{"cells": [{"language": "python"}], "notebook": "*"}],
    "save": True,
}


@dataclass(frozen=True)
class Handshake:
    """What the handshake read: the ``initialize`` request's params (None when the first
    message was something else), and the bytes pygls must still read before the rest."""

    params: dict[str, Any] | None
    unread: bytes


def _read_message(stream: BinaryIO) -> tuple[bytes, dict[str, Any] | None]:
    """One message of the base protocol: the bytes read, and its JSON (None when it is not
    a readable JSON-RPC message: pygls then reads the bytes and answers as it does)."""
    raw = b""
    length: int | None = None
    for _ in range(MAX_HEADER_LINES):
        line = stream.readline()
        raw += line
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            length = int(value.strip())
    if length is None or length > MAX_BODY:
        return raw, None
    body = stream.read(length)
    raw += body
    try:
        message = json.loads(body)
    except ValueError:
        return raw, None
    return raw, message if isinstance(message, dict) else None


def _get(tree: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(tree, dict):
            return None
        tree = tree.get(key)
    return tree


def position_encoding(client: object) -> str:
    """The client's first offered encoding that pygls supports, else UTF-16."""
    offered = _get(client, "general", "positionEncodings")
    for encoding in offered if isinstance(offered, list) else ():
        if encoding in ENCODINGS:
            return str(encoding)
    return "utf-16"


def capabilities(client: object) -> dict[str, Any]:
    """The server's capabilities for a client with capabilities ``client`` (JSON)."""
    sync: dict[str, Any] = {"openClose": True, "change": 2}
    synchronization = _get(client, "textDocument", "synchronization")
    for key in ("willSave", "willSaveWaitUntil"):
        if _get(synchronization, key) is not None:  # registered by no feature: False
            sync[key] = False
    sync["save"] = True
    found: dict[str, Any] = {"positionEncoding": position_encoding(client)}
    found["textDocumentSync"] = sync
    if _get(client, "notebookDocument") is not None:
        found["notebookDocumentSync"] = NOTEBOOK_SYNC
    found["hoverProvider"] = True
    found["codeActionProvider"] = {
        "codeActionKinds": list(CODE_ACTION_KINDS),
        "resolveProvider": True,
    }
    found["executeCommandProvider"] = {"commands": []}
    found["diagnosticProvider"] = {
        "interFileDependencies": True,
        "workspaceDiagnostics": True,
        "identifier": SERVER_NAME,
    }
    found["workspace"] = {
        "workspaceFolders": {"supported": True, "changeNotifications": True},
        "fileOperations": {},
    }
    return found


def initialize_result(params: dict[str, Any], version: str) -> dict[str, Any]:
    return {
        "capabilities": capabilities(params.get("capabilities")),
        "serverInfo": {"name": SERVER_NAME, "version": version},
    }


def _write(stream: BinaryIO, message: dict[str, Any]) -> None:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


def answer_initialize(stdin: BinaryIO, stdout: BinaryIO, version: str) -> Handshake:
    """Read the first message; answer it when it is ``initialize``."""
    raw, message = _read_message(stdin)
    params = message.get("params") if message else None
    if message is None or message.get("method") != "initialize" or not isinstance(params, dict):
        return Handshake(params=None, unread=raw)
    result = initialize_result(params, version)
    _write(stdout, {"jsonrpc": "2.0", "id": message.get("id"), "result": result})
    return Handshake(params=params, unread=b"")


class _Replay(io.RawIOBase):
    """``unread`` first, then ``stream``: what pygls reads after the handshake."""

    def __init__(self, unread: bytes, stream: BinaryIO) -> None:
        self._unread = unread
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._unread:
            size = min(len(buffer), len(self._unread))
            buffer[:size] = self._unread[:size]
            self._unread = self._unread[size:]
            return size
        data = getattr(self._stream, "read1", self._stream.read)(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def rest_of(stdin: BinaryIO, handshake: Handshake) -> BinaryIO:
    """The stream pygls reads: ``stdin`` itself, or the unread message before it."""
    if not handshake.unread:
        return stdin
    return io.BufferedReader(_Replay(handshake.unread, stdin))

"""New file bytes (what a fix strategy or the noqa writer returns) as LSP text edits.

An edit replaces whole lines, found by a line diff of the old text and the new one, so that
the editor keeps its cursor and marks outside the changed lines, and so that no position
depends on the session's character encoding (every position is at a line's start, except the
end of a last line without a newline).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from lsprotocol import types
from pygls.workspace import PositionCodec

from lintloader.integrations.lsp.diagnostics import uri_of


def decoded(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def text_edits(old: bytes, new: bytes, codec: PositionCodec) -> list[types.TextEdit]:
    """The line edits that turn ``old`` into ``new``."""
    before = decoded(old).splitlines(keepends=True)
    after = decoded(new).splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    edits = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append(
            types.TextEdit(
                range=types.Range(
                    start=_line_start(before, i1, codec), end=_line_start(before, i2, codec)
                ),
                new_text="".join(after[j1:j2]),
            )
        )
    return edits


def _line_start(lines: list[str], index: int, codec: PositionCodec) -> types.Position:
    """The start of line ``index``; past a last line without a newline, that line's end."""
    if index < len(lines) or not lines or lines[-1].endswith(("\n", "\r")):
        return types.Position(line=index, character=0)
    last = lines[-1]
    return types.Position(line=len(lines) - 1, character=codec.client_num_units(last))


def workspace_edit(
    before: Mapping[str, bytes], after: Mapping[str, bytes], codec: PositionCodec
) -> types.WorkspaceEdit:
    """One edit of every file whose bytes change (a relocation may touch several)."""
    changes = {
        uri_of(path): text_edits(before[path], data, codec)
        for path, data in sorted(after.items())
        if data != before[path]
    }
    return types.WorkspaceEdit(changes=changes)

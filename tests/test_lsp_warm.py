"""Warm == cold through the language server: after any series of unsaved edits (the server
replays or revisits its stored run, ``incremental/revisit.py``), the diagnostics of every file
are what a cold ``lintloader check`` prints for the same content written to disk."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES
from harness import run_cli_forked
from lsp_support import answer, change_document, lsp_session, open_document, types
from test_revisit import EPOCH_REBUILD, HELPER, _blank_line_inserted, _call_added

pytestmark = pytest.mark.asyncio
SEED = 20261205
EDITS = (
    lambda text, n: text + f"\n# comment {n}\n",
    lambda text, n: f"# line {n}\n" + text,
    lambda text, n: "from torch.utils.data import DataLoader\n" + text + EPOCH_REBUILD.format(n=n),
    lambda text, n: text.replace("_iterator", "_it"),
    lambda text, n: text.replace("persistent_workers=True", "persistent_workers=False"),
    lambda text, n: _blank_line_inserted(text, n),
    lambda text, n: text + HELPER.format(name=f"helper_{n}"),
    lambda text, n: _call_added(text, n, f"print({n})"),
    lambda text, n: _call_added(text, n, "reset()"),
    lambda text, n: _call_added(text, n, "DataFetcher()"),
)


def _project(root: Path) -> Path:
    for fixture in sorted((FIXTURES / "check").iterdir()):
        shutil.copytree(fixture, root / fixture.name, ignore=shutil.ignore_patterns("*.txt"))
    (root / "pyproject.toml").write_text('[project]\nname = "warm"\n', encoding="utf-8")
    return root


def _served(report: types.WorkspaceDiagnosticReport, root: Path) -> set[tuple[object, ...]]:
    """(path, code, line, column, message, the chain's places) of every diagnostic."""
    found = set()
    for item in report.items:
        path = Path(item.uri.removeprefix("file://")).relative_to(root).as_posix()
        for diagnostic in item.items:
            related = tuple(
                (
                    Path(r.location.uri.removeprefix("file://")).relative_to(root).as_posix(),
                    r.location.range.start.line + 1,
                )
                for r in diagnostic.related_information or ()
            )
            found.add((path, *diagnostic.data["key"], related))
    return found


def _checked(printed: str) -> set[tuple[object, ...]]:
    """The same, from what a cold ``lintloader check --output-format json`` printed."""
    found = set()
    for f in json.loads(printed):
        hops = tuple((h["path"], h["line"]) for h in (*f["chain"], *f["also_reaches"]))
        found.add((f["path"], f["code"], f["line"], f["column"], f["message"], hops))
    return found


async def test_after_any_series_of_unsaved_edits_diagnostics_are_a_cold_checks(tmp_path):
    root = _project(tmp_path / "project")
    files = sorted(p.relative_to(root) for p in root.rglob("*.py"))
    seed = int(os.environ.get("LINTLOADER_LSP_SEED", SEED))
    rng = random.Random(seed)
    buffers: dict[Path, str] = {}  # the open documents' texts
    versions: dict[Path, int] = {}
    served_at: list[set[tuple[object, ...]]] = []  # per step: what the server served
    disks: list[Path] = []  # per step: the open documents' texts written to disk
    async with lsp_session(root, tmp_path / "cache", pull=True) as client:
        for step in range(int(os.environ.get("LINTLOADER_LSP_STEPS", 12))):
            for relative in rng.sample(files, rng.choice((1, 1, 2))):
                path = root / relative
                text = buffers.get(relative, path.read_text(encoding="utf-8"))
                if relative in buffers and rng.random() < 0.2:
                    text = path.read_text(encoding="utf-8")  # undone: as on disk again
                else:
                    text = rng.choice(EDITS)(text, step)
                if relative not in buffers:
                    open_document(client, path)
                versions[relative] = versions.get(relative, 1) + 1
                change_document(client, path, text, versions[relative])
                buffers[relative] = text
            served = await answer(
                client.workspace_diagnostic_async(
                    types.WorkspaceDiagnosticParams(previous_result_ids=[])
                )
            )
            disk = tmp_path / f"disk{step}"
            shutil.copytree(root, disk)
            for relative, text in buffers.items():
                (disk / relative).write_text(text, encoding="utf-8")
            served_at.append(_served(served, root))
            disks.append(disk)
    # the cold checks, one per step, each a cold run of its own (forked from one process)
    cold = run_cli_forked([(("check", "--no-cache", "--output-format", "json", "."), d)
                           for d in disks])  # fmt: skip
    for step, (diagnostics, done) in enumerate(zip(served_at, cold, strict=True)):
        assert done.returncode in (0, 1), done.stderr
        expected = _checked(done.stdout)
        assert diagnostics == expected, f"seed {seed}, step {step}"
    assert any(code == "LL101" for _, code, *_ in expected)  # something was compared

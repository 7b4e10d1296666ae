"""Concurrent ``check`` runs sharing one cache directory (issue 8): identical findings, no corrupt
entry, and a corrupt or truncated entry is a miss that the next run repairs.
"""

from __future__ import annotations

import pickle
import re
import subprocess
from pathlib import Path

from conftest import lintloader_command, run_cli

from lintloader.cache.files import read_entry
from lintloader.summary.model import SUMMARY_SCHEMA, FileSummary

MODULES = 24


def module(index: int) -> str:
    if index % 3 == 0:  # the bug, split over two methods
        return (
            f"class F{index}:\n    def __iter__(self):\n        self.reset()\n"
            f"        return self\n\n    def reset(self):\n        self.n = {index}\n"
            "        self.loader._iterator = None\n"
        )
    if index % 3 == 1:  # a helper another module's __iter__ reaches
        return f"def shutdown{index}(loader):\n    loader._iterator = None\n"
    return (
        f"from pkg.m{index - 1} import shutdown{index - 1}\n\n\nclass G{index}:\n"
        f"    def __iter__(self):\n        shutdown{index - 1}(self.loader)\n"
        "        return self\n"
    )


def make_tree(root: Path) -> None:
    package = root / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for index in range(MODULES):
        (package / f"m{index}.py").write_text(module(index))


def check(*extra: str) -> list[str]:
    return [*lintloader_command(), "check", ".", "--output-format", "json", "-j", "1", *extra]


def test_two_concurrent_runs_share_a_cache_safely(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    make_tree(root)
    cache = tmp_path / "shared-cache"
    reference = run_cli("check", ".", "--output-format", "json", "--no-cache", cwd=root)
    assert reference.returncode == 1, reference.stderr
    assert reference.stdout.count('"code": "LL101"') >= MODULES // 3

    runs = [
        subprocess.Popen(
            check("--cache-dir", str(cache)),
            cwd=root,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    for run, (stdout, stderr) in zip(runs, outputs, strict=True):
        assert run.returncode == 1, stderr
        assert stdout == reference.stdout

    entries = list(cache.glob("summaries-*/*/*.json"))
    assert len(entries) >= MODULES - 1  # every parsed file (the empty __init__ needs no parse)
    for entry in entries:
        stored = read_entry(cache, entry, f"summary {SUMMARY_SCHEMA}", FileSummary)
        assert isinstance(stored, FileSummary)
    assert not list(cache.rglob(".tmp-*"))

    warm = run_cli(
        "check", "-v", ".", "--output-format", "json", "--cache-dir", str(cache), cwd=root
    )
    assert warm.stdout == reference.stdout
    # everything from the cache; the cache may hold more entries than files, since check
    # tries fixes in memory (issue 43) and those trial sources are summarized too
    cached = int(re.search(r"\(0 parsed, (\d+) from cache", warm.stderr).group(1))
    assert MODULES - 1 <= cached <= len(entries), warm.stderr


def test_corrupt_cache_entries_are_misses_and_get_repaired(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    make_tree(root)
    cache = tmp_path / "cache"
    first = run_cli(
        "check", "-v", ".", "--output-format", "json", "--cache-dir", str(cache), cwd=root
    )
    parsed = int(re.search(r"\((\d+) parsed, 0 from cache", first.stderr).group(1))
    files = sorted(p for p in cache.rglob("*") if p.is_file())
    for index, entry in enumerate(files):  # whatever the layout: every file spoiled
        # cut and empty: what a crash may leave of an entry written without fsync
        spoiled = (
            entry.read_bytes()[:20],
            b"not a pickle at all",
            pickle.dumps({"a": "dict"}),
            b"",
        )
        entry.write_bytes(spoiled[index % 4])
    again = run_cli(
        "check", "-v", ".", "--output-format", "json", "--cache-dir", str(cache), cwd=root
    )
    assert again.stdout == first.stdout
    assert f"({parsed} parsed, 0 from cache" in again.stderr, again.stderr
    warm = run_cli(
        "check", "-v", ".", "--output-format", "json", "--cache-dir", str(cache), cwd=root
    )
    assert warm.stdout == first.stdout
    assert f"(0 parsed, {parsed} from cache" in warm.stderr, warm.stderr

"""Concurrent ``check`` runs sharing one cache directory (issue 8): identical findings, no corrupt
entry, and a corrupt or truncated entry is a miss that the next run repairs.
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import time
from pathlib import Path

from child_processes import Processes
from conftest import lintloader_command, run_cli

from lintloader.cache.files import MARKER, cache_problem, read_entry
from lintloader.summary.model import SUMMARY_SCHEMA, FileSummary
from lintloader.trust.safe_file import TEMP_SUFFIX

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


def test_another_runs_temporary_in_a_new_cache_root_is_not_judged(tmp_path: Path) -> None:
    """A run that finds another run's atomic write half done in the cache root (its temporary,
    here a moment, renamed or removed at any time) uses the cache: the temporary is neither
    stated nor judged (a rival's temporary once made a flake8 worker go on without the cache:
    "No such file or directory")."""
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    rival = root / f".{MARKER}.4242-0123abcd{TEMP_SUFFIX}"
    rival.mkdir()
    rival.chmod(0o777)  # judged, it would be "writable by others"
    assert cache_problem(root) is None


RIVALS = """
import sys, time
from pathlib import Path
from lintloader.cache.files import cache_problem
root, start, count = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
time.sleep(max(0.0, start - time.time() - 0.01))  # asleep, not spinning, until just before
while time.time() < start:
    pass
problems = [problem for i in range(count) if (problem := cache_problem(root / f"d{i}"))]
print(len(problems), problems[:1])
"""


def test_runs_creating_the_same_cache_roots_at_once_all_use_them(
    tmp_path: Path, processes: Processes
) -> None:
    """Four processes make the same 300 fresh cache roots at the same moment (flake8's workers,
    pre-commit's parallel hooks): each root is usable to every one of them."""
    start = time.time() + 1.0
    args = [sys.executable, "-c", RIVALS, str(tmp_path), str(start), "300"]
    rivals = [processes.start(args, stdout=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [rival.communicate(timeout=120)[0] for rival in rivals]
    assert outputs == ["0 []\n"] * 4

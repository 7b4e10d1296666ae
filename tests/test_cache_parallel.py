"""Findings are the same with and without the cache, with one or several worker processes, and
a warm run trusts the stat index: it reads no unchanged file, but notices every change."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli

from lintloader.cache.summaries import SummaryCache, content_digest, summary_key
from lintloader.pipeline.engine import CheckOptions, read_source, run_check
from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.read.sources import SourceSet
from lintloader.scan.read.stamps import RACY_NS
from lintloader.select.parse import PARALLEL_MIN_BYTES, summarize_files
from lintloader.workers.progress import ParseStats

# Enough bytes that -j2 really starts worker processes (12 padded modules together just above
# the size from which parse.py parallelizes): a few functions, the bulk a comment. As 14,000
# functions, a check of the 6-module tree took ~35 s of CPU (mostly libcst, over the modules
# that hold findings, for their fixes); as a comment, ~2 s.
PADDING_FUNCTIONS = 8
PADDING_LINE = "# padding " + "-" * 59 + "\n"
PADDING_LINES = PARALLEL_MIN_BYTES // (12 * len(PADDING_LINE)) + 1


def padding(index: int) -> str:
    functions = "".join(
        f"\n\ndef helper_{index}_{n}(value):\n    total = value + {n}\n    return [total] * 3\n"
        for n in range(PADDING_FUNCTIONS)
    )
    return functions + "\n" + PADDING_LINE * PADDING_LINES


LOADER_MODULE = """
class Loader:
    def __init__(self, dataloader):
        self.dataloader = dataloader

    def reset(self):
        self.dataloader._iterator = None
"""

FETCHER_MODULE = """
from .loader_{n} import Loader


class Fetcher{n}:
    def __init__(self, dataloader):
        self.loader = Loader(dataloader)

    def __iter__(self):
        self.loader.reset()  # LL101
        return self
"""


def make_tree(root: Path, modules: int = 6) -> Path:
    """A package whose chains cross files, padded so that parsing it is worth two processes;
    plus copies of the Lightning 1.5.0 and 1.5.1 fixture shapes."""
    package = root / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for n in range(modules):
        (package / f"loader_{n}.py").write_text(LOADER_MODULE + padding(n))
        (package / f"fetch_{n}.py").write_text(FETCHER_MODULE.format(n=n) + padding(n + 100))
    for name in ("lightning150", "lightning151", "super_chain", "reexport"):
        shutil.copytree(FIXTURES / "check" / name, root / name)
    return root


def check_json(root: Path, *args: str) -> tuple[str, str]:
    result = run_cli("check", ".", "--output-format", "json", *args, cwd=root)
    assert result.returncode == 1, result.stderr
    return result.stdout, result.stderr


def age(root: Path, seconds: float = RACY_NS / 1e9 + 0.5) -> None:
    """Wait until every file under ``root`` is older than the racy window."""
    newest = max(max(p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in root.rglob("*.py"))
    delay = (newest + seconds * 1e9 - time.time_ns()) / 1e9
    if delay > 0:
        time.sleep(min(delay, seconds))


def test_findings_identical_with_and_without_cache_and_processes(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj")
    padded = [p for p in (root / "pkg").glob("*.py") if p.name != "__init__.py"]
    assert sum(p.stat().st_size for p in padded) >= PARALLEL_MIN_BYTES  # -j2 starts workers
    cache = tmp_path / "cache"
    reference, _ = check_json(root, "--no-cache", "-j", "1")
    assert reference.count('"code": "LL101"') >= 7  # 6 fetchers + lightning150
    assert check_json(root, "--no-cache", "-j", "2")[0] == reference
    cold, cold_err = check_json(root, "-v", "--cache-dir", str(cache), "-j", "2")
    assert cold == reference
    assert "0 from cache" in cold_err
    age(root)
    warm, warm_err = check_json(root, "-v", "--cache-dir", str(cache), "-j", "1")
    assert warm == reference
    assert "(0 parsed," in warm_err, warm_err


def test_an_edited_file_is_noticed_even_with_its_size_and_mtime_restored(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj", modules=2)
    cache = tmp_path / "cache"
    age(root)  # so that the index trusts every file's stamp
    check_json(root, "--cache-dir", str(cache))
    target = root / "pkg" / "loader_0.py"
    before = target.stat()
    text = target.read_text()
    # same size, same mtime: the reset becomes a harmless assignment
    harmless = text.replace("self.dataloader._iterator = None", "self.dataloader.iterator_ = None")
    target.write_text(harmless)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size
    edited, _ = check_json(root, "--cache-dir", str(cache))
    assert edited == check_json(root, "--no-cache")[0]
    assert "fetch_0.py" not in edited and "fetch_1.py" in edited


def test_summaries_identical_from_one_or_two_processes_and_from_the_cache(
    tmp_path: Path,
) -> None:
    root = make_tree(tmp_path / "proj")  # six modules: two processes really start
    files = discover_paths([str(root)], ()).files
    results = []
    for jobs, cache in ((1, None), (2, None), (2, SummaryCache(tmp_path / "c")), (1, None)):
        sources = SourceSet(read_source)
        loaded = sources.load(files, [])
        stats = ParseStats()
        summaries = summarize_files(loaded, sources, cache, jobs, stats)
        results.append(summaries)
        assert stats.parsed == len(loaded)
    cached = SummaryCache(tmp_path / "c")
    sources = SourceSet(read_source)
    loaded = sources.load(files, [])
    stats = ParseStats()
    results.append(summarize_files(loaded, sources, cached, 2, stats))
    assert stats.cached == len(loaded) and stats.parsed == 0
    assert all(result == results[0] for result in results)
    assert any(s.functions for s in results[0].values())


def test_warm_run_reads_no_unchanged_file(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj", modules=2)
    cache = tmp_path / "cache"
    discovery = discover_paths([str(root)], ())
    age(root)
    first = SourceSet(read_source, cache_dir=cache, roots=discovery.roots)
    first.load(discovery.files, [])
    assert first.read_count == len(discovery.files) > 0
    options = CheckOptions(cache_dir=cache, jobs=1)
    reference = run_check(discovery, options).findings
    again = SourceSet(read_source, cache_dir=cache, roots=discovery.roots)
    again.load(discovery.files, [])
    assert again.read_count == 0
    assert all(
        again.digest(f.path) == content_digest(read_source(f.path) or b"") for f in discovery.files
    )
    assert run_check(discovery, options).findings == reference


def test_a_file_changed_within_the_racy_window_is_read_again(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj", modules=1)
    cache = tmp_path / "cache"
    discovery = discover_paths([str(root)], ())
    soon = time.time_ns() + 30 * 10**9
    for file in discovery.files:  # modified "now" as far as the index can tell
        os.utime(file.path, ns=(soon, soon))
    run_check(discovery, CheckOptions(cache_dir=cache, jobs=1))
    sources = SourceSet(read_source, cache_dir=cache, roots=discovery.roots)
    sources.load(discovery.files, [])
    assert sources.read_count == len(discovery.files)


def test_replayed_findings_follow_the_options(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj", modules=1)
    cache = tmp_path / "cache"
    age(root)
    everything, _ = check_json(root, "--cache-dir", str(cache))
    assert check_json(root, "--cache-dir", str(cache))[0] == everything  # replayed
    only = run_cli(
        "check",
        ".",
        "--output-format",
        "json",
        "--cache-dir",
        str(cache),
        "--ignore",
        "LL101",
        cwd=root,
    )
    assert (
        only.stdout
        == run_cli(
            "check", ".", "--output-format", "json", "--no-cache", "--ignore", "LL101", cwd=root
        ).stdout
    )
    assert '"LL101"' not in only.stdout
    assert check_json(root, "--cache-dir", str(cache))[0] == everything


def test_corrupt_index_is_ignored(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj", modules=1)
    cache = tmp_path / "cache"
    reference, _ = check_json(root, "--cache-dir", str(cache))
    for stored in [*cache.rglob("*.index"), *cache.rglob("*.replay")]:
        stored.write_bytes(b"\x80\x04garbage")
    again, _ = check_json(root, "--cache-dir", str(cache))
    assert again == reference


def test_summary_key_depends_on_content_module_package_and_code() -> None:
    digest = content_digest(b"x = 1\n")
    code = "0" * 64
    keys = {
        summary_key(digest, "a", False, code),
        summary_key(digest, "b", False, code),
        summary_key(digest, "a", True, code),
        summary_key(content_digest(b"x = 2\n"), "a", False, code),
        summary_key(digest, "a", False, "1" * 64),
    }
    assert len(keys) == 5


def test_clean_removes_only_lintloader_entries(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj", modules=1)
    cache = tmp_path / "cache"
    check_json(root, "--cache-dir", str(cache))
    assert list(cache.rglob("summaries-*/*/*.json")) and list(cache.rglob("*.index"))
    cleaned = run_cli("clean", "--cache-dir", str(cache))
    assert cleaned.returncode == 0, cleaned.stderr
    assert not cache.exists()
    check_json(root, "--cache-dir", str(cache))
    (cache / "notes.txt").write_text("mine\n")
    run_cli("clean", "--cache-dir", str(cache))
    assert (cache / "notes.txt").read_text() == "mine\n"
    assert [p.name for p in cache.iterdir()] == ["notes.txt"]  # and no marker: not a cache
    again = run_cli("clean", "--cache-dir", str(tmp_path / "never-created"))
    assert again.returncode == 0, again.stderr


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_progress_only_on_a_terminal(tmp_path: Path) -> None:
    import subprocess

    from conftest import lintloader_command

    root = make_tree(tmp_path / "proj", modules=1)
    primary, secondary = os.openpty()
    try:
        process = subprocess.run(
            [*lintloader_command(), "check", ".", "--no-cache"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=secondary,
            timeout=120,
            check=False,
        )
        os.close(secondary)
        secondary = -1
        shown = b""
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)
    assert process.returncode == 1
    assert b"files found" in shown and b"parsed" in shown
    piped = run_cli("check", ".", "--no-cache", cwd=root)
    assert "files found" not in piped.stderr


def test_digests_are_worked_out_only_when_needed_and_the_next_run_replays(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj", modules=1)
    (root / "unrelated.py").write_text("VALUE = 1\n")  # never parsed: no seed token
    cache = tmp_path / "cache"
    age(root)
    discovery = discover_paths([str(root)], ())
    options = CheckOptions(cache_dir=cache, jobs=1, replay=True)
    first = run_check(discovery, options)
    assert first.linked is not None and first.stats.parsed > 0
    index = SourceSet(read_source, cache_dir=cache, roots=discovery.roots).index
    digests = dict(zip(index.paths, index.digests, strict=True))
    assert digests[str(root / "unrelated.py")] == ""  # read and searched, never hashed
    assert {p for p, d in digests.items() if d} == set(first.summaries)
    second = run_check(discovery, options)
    assert second.linked is None  # replayed
    assert second.findings == first.findings
    (root / "unrelated.py").write_text("VALUE = 22\n")  # a new stamp: searched again, and
    third = run_check(discovery, options)  # still not wanted: the stored run holds
    assert third.linked is None and third.stats.parsed == 0
    assert third.findings == first.findings


def test_a_racy_file_read_again_unchanged_still_replays(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj", modules=1)
    age(root)
    fetch = root / "pkg" / "fetch_0.py"
    fetch.write_bytes(fetch.read_bytes())  # same bytes, new mtime: too recent to be trusted
    discovery = discover_paths([str(root)], ())
    options = CheckOptions(cache_dir=tmp_path / "cache", jobs=1, replay=True)
    first = run_check(discovery, options)
    age(root)  # read again next time (its stamp was not trusted), unchanged
    second = run_check(discovery, options)
    assert second.linked is None  # replayed
    assert second.findings == first.findings

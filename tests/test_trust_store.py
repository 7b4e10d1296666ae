"""The cache holds data, and only data the user alone wrote (issue 28, items 1, 6 and 8).

Real ``lintloader`` processes on real directories: entries replaced by pickles that would
create a file if loaded, by data of the wrong shape, or forged by a second user (created with
``useradd``) in a cache shared through a group; a run under ``umask 0``; ``clean`` pointed at a
home directory.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from trust_support import CLI, ORIGINAL

from lintloader.cache import codec

WARNING = "lintloader: warning: cache directory "
ROOT_ONLY = pytest.mark.skipif(
    os.name != "posix" or os.geteuid() != 0 or not shutil.which("useradd"),
    reason="needs root, useradd and setpriv to run a second user",
)


class Planted:
    """A pickle that runs ``touch <marker>`` when it is loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (os.system, (f"touch {self.marker}",))


def run_check(root: Path, cache: Path | None, umask: int | None = None) -> tuple[str, str]:
    """(stdout, stderr) of ``lintloader check .`` (``cache`` None: ``--no-cache``)."""
    extra = ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    result = subprocess.run(
        [*CLI, "check", "-v", ".", "--output-format", "json", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
    )
    assert result.returncode == 1, result.stderr
    assert "internal error" not in result.stderr
    return result.stdout, result.stderr


def make_project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_bytes(ORIGINAL)
    (root / "pkg" / "other.py").write_text("import torch\n\n\ndef f():\n    return 1\n")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What ``check`` prints for that project without a cache (its paths are relative: the
    same for every copy of it), run once for the module."""
    return run_check(make_project(tmp_path_factory.mktemp("reference") / "project"), None)[0]


def entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file() and p.name != "CACHEDIR.TAG")


def test_hostile_entries_are_misses_and_never_run(
    project: Path, tmp_path: Path, reference: str
) -> None:
    """Every entry replaced by a pickle that would create a file, by the header of its kind
    followed by that pickle, by JSON of another shape, and truncated: each entry takes each
    hostile form once, all entries hostile in each run (a rotation: the entry i takes the
    form ``(run + i) % 6``). A run where every entry is a miss reads each of them."""
    cache, marker = tmp_path / "cache", tmp_path / "PWNED"
    run_check(project, cache)
    stored = entries(cache)
    kinds = {path.suffix for path in stored}
    assert {".json", ".index", ".replay", ".digest"} <= kinds, kinds
    payload = pickle.dumps(Planted(marker))
    forms: list[tuple[bytes, ...]] = []
    for path in stored:
        original = path.read_bytes()
        header = original.split(b"\n", 1)[0] + b"\n"
        forms.append(
            (
                payload,
                header + payload,
                header + b'{"not": ["what", "was", "stored"]}',
                header + b"[" * 100_000,
                header + b"9" * 5000,
                original[: len(original) // 2],
            )
        )
    for turn in range(6):
        for index, path in enumerate(stored):
            path.write_bytes(forms[index][(turn + index) % 6])
        out, err = run_check(project, cache)
        assert out == reference, (turn, [path.read_bytes()[:40] for path in stored])
        assert WARNING not in err
        assert not marker.exists(), f"a planted pickle ran (turn {turn})"
    # and a legacy pickle where an old version kept its summaries
    legacy = next(cache.glob("summaries-*/*/")) / f"{'0' * 64}.pickle"
    legacy.write_bytes(payload)
    assert run_check(project, cache)[0] == reference
    assert not marker.exists()


def test_under_umask_0_directories_are_0700_and_entries_0600(
    project: Path, tmp_path: Path, reference: str
) -> None:
    cache = tmp_path / "cache"
    for _ in range(2):  # written, then read back
        assert run_check(project, cache, umask=0)[0] == reference
    modes = {
        path.relative_to(cache).as_posix(): path.stat().st_mode & 0o777
        for path in [cache, *cache.rglob("*")]
    }
    assert modes["."] == 0o700
    assert all(
        mode == (0o700 if (cache / name).is_dir() else 0o600) for name, mode in modes.items()
    ), modes


def test_a_group_writable_cache_is_refused_with_one_warning(
    project: Path, tmp_path: Path, reference: str
) -> None:
    cache = tmp_path / "cache"
    run_check(project, cache)
    cache.chmod(0o770)
    out, err = run_check(project, cache)
    assert out == reference
    assert err.count(WARNING) == 1 and "writable by its group" in err, err


def test_entries_in_a_directory_someone_else_can_write_are_misses(
    project: Path, tmp_path: Path, reference: str
) -> None:
    """A store below a private root that its group can write (made by an older version
    under ``umask 002``): one warning, no cache, and what is in it is not read, even a
    well-formed entry; ``clean`` removes it. Deeper down, or an entry itself: a miss."""
    cache = tmp_path / "cache"
    run_check(project, cache)
    (replay,) = cache.glob("index-*/*.replay")
    forged = forge_replay(replay.read_bytes())
    replay.write_bytes(forged)
    replay.parent.chmod(0o770)
    out, err = run_check(project, cache)
    assert out == reference
    assert err.count(WARNING) == 1 and f"its {replay.parent.name}/ is writable by its group" in err
    replay.parent.chmod(0o700)
    replay.write_bytes(forged)
    replay.chmod(0o660)  # the entry itself writable by its group
    out, err = run_check(project, cache)
    assert out == reference and WARNING not in err
    for folder in {path.parent for path in cache.glob("summaries-*/*/*.json")}:
        folder.chmod(0o777)
    replay.unlink()  # so that the summaries are read, not the stored run
    out, err = run_check(project, cache)
    assert out == reference and WARNING not in err
    assert "(0 parsed" not in err  # its summaries were not read: parsed again


def forge_replay(data: bytes) -> bytes:
    """The stored run with every finding's message rewritten (well formed, as lintloader
    writes it): what a forger would plant to hide a finding."""
    header, _, body = data.partition(b"\n")
    stored = json.loads(body)
    findings = stored[0][1]  # (the run, its contents' digests, their stamps)
    assert findings, "the stored run holds the finding"
    for finding in findings:
        finding[5] = "All clear"
    return header + b"\n" + json.dumps(stored).encode()


def test_a_forged_replay_of_the_user_is_the_one_case_data_is_used(
    project: Path, tmp_path: Path
) -> None:
    """The check above can fail: a forged entry in a private directory is replayed (the
    cache trusts the user's own writes; findings come from it)."""
    cache = tmp_path / "cache"
    run_check(project, cache)
    (replay,) = cache.glob("index-*/*.replay")
    replay.write_bytes(forge_replay(replay.read_bytes()))
    assert "All clear" in run_check(project, cache)[0]


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Path]:
    """A directory the second user can reach (pytest's own tmp_path is private to root)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="lintloader-store-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_user(uid: int, gid: int, code: str, *args: str) -> None:
    command = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    subprocess.run([*command, sys.executable, "-c", code, *args], check=True, timeout=60)


PLANT = """
import os, sys
root, payload = sys.argv[1], bytes.fromhex(sys.argv[2])
for name in os.listdir(root):
    for folder, _, files in os.walk(os.path.join(root, name)):
        for entry in files:
            with open(os.path.join(folder, entry), "wb") as handle:
                handle.write(payload)
os.makedirs(os.path.join(root, "summaries-9.9", "aa"), exist_ok=True)
"""


@ROOT_ONLY
def test_a_group_member_cannot_plant_entries(
    project: Path, shared: Path, mate: tuple[int, int], reference: str
) -> None:
    """``umask 002`` and a shared group: the other member rewrites every entry as a pickle
    and adds directories of their own. The next run refuses the cache (one warning) and
    nothing planted runs."""
    uid, gid = mate
    cache = shared / "cache"
    run_check(project, cache, umask=0o002)
    for path in [cache, *cache.rglob("*")]:
        os.chown(path, 0, gid)
        path.chmod(0o770 if path.is_dir() else 0o660)  # what a group cache looks like
    marker = shared / "PWNED"
    shared.chmod(0o777)  # the planted pickle could create its marker
    as_user(uid, gid, PLANT, str(cache), pickle.dumps(Planted(marker)).hex())
    out, err = run_check(project, cache)
    assert out == reference
    assert err.count(WARNING) == 1, err
    assert not marker.exists()


@ROOT_ONLY
def test_a_level_owned_by_another_user_is_not_read(
    project: Path, shared: Path, mate: tuple[int, int], reference: str
) -> None:
    """A private cache root, but one of its directories belongs to someone else (who then
    forges a well-formed stored run in it): a miss."""
    uid, gid = mate
    cache = shared / "cache"
    run_check(project, cache)
    cache.chmod(0o755)  # still private: only its owner can write in it
    (replay,) = cache.glob("index-*/*.replay")
    forged = forge_replay(replay.read_bytes())
    os.chown(replay.parent, uid, gid)
    os.chown(replay, uid, gid)
    as_user(uid, gid, "import sys; open(sys.argv[1], 'wb').write(bytes.fromhex(sys.argv[2]))",
            str(replay), forged.hex())  # fmt: skip
    out, err = run_check(project, cache)
    assert out == reference
    assert err.count(WARNING) == 1 and f"its {replay.parent.name}/ is owned by another" in err


def test_codec_refuses_values_of_another_type() -> None:
    from lintloader.finding.findings import Finding, Hop, Severity

    hop = Hop("a.py", 1, 2, "f", "calls g()")
    finding = Finding("LL101", Severity.WARNING, "a.py", 3, 4, "message", chain=(hop,))
    data = codec.dumps("finding", Finding, finding)
    assert codec.loads("finding", Finding, data) == finding
    header, _, body = data.partition(b"\n")
    value = json.loads(body)
    for position, wrong in [(1, 99), (1, True), (3, "3"), (6, [[1]]), (0, None)]:
        broken = list(value)
        broken[position] = wrong
        with pytest.raises(codec.Invalid):
            codec.loads("finding", Finding, header + b"\n" + json.dumps(broken).encode())
    with pytest.raises(codec.Invalid):
        codec.loads("other kind", Finding, data)
    assert codec.is_kind("finding", data) and not codec.is_kind("other kind", data)
    assert not codec.is_kind("finding", b"finding\n" + body)  # no header: no entry


def _mutations(value: object, seed: int, count: int) -> Iterator[str]:
    """Texts of copies of ``value`` (parsed JSON) with one value replaced by another kind of JSON at
    a random place: a scalar by an object, an array or object by a number."""
    import random

    places: list[tuple[list[object] | dict[str, object], object]] = []

    def walk(node: object) -> None:
        if isinstance(node, (list, dict)):
            for key in range(len(node)) if isinstance(node, list) else list(node):
                places.append((node, key))
                walk(node[key])  # type: ignore[index]

    walk(value)
    chosen = random.Random(seed).sample(range(len(places)), min(count, len(places)))
    for index in chosen:
        container, key = places[index]
        old = container[key]  # type: ignore[index]
        container[key] = 7 if isinstance(old, (list, dict)) else {"planted": [1]}  # type: ignore[index]
        yield json.dumps(value)  # the text of the mutated copy (no deep copy to build)
        container[key] = old  # type: ignore[index]


def test_codec_reads_a_real_summary_back_and_refuses_any_wrong_value() -> None:
    """A summary of a real installed file (torch's DataLoader) is read back equal, by
    columns; a wrong kind of value anywhere in it (a record, a call's target, a site's line,
    a loop's header...) makes the whole entry a miss, never a half-read summary."""
    import sysconfig

    from lintloader.summary.model import FileSummary
    from lintloader.summary.summarize import summarize_source

    source = Path(sysconfig.get_paths()["purelib"], "torch", "utils", "data", "dataloader.py")
    if not source.is_file():
        pytest.skip("torch is not installed in this environment")
    summary = summarize_source(source.read_bytes(), str(source), "torch.utils.data.dataloader")
    assert summary.error is None and summary.loaders is not None
    data = codec.dumps("summary", FileSummary, summary)
    assert codec.loads("summary", FileSummary, data) == summary
    header, _, body = data.partition(b"\n")
    for broken in _mutations(json.loads(body), seed=28, count=400):
        with pytest.raises(codec.Invalid):
            codec.loads("summary", FileSummary, header + b"\n" + broken.encode())


# -- clean (item 8) ----------------------------------------------------------------------------
def run_clean(cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "clean", "--cache-dir", str(cache)], capture_output=True, text=True, timeout=60
    )


def test_clean_of_a_home_directory_removes_nothing(tmp_path: Path) -> None:
    """A mistyped ``--cache-dir ~``: no marker, nothing removed, one line, exit 2."""
    home = tmp_path / "home"
    mine = ["code-review", "index-cards", "summaries-2024", "listings-old", ".tmp-notes"]
    for name in mine:
        (home / name).mkdir(parents=True)
        (home / name / "keep.txt").write_text("mine\n")
    result = run_clean(home)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "not a lintloader cache" in result.stderr
    assert sorted(p.name for p in home.iterdir()) == sorted(mine)


def test_clean_removes_only_entries_of_its_exact_form(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run_check(project, cache)
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d1")
    mine = ["code-review", "index-cards", "notes.txt", ".tmp-notes"]
    for name in mine:
        (cache / name).mkdir()
    result = run_clean(cache)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in cache.iterdir()) == sorted(mine)


def test_a_foreign_marker_is_not_lintloaders(tmp_path: Path) -> None:
    """Another tool's CACHEDIR.TAG (same signature, without lintloader's line)."""
    cache = tmp_path / "other-tool"
    (cache / "code-1.0").mkdir(parents=True)
    (cache / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    assert run_clean(cache).returncode == 2
    assert (cache / "code-1.0").is_dir()


# -- the flake8 plugin's lock (item 6) ---------------------------------------------------------
HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(600)
"""


def hold_lock(path: Path) -> subprocess.Popen[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def test_flake8_takes_no_lock_in_an_untrusted_cache(project: Path, tmp_path: Path) -> None:
    """Someone holds every lock of a world-writable cache forever: flake8 refuses the cache
    (one warning) and finishes."""
    pytest.importorskip("flake8", reason="flake8 is not installed (a test dependency)")
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    import hashlib

    name = hashlib.sha256(str(project).encode()).hexdigest()[:24]
    holder = hold_lock(cache / "flake8-locks" / f"{name}.lock")
    try:
        result = subprocess.run(
            [sys.executable, "-m", "flake8", "--select", "LL", "pkg/mod.py"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "LINTLOADER_CACHE_DIR": str(cache)},
        )
    finally:
        holder.kill()
        holder.wait()
    assert "LL101" in result.stdout, result.stderr
    assert "writable by every user" in result.stderr


def test_the_flake8_lock_wait_is_bounded(tmp_path: Path) -> None:
    """A live process that never lets go of the lock: the wait ends, the check runs."""
    from lintloader.integrations.flake8_plugin import project_lock

    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    import hashlib

    name = hashlib.sha256(b"/some/root").hexdigest()[:24]
    holder = hold_lock(cache / "flake8-locks" / f"{name}.lock")
    try:
        started = time.monotonic()
        with project_lock(cache, "/some/root", wait_s=0.5) as held:
            assert not held
        assert time.monotonic() - started < 10
    finally:
        holder.kill()
        holder.wait()
    with project_lock(cache, "/some/root", wait_s=0.5) as held:
        assert held


def test_a_hostile_interpreter_answer_is_a_miss(tmp_path: Path) -> None:
    """What another interpreter answered (``interpreters-*/``), replaced by a pickle, bare or
    after the entry's header."""
    # an interpreter that is no virtual environment's: its answer is asked (-I -S) and
    # remembered (a venv's is worked out from its pyvenv.cfg, never asked: nothing stored)
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if not base.exists() or Path(sys.base_prefix) == Path(sys.prefix):
        pytest.skip("no base interpreter outside this virtual environment")
    cache, marker = tmp_path / "cache", tmp_path / "PWNED"
    command = [*CLI, "check", "--site-packages", "--python", str(base)]

    def check(*extra: str) -> str:
        done = subprocess.run(
            [*command, *extra], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0 and "internal error" not in done.stderr, done.stderr
        return done.stdout + done.stderr.replace("from cache", "parsed")

    reference = check("--no-cache")
    check("--cache-dir", str(cache))
    (entry,) = cache.glob("interpreters-*/*.json")
    header = entry.read_bytes().split(b"\n", 1)[0] + b"\n"
    for hostile in (pickle.dumps(Planted(marker)), header + pickle.dumps(Planted(marker))):
        entry.write_bytes(hostile)
        assert check("--cache-dir", str(cache)) == reference
        assert not marker.exists()


def test_the_stored_trail_is_the_selection_round_field_by_field() -> None:
    """``incremental/replay.py`` stores the select layer's rounds as records of its own with
    the same fields (loading a stored run imports nothing of select/): they must not drift
    apart."""
    import typing

    from lintloader.incremental.replay import StoredRound
    from lintloader.select.trail import Round

    assert Round._fields == StoredRound._fields
    round_hints, stored_hints = typing.get_type_hints(Round), typing.get_type_hints(StoredRound)
    assert [round_hints[n] for n in Round._fields] == [stored_hints[n] for n in Round._fields]

"""The warm fast path of ``check --site-packages`` (``lintloader/cli/fast.py``): a check whose
stored answer still holds prints it without click; its output and exit code are the click
path's, byte for byte, and a stored answer that is not exactly the user's own is never used.

Real runs of ``python -m lintloader`` in a bare virtual environment (its site-packages: one
distribution with a reset on the epoch path) whose ``.pth`` file puts this checkout and its
dependencies on ``sys.path``. A run took the fast path when the stored answer was neither
rewritten (a click run that replays stores it again) nor refused (a planted answer shows).
"""

from __future__ import annotations

import os
import subprocess
import sysconfig
import time
from pathlib import Path

import pytest
from harness import REPO, run_python
from test_robustness_python import make_venv

from lintloader.cli import fast
from lintloader.scan.read.stamps import RACY_NS

BUG = "class Feeder:\n    def __iter__(self):\n        self.loader._iterator = None\n"
SECOND = "class Other:\n    def __iter__(self):\n        self.pool._iterator = None\n"
Answer = tuple[int, str, str]


def settle() -> None:
    """Wait out the racy window: an answer is stored only when nothing it depends on
    changed within it."""
    time.sleep(RACY_NS / 1e9 + 0.2)


@pytest.fixture
def venv(tmp_path: Path) -> tuple[Path, Path]:
    """(its python, its site-packages), lintloader importable from this checkout."""
    python, site = make_venv(tmp_path / "env")
    (site / "zz_lintloader.pth").write_text(f"{REPO}\n{sysconfig.get_paths()['purelib']}\n")
    package = site / "feeder"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "loop.py").write_text(BUG)
    return python, site


def check(python: Path, cwd: Path, *args: str) -> Answer:
    done = run_python("-m", "lintloader", "check", "--site-packages", *args, cwd=cwd, python=python)
    return done.returncode, done.stdout, done.stderr


def records(cache: Path) -> list[Path]:
    return sorted(cache.glob("fast-*/*.run"))


def stamp(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_ino, status.st_mtime_ns


def fast_answer(python: Path, cwd: Path, cache: Path, *args: str) -> Answer:
    """A run the stored answer gives (asserted: that answer was read and not stored again)."""
    (record,) = records(cache)
    before = stamp(record)
    answer = check(python, cwd, "--cache-dir", str(cache), *args)
    assert stamp(record) == before, "the click path ran and stored its answer again"
    return answer


def cold_and_warm(python: Path, cwd: Path, cache: Path, *args: str) -> Answer:
    """A cold run, then a warm one that stores its answer: both must say the same."""
    cold = check(python, cwd, "--cache-dir", str(cache), *args)
    settle()
    warm = check(python, cwd, "--cache-dir", str(cache), *args)
    assert warm == cold
    assert len(records(cache)) == 1
    return warm


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--output-format", "json"),
        ("--min-severity=info", "--statistics"),
        ("--exit-zero", "-q", "--output-format", "concise"),
    ],
)
def test_the_fast_answer_is_the_click_answer(
    venv: tuple[Path, Path], tmp_path: Path, args: tuple[str, ...]
) -> None:
    python, _ = venv
    cache = tmp_path / "cache"
    warm = cold_and_warm(python, tmp_path, cache, *args)
    assert warm[0] == (0 if "--exit-zero" in args else 1)
    assert fast_answer(python, tmp_path, cache, *args) == warm
    assert fast_answer(python, tmp_path, cache, *args) == warm


def test_an_edit_a_new_file_and_a_config_are_seen(venv: tuple[Path, Path], tmp_path: Path) -> None:
    python, site = venv
    cache = tmp_path / "cache"
    work = tmp_path / "work"
    work.mkdir()
    warm = cold_and_warm(python, work, cache)
    assert fast_answer(python, work, cache) == warm

    def fresh() -> Answer:  # what a check says with an empty cache: the reference
        return check(python, work, "--cache-dir", str(tmp_path / f"ref{time.monotonic_ns()}"))

    (site / "feeder" / "loop.py").write_text(BUG + "\n" + SECOND)  # an edit
    edited = check(python, work, "--cache-dir", str(cache))
    assert edited == fresh() != warm
    (site / "feeder" / "extra").mkdir()  # a new file, in a new folder
    (site / "feeder" / "extra" / "more.py").write_text(SECOND.replace("Other", "More"))
    added = check(python, work, "--cache-dir", str(cache))
    assert added == fresh() != edited
    settle()
    assert check(python, work, "--cache-dir", str(cache)) == added  # stored again
    assert fast_answer(python, work, cache) == added
    (work / "pyproject.toml").write_text('[tool.lintloader]\nignore = ["LL1"]\n')  # a config
    configured = check(python, work, "--cache-dir", str(cache))
    assert configured == fresh() != added
    settle()
    assert check(python, work, "--cache-dir", str(cache)) == configured
    assert fast_answer(python, work, cache) == configured
    (work / "pyproject.toml").write_text('[tool.lintloader]\nmin-severity = "info"\n')
    reconfigured = check(python, work, "--cache-dir", str(cache))
    assert reconfigured == fresh() != configured


def test_a_named_config_file_and_an_environment_change(
    venv: tuple[Path, Path], tmp_path: Path
) -> None:
    python, _ = venv
    cache = tmp_path / "cache"
    config = tmp_path / "settings.toml"
    config.write_text('[tool.lintloader]\noutput-format = "json"\n')
    warm = cold_and_warm(python, tmp_path, cache, "--config", str(config))
    assert warm[1].startswith("[")
    assert fast_answer(python, tmp_path, cache, "--config", str(config)) == warm
    config.write_text('[tool.lintloader]\noutput-format = "concise"\n')
    assert check(python, tmp_path, "--cache-dir", str(cache), "--config", str(config))[1][0] != "["
    plain = tmp_path / "plain"
    warm = cold_and_warm(python, tmp_path, plain)
    assert fast_answer(python, tmp_path, plain) == warm
    assert "\x1b[" not in warm[1]
    coloured = run_python(
        "-m",
        "lintloader",
        "check",
        "--site-packages",
        "--cache-dir",
        str(plain),
        cwd=tmp_path,
        python=python,
        env={"FORCE_COLOR": "1"},
    )
    assert "\x1b[" in coloured.stdout  # an answer is kept by the environment it was given in


def test_standard_input_and_other_forms_are_never_answered(
    venv: tuple[Path, Path], tmp_path: Path
) -> None:
    """A check of standard input reads it every time; forms that write or read elsewhere
    fall through to click."""
    python, site = venv
    cache = tmp_path / "cache"
    cold_and_warm(python, tmp_path, cache)
    for form in (["-"], ["--stdin-filename", "x.py"], ["--no-cache"], ["feeder"], ["--fix"]):
        assert fast.cache_folder(["check", "--site-packages", *form]) is None
    assert (
        fast.cache_folder(["check", "--output-format", "json:out.json", "--site-packages"]) is None
    )

    def stdin_check(source: str) -> subprocess.CompletedProcess[bytes]:
        command = [str(python), "-m", "lintloader", "check", "--cache-dir", str(cache), "-"]
        return subprocess.run(
            command, input=source.encode(), capture_output=True, cwd=site, timeout=300, check=False
        )

    assert stdin_check(BUG).returncode == 1
    settle()
    assert stdin_check(BUG).returncode == 1
    clean = stdin_check("x = 1\n")
    assert (clean.returncode, clean.stdout) == (0, b"")
    assert b"Found 0 findings" in clean.stderr


def unpacked(record: Path) -> tuple[bytes, fast.Parsed]:
    """The key a stored answer is kept under, and what it holds."""
    data = record.read_bytes()
    start = len(fast.MAGIC)
    key = data[start + 8 : start + 8 + int.from_bytes(data[start : start + 8], "little")]
    parsed = fast.parse(data, key)
    assert parsed is not None
    return key, parsed


def planted(
    record: Path, code: int | None = None, fd: int = 1, more: list[str] | None = None
) -> bytes:
    """The stored answer at ``record`` re-encoded under its own key with its output replaced
    by ``planted`` (its exit code, the descriptor written or more stamped paths as asked)."""
    key, (stored_code, _, paths, stamps) = unpacked(record)
    extra = more or []
    stamps.extend(fast.stamps_now(extra))
    chunks = [(fd, b"planted\n")]
    return fast.encode(key, stored_code if code is None else code, chunks, [*paths, *extra], stamps)


def test_a_hostile_stored_answer_is_not_used(
    venv: tuple[Path, Path], tmp_path: Path, mate: tuple[int, int]
) -> None:
    python, _ = venv
    cache = tmp_path / "cache"
    warm = cold_and_warm(python, tmp_path, cache)
    (record,) = records(cache)
    marker = tmp_path / "ran"

    def answered(data: bytes, mode: int = 0o600, owner: int | None = None) -> Answer:
        if record.is_symlink() or record.exists():
            record.unlink()
        record.write_bytes(data)
        record.chmod(mode)
        if owner is not None:
            os.chown(record, owner, -1)
        return check(python, tmp_path, "--cache-dir", str(cache))

    # the control: a well-formed answer of the user's own is printed as it is
    assert answered(planted(record)) == (1, "planted\n", "")
    good = planted(record)
    assert answered(good, mode=0o620) == warm  # others may write it: refused
    assert answered(good, mode=0o602) == warm
    assert answered(good, owner=mate[0]) == warm  # another user's
    record.parent.chmod(0o770)  # in a folder its group may write: the cache is not used
    grouped = answered(good)
    assert grouped[:2] == warm[:2] and "writable by its group" in grouped[2]
    record.parent.chmod(0o700)
    assert answered(planted(record, code=7)) == warm  # no exit code a check gives
    assert answered(planted(record, fd=3)) == warm  # no stream a check writes
    assert answered(good[:-1]) == warm  # cut short
    assert answered(good + b"\0") == warm  # something after it
    assert answered(good.replace(fast.MAGIC, b"lintloader fast check 9\n")) == warm
    hostile = tmp_path / "hostile.run"
    hostile.write_bytes(good)
    record.unlink()
    record.symlink_to(hostile)  # a link, even to a good answer
    assert check(python, tmp_path, "--cache-dir", str(cache)) == warm
    assert not record.is_symlink()  # the click path replaced the link, never followed it
    assert hostile.read_bytes() == good
    # stored paths are only stat'ed: a command among them is never run, a FIFO never opened
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    odd = [f"$(touch {marker})", f"; touch {marker}", str(fifo)]
    assert answered(planted(record, more=odd)) == (1, "planted\n", "")  # given at once
    assert not marker.exists()


def test_a_cold_run_stores_the_answer_a_replay_gives(
    venv: tuple[Path, Path], tmp_path: Path
) -> None:
    """The run that analyzed and stored its run stores its answer too: the first warm run
    takes the fast path."""
    settle()
    json_format = ("--cache-dir", str(tmp_path / "cache"), "--output-format", "json")
    cold = check(venv[0], tmp_path, *json_format)
    assert cold[0] == 1 and '"LL101"' in cold[1]
    assert fast_answer(venv[0], tmp_path, tmp_path / "cache", *json_format[2:]) == cold


def test_another_interpreters_site_packages(venv: tuple[Path, Path], tmp_path: Path) -> None:
    """``--python``: an answer holds while that interpreter's sites are as they were."""
    python, _ = venv
    other, other_site = make_venv(tmp_path / "other")
    (other_site / "pool.py").write_text(SECOND)
    cache = tmp_path / "cache"
    settle()
    args = ("--python", str(other))
    cold = check(python, tmp_path, "--cache-dir", str(cache), *args)
    assert cold[0] == 1 and "pool.py" in cold[1] and "feeder" not in cold[1]
    assert fast_answer(python, tmp_path, cache, *args) == cold
    (other_site / "more.py").write_text(BUG)
    added = check(python, tmp_path, "--cache-dir", str(cache), *args)
    assert "more.py" in added[1] and added[:2] != cold[:2]


def test_verbose_counts_are_the_replays(venv: tuple[Path, Path], tmp_path: Path) -> None:
    """``-v`` says how many summaries were parsed and came from the cache: the answer a cold
    run stores says what its replay says, and a summary removed from the cache is seen."""
    python, _ = venv
    cache = tmp_path / "cache"
    settle()
    cold = check(python, tmp_path, "--cache-dir", str(cache), "-v")
    assert "1 parsed, 0 from cache" in cold[2]
    fast = fast_answer(python, tmp_path, cache, "-v")
    assert "0 parsed, 1 from cache" in fast[2]
    assert fast[2] == cold[2].replace("1 parsed, 0 from cache", "0 parsed, 1 from cache")
    (record,) = records(cache)
    record.unlink()
    assert check(python, tmp_path, "--cache-dir", str(cache), "-v") == fast  # click's replay
    assert fast_answer(python, tmp_path, cache, "-v") == fast
    (entry,) = cache.glob("summaries-*/*/*.json")
    entry.unlink()
    again = check(python, tmp_path, "--cache-dir", str(cache), "-v")
    assert again == cold  # parsed again, not the stored answer


def test_scanned_files_are_stored_with_the_stamps_the_check_saw(tmp_path: Path) -> None:
    """The store takes a scanned file's stamp from the check's own stat (before it read the
    file) instead of a stat of its own: a file edited after that stat is stored as the check
    saw it, so the next run sees the edit and takes the slow path."""
    from lintloader.cli.fast_record import Witness
    from lintloader.scan.read.stamps import stamp_of

    seen, other = tmp_path / "seen.py", tmp_path / "other.py"
    seen.write_text("a = 1\n")
    other.write_text("b = 2\n")
    before = stamp_of(os.stat(seen))
    witness = Witness(["check", "--site-packages"], str(tmp_path / "cache"), b"key")
    witness.known = {str(seen): before}
    time.sleep(0.01)
    seen.write_text("a = 22\n")  # edited after the check's stat
    stamps = witness._stamps([str(seen), str(other)])
    assert stamps[:4].tolist() == list(before) != fast.stamps_now([str(seen)]).tolist()
    assert stamps[4:] == fast.stamps_now([str(other)])  # not known: stat'ed now


def test_walked_directories_are_stored_with_the_stamps_the_walk_took(tmp_path: Path) -> None:
    """The sites' directories are not listed again for the store: the walk's stamps
    (``Discovery.directories``) are stored, so a file added after the walk listed its
    directory makes the next run take the slow path."""
    from lintloader.cli.fast_record import Witness
    from lintloader.scan.read.stamps import stamp_of

    site, cache = tmp_path / "site", tmp_path / "cache"
    site.mkdir()
    walked = stamp_of(os.stat(site))
    witness = Witness(["check", "--site-packages"], str(cache), b"key")
    witness.saw([], [str(site)], cache, None, {}, {str(site): walked})
    time.sleep(0.01)
    (site / "new.py").write_text("a = 1\n")  # after the walk
    assert witness.directories == {str(site): walked}
    assert witness._stamps([str(site)]).tolist() == list(walked)
    assert walked != tuple(fast.stamps_now([str(site)]).tolist())

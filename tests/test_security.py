"""Security guarantees (issue 8, docs/guarantees.md): scanned code is never imported or run, not
even an interpreter's ``.pth`` hooks; backup files honour the umask, cache files are private
(0600 in 0700 directories) whatever it is; neither is written or read through symbolic links;
reported paths are relative; no environment value leaks.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

FETCHER = """\
class Fetcher:
    def __iter__(self):
        self.reset()
        return self

    def reset(self):
        self.count = 0
        self.loader._iterator = None

    def teardown(self):
        self.reset()
"""


def booby_trapped_package(parent: Path, marker_dir: Path, name: str = "trap") -> Path:
    """A package whose import, or the import of any of its modules, writes a marker file."""
    package = parent / name
    package.mkdir(parents=True)
    plant = f"open({str(marker_dir / '{}')!r}, 'w').write('imported')\n"
    (package / "__init__.py").write_text("import os\n" + plant.format(f"{name}-init"))
    (package / "fetch.py").write_text(plant.format(f"{name}-fetch") + FETCHER)
    (package / "__main__.py").write_text(plant.format(f"{name}-main"))
    (package / "conftest.py").write_text(plant.format(f"{name}-conftest"))
    (package / "setup.py").write_text(plant.format(f"{name}-setup"))
    return package


def make_venv(where: Path) -> tuple[Path, Path]:
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return where / "bin" / "python", next((where / "lib").glob("python3*/site-packages"))


def install_fake(site: Path, package: Path, marker_dir: Path) -> None:
    """Register ``package`` (already in ``site``) as a distribution, plus .pth/sitecustomize
    hooks that would run at the interpreter's start-up if its site module ran."""
    info = site / f"{package.name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package.name}\nVersion: 1.0\n")
    files = sorted(p.relative_to(site).as_posix() for p in package.rglob("*.py"))
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))
    plant = f"open({str(marker_dir / 'pth')!r}, 'w').write('ran')"
    (site / "zz_trap.pth").write_text(f"import os; {plant}\n")
    (site / "sitecustomize.py").write_text(plant.replace("pth", "sitecustomize") + "\n")


def markers(marker_dir: Path) -> list[str]:
    return sorted(p.name for p in marker_dir.iterdir())


def test_check_and_fix_never_import_scanned_files(tmp_path: Path) -> None:
    marker_dir = tmp_path / "markers"
    marker_dir.mkdir()
    root = tmp_path / "proj"
    booby_trapped_package(root, marker_dir)
    result = run_cli("check", ".", "--no-cache", "--output-format", "json", cwd=root)
    assert result.returncode == 1, result.stderr
    assert {f["path"] for f in json.loads(result.stdout)} == {"trap/fetch.py"}
    fixed = run_cli("fix", ".", "--no-cache", cwd=root)
    assert fixed.returncode in (0, 1), fixed.stderr
    assert "self.loader._iterator = None" in (root / "trap" / "fetch.py").read_text()
    assert (root / "trap" / "fetch.py").read_text() != FETCHER  # really patched
    assert markers(marker_dir) == []


def test_site_packages_scan_and_fix_run_no_code_of_that_interpreter(tmp_path: Path) -> None:
    marker_dir = tmp_path / "markers"
    marker_dir.mkdir()
    python, site = make_venv(tmp_path / "env")
    package = booby_trapped_package(site, marker_dir)
    install_fake(site, package, marker_dir)
    # the hooks are live: any normal start of that interpreter runs them
    subprocess.run([str(python), "-c", "pass"], check=True, timeout=60)
    assert markers(marker_dir) == ["pth", "sitecustomize"]
    for name in markers(marker_dir):
        (marker_dir / name).unlink()

    for args in (["check", "--site-packages", "trap"], ["check", "--site-packages"]):
        result = run_cli(
            *args, "--python", str(python), "--no-cache", "--output-format", "json", cwd=tmp_path
        )
        assert result.returncode == 1, result.stderr
        paths = {f["path"] for f in json.loads(result.stdout)}
        assert (package / "fetch.py").relative_to(tmp_path).as_posix() in paths
    fixed = run_cli(
        "fix", "--site-packages", "trap", "--python", str(python), "--no-cache", cwd=tmp_path
    )
    assert fixed.returncode in (0, 1), fixed.stderr
    assert (package / "fetch.py").read_text() != FETCHER
    assert markers(marker_dir) == []


def run_with_umask(umask: int, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, timeout=300, umask=umask)


def modes(directory: Path) -> set[int]:
    return {stat.S_IMODE(p.stat().st_mode) for p in directory.rglob("*") if p.is_file()}


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002, 0])
def test_cache_files_are_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "fetch.py").write_text(FETCHER)
    cache = tmp_path / "cache"
    result = run_with_umask(umask, "check", ".", "--cache-dir", str(cache), cwd=root)
    assert result.returncode == 1, result.stderr
    assert modes(cache) == {0o600}
    folders = [cache, *(p for p in cache.rglob("*") if p.is_dir())]
    assert {stat.S_IMODE(p.stat().st_mode) for p in folders} == {0o700}
    assert not [p for p in cache.rglob(".tmp-*")]  # no temporary left behind


def cache_files(cache: Path) -> list[Path]:
    """Every file the cache holds, whatever its layout (summaries, indexes, ...)."""
    return sorted(p for p in cache.rglob("*") if p.is_file() and not p.is_symlink())


def test_cache_never_reads_or_writes_through_a_planted_link(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "fetch.py").write_text(FETCHER)
    cache = tmp_path / "cache"
    first = run_cli("check", "-v", ".", "--cache-dir", str(cache), cwd=root)
    assert "(1 parsed, 0 from cache" in first.stderr
    stash = tmp_path / "stash"
    stash.mkdir()
    stashed = {}
    for index, entry in enumerate(cache_files(cache)):
        copy = stash / f"{index}-{entry.name}"
        entry.rename(copy)
        entry.symlink_to(copy)  # a valid entry, but behind a link: must not be read
        stashed[copy] = copy.read_bytes()
    assert stashed
    second = run_cli("check", "-v", ".", "--cache-dir", str(cache), cwd=root)
    assert second.stdout == first.stdout
    assert "(1 parsed, 0 from cache" in second.stderr, second.stderr
    assert all(copy.read_bytes() == data for copy, data in stashed.items())  # not written
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    for entry in cache.rglob("*"):
        if entry.is_file() or entry.is_symlink():
            entry.unlink()
            entry.symlink_to(victim)
    run_cli("check", ".", "--cache-dir", str(cache), cwd=root)
    assert victim.read_text() == "precious\n"
    traps = []
    for child in list(cache.iterdir()):  # every folder the cache made becomes a planted link
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
            trap = tmp_path / f"trap-{child.name}"
            trap.mkdir()
            child.symlink_to(trap, target_is_directory=True)
            traps.append(trap)
    assert traps
    third = run_cli("check", ".", "--cache-dir", str(cache), cwd=root)
    assert third.returncode == 1 and third.stdout == first.stdout
    assert all(list(trap.iterdir()) == [] for trap in traps)  # nothing written through them


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_backup_files_follow_the_umask(tmp_path: Path, umask: int) -> None:
    python, site = make_venv(tmp_path / "env")
    package = site / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "fetch.py").write_text(FETCHER)
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (info / "RECORD").write_text("pkg/__init__.py,,\npkg/fetch.py,,\n")
    result = run_with_umask(
        umask, "fix", "--site-packages", "pkg", "--python", str(python), "--no-cache", cwd=tmp_path
    )
    assert result.returncode in (0, 1), result.stderr
    backups = site / ".lintloader-backups"
    assert (backups / "manifest.json").is_file()
    assert modes(backups) == {0o666 & ~umask}
    assert not list(backups.rglob("*tmp"))


def test_backups_are_never_written_through_a_linked_backup_directory(tmp_path: Path) -> None:
    python, site = make_venv(tmp_path / "env")
    package = site / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "fetch.py").write_text(FETCHER)
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (info / "RECORD").write_text("pkg/__init__.py,,\npkg/fetch.py,,\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (site / ".lintloader-backups").symlink_to(elsewhere, target_is_directory=True)
    result = run_cli(
        "fix", "--site-packages", "pkg", "--python", str(python), "--no-cache", cwd=tmp_path
    )
    assert "Traceback" not in result.stderr
    assert list(elsewhere.iterdir()) == []
    assert (package / "fetch.py").read_text() == FETCHER  # no backup, so no patch
    assert "symbolic link" in result.stdout + result.stderr


def test_fix_never_writes_through_a_link_out_of_the_tree(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "fetch.py").write_text(FETCHER)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "linked.py").symlink_to(outside / "fetch.py")
    result = run_cli("fix", ".", "--no-cache", "--unsafe-fixes", cwd=root)
    assert "Traceback" not in result.stderr
    assert (outside / "fetch.py").read_text() == FETCHER
    assert (root / "linked.py").is_symlink()
    assert "outside the scanned paths" in result.stdout + result.stderr


def test_reported_paths_are_relative_to_the_working_directory(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "sub" / "fetch.py").write_text(FETCHER)
    (root / "pkg" / "broken.py").write_text("def broken(:\n    x._iterator = None\n")
    (root / "pkg" / "dangling.py").symlink_to("gone.py")
    as_json = run_cli("check", str(root / "pkg"), "--no-cache", "--output-format", "json", cwd=root)
    findings = json.loads(as_json.stdout)
    paths = {f["path"] for f in findings} | {h["path"] for f in findings for h in f["chain"]}
    assert paths == {"pkg/sub/fetch.py", "pkg/broken.py", "pkg/dangling.py"}
    sarif = run_cli("check", "pkg", "--no-cache", "--output-format", "sarif", cwd=root)
    assert sarif.returncode == 1, sarif.stderr
    document = json.loads(sarif.stdout)
    uris = set(artifact_uris(document))
    assert uris == {"pkg/sub/fetch.py", "pkg/broken.py", "pkg/dangling.py"}
    # the absolute root appears once, as the base the relative URIs resolve against
    for run in document["runs"]:
        run.pop("originalUriBaseIds", None)
    assert str(tmp_path) not in json.dumps(document)


def artifact_uris(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [node["artifactLocation"]["uri"]] if "artifactLocation" in node else []
        return found + [u for value in node.values() for u in artifact_uris(value)]
    if isinstance(node, list):
        return [u for value in node for u in artifact_uris(value)]
    return []


def test_no_environment_secret_reaches_any_output(tmp_path: Path) -> None:
    secret = "s3cr3t-5e1f-4c4b-token"
    env = {
        "LINTLOADER_TEST_TOKEN": secret,
        "AWS_SECRET_ACCESS_KEY": secret,
        "GITHUB_TOKEN": secret,
        "PYTHONWARNINGS": "default",
    }
    root = tmp_path / "proj"
    root.mkdir()
    (root / "fetch.py").write_text(FETCHER)
    (root / "broken.py").write_text("def broken(:\n    x._iterator = None\n")
    cache = tmp_path / "cache"
    outputs = []
    for fmt in ("text", "json", "sarif", "github", "concise"):
        outputs.append(
            run_cli(
                "check",
                ".",
                "--output-format",
                fmt,
                "--cache-dir",
                str(cache),
                "--verbose",
                cwd=root,
                env=env,
            )
        )
    outputs.append(run_cli("fix", ".", "--diff", "--no-cache", "--verbose", cwd=root, env=env))
    outputs.append(run_cli("check", "missing.py", "--verbose", cwd=root, env=env))
    outputs.append(
        run_cli(
            "check",
            "--site-packages",
            "--python",
            str(root / "fetch.py"),
            "--verbose",
            cwd=root,
            env=env,
        )
    )
    for result in outputs:
        assert result.returncode in (0, 1, 2)
        assert secret not in result.stdout + result.stderr
    cached = b"".join(p.read_bytes() for p in cache.rglob("*") if p.is_file())
    assert cached and secret.encode() not in cached
    assert os.environ.get("LINTLOADER_TEST_TOKEN") != secret  # only the children had it

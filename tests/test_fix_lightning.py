"""The real pytorch-lightning 1.5.0 wheel, patched in a throwaway environment by
``lintloader fix --site-packages pytorch-lightning --python <its interpreter>``.

The wheels are fetched once with ``pip download --no-deps`` into ``$LINTLOADER_TEST_CACHE`` or
``~/.cache/lintloader-tests/wheels``; the tests skip (saying why) only if that is impossible.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import libcst as cst
import pytest
from conftest import download_wheel
from harness import run_cli

FETCHING = "pytorch_lightning/utilities/fetching.py"
CACHE = Path(os.environ.get("LINTLOADER_TEST_CACHE", Path.home() / ".cache" / "lintloader-tests"))


def wheel(version: str) -> Path:
    """The released wheel, downloaded once (skips with the reason when that is impossible)."""
    return download_wheel(f"pytorch-lightning=={version}")


def snapshot(site: Path) -> dict[str, bytes]:
    skip = {"__pycache__", ".lintloader-backups"}
    return {
        str(p.relative_to(site)): p.read_bytes()
        for p in sorted(site.rglob("*"))
        if p.is_file() and not skip & set(p.relative_to(site).parts)
    }


def lintloader(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, timeout=600)


class Env:
    def __init__(self, root: Path) -> None:
        self.root = root
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "env")],
                       check=True)  # fmt: skip
        self.python = root / "env" / "bin" / "python"
        purelib = subprocess.run(
            [str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        self.site = Path(purelib)
        self.cache = CACHE / "summaries"  # content-hash keyed: safe to share between runs

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return lintloader(
            args[0], "--site-packages", *args[1:], "--python", str(self.python),
            "--cache-dir", str(self.cache), cwd=self.root,
        )  # fmt: skip


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Env, dict[str, bytes], str]:
    env = Env(tmp_path_factory.mktemp("pl150"))
    with zipfile.ZipFile(wheel("1.5.0")) as archive:
        archive.extractall(env.site)
    before = snapshot(env.site)
    result = env.run("fix", "pytorch-lightning")
    assert "AbstractDataFetcher" not in result.stderr or "fixed by relocate" in result.stderr
    assert result.returncode in (0, 1), result.stderr
    return env, before, result.stderr


def methods(source: bytes, class_name: str) -> dict[str, list[str]]:
    module = cst.parse_module(source)
    klass = next(
        n for n in module.body if isinstance(n, cst.ClassDef) and n.name.value == class_name
    )
    return {
        f.name.value: [module.code_for_node(s).strip() for s in f.body.body]
        for f in klass.body.body
        if isinstance(f, cst.FunctionDef)
    }


def test_relocate_fixes_the_fetcher(patched: tuple[Env, dict[str, bytes], str]) -> None:
    env, before, stderr = patched
    assert f"{FETCHING}:196: LL101 fixed by relocate" in stderr
    after = snapshot(env.site)
    changed = sorted(k for k in before if after[k] != before[k])
    assert changed == [FETCHING]
    found = methods(after[FETCHING], "AbstractDataFetcher")
    reset = " ".join(found["reset"])
    assert "_shutdown_workers" not in reset and "self.dataloader.reset()" not in reset
    assert found["reset"][:3] == [
        "self.batches: List = []",
        "self.fetched: int = 0",
        "self.done: bool = False",
    ]
    assert found["teardown"][0] == "self.reset()"
    teardown = " ".join(found["teardown"][1:])
    assert "CombinedLoader._shutdown_workers_and_reset_iterator(self.dataloader)" in teardown
    assert "self.dataloader.reset()" in teardown


def test_no_ll101_after_the_fix(patched: tuple[Env, dict[str, bytes], str]) -> None:
    env, _, _ = patched
    result = env.run("check", "pytorch-lightning", "--output-format", "json")
    assert result.returncode in (0, 1), result.stderr
    findings = json.loads(result.stdout)
    assert not [f for f in findings if f["code"] == "LL101"], findings
    assert not [f for f in findings if f["path"].endswith("utilities/fetching.py")]


def test_equivalent_to_1_5_1(patched: tuple[Env, dict[str, bytes], str]) -> None:
    """The same statements as 1.5.1 in reset() and teardown(); only ``self.dataloader_iter =
    None`` stays in reset() (teardown runs it first through reset())."""
    env, _, _ = patched
    with zipfile.ZipFile(wheel("1.5.1")) as archive:
        shipped = methods(archive.read(FETCHING), "AbstractDataFetcher")
    ours = methods((env.site / FETCHING).read_bytes(), "AbstractDataFetcher")
    moved_back = "self.dataloader_iter = None"
    assert ours["reset"] == [*shipped["reset"], moved_back]
    assert ours["teardown"] == [s for s in shipped["teardown"] if s != moved_back]


def test_revert_restores_every_file(patched: tuple[Env, dict[str, bytes], str]) -> None:
    env, before, _ = patched
    listed = env.run("fix", "--list-patched")
    assert FETCHING in listed.stdout and "\tpatched\t" in listed.stdout
    result = env.run("fix", "--revert")
    assert result.returncode == 0, result.stderr
    assert snapshot(env.site) == before
    manifest = json.loads((env.site / ".lintloader-backups" / "manifest.json").read_text())
    assert manifest["files"] == {}


def test_fix_says_upgrading_is_better_before_it_patches(
    patched: tuple[Env, dict[str, bytes], str],
) -> None:
    _, _, stderr = patched
    advisory = (
        "advisory: pytorch-lightning 1.5.0 is affected; fixed in 1.5.1 \u2014 upgrading is "
        "better than patching: pip install 'pytorch-lightning>=1.5.1'"
    )
    assert stderr.count(advisory) == 1
    assert stderr.index(advisory) < stderr.index("Fixed ")

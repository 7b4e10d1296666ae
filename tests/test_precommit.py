"""The pre-commit hooks, run by the real ``pre-commit`` from a real ``git commit``.

The hook repository is a snapshot of this working tree (tracked and untracked, not ignored files)
committed into a temporary git repo, as ``pre-commit try-repo`` does; the user's
``.pre-commit-config.yaml`` is the snippet from docs/pre-commit.md with ``repo:``/``rev:``
pointed at that snapshot. pre-commit installs the hook into its own virtualenv from PyPI
(libcst, click); when it cannot, the tests skip and say why.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from harness import run_cli

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "pre-commit.md"
LIGHTNING150 = REPO / "fixtures" / "check" / "lightning150" / "minilight"
LIGHTNING151 = REPO / "fixtures" / "check" / "lightning151" / "minilight"
TEST_CACHE = Path(
    os.environ.get("LINTLOADER_TEST_CACHE", Path.home() / ".cache" / "lintloader-tests")
)


def git(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("precommit-home")
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "PRE_COMMIT_HOME": str(TEST_CACHE / "pre-commit"),
        "LINTLOADER_CACHE_DIR": str(home / "lintloader-cache"),
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(home),
    }


@pytest.fixture(scope="module")
def hook_repo(env: dict[str, str]) -> tuple[str, str]:
    """A committed snapshot of this working tree: (path, sha). It lives under the shared test
    cache, named by a hash of its files, so an unchanged tree reuses pre-commit's environment
    (pytest-xdist workers and later runs install the hook once)."""
    pytest.importorskip("pre_commit", reason="pre-commit is not installed (a test dependency)")
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO, env=env)
    assert listed.returncode == 0, listed.stderr
    names = sorted(n for n in filter(None, listed.stdout.split("\0")) if (REPO / n).is_file())
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode() + b"\0" + (REPO / name).read_bytes() + b"\0")
    snapshot = TEST_CACHE / "hook-repos" / digest.hexdigest()[:20]
    if not (snapshot / ".git").is_dir():
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=".building-", dir=snapshot.parent))
        for name in names:
            target = building / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target)
        for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "snapshot")):
            done = git(*args, cwd=building, env=env)
            assert done.returncode == 0, done.stderr
        try:
            os.rename(building, snapshot)
        except OSError:  # another worker got there first
            shutil.rmtree(building, ignore_errors=True)
    sha = git("rev-parse", "HEAD", cwd=snapshot, env=env).stdout.strip()
    return str(snapshot), sha


def doc_config(repo: str, rev: str, hook_ids: list[str]) -> str:
    """The documented .pre-commit-config.yaml, pointed at ``repo``/``rev``."""
    config = yaml.safe_load(re.search(r"```yaml\n(.*?)```", DOC.read_text(), re.S).group(1))
    entry = config["repos"][0]
    assert [h["id"] for h in entry["hooks"]] == ["lintloader"]
    entry["repo"], entry["rev"] = repo, rev
    entry["hooks"] = [{"id": hook} for hook in hook_ids]
    return yaml.safe_dump(config)


@pytest.fixture(scope="module")
def made_project(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str], hook_repo: tuple[str, str]
) -> Path:
    """A git repo whose commit hook runs lintloader, made once (hooks installed, the base
    committed through the hook): each test commits in a copy of it."""
    return make_project(tmp_path_factory.mktemp("made") / "project", env, hook_repo, ["lintloader"])


@pytest.fixture
def project(tmp_path: Path, made_project: Path) -> Path:
    """A git repo whose commit hook runs lintloader; supporters.py is already committed (a
    copy of :func:`made_project`, its hook and history with it)."""
    return Path(shutil.copytree(made_project, tmp_path / "project", symlinks=True))


@pytest.fixture
def fix_project(tmp_path: Path, env: dict[str, str], hook_repo: tuple[str, str]) -> Path:
    """The same, with the lintloader-fix hook."""
    return make_project(tmp_path / "project", env, hook_repo, ["lintloader-fix"])


def make_project(
    root: Path, env: dict[str, str], hook_repo: tuple[str, str], hooks: list[str]
) -> Path:
    (root / "minilight").mkdir(parents=True)
    for part in ("__init__.py", "trainer", "utilities/__init__.py", "utilities/collections.py"):
        source = LIGHTNING150 / part
        if source.is_dir():
            shutil.copytree(source, root / "minilight" / part)
        else:
            (root / "minilight" / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / "minilight" / part)
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (root / ".pre-commit-config.yaml").write_text(doc_config(*hook_repo, hooks))
    assert git("init", "-q", cwd=root, env=env).returncode == 0
    installed = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install-hooks"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if installed.returncode != 0:
        log = Path(env["PRE_COMMIT_HOME"]) / "pre-commit.log"
        why = (installed.stdout + installed.stderr).strip().splitlines()[-3:]
        pytest.skip(f"pre-commit cannot build the hook environment: {why} (see {log})")
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=root,
        env=env,
        check=False,
        capture_output=True,
    )
    assert done.returncode == 0
    assert git("add", ".", cwd=root, env=env).returncode == 0
    first = git("commit", "-q", "-m", "base", cwd=root, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    return root


def commit(root: Path, env: dict[str, str], *paths: str) -> subprocess.CompletedProcess[str]:
    assert git("add", *paths, cwd=root, env=env).returncode == 0
    return git("commit", "-m", "change", cwd=root, env=env)


def test_bad_staged_file_fails_the_commit_through_an_unstaged_chain(
    project: Path, env: dict[str, str]
) -> None:
    """Only fetching.py is staged; the reset it reaches is in the committed supporters.py."""
    shutil.copy2(LIGHTNING150 / "utilities" / "fetching.py", project / "minilight/utilities")
    done = commit(project, env, "minilight/utilities/fetching.py")
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "minilight/utilities/fetching.py:16:9: LL101" in output
    assert "supporters.py:22" in output  # the chain went into the unstaged file
    assert git("rev-list", "--count", "HEAD", cwd=project, env=env).stdout.strip() == "1"


def test_clean_staged_file_passes(project: Path, env: dict[str, str]) -> None:
    shutil.copy2(LIGHTNING151 / "utilities" / "fetching.py", project / "minilight/utilities")
    shutil.copy2(LIGHTNING151 / "trainer" / "supporters.py", project / "minilight/trainer")
    done = commit(project, env, "minilight")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"lintloader\.+Passed", output), output


def test_no_python_file_staged_skips(project: Path, env: dict[str, str]) -> None:
    (project / "NOTES.txt").write_text("no python here\n")
    done = commit(project, env, "NOTES.txt")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"lintloader\.+\(no files to check\)Skipped", output), output


def test_hook_with_zero_files_exits_zero(project: Path, env: dict[str, str]) -> None:
    """What the hook entry does if pre-commit ever calls it without files (always_run)."""
    done = run_cli("check", "--project-root=auto", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def test_hooks_file_declares_both_hooks() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"lintloader", "lintloader-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types"] == ["python"]
        assert hook["require_serial"] is True
    assert hooks["lintloader"]["entry"].startswith("lintloader check --project-root=auto")
    assert hooks["lintloader-fix"]["entry"].startswith("lintloader fix")


FIXABLE = """\
class Fetcher:
    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        self.reset()
        return self

    def reset(self):
        self.fetched = 0
        shutdown(self.loader)

    def teardown(self):
        self.reset()


def shutdown(loader):
    loader._iterator = None
"""


def test_fix_hook_fixes_and_fails_then_the_fixed_file_commits(
    fix_project: Path, env: dict[str, str]
) -> None:
    target = fix_project / "fetcher.py"
    target.write_text(FIXABLE)
    done = commit(fix_project, env, "fetcher.py")
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "files were modified by this hook" in output, output
    fixed = target.read_text()
    assert fixed != FIXABLE
    reset_body = fixed.split("def reset(self):")[1].split("def teardown")[0]
    teardown_body = fixed.split("def teardown(self):")[1].split("def shutdown")[0]
    assert "shutdown(self.loader)" not in reset_body
    assert "self.fetched = 0" in reset_body  # state reset stays (1.5.1's shape, no data loss)
    assert "shutdown(self.loader)" in teardown_body
    again = commit(fix_project, env, "fetcher.py")
    assert again.returncode == 0, again.stdout + again.stderr
    assert re.search(r"lintloader \(fix\)\.+Passed", again.stdout + again.stderr)


# -- `check --project-root`, the option the hook relies on (no pre-commit needed) -------------
def run_check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("check", "--no-cache", "--output-format", "concise", *args, cwd=cwd)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(LIGHTNING150, tmp_path / "repo" / "minilight")
    (tmp_path / "repo" / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    return tmp_path / "repo"


FETCHING = "minilight/utilities/fetching.py"
SUPPORTERS = "minilight/trainer/supporters.py"


def test_project_root_follows_chains_out_of_the_given_files(tree: Path) -> None:
    alone = run_check("--project-root", "none", FETCHING, cwd=tree)
    assert alone.returncode == 0 and alone.stdout == ""  # the chain leaves the file
    default = run_check(FETCHING, cwd=tree)  # a file inside a project sees its project
    assert default.returncode == 1 and "LL101" in default.stdout
    for root in ("auto", "."):
        done = run_check(f"--project-root={root}", FETCHING, cwd=tree)
        assert done.returncode == 1, done.stderr
        assert done.stdout.startswith(f"{FETCHING}:16:9: LL101 [error]")
    nested = run_check("--project-root=auto", "utilities/fetching.py", cwd=tree / "minilight")
    assert nested.stdout.startswith("utilities/fetching.py:16:9: LL101")  # found the root above


def test_project_root_reports_only_the_given_files(tree: Path) -> None:
    done = run_check("--project-root=auto", SUPPORTERS, cwd=tree)
    assert done.returncode == 0, done.stdout  # the finding is located in fetching.py
    assert done.stdout == ""
    folder = run_check("--project-root=auto", "minilight/utilities", cwd=tree)
    assert folder.stdout.startswith(f"{FETCHING}:16:9: LL101")


def test_project_root_errors_are_one_line(tree: Path) -> None:
    missing = run_check("--project-root=auto", "nope.py", cwd=tree)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "lintloader: error: nope.py: no such file or directory"
    not_dir = run_check(f"--project-root={FETCHING}", FETCHING, cwd=tree)
    assert not_dir.returncode == 2
    assert "not a directory" in not_dir.stderr and len(not_dir.stderr.splitlines()) == 1
    site = run_check("--project-root=auto", "--site-packages", cwd=tree)
    assert site.returncode == 2 and "--site-packages" in site.stderr

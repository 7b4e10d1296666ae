"""What lintloader reads and writes when the tree, its configuration or a co-user is hostile
(issue 39): one safe-file module (``lintloader/trust/safe_file.py``) with no fixed temporary name,
report files a configuration names kept inside the project, configuration files and baselines
of another user (a real second user) refused, inputs that are devices, deeply nested or hold
huge numbers, a 3,000-long ``extend`` chain, and terminal escapes in what is printed."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from lintloader.trust import safe_file

CLI = [sys.executable, "-m", "lintloader"]
BUG = "class Fetcher:\n    def __iter__(self):\n        self.loader._iterator = None\n"
FINDING = "fetch.py:3:9: LL101"
ROOT_ONLY = pytest.mark.skipif(
    os.name != "posix" or os.geteuid() != 0 or not shutil.which("useradd"),
    reason="needs root and useradd to make a second user",
)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "fetch.py").write_text(BUG)
    return root


def planted_victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    return victim


# --- the module itself -------------------------------------------------------------------


def test_safe_file_imports_nothing_of_lintloader() -> None:
    tree = ast.parse(Path(safe_file.__file__).read_text())
    names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names]  # fmt: skip
    names += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in names if name.startswith("lintloader")]


def test_no_writer_of_the_package_keeps_its_own_rename() -> None:
    """``os.replace`` and the fixed ``.lintloader-tmp`` name live in trust/safe_file.py alone."""
    package = Path(safe_file.__file__).parent.parent
    found = [
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if "os.replace(" in path.read_text() or '.lintloader-tmp"' in path.read_text()
    ]
    assert found == ["trust/safe_file.py"]


def test_read_regular_refuses_what_is_no_small_regular_file(tmp_path: Path) -> None:
    regular = tmp_path / "regular"
    regular.write_bytes(b"x" * 10)
    link = tmp_path / "link"
    link.symlink_to(regular)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sparse = tmp_path / "sparse.py"
    with open(sparse, "wb") as handle:
        handle.truncate(3 * 1024**3)  # 3 GB, no block on disk: never read
    assert safe_file.read_regular(regular, 10) == b"x" * 10
    assert safe_file.read_regular(link, 10, follow=True) == b"x" * 10
    with pytest.raises(safe_file.TooLarge):
        safe_file.read_regular(regular, 9)
    with pytest.raises(safe_file.TooLarge):
        safe_file.read_regular(sparse, 1024)
    for refused in (link, fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(safe_file.NotRegular):
            safe_file.read_regular(refused, None, follow=refused != link)


def test_read_sized_reads_a_file_changed_after_its_stat_whole_and_never_blocks(
    tmp_path: Path,
) -> None:
    """``read_sized`` trusts the size a stat just gave for one read, no ``fstat``: a file that
    grew since is read to its end, one that shrank to its new end; a read that fills is
    judged by ``fstat`` (a device is refused), a directory is refused, a FIFO without a
    writer reads as empty without blocking."""
    big = tmp_path / "big.py"
    data = os.urandom(200_000)
    big.write_bytes(data)
    link = tmp_path / "link.py"
    link.symlink_to(big)
    assert safe_file.read_sized(str(big), len(data)) == data
    assert safe_file.read_sized(str(link), len(data)) == data
    assert safe_file.read_sized(str(big), 10) == data  # grew after a stat of 10 bytes
    assert safe_file.read_sized(str(big), 0) == data
    assert safe_file.read_sized(str(big), 300_000) == data  # shrank
    (tmp_path / "empty.py").write_bytes(b"")
    assert safe_file.read_sized(str(tmp_path / "empty.py"), 0) == b""
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    assert safe_file.read_sized(str(fifo), 10) == b""
    for refused in (Path("/dev/zero"), tmp_path):
        with pytest.raises(safe_file.NotRegular):
            safe_file.read_sized(str(refused), 10)


@pytest.mark.skipif(not Path("/proc/self/mountinfo").is_file(), reason="a Linux /proc")
def test_read_regular_reads_whole_files_in_one_read_and_kernel_files_to_their_end(
    tmp_path: Path,
) -> None:
    """A regular file's read stops at the first short read (its end), so a kernel file that
    says its size is 0 and hands its text out a page per read must be read until a read
    returns nothing: every page of it, as Python's own reader gives it."""
    big = tmp_path / "big.py"
    big.write_bytes(os.urandom(300_000))
    assert safe_file.read_regular(big, None) == big.read_bytes()
    assert safe_file.read_regular(big, 300_000) == big.read_bytes()
    mounts = Path("/proc/self/mountinfo")
    assert os.stat(mounts).st_size == 0
    assert safe_file.read_regular(mounts, None) == mounts.read_bytes()
    smaps = Path("/proc/self/smaps")  # many pages: the kernel hands out one per read
    if smaps.is_file():
        data = safe_file.read_regular(smaps, None)
        assert len(data) > 8192 and data.endswith(b"\n")


def test_write_atomic_never_follows_a_planted_name(tmp_path: Path) -> None:
    victim = planted_victim(tmp_path)
    target = tmp_path / "report.json"
    for name in (".report.json.lintloader-tmp", "report.json.lintloader-tmp", ".report.json.tmp"):
        (tmp_path / name).symlink_to(victim)
    safe_file.write_atomic(target, b"{}\n")
    assert target.read_bytes() == b"{}\n" and not target.is_symlink()
    assert victim.read_text() == "precious\n"
    link = tmp_path / "linked.json"
    link.symlink_to(victim)
    with pytest.raises(safe_file.UnsafeWrite):
        safe_file.write_atomic(link, b"{}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    inner = tmp_path / "project"
    inner.mkdir()
    (inner / "reports").symlink_to(outside)
    with pytest.raises(safe_file.UnsafeWrite):
        safe_file.write_atomic(inner / "reports" / "r.txt", b"x", inside=str(inner))
    assert victim.read_text() == "precious\n" and list(outside.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir() if "tmp" in p.name) == sorted(
        [".report.json.lintloader-tmp", "report.json.lintloader-tmp", ".report.json.tmp"]
    )  # no temporary of its own left behind


# --- fixed temporary names of the product ------------------------------------------------


def test_report_and_baseline_never_write_through_a_planted_temporary(
    project: Path, tmp_path: Path
) -> None:
    victim = planted_victim(tmp_path)
    (project / ".report.sarif.lintloader-tmp").symlink_to(victim)  # the Action's report name
    (project / "base.json.lintloader-tmp").symlink_to(victim)
    done = run("check", "--no-cache", "--output-format", "sarif:report.sarif", ".", cwd=project)
    assert done.returncode == 1, done.stderr
    assert json.loads((project / "report.sarif").read_text())["runs"]
    written = run("check", "--no-cache", "--write-baseline", "base.json", ".", cwd=project)
    assert written.returncode == 0, written.stderr
    assert json.loads((project / "base.json").read_text())["findings"]
    assert victim.read_text() == "precious\n"


def test_a_report_file_that_is_a_link_is_refused(project: Path, tmp_path: Path) -> None:
    victim = planted_victim(tmp_path)
    (project / "report.json").symlink_to(victim)
    done = run("check", "--no-cache", "--output-format", "json:report.json", ".", cwd=project)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("is a symbolic link; not writing through it")
    assert victim.read_text() == "precious\n"


# --- outputs a configuration names -------------------------------------------------------


def configure(project: Path, *outputs: str) -> None:
    quoted = ", ".join(json.dumps(output) for output in outputs)
    (project / "pyproject.toml").write_text(f"[tool.lintloader]\noutput-format = [{quoted}]\n")


@pytest.mark.parametrize(
    "name",
    ["venv/lib/site.pth", "../outside.txt", "evil.pth", "notes", "linked/r.txt", "report.txt"],
)
def test_a_configured_report_stays_a_report_inside_the_project(
    project: Path, tmp_path: Path, name: str
) -> None:
    (project / "venv" / "lib").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / "linked").symlink_to(outside)
    (project / "report.txt").symlink_to(tmp_path / "victim.txt")
    victim = planted_victim(tmp_path)
    configure(project, f"concise:{name}")
    done = run("check", "--no-cache", ".", cwd=project)
    assert done.returncode == 1  # the findings' exit, not an error's
    assert done.stdout.startswith(FINDING)  # the report came to standard output instead
    error = done.stderr.splitlines()[0]
    assert error.startswith(f"lintloader: error: output-format (in {project / 'pyproject.toml'})")
    assert error.endswith("; not written")
    assert victim.read_text() == "precious\n" and list(outside.iterdir()) == []
    made = {p.name for p in (project / "venv" / "lib").iterdir()}
    assert made == set() and not (tmp_path / "outside.txt").exists()
    assert not (project / "evil.pth").exists() and not (project / "notes").exists()


def test_a_configured_report_inside_the_project_is_written(project: Path) -> None:
    (project / "reports").mkdir()
    configure(project, "concise:reports/lintloader.txt", "json")
    done = run("check", "--no-cache", ".", cwd=project)
    assert done.returncode == 1, done.stderr
    assert (project / "reports" / "lintloader.txt").read_text().startswith(FINDING)
    assert json.loads(done.stdout)[0]["code"] == "LL101"
    assert "lintloader: error" not in done.stderr


def test_the_command_line_may_write_a_report_anywhere(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "site.pth"
    target.parent.mkdir()
    done = run("check", "--no-cache", "--output-format", f"concise:{target}", ".", cwd=project)
    assert done.returncode == 1, done.stderr
    assert target.read_text().startswith(FINDING)


# --- another user's configuration and baseline -------------------------------------------


@ROOT_ONLY
def test_another_users_pyproject_above_the_project_is_not_used(
    tmp_path: Path, mate: tuple[int, int]
) -> None:
    shared = tmp_path / "shared"  # /tmp, a scratch mount: a co-user writes there
    project = shared / "project"
    project.mkdir(parents=True)
    (project / "fetch.py").write_text(BUG)
    config = shared / "pyproject.toml"
    config.write_text('[tool.lintloader]\nignore = ["LL101"]\noutput-format = ["json"]\n')
    os.chown(config, *mate)
    done = run("check", "--no-cache", ".", cwd=project)
    assert done.returncode == 1
    assert done.stdout.startswith(FINDING)  # the defaults: text, LL101 not ignored
    assert done.stderr.splitlines()[0] == (
        f"lintloader: warning: {config}: owned by another user (uid {mate[0]}); "
        "not trusted; not used"
    )
    os.chown(config, 0, 0)  # root's: trusted, as git trusts it
    assert run("check", "--no-cache", ".", cwd=project).returncode == 0
    os.chown(config, *mate)
    named = run("check", "--no-cache", "--config", str(config), ".", cwd=project)
    assert named.returncode == 0, named.stderr  # the command line's word


@ROOT_ONLY
def test_an_extended_file_of_another_user_is_not_used(
    project: Path, tmp_path: Path, mate: tuple[int, int]
) -> None:
    base = tmp_path / "base.toml"
    base.write_text('[tool.lintloader]\nignore = ["LL101"]\n')
    os.chown(base, *mate)
    (project / "pyproject.toml").write_text(f'[tool.lintloader]\nextend = "{base}"\n')
    done = run("check", "--no-cache", ".", cwd=project)
    assert done.returncode == 1 and done.stdout.startswith(FINDING)
    assert "owned by another user" in done.stderr.splitlines()[0]


@ROOT_ONLY
def test_another_users_baseline_named_by_the_config_is_not_used(
    project: Path, mate: tuple[int, int]
) -> None:
    assert (
        run("check", "--no-cache", "--write-baseline", "b.json", ".", cwd=project).returncode == 0
    )
    (project / "pyproject.toml").write_text('[tool.lintloader]\nbaseline = "b.json"\n')
    assert run("check", "--no-cache", ".", cwd=project).returncode == 0  # the user's own
    os.chown(project / "b.json", *mate)
    done = run("check", "--no-cache", ".", cwd=project)
    assert done.returncode == 1 and done.stdout.startswith(FINDING)
    assert done.stderr.splitlines()[0] == (
        f"lintloader: warning: baseline {project / 'b.json'}: owned by another user "
        f"(uid {mate[0]}); not trusted; not used"
    )
    given = run("check", "--no-cache", "--baseline", "b.json", ".", cwd=project)
    assert given.returncode == 0, given.stderr  # the command line's word


# --- inputs that are no small, flat file -------------------------------------------------


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("stdin", "not a regular file"),
        ("zero", "not a regular file"),
        ("deep", "nested too deeply"),
        ("huge-int", "a number of 5000 digits"),
        ("large", "over the limit of"),
    ],
)
def test_a_baseline_that_is_no_small_flat_file_is_one_line(
    project: Path, name: str, why: str
) -> None:
    baseline = project / "b.json"
    if name in ("stdin", "zero"):
        baseline.symlink_to(f"/dev/{name}")
    elif name == "deep":
        baseline.write_text("[" * 100_000 + "]" * 100_000)
    elif name == "huge-int":
        baseline.write_text('{"version": ' + "9" * 5000 + ', "findings": []}')
    else:
        with open(baseline, "wb") as handle:
            handle.truncate(1024**3)
    (project / "pyproject.toml").write_text('[tool.lintloader]\nbaseline = "b.json"\n')
    done = subprocess.run(
        [*CLI, "check", "--no-cache", "."],
        cwd=project,
        stdin=subprocess.PIPE,  # /dev/stdin: a pipe nobody writes to
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"lintloader: error: baseline {baseline}: ")
    assert why in lines[0]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("[tool.lintloader]\nmax-file-size = " + "9" * 5000 + "\n", "Exceeds the limit"),
        ("[tool.lintloader]\nignore = []\n# " + "x" * (5 * 1024 * 1024) + "\n", "over the limit"),
    ],
)
def test_a_configuration_with_a_huge_value_is_one_line(
    project: Path, content: str, why: str
) -> None:
    (project / "pyproject.toml").write_text(content)
    done = run("check", "--no-cache", ".", cwd=project)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lintloader: error: pyproject.toml: cannot read")
    assert why in lines[0]


def test_a_3000_long_extend_chain_is_followed_in_a_loop(project: Path) -> None:
    chain = project / "chain"
    chain.mkdir()
    (chain / "c0.toml").write_text('[tool.lintloader]\nignore = ["LL101"]\n')
    for index in range(1, 3000):
        (chain / f"c{index}.toml").write_text(f'[tool.lintloader]\nextend = "c{index - 1}.toml"\n')
    (project / "pyproject.toml").write_text('[tool.lintloader]\nextend = "chain/c2999.toml"\n')
    done = run("check", "--no-cache", ".", cwd=project)
    assert done.returncode == 0, done.stderr  # LL101 ignored by the chain's far end
    assert "Traceback" not in done.stderr


def test_an_extend_cycle_is_one_line(project: Path) -> None:
    (project / "a.toml").write_text('[tool.lintloader]\nextend = "b.toml"\n')
    (project / "b.toml").write_text('[tool.lintloader]\nextend = "a.toml"\n')
    (project / "pyproject.toml").write_text('[tool.lintloader]\nextend = "a.toml"\n')
    done = run("check", "--no-cache", ".", cwd=project)
    assert done.returncode == 2
    assert done.stderr == (
        "lintloader: error: b.toml: [tool.lintloader]: extend 'a.toml' makes a cycle\n"
    )


# --- terminal escapes --------------------------------------------------------------------

ESC = "\x1b]0;owned\x07"


@pytest.mark.enumerates_rules
def test_show_settings_escapes_the_configurations_values(project: Path) -> None:
    escaped = ESC.replace("\x1b", "\\u001b").replace("\x07", "\\u0007")  # as TOML spells them
    (project / "pyproject.toml").write_text(
        f'[tool.lintloader]\noutput-format = ["json:{escaped}.json"]\n'
    )
    done = run("check", "--no-cache", "--show-settings", ".", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "json:\\x1b]0;owned\\x07.json" in done.stdout


def test_stale_baseline_entries_and_baseline_errors_escape_names(project: Path) -> None:
    entry = {"fingerprint": "f" * 64, "code": "LL101", "path": "fetch.py"}
    entry |= {"root": f"Old{ESC}.__iter__", "sink": "x"}
    baseline = project / "b.json"
    baseline.write_text(json.dumps({"version": 1, "findings": [entry]}))
    done = run(
        "check", "--no-cache", "--baseline", "b.json", "--show-stale-baseline", ".", cwd=project
    )
    assert done.returncode == 1, done.stderr
    assert "stale baseline entry: fetch.py: LL101 Old\\x1b]0;owned\\x07.__iter__" in done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    broken = project / f"b{ESC}.json"
    broken.write_text("{")
    failed = run("check", "--no-cache", "--baseline", broken.name, ".", cwd=project)
    assert failed.returncode == 2
    assert "\x1b" not in failed.stderr and "\\x1b]0;owned\\x07" in failed.stderr


# --- files too large to analyze ----------------------------------------------------------


def notebook(cells: list[tuple[str, str]]) -> str:
    """A notebook of code cells (source, the text of one output)."""
    made = [
        {
            "cell_type": "code",
            "id": f"c{index}",
            "metadata": {},
            "execution_count": index + 1,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": output}],
            "source": source,
        }
        for index, (source, output) in enumerate(cells)
    ]
    return json.dumps({"cells": made, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_oversized_files_are_ll000_the_same_cold_and_warm_at_every_severity(
    tmp_path: Path,
) -> None:
    """A notebook whose outputs make its file larger than ``max-file-size`` but whose code is
    small, one whose code is too large, and a plain file too large: a run with the cache,
    whatever ran before it, prints what a run without it prints."""
    pytest.importorskip("nbformat", reason="notebooks need the [notebooks] extra")
    root = tmp_path / "tree"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.lintloader]\nmax-file-size = 0.01\n")
    (root / "outputs.ipynb").write_text(notebook([("print(1)\n", "x" * 20000), (BUG, "")]))
    (root / "code.ipynb").write_text(notebook([("x = 1\n" + "# pad\n" * 3000, ""), (BUG, "")]))
    (root / "big.py").write_text(BUG + "# pad\n" * 3000)
    (root / "train.py").write_text(
        "from torch.utils.data import DataLoader\n\n\ndef f(ds):\n    for e in range(3):\n"
        "        for b in DataLoader(ds, num_workers=2):\n            pass\n"
    )
    cache = str(tmp_path / "cache")
    severities = ["info", "warning", "error"]
    cold = {}
    for severity in severities:
        done = run("check", "--no-cache", "--min-severity", severity, ".", cwd=root)
        cold[severity] = (done.returncode, done.stdout)
    assert "outputs.ipynb:cell 2:3:9: LL101" in cold["warning"][1]
    for name in ("code.ipynb:", "big.py:"):
        assert [line for line in cold["warning"][1].splitlines() if line.startswith(name)]
    for severity in [*severities, "warning", "info", "warning", "error", "info"]:
        done = run("check", "--cache-dir", cache, "--min-severity", severity, ".", cwd=root)
        assert (done.returncode, done.stdout) == cold[severity], (severity, done.stderr)


def test_a_huge_sparse_file_is_never_read(project: Path) -> None:
    """3 GB on disk (no block of it written): too large by its size, under a memory limit
    far below it."""
    import resource

    with open(project / "huge.py", "wb") as handle:
        handle.truncate(3 * 1024**3)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1024**3, 1024**3))

    done = subprocess.run(
        [*CLI, "check", "--no-cache", "--output-format", "concise", "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert done.returncode == 1
    assert "huge.py:1:1: LL000 [error] too large to analyze (3072.0 MB > 4 MB;" in done.stdout
    assert FINDING in done.stdout

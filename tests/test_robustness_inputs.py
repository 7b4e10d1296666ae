"""Bad file contents never crash a run (issue 8): each odd file is either analyzed like any other
or reported as one LL000 line, the other files are still analyzed, and the exit code is 1 because
findings (LL000 included) were reported. Every weird file is generated at test time in tmp_path.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

from lintloader.summary.limits import DEFAULT_MAX_FILE_MB

# A file every run also checks: its finding proves the run went on past the odd file.
GOOD = (
    b"class Good:\n    def __iter__(self):\n        self.loader._iterator = None\n"
    b"        return self\n"
)
SINK = b"x._iterator = None\n"  # a sink token, so that demand-driven selection parses the file


def bug(prefix: bytes = b"", newline: bytes = b"\n", indent: bytes = b"    ") -> bytes:
    lines = [b"class Odd:", indent + b"def __iter__(self):"]
    lines.append(indent * 2 + b"self.l._iterator = None")
    return prefix + newline.join(lines) + newline


Run = tuple[subprocess.CompletedProcess[str], list[dict]]


def check_json(root: Path, *extra: str) -> Run:
    result = run_cli(
        "check",
        ".",
        "--no-cache",
        "-j",
        "1",
        "--output-format",
        "json",
        *extra,
        cwd=root,
        timeout=120,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1), result.stderr
    return result, json.loads(result.stdout)


def project(tmp_path: Path, name: str, content: bytes) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "good.py").write_bytes(GOOD)
    (root / name).write_bytes(content)
    return root


def by_path(findings: list[dict], path: str) -> list[dict]:
    return [f for f in findings if f["path"] == path]


def assert_run_went_on(result: subprocess.CompletedProcess[str], findings: list[dict]) -> None:
    assert [f["code"] for f in by_path(findings, "good.py")] == ["LL101"]
    assert result.returncode == 1
    # stderr is the summary (and its "[*] N fixable" line): no warning, no traceback, nothing
    # printed per file
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("Found ") and len(lines) <= 2, result.stderr
    assert all(line.startswith("[*] ") for line in lines[1:]), result.stderr


UNANALYZABLE = {
    "syntax_error": (b"def broken(:\n" + SINK, "syntax error"),
    "python2": (b'print "hello"\nexec "code"\n' + SINK, "syntax error"),
    "nul_bytes": (b"x = 1\x00\n" + SINK, "syntax error"),
    "undecodable": (b'x = "\xff\xfe\xc3"\n' + SINK, "cannot decode"),
    "wrong_cookie": (b"# -*- coding: no-such-codec -*-\n" + SINK, "cannot decode"),
}


@pytest.mark.parametrize("case", sorted(UNANALYZABLE))
def test_unanalyzable_file_is_one_ll000_and_the_run_goes_on(odd_run: Run, case: str) -> None:
    _, message = UNANALYZABLE[case]
    result, findings = odd_run
    assert_run_went_on(result, findings)
    odd = by_path(findings, f"unanalyzable_{case}.py")
    assert [f["code"] for f in odd] == ["LL000"], odd
    assert odd[0]["message"].startswith(message), odd[0]["message"]
    assert "\n" not in odd[0]["message"]


ANALYZABLE = {
    # name: (bytes, line and column of the reset)
    "latin1_cookie": (bug(b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\n"), 5, 9),
    "utf8_bom": (bug(b"\xef\xbb\xbf"), 3, 9),
    "crlf": (bug(newline=b"\r\n"), 3, 9),
    "cr_only": (bug(newline=b"\r"), 3, 9),
    "tabs": (bug(indent=b"\t"), 3, 3),
    "no_final_newline": (bug().rstrip(b"\n"), 3, 9),
}


@pytest.mark.parametrize("case", sorted(ANALYZABLE))
def test_unusual_but_valid_file_is_analyzed(odd_run: Run, case: str) -> None:
    _, line, column = ANALYZABLE[case]
    result, findings = odd_run
    assert_run_went_on(result, findings)
    odd = by_path(findings, f"analyzable_{case}.py")
    assert [(f["code"], f["line"], f["column"]) for f in odd] == [("LL101", line, column)]


def test_empty_file_is_clean_and_exits_zero(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "empty.py").write_bytes(b"")
    (root / "__init__.py").write_bytes(b"")
    result, findings = check_json(root)
    assert findings == []
    assert result.returncode == 0
    assert "in 2 files" in result.stderr


DEEP = {
    # shapes that crashed libcst with a segmentation fault or stalled it for minutes
    "parentheses": b"v = " + b"(" * 10_000 + b"1" + b")" * 10_000 + b"\n",
    "lists": b"v = " + b"[" * 10_000 + b"1" + b"]" * 10_000 + b"\n",
    "unary_minus": b"v = " + b"-" * 100_000 + b"1\n",
    "lambdas": b"v = " + b"lambda: " * 10_000 + b"1\n",
    "and_chain": b"v = 1" + b" and 1" * 50_000 + b"\n",
    "plus_chain": b"v = 1" + b" + 1" * 50_000 + b"\n",
    "attribute_chain": b"v = a" + b".b" * 20_000 + b"\n",
    "elif_chain": b"if x:\n    pass\n" + b"elif x:\n    pass\n" * 2_000,
}


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_deeply_nested_file_is_ll000_not_a_crash(odd_run: Run, shape: str) -> None:
    result, findings = odd_run
    assert_run_went_on(result, findings)
    deep = by_path(findings, f"deep_{shape}.py")
    assert [f["code"] for f in deep] == ["LL000"]
    assert deep[0]["message"].startswith("too deeply nested to analyze"), deep[0]["message"]


@pytest.fixture(scope="module")
def odd_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One check of a tree holding ``good.py`` and every odd file above (unanalyzable,
    unusual but valid, deeply nested), each test reading its own file's findings: what a run
    of good.py beside that one file said, in one run instead of 19."""
    root = tmp_path_factory.mktemp("odd") / "proj"
    root.mkdir()
    (root / "good.py").write_bytes(GOOD)
    odd = {
        **{f"unanalyzable_{case}.py": data for case, (data, _) in UNANALYZABLE.items()},
        **{f"analyzable_{case}.py": data for case, (data, _, _) in ANALYZABLE.items()},
        **{f"deep_{shape}.py": SINK + data for shape, data in DEEP.items()},
    }
    for name, data in odd.items():
        (root / name).write_bytes(data)
    return check_json(root)


def test_moderate_nesting_is_still_analyzed(tmp_path: Path) -> None:
    nested = b"v = " + b"(" * 150 + b"1" + b")" * 150 + b"\n"
    chain = b"w = 1" + b" and 1" * 200 + b"\n"
    result, findings = check_json(project(tmp_path, "odd.py", nested + chain + bug()))
    assert_run_went_on(result, findings)
    assert [f["code"] for f in by_path(findings, "odd.py")] == ["LL101"]


def write_big(path: Path, megabytes: int, head: bytes = b"") -> None:
    line = b"value = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]\n"
    block = line * (1024 * 1024 // len(line) + 1)
    with open(path, "wb") as handle:
        handle.write(head)
        for _ in range(megabytes):
            handle.write(block)


# past the default max-file-size by half: what 50 MB proved, at a ninth of the CPU
BIG_MB = int(DEFAULT_MAX_FILE_MB * 1.5)


def test_a_big_file_without_sink_tokens_is_never_parsed(tmp_path: Path) -> None:
    root = project(tmp_path, "good_twin.py", GOOD.replace(b"Good", b"Twin"))
    write_big(root / "generated.py", BIG_MB)
    result, findings = check_json(root, "-v")
    assert {f["path"] for f in findings} == {"good.py", "good_twin.py"}
    # three files found, only the two with sink tokens parsed
    assert "in 3 files (2 parsed" in result.stderr, result.stderr


def test_a_big_file_with_sink_tokens_is_too_large_to_analyze(tmp_path: Path) -> None:
    root = project(tmp_path, "odd.py", b"")
    write_big(root / "generated.py", BIG_MB, head=bug())
    result, findings = check_json(root)
    assert_run_went_on(result, findings)
    big = by_path(findings, "generated.py")
    assert [f["code"] for f in big] == ["LL000"]
    assert big[0]["message"].startswith("too large to analyze ("), big[0]["message"]
    assert "max-file-size" in big[0]["message"]
    assert f"> {DEFAULT_MAX_FILE_MB:g} MB" in big[0]["message"]  # the default limit


def test_max_file_size_is_configurable(tmp_path: Path) -> None:
    root = project(tmp_path, "odd.py", bug() + b"# padding\n" * 200)  # about 2.2 KB
    _, findings = check_json(root)
    assert [f["code"] for f in by_path(findings, "odd.py")] == ["LL101"]
    (root / "pyproject.toml").write_text("[tool.lintloader]\nmax-file-size = 0.001\n")
    _, findings = check_json(root)
    odd = by_path(findings, "odd.py")
    assert [f["code"] for f in odd] == ["LL000"]
    assert "> 0.001 MB" in odd[0]["message"]


def test_bad_max_file_size_is_an_operational_error(tmp_path: Path) -> None:
    root = project(tmp_path, "odd.py", bug())
    (root / "pyproject.toml").write_text('[tool.lintloader]\nmax-file-size = "big"\n')
    result = run_cli("check", ".", "--no-cache", cwd=root)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "max-file-size" in result.stderr, result.stderr


def test_deep_files_in_parallel_workers_do_not_break_the_pool(tmp_path: Path) -> None:
    """Worker processes parse when there are several files: a crash there used to end the whole
    run with an internal error (BrokenProcessPool)."""
    root = project(tmp_path, "odd.py", bug())
    for shape in ("parentheses", "lambdas", "and_chain", "unary_minus"):
        (root / f"deep_{shape}.py").write_bytes(SINK + DEEP[shape])
    result = run_cli(
        "check", ".", "--no-cache", "-j", "2", "--output-format", "json", cwd=root, timeout=120
    )
    assert "Traceback" not in result.stderr and result.returncode == 1, result.stderr
    found = {(f["path"], f["code"]) for f in json.loads(result.stdout)}
    assert found == {("good.py", "LL101"), ("odd.py", "LL101")} | {
        (f"deep_{shape}.py", "LL000")
        for shape in ("parentheses", "lambdas", "and_chain", "unary_minus")
    }

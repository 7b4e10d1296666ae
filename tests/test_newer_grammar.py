"""Code written for a newer Python than the one lintloader runs on (PEP 695, 696, 701,
``except*``, ``match``): ``check`` and ``fix`` through the real CLI give what they give under
Python 3.13, and a file nothing can read gets an LL000 that says why.

Python 3.13 is found on this machine (``python3.13``, pyenv, or ``$LINTLOADER_TEST_PYTHON313``);
its ``ast`` needs nothing installed, and for whole CLI runs libcst and click are installed for
it from the package index at test time (skipped, with the reason, when either is impossible).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, run_cli
from other_pythons import find_python, summaries_under, with_cli

from lintloader.summary.summarize import summarize_source

GRAMMAR = FIXTURES / "grammar"
SOURCES = sorted(p for p in GRAMMAR.glob("*.py") if not p.name.endswith(".fixed.py"))
EXPECT = re.compile(r"#\s*expect:\s*(?P<code>LL\d{3})\s+(?P<severity>error|warning|info)")
OLD_INTERPRETER = sys.version_info < (3, 12)
# lintloader parses only files that mention what its rules are about
HEADER = "from torch.utils.data import DataLoader\nloader = DataLoader(range(4))\n"
SHIFT = HEADER.count("\n")


@pytest.fixture(scope="session")
def python313() -> str:
    found = find_python("3.13")
    if found is None:
        pytest.skip("no Python 3.13 interpreter on this machine to compare with")
    return found


def markers(path: Path) -> set[tuple[int, str, str]]:
    found = set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found.add((number, match["code"], match["severity"]))
    return found


def check_json(*paths: str, cwd: Path = REPO) -> list[dict]:
    done = run_cli(
        "check", "--no-cache", "-j", "1", "--min-severity", "info", "--output-format", "json",
        *paths, cwd=cwd,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


# -- the fixtures really need a newer Python --------------------------------------------------
@pytest.mark.skipif(not OLD_INTERPRETER, reason="this interpreter reads 3.12 syntax itself")
@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_fixture_is_rejected_by_this_interpreters_ast(path: Path) -> None:
    with pytest.raises(SyntaxError):
        ast.parse(path.read_text())


# -- check: the findings, where a new enough interpreter puts them -----------------------------
@pytest.fixture(scope="module")
def checked_sources() -> list[dict]:
    """One ``check`` of every source, without a project (a one-file check inside the checkout
    would read all of it, some 750 files, as its project): each file's findings are those of
    its own check, its markers the same alone or beside the others."""
    return check_json("--project-root", "none", *(str(p.relative_to(REPO)) for p in SOURCES))


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_check_reports_the_marked_findings(path: Path, checked_sources: list[dict]) -> None:
    relative = path.relative_to(REPO).as_posix()
    found = [f for f in checked_sources if f["path"] == relative]
    assert not [f for f in found if f["code"] == "LL000"], found
    assert {(f["line"], f["code"], f["severity"]) for f in found} == markers(path)


def test_summaries_equal_python313s_own_ast(python313: str, tmp_path: Path) -> None:
    """Python 3.13 builds the summaries with its own ``ast`` (importing the summary modules
    only, no libcst); this interpreter builds them through libcst and the lowering."""
    paths = [str(p) for p in SOURCES]
    theirs = summaries_under(python313, paths, tmp_path)
    for path in paths:
        ours = summarize_source(Path(path).read_bytes(), path, "m")
        assert ours.ok, ours.error
        assert ours == theirs[path], path


def cli_outputs(python: str, env: dict[str, str], sources: list[Path], tree: Path) -> tuple:
    """``check`` (JSON) then ``fix --unsafe-fixes`` on copies of ``sources`` in ``tree``: both
    outputs and the files afterwards."""
    tree.mkdir()
    for path in sources:
        shutil.copy(path, tree / path.name)
    runs = [
        subprocess.run(
            [python, "-m", "lintloader", *args, "--no-cache", "-j", "1", "."],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        for args in (
            ("check", "--min-severity", "info", "--output-format", "json"),
            ("fix", "--unsafe-fixes"),
        )
    ]
    for run in runs:
        assert run.returncode in (0, 1), run.stderr
    files = {p.name: p.read_bytes() for p in sorted(tree.glob("*.py"))}
    return [r.stdout for r in runs], [r.stderr for r in runs], files


# Python 3.10's ast has no `X[*Ts]` (PEP 646, 3.11), which the lowering keeps as written.
NEEDS_311 = {"type_defaults.py"}


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Callable[[list[Path]], tuple]:
    """:func:`cli_outputs` of this interpreter, run once per set of sources (the versions
    that read every source compare with the same run)."""
    outputs: dict[tuple[str, ...], tuple] = {}

    def of(sources: list[Path]) -> tuple:
        key = tuple(path.name for path in sources)
        if key not in outputs:
            tree = tmp_path_factory.mktemp("here") / "tree"
            outputs[key] = cli_outputs(sys.executable, dict(os.environ), sources, tree)
        return outputs[key]

    return of


@pytest.mark.parametrize("version", ["3.10", "3.12", "3.13"])
def test_check_and_fix_agree_across_interpreters(
    version: str, tmp_path: Path, ours: Callable[[list[Path]], tuple]
) -> None:
    """The same CLI commands under Python 3.10, 3.12 and 3.13 as under this interpreter: the
    same findings (JSON, positions included), the same fix report, the same fixed files."""
    python = find_python(version)
    if python is None:
        pytest.skip(f"no Python {version} interpreter on this machine to compare with")
    env = with_cli(python, version)
    if isinstance(env, str):
        pytest.skip(env)
    sources = [p for p in SOURCES if version != "3.10" or p.name not in NEEDS_311]
    theirs = cli_outputs(python, env, sources, tmp_path / version)
    here = ours(sources)
    assert here == theirs
    assert json.loads(here[0][0])  # there were findings to agree on
    if version == "3.10":
        for name in NEEDS_311:
            finding = cli_outputs(python, env, [GRAMMAR / name], tmp_path / "pep646")[0][0]
            (only,) = json.loads(finding)
            assert only["code"] == "LL000"
            assert "reads only when it runs on Python 3.11 or later" in only["message"]


# -- fix ---------------------------------------------------------------------------------------
def test_fix_rewrites_the_newer_syntax_files(tmp_path: Path) -> None:
    for path in SOURCES:
        shutil.copy(path, tmp_path / path.name)
    done = run_cli(  # every finding, the info ones (avoidable costs) too
        "fix",
        "--unsafe-fixes",
        "--min-severity",
        "info",
        "--no-cache",
        "-j",
        "1",
        ".",
        cwd=tmp_path,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "would not parse" not in done.stdout + done.stderr
    for path in SOURCES:
        expected = GRAMMAR / f"{path.stem}.fixed.py"
        assert (tmp_path / path.name).read_text() == expected.read_text(), path.name
    left = check_json(".", cwd=tmp_path)
    assert not [f for f in left if f["severity"] == "error"], left  # LL101, LL201: all fixed


def test_fix_refuses_a_newer_syntax_file_it_would_break(tmp_path: Path) -> None:
    """The write check compiles the lowered text: a real mistake is still a mistake."""
    from lintloader.fixers.edit.parsing import reparse_ok

    good = b"type Batch = list[int]\nprint(f'{f\"{1}\"}')\n"
    assert reparse_ok(good, "good.py") is None
    for bad in (b"type Batch = list[int]\nf() = 1\n", b"type Batch = list[int]\nreturn 1\n"):
        assert reparse_ok(bad, "bad.py") is not None, bad


# -- LL000 says why ----------------------------------------------------------------------------
def ll000(tmp_path: Path, source: str) -> dict:
    """The one finding of ``HEADER + source``, an LL000, with its line counted in ``source``."""
    (tmp_path / "example.py").write_text(HEADER + source)
    return only_ll000(check_json("example.py", cwd=tmp_path))


# each an LL000 of its own file, all checked in one run (:func:`ll000s`)
SYNTAX_ERROR = "def train(loader):\n    for batch in loader\n        pass\n"
NEWER_MISTAKE = "type Batch = list[int]\n\ndef f[T](x: T):\n    f(x) = 1\n"
PY314 = {
    "t-string": ("x = 1\nname = t'{x}'\n", "template strings, PEP 750", 2),
    "except-without-parentheses": (
        "try:\n    pass\nexcept ValueError, TypeError:\n    pass\n",
        "PEP 758",
        3,
    ),
}
LAZY_IMPORT = "import os\nlazy import json\n"
# libcst takes minutes on 20,000 chained operators
LONG_CHAIN = "type Batch = list[int]\nx = {}\n".format(" + ".join(["a"] * 20_000))
LL000_SOURCES = {
    "syntax_error": SYNTAX_ERROR,
    "newer_mistake": NEWER_MISTAKE,
    **{name.replace("-", "_"): source for name, (source, _, _) in PY314.items()},
    "lazy_import": LAZY_IMPORT,
    "long_chain": LONG_CHAIN,
}


@pytest.fixture(scope="module")
def ll000s(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """One ``check`` of every ``HEADER + source`` of :data:`LL000_SOURCES`, each its own file
    (``<name>.py``), outside any project: name -> that file's findings."""
    root = tmp_path_factory.mktemp("ll000")
    for name, source in LL000_SOURCES.items():
        (root / f"{name}.py").write_text(HEADER + source)
    found = check_json(*(f"{name}.py" for name in LL000_SOURCES), cwd=root)
    return {name: [f for f in found if f["path"] == f"{name}.py"] for name in LL000_SOURCES}


def only_ll000(findings: list[dict]) -> dict:
    """The one finding of a file, an LL000, with its line counted after :data:`HEADER`."""
    assert [f["code"] for f in findings] == ["LL000"], findings
    return {**findings[0], "line": findings[0]["line"] - SHIFT}


def test_a_real_syntax_error_stays_the_interpreters_syntax_error(
    ll000s: dict[str, list[dict]],
) -> None:
    with pytest.raises(SyntaxError) as error:
        ast.parse(HEADER + SYNTAX_ERROR)
    finding = only_ll000(ll000s["syntax_error"])
    assert finding["message"] == f"syntax error: {error.value.msg}"
    assert (finding["line"] + SHIFT, finding["column"]) == (error.value.lineno, error.value.offset)


def test_a_mistake_in_a_newer_syntax_file_is_reported_on_its_line(
    ll000s: dict[str, list[dict]],
) -> None:
    """This interpreter stops at the ``type`` statement; libcst reads on to the mistake."""
    finding = only_ll000(ll000s["newer_mistake"])
    assert finding["line"] == 4
    assert finding["message"].startswith("syntax error: invalid syntax")
    if OLD_INTERPRETER:
        assert f"stopped earlier, at {1 + SHIFT}:6" in finding["message"]


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="this interpreter reads 3.14 syntax")
@pytest.mark.parametrize("name", sorted(PY314))
def test_python314_syntax_names_the_version_it_needs(
    name: str, ll000s: dict[str, list[dict]]
) -> None:
    _, feature, line = PY314[name]
    finding = only_ll000(ll000s[name.replace("-", "_")])
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert finding["message"].startswith("needs Python 3.14 (")
    assert feature in finding["message"]
    assert f"lintloader ran on Python {running}" in finding["message"]
    assert finding["line"] == line


@pytest.mark.skipif(sys.version_info >= (3, 15), reason="this interpreter reads 3.15 syntax")
def test_python315_lazy_import_names_the_version_it_needs(ll000s: dict[str, list[dict]]) -> None:
    finding = only_ll000(ll000s["lazy_import"])
    assert finding["message"].startswith("needs Python 3.15 (lazy imports, PEP 810); ")
    assert finding["line"] == 2


def test_a_long_operator_chain_is_not_handed_to_libcst(ll000s: dict[str, list[dict]]) -> None:
    """libcst takes minutes on 20,000 chained operators; the file keeps ast's syntax error."""
    finding = only_ll000(ll000s["long_chain"])
    assert finding["message"].startswith("syntax error: ")


# -- cost: the fast path never imports libcst --------------------------------------------------
def test_only_a_file_that_ast_rejects_imports_libcst(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        from lintloader.summary.summarize import summarize_source
        assert summarize_source(b"x = f'{1}'\\n", "a.py", "a").ok
        print("libcst" in sys.modules)
        assert summarize_source(b"type X = int\\n", "b.py", "b").ok
        print("libcst" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    expected = ["False", "True"] if OLD_INTERPRETER else ["False", "False"]
    assert done.stdout.split() == expected

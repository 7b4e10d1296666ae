"""Property tests (issue 8): for any program ``check`` does not crash; ``fix`` output parses,
changes nothing but the statements it moves or removes, keeps encoding and line endings, and a
second ``fix`` is a no-op; a program without findings is byte-identical after ``fix``.

In-process through the library API for speed. CI runs a bounded number of examples
(``LINTLOADER_FUZZ_EXAMPLES``, default 30); ``benchmarks/fuzz.py`` runs thousands.
"""

from __future__ import annotations

import ast
import difflib
import os
import tempfile
from collections import Counter
from dataclasses import dataclass

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lintloader.fixers.registry import load_registry
from lintloader.fixers.runner import fix_in_memory
from lintloader.pipeline.engine import CheckOptions, run_check
from lintloader.scan.discover.paths import discover_paths

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

EXAMPLES = int(os.environ.get("LINTLOADER_FUZZ_EXAMPLES", "30"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
REGISTRY = load_registry()
SINK_LINE = b"x._iterator = None\n"  # makes demand-driven selection parse the file


@dataclass(frozen=True)
class Fixed:
    source: bytes
    changed: bool
    findings: list[str]


def check_source(source: bytes) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "mod.py")
        with open(path, "wb") as handle:
            handle.write(source)
        result = run_check(discover_paths([path], cwd=folder), CheckOptions(jobs=1))
        return [f"{f.code}:{f.line}" for f in result.findings]


def fix_source(source: bytes, unsafe: bool = False) -> Fixed:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "mod.py")
        with open(path, "wb") as handle:
            handle.write(source)
        discovery = discover_paths([path], cwd=folder)
        options = CheckOptions(jobs=1)
        findings = [f"{f.code}:{f.line}" for f in run_check(discovery, options).findings]
        outcome = fix_in_memory(discovery, options, REGISTRY, unsafe)
        new = outcome.changed.get(os.path.abspath(path), source)
        return Fixed(new, new != source, findings)


# -- generated programs: the bug class in many shapes ----------------------------------------
SINKS = (
    "{loader}._iterator = None",
    "del {loader}._iterator",
    "setattr({loader}, '_iterator', None)",
    "{loader}._iterator._shutdown_workers()",
)
STATE = ("self.count = 0", "self.done = False", "self.batches = []", "self.fetched = 0")
NOISE = (
    "# a comment mentioning _iterator",
    "value = '_iterator'",
    "pass",
    "total = sum(range(3))",
    'print("reset")',
)
names = st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True)
methods = st.sampled_from(["reset", "_reset", "clear", "restart", "reset_state"])


@st.composite
def fetcher_programs(draw: st.DrawFn) -> bytes:
    """A class whose ``__iter__`` reaches an iterator reset through ``self.<method>()``, with
    random names, state resets, noise, teardown (or not), helper function (or not), newline
    style, indentation, BOM and encoding cookie."""
    cls, method = draw(names), draw(methods)
    loader = draw(st.sampled_from(["self.loader", "self.dataloader", "loader"]))
    sink = draw(st.sampled_from(SINKS)).format(loader="loader" if loader == "loader" else loader)
    state = draw(st.lists(st.sampled_from(STATE), max_size=3, unique=True))
    through_helper = draw(st.booleans())
    teardown = draw(st.sampled_from(["teardown", "close", "shutdown", None]))
    noise = draw(st.lists(st.sampled_from(NOISE), max_size=2))
    position = draw(st.integers(0, len(state)))
    body = [*state]
    reset_line = f"_shutdown(self.{loader[5:]})" if through_helper and loader != "loader" else sink
    if loader == "loader":
        body.insert(0, "loader = self.loader")
        position += 1
    body.insert(position, reset_line)
    lines = [*noise, f"class {cls}:"]
    lines += ["    def __iter__(self):", f"        self.{method}()", "        return self", ""]
    lines += [f"    def {method}(self):", *(f"        {s}" for s in body), ""]
    if teardown:
        lines += [f"    def {teardown}(self):", f"        self.{method}()", ""]
    if through_helper:
        lines += ["", "def _shutdown(loader):", "    loader._iterator = None", ""]
    return render(draw, lines)


@st.composite
def clean_programs(draw: st.DrawFn) -> bytes:
    """The fixed shape (1.5.1): the reset only in teardown, never reached from __iter__."""
    cls, method = draw(names), draw(methods)
    sink = draw(st.sampled_from(SINKS)).format(loader="self.loader")
    state = draw(st.lists(st.sampled_from(STATE), min_size=1, max_size=3, unique=True))
    lines = [
        f"class {cls}:",
        "    def __iter__(self):",
        f"        self.{method}()",
        "        return self",
        "",
        f"    def {method}(self):",
        *(f"        {s}" for s in state),
        "",
        "    def teardown(self):",
        f"        self.{method}()",
        f"        {sink}",
        "",
    ]
    return render(draw, lines)


def render(draw: st.DrawFn, lines: list[str]) -> bytes:
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    indent = draw(st.sampled_from(["    ", "\t", "  "]))
    text = newline.join(line.replace("    ", indent) for line in lines) + newline
    prefix = draw(st.sampled_from([b"", b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\n"]))
    encoding = "latin-1" if b"coding" in prefix else "utf-8"
    if encoding == "latin-1":
        text = text.replace("# a comment", "# caf\xe9 comment")
    return prefix + text.encode(encoding)


def parses(source: bytes) -> bool:
    try:
        cst.parse_module(source)
        ast.parse(source)
    except (cst.ParserSyntaxError, SyntaxError, ValueError):
        return False
    return True


def assert_only_statements_moved_or_removed(old: bytes, new: bytes, allowed: set[str]) -> None:
    """Every line the fix deleted is one of ``allowed`` (the reset statement, the call that
    starts the chain), every line it added is a deleted one moved, or a new teardown around it."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    removed: Counter[str] = Counter()
    added: Counter[str] = Counter()
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            removed.update(line.strip().decode("latin-1") for line in old_lines[a0:a1])
        if tag in ("insert", "replace"):
            added.update(line.strip().decode("latin-1") for line in new_lines[b0:b1])
    removed.pop("", None)
    added.pop("", None)
    assert set(removed) <= allowed, (removed, allowed)
    scaffolding = {"def teardown(self):", "pass"} | {a for a in allowed if a.startswith("self.")}
    assert set(added - removed) <= scaffolding, (added, removed)


def statement_texts(source: bytes) -> set[str]:
    """The simple statements of a generated program (what a fix may move or remove)."""
    return {
        line.strip().decode("latin-1")
        for line in source.splitlines()
        if line.strip() and not line.strip().startswith((b"def ", b"class ", b"#"))
    }


def assert_layout_kept(old: bytes, new: bytes) -> None:
    assert new.startswith(b"\xef\xbb\xbf") == old.startswith(b"\xef\xbb\xbf")
    assert new.startswith(b"# -*- coding") == old.startswith(b"# -*- coding")
    for ending in (b"\r\n", b"\r", b"\n"):
        if ending in old:
            assert ending in new or not new.strip()
            break
    if b"\r\n" not in old:
        assert b"\r\n" not in new
    if b"\r" not in old:
        assert b"\r" not in new


@FUZZ
@given(program=fetcher_programs(), unsafe=st.booleans())
def test_fix_output_parses_is_minimal_and_idempotent(program: bytes, unsafe: bool) -> None:
    assert parses(program)
    first = fix_source(program, unsafe)
    assert any(f.startswith("LL101") for f in first.findings), first.findings
    if not first.changed:
        return
    assert parses(first.source)
    assert_layout_kept(program, first.source)
    assert_only_statements_moved_or_removed(program, first.source, statement_texts(program))
    second = fix_source(first.source, unsafe)
    assert not second.changed, (first.source, second.source)


@FUZZ
@given(program=clean_programs())
def test_program_without_findings_is_byte_identical_after_fix(program: bytes) -> None:
    fixed = fix_source(program, unsafe=True)
    assert [f for f in fixed.findings if f.startswith(("LL101", "LL102"))] == []
    assert fixed.source == program and not fixed.changed


@FUZZ
@given(source=hypothesmith.from_grammar())
def test_check_and_fix_survive_any_grammatical_program(source: str) -> None:
    data = SINK_LINE + source.encode("utf-8", "surrogatepass")
    findings = check_source(data)  # must not raise
    assert all(f.split(":")[0].startswith("LL") for f in findings)
    fixed = fix_source(data, unsafe=True)
    if not any(f.startswith(("LL101", "LL102")) for f in fixed.findings):
        assert fixed.source == data and not fixed.changed
    elif fixed.changed:
        assert parses(fixed.source)


@FUZZ
@given(data=st.binary(max_size=600))
def test_check_survives_arbitrary_bytes(data: bytes) -> None:
    findings = check_source(SINK_LINE + data)
    assert all(f.startswith("LL") for f in findings)


@FUZZ
@given(
    text=st.text(alphabet=st.sampled_from(list("()[]{}:.,=+-*/ \n\t\\'\"#xyzaif_0")), max_size=300)
)
def test_check_survives_punctuation_soup(text: str) -> None:
    findings = check_source(SINK_LINE + text.encode())
    assert all(f.startswith("LL") for f in findings)

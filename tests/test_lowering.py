"""The libcst path of the summary (lowering, then the unchanged ``ast`` visitors) gives the
summary the ``ast`` path gives: on every file both can read (the fixtures, a sample of the
installed environment, with every f-string lowered), and on newer-syntax snippets, the summary
Python 3.13 builds with its own ``ast``. Lowering keeps every line and character column."""

from __future__ import annotations

import ast
import re
import sysconfig
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES
from other_pythons import find_python, summaries_under

from lintloader.summary.lowering import lower
from lintloader.summary.model import FileSummary
from lintloader.summary.newer import parse_lowered
from lintloader.summary.source_text import decode_source
from lintloader.summary.summarize import summarize_parsed, summarize_source

# files of 32 top-level packages here (200 files: 37), every one holding f-strings
SAMPLE_SIZE = 100
SAMPLE_MAX_BYTES = 10_000  # libcst reads ~50x slower than ast: keep the sample quick

# Newer syntax where columns are easy to get wrong; each puts calls where the summary sees them.
SNIPPETS = {
    "non_ascii_literals": """
        x = f"é{DataLoader(a)}ü{b.c()}ß" + g()
        y = f"{"é"}{h()}" if f"ü{"\\n".join(k())}" else m()
    """,
    "multiline_type_params": """
        def build[
            T: (int, str),  # a comment: with = and : in it
            *Ts,
            **P,
        ](x: T = make()) -> T:
            return DataLoader(x)

        class Holder[T = int](Base[T], metaclass=Meta):
            def __iter__(self):
                self.loader._iterator = None
                return iter(self.loader)
    """,
    "format_specs_and_debug": """
        print(f"{loader=!r:>{width()}} {f'{x!s}'} { y = } {z = !r:10}")
        print(f"{{literal}} {a()!a} {b:{'>'}{10}} {c:#x}")
    """,
    "concatenations": """
        msg = "a" \\
            f"{DataLoader(x)}" "b"
        msg2 = ("é"
                f"{iter(loader)}"  # a comment
                'z')
        msg3 = "a" f"b" r"c"
    """,
    "parenthesized_fields": """
        a = f"{(x for x in make())}"
        b = f"{(lambda: DataLoader(d))()}"
        c = f"{a if b() else c}"
        d = f"{ {'k': v()}['k'] }"
        e = f"{(yield_value())}"
    """,
    "type_aliases": """
        type Plain = int
        type Annotated2[T: int = str] = Annotated[T, f"{g()}", make(T)]
        if flag(): type Inline = list[int]
        class K:
            type Member[*Ts = *tuple[int]] = tuple[*Ts]
    """,
    "multiline_fstrings": """
        text = f'''
        header {DataLoader(ds,
                           num_workers=2)}
            body {f"{f"{deep()}"}"}
        '''
        line = f'abc\\
        def{cont()}'
    """,
    "decorators_and_defaults": """
        @register(f"{name()}")
        def f[T](x=f"{y()}", *, z: T = f"{w()}") -> str:
            return f"{x}"
    """,
    "except_star": """
        try:
            try:
                run()
            except* (ValueError, TypeError) as group:
                handle(f"{group!r}")
        except* OSError:
            self.loader._iterator = None
        finally:
            done()
    """,
    "unicode_names": """
        é = f"{ü()}é{ß.ö()}"
        type Ä = list[é]
    """,
}


def _source(snippet: str) -> str:
    return textwrap.dedent(snippet).lstrip("\n")


def _lowered_summary(data: bytes, path: str = "x.py"):
    return summarize_parsed(parse_lowered(decode_source(data)), data, path, "m")


def _readable_here(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


# -- lowering keeps positions -------------------------------------------------------------------
@pytest.mark.parametrize("name", SNIPPETS)
def test_lowering_keeps_every_line_and_character_column(name: str) -> None:
    text = _source(SNIPPETS[name])
    lowered = lower(text).text
    pattern = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
    before, after = pattern.findall(text), pattern.findall(lowered)
    assert [len(line) for line in before] == [len(line) for line in after]
    assert [line[-1] for line in before] == [line[-1] for line in after]  # same line breaks
    ast.parse(lowered)  # and this interpreter reads it


def test_crlf_and_non_ascii_columns_come_out_in_characters() -> None:
    text = "x = f'é{DataLoader(a)}'; y._iterator = None\r\ntype T = int\r\n"
    summary = summarize_source(text.encode(), "x.py", "m")
    assert summary.ok, summary.error
    module = summary.functions["<module>"]
    call = next(c for c in module.calls if c.target == ("DataLoader",))
    (sink,) = module.sinks
    assert (call.site.line, call.site.column, call.site.text) == (1, 9, "DataLoader(a)")
    assert (sink.site.line, sink.site.column) == (1, 26)


# -- the same summary as Python 3.13 ------------------------------------------------------------
def test_snippet_summaries_equal_python313s_own_ast(tmp_path: Path) -> None:
    python = find_python("3.13")
    if python is None:
        pytest.skip("no Python 3.13 interpreter on this machine to compare with")
    paths = []
    for name, snippet in SNIPPETS.items():
        path = tmp_path / f"{name}.py"
        path.write_text(_source(snippet))
        paths.append(str(path))
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(_source(SNIPPETS["multiline_type_params"]).replace("\n", "\r\n").encode())
    paths.append(str(crlf))
    theirs = summaries_under(python, paths, tmp_path)
    for path in paths:
        ours = summarize_source(Path(path).read_bytes(), path, "m")
        assert ours.ok, (path, ours.error)
        assert ours == theirs[path], path


# -- the same summary as this interpreter's ast, wherever both read the file -------------------
def fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.py") if _readable_here(p.read_text()))


def test_lowered_equals_plain_on_every_fixture_both_read() -> None:
    compared = 0
    for path in fixture_files():
        data = path.read_bytes()
        plain = summarize_source(data, str(path), "m")
        if plain.ok:
            assert _lowered_summary(data, str(path)) == plain, path
            compared += 1
    assert compared > 50


def installed_sample() -> list[Path]:
    """About SAMPLE_SIZE files of this environment's site-packages that hold f-strings (so
    that lowering rewrites something), spread over the sorted list."""
    site = Path(sysconfig.get_paths()["purelib"])
    candidates = []
    for path in sorted(site.rglob("*.py")):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if len(data) <= SAMPLE_MAX_BYTES and (b'f"' in data or b"f'" in data):
            candidates.append(path)
    step = max(1, len(candidates) // SAMPLE_SIZE)
    return candidates[::step][:SAMPLE_SIZE]


@pytest.fixture(scope="module")
def sample() -> dict[str, FileSummary]:
    """The sample's summaries through the libcst path, every f-string lowered."""
    found = installed_sample()
    if len(found) < SAMPLE_SIZE // 2:
        pytest.skip(f"only {len(found)} installed files with f-strings to sample")
    return {str(p): _lowered_summary(p.read_bytes(), str(p)) for p in found}


def test_lowered_equals_plain_on_installed_files(sample: dict[str, FileSummary]) -> None:
    compared = 0
    for path, lowered in sample.items():
        plain = summarize_source(Path(path).read_bytes(), path, "m")
        if plain.ok:
            assert lowered == plain, path
            compared += 1
    assert compared >= len(sample) * 0.9


def test_lowered_equals_python313_on_installed_files(
    sample: dict[str, FileSummary], tmp_path: Path
) -> None:
    python = find_python("3.13")
    if python is None:
        pytest.skip("no Python 3.13 interpreter on this machine to compare with")
    theirs = summaries_under(python, list(sample), tmp_path)
    for path, lowered in sample.items():
        if theirs[path].ok:
            assert lowered == theirs[path], path

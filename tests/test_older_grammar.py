"""Code written for an older Python: Python 3.6's ``async``/``await`` as names are read (at the
places Python 3.6's own ``ast`` puts every node), and a Python 2 file's LL000 names the
construct and the Python it belongs to."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli
from other_pythons import find_python
from test_newer_grammar import ll000

from lintloader.summary.summarize import parse_source, summarize_source

OLDER = sorted((FIXTURES / "rules" / "LL202").glob("older_grammar_*.py"))

# (kind, line, column, name) of every name, attribute, call, def and parameter of a tree
ROWS = textwrap.dedent(
    """
    import ast, json, sys
    def rows(tree):
        out = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.FunctionDef, ast.arg)):
                name = getattr(node, "id", None) or getattr(node, "attr", None)
                name = name or getattr(node, "arg", None) or getattr(node, "name", None)
                out.append([type(node).__name__, node.lineno, node.col_offset, name])
        return sorted(out, key=str)
    """
)
PRINT_ROWS = "print(json.dumps({p: rows(ast.parse(open(p).read())) for p in sys.argv[1:]}))\n"


def test_the_fixtures_are_python36_code_this_interpreter_rejects() -> None:
    assert OLDER
    for path in OLDER:
        with pytest.raises(SyntaxError):
            compile(path.read_text(), str(path), "exec")


def test_positions_are_those_of_python36s_own_ast(tmp_path: Path) -> None:
    """Python 3.6 parses the fixtures itself; every name, attribute, call, def and parameter
    of the tree the summary walks is where 3.6 puts it, under the name 3.6 gives it."""
    python36 = find_python("3.6")
    if python36 is None:
        pytest.skip("no Python 3.6 interpreter on this machine to compare with")
    script = tmp_path / "positions.py"
    script.write_text(ROWS + PRINT_ROWS)
    paths = [str(p) for p in OLDER]
    done = subprocess.run(
        [python36, str(script), *paths], capture_output=True, text=True, timeout=60, check=True
    )
    namespace: dict[str, object] = {}
    exec(ROWS, namespace)  # the same walk, on the trees the summary reads
    rows = namespace["rows"]
    ours = {p: rows(parse_source(Path(p).read_bytes()).tree) for p in paths}  # type: ignore[operator]
    assert ours == json.loads(done.stdout)


def test_the_summary_is_that_of_the_same_file_with_other_names() -> None:
    """Renaming ``async``/``await`` to names no Python reserves gives a file this interpreter
    reads itself: its summary, with the names put back, is the older file's summary."""
    for path in OLDER:
        text = path.read_text()
        assert "xsync" not in text and "xwait" not in text
        renamed = re.sub(r"\basync\b(?!\s+(?:def|for|with)\b)", "xsync", text)
        renamed = renamed.replace("await = ", "xwait = ").replace("await.", "xwait.")
        ours = summarize_source(text.encode(), str(path), "m")
        plain = summarize_source(renamed.encode(), str(path), "m")
        assert ours.ok and plain.ok, (ours.error, plain.error)
        assert _plain(ours, {}) == _plain(plain, {"xsync": "async", "xwait": "await"})


def _plain(value: object, names: dict[str, str]) -> object:
    """``value`` as plain lists and dicts (sets sorted), every string's ``names`` replaced."""
    if isinstance(value, str):
        for old, new in names.items():
            value = value.replace(old, new)
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name), names) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {_plain(k, names): _plain(v, names) for k, v in value.items()}  # type: ignore[misc]
    if isinstance(value, set | frozenset):
        return sorted((_plain(v, names) for v in value), key=repr)
    if isinstance(value, tuple | list):
        return [_plain(v, names) for v in value]
    return value


def test_a_mistake_elsewhere_in_an_older_file_is_reported_where_it_is(tmp_path: Path) -> None:
    source = "def f(x):\n    return x.cuda(async=True)\n\ndef g(:\n    pass\n"
    finding = ll000(tmp_path, source)
    assert finding["line"] == 4
    assert finding["message"].startswith("syntax error: ")


@pytest.mark.parametrize(
    ("source", "construct", "line"),
    [
        ("def f(loader):\n    print 'epoch', 1\n", "a print statement", 2),
        ("x = 1\nif x <> 2:\n    pass\n", "the `<>` operator", 2),
        ("def f(x):\n    raise ValueError, 'bad'\n", "`raise E, message`", 2),
        ("mode = 0777\n", "an octal literal without `0o`", 1),
    ],
    ids=["print", "not-equal", "raise", "octal"],
)
def test_python2_code_names_its_construct(
    tmp_path: Path, source: str, construct: str, line: int
) -> None:
    finding = ll000(tmp_path, source)
    assert finding["message"] == (
        f"syntax error: {construct}, Python 2 syntax that no Python 3 reads; lintloader reads "
        "source written for Python 3"
    )
    assert finding["line"] == line


def test_a_python3_mistake_is_no_python2_construct(tmp_path: Path) -> None:
    """The nearest negative: a Python 3 file with a mistake (and ``print`` called right)."""
    finding = ll000(tmp_path, "print('epoch')\ndef f(:\n    pass\n")
    assert finding["message"].startswith("syntax error: ")
    assert finding["line"] == 2


def test_fix_edits_an_older_file_as_it_was_written(tmp_path: Path) -> None:
    """The fixers read a Python 3.6 file as the summary does: the loader built every epoch is
    hoisted, every ``async``/``await`` name stays as written, and Python 3.6 still reads it."""
    target = tmp_path / "train.py"
    shutil.copy(OLDER[0], target)
    before = target.read_text()
    # its loader per epoch is an info finding (avoidable): fixes are tried at that threshold
    done = run_cli("fix", "--no-cache", "--min-severity", "info", "train.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "train.py:11: LL202 fixed by hoist-loader-call" in done.stderr
    after = target.read_text()
    built = "loader = DataLoader(dataset, batch_size=4, num_workers=4"
    assert f"        {built})" not in after
    hoisted = f"\n    {built}, persistent_workers=True)  # expect: LL202 info\n    for epoch in"
    assert hoisted in after
    for word in ("async=async", "await = model(batch)", "async=False):", "async def prefetch"):
        assert after.count(word) == before.count(word), word
    python36 = find_python("3.6")
    if python36 is not None:
        parsed = subprocess.run(
            [python36, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", str(target)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert parsed.returncode == 0, parsed.stderr
    again = run_cli("fix", "--no-cache", "--min-severity", "info", "train.py", cwd=tmp_path)
    assert again.returncode == 0 and target.read_text() == after, again.stderr

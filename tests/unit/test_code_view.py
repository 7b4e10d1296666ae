"""A file's code view (``scan/read/code_view.py``) leaves out its comments and docstrings and
nothing else, and a group's tokens found only there no longer take the file (issue 45: the
project scan of transformers parsed ``modeling_utils.py``, 308 KB, for a comment that names
``Trainer``)."""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURES

from lintloader.pipeline.engine import CheckOptions, run_check
from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.read.code_view import code_view
from lintloader.scan.read.tokens import found_in, in_code, whole_word
from lintloader.settings.config import Config

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

REPO = Path(__file__).resolve().parents[2]


def _view(text: str) -> str:
    return code_view(textwrap.dedent(text).encode()).decode()


def test_comments_and_docstrings_are_left_out() -> None:
    view = _view(
        '''
        """The module's Trainer."""
        import torch  # a DataLoader in a comment

        class Pipe:
            r"""A DataLoader in a raw docstring."""

            def __call__(self):
                \'\'\'Runs the Trainer.
                Twice.\'\'\'  # and says so
                return 1
                "a statement of its own: Trainer"
        '''
    )
    assert "Trainer" not in view and "DataLoader" not in view
    assert "import torch" in view and "def __call__(self):" in view and "return 1" in view


@pytest.mark.parametrize(
    "text",
    [
        'getattr(loader, "_iterator")',  # an attribute by name
        'config = {\n    "num_workers": 2,\n}',  # a key first on its line, in brackets
        'log(\n    "DataLoader"\n    " built"\n)',  # strings on lines of their own, in a call
        'x = \\\n    "DataLoader"',  # a line continued by a backslash
        'f"{DataLoader(data)}"',  # an f-string holds code, first on its line or not
        'rf"{DataLoader}"',
        '"DataLoader".lower()',  # first on its line, not last
        '"DataLoader" if x else y',
    ],
)
def test_strings_that_are_not_docstrings_stay(text: str) -> None:
    view = code_view(text.encode()).decode()
    assert re.findall(r"\w+", view) == re.findall(r"\w+", text)


def test_a_quote_left_open_leaves_the_bytes_as_they_are() -> None:
    data = b'# DataLoader\nx = "never closed\n"""doc"""\n'
    assert code_view(data) == data


def _reference(data: bytes) -> list[bytes]:
    """The words of a file less its comments (``tokenize``) and docstrings (``ast``)."""
    blanked = bytearray(data)
    lines = data.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(row: int, column: int) -> int:
        return starts[row - 1] + len(lines[row - 1].decode("utf-8")[:column].encode())

    def blank(begin: int, end: int) -> None:
        for at in range(begin, end):
            if blanked[at] not in b"\r\n":
                blanked[at] = 32

    for token in tokenize.tokenize(io.BytesIO(data).readline):
        if token.type == tokenize.COMMENT:
            blank(offset(*token.start), offset(*token.end))
    for node in ast.walk(ast.parse(data)):
        value = node.value if isinstance(node, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes)):
            assert node.end_lineno is not None and node.end_col_offset is not None
            start = offset(node.lineno, node.col_offset)
            blank(start, offset(node.end_lineno, node.end_col_offset))
    return re.findall(rb"\w+", bytes(blanked))


def test_the_view_holds_every_word_of_the_code_in_fixtures_and_lintloader() -> None:
    """Never less than the code: every word outside comments and docstrings, on every file of
    fixtures/ and of lintloader itself (what ``tokenize`` and ``ast`` say they are)."""
    paths = sorted({*FIXTURES.rglob("*.py"), *(REPO / "lintloader").rglob("*.py")})
    assert len(paths) > 500
    left_out = 0
    for path in paths:
        data = path.read_bytes()
        try:
            expected = Counter(_reference(data))
        except (SyntaxError, tokenize.TokenError, UnicodeDecodeError):
            continue
        view = Counter(re.findall(rb"\w+", code_view(data)))
        assert not expected - view, path
        left_out += (Counter(re.findall(rb"\w+", data)) - view).total()
    assert left_out > 10_000  # comments and docstrings were left out


def test_in_code_asks_the_plain_and_whole_word_tokens_of_a_group() -> None:
    shape = in_code((whole_word("Trainer"), b"\x01transformers", b"= DataLoader"))
    assert shape is not None
    assert found_in(b"x = DataLoader(d)\nTrainer.train()\n", shape)
    assert not found_in(b"x = DataLoader(d)\n# Trainer.train()\n", shape)
    assert not found_in(b'"""x = DataLoader"""\nTrainer.train()\n', shape)
    assert in_code((b"\x01transformers",)) is None


TREE = {
    # taken: builds a loader
    "pkg/builds.py": """
        from torch.utils.data import DataLoader

        def loader(data):
            return DataLoader(data, num_workers=2)
        """,
    # not taken: names a loader in a comment and a docstring only
    "pkg/talks.py": '''
        def size(model):
            """Counts what a DataLoader would see."""
            return len(model)  # a DataLoader is never built here
        ''',
}


def test_a_file_that_names_a_loader_only_in_comments_is_not_parsed(tmp_path: Path) -> None:
    for name, text in TREE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    result = run_check(discover_paths([str(tmp_path)], ()), CheckOptions(config=Config(), jobs=1))
    parsed = {Path(path).relative_to(tmp_path).as_posix() for path in result.summaries}
    assert parsed == {"pkg/builds.py"}

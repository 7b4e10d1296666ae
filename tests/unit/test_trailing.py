"""``incremental/trailing.py``: two files whose summarized parts are equal summarize alike. Each
case summarizes real source (every Python file under ``fixtures/``, and files written to sit at
the edges: a string full of comment-like lines, a backslash, an encoding declaration) with
lines appended, and compares the summaries whenever the digests say they may be reused."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO

from lintloader.incremental.trailing import summarized_digest, summarized_length
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

# lines that leave a summary as it is: appended, a file keeps its summarized digest
KEPT = (
    b"\n# appended\n",
    b"\n\n\n",
    b"   # indented\n\t\n\x0c# after a form feed\n",
    b"# no line break at the end",
    b"\r\n# crlf\r\n\r\n",
)
# lines a summary may read, or that may reach into the code: appended, the digest changes
READ = (
    b"# noqa\n",
    b"# lintloader: noqa\n",
    b"#NoQA: LL101\n",
    b"# a DataLoader\n",
    b"# iter(x)\n",
    b"# 'quoted'\n",
    b'# """\n',
    b"# back\\slash\n",
    "# caf\u00e9\n".encode(),
    b"#\0\n",
    b"x = 1\n",
)
EDGES = (
    b'x = """\n# inside a string\n# still inside\n"""\n',
    b'x = """\n# inside a string\n# and the end of it """\n',
    b"x = (1 +\n# a comment in brackets\n2)\n",
    b"x = 1 \\\n",
    b"x = 1 \\\n# joined to the line above\n",
    b"# -*- coding: latin-1 -*-\n",
    b"#!/usr/bin/env python\n# -*- coding: latin-1 -*-\n",
    b"def f():\n    return 1\n    # indented as the body\n",
    b"class C:\n    x = 1\n\n\n# a\n\n",
    b"",
)


def sources() -> list[tuple[str, bytes]]:
    fixtures = sorted((REPO / "fixtures").rglob("*.py"))
    found = [(str(path.relative_to(REPO)), path.read_bytes()) for path in fixtures]
    return found + [(f"edge{n}.py", source) for n, source in enumerate(EDGES)]


def summary_of(source: bytes, name: str) -> object:
    return summarize_source(source, name, Path(name).stem)


def test_equal_summarized_parts_summarize_alike() -> None:
    """For every source and pair of tails: equal digests (and a file that parses) mean equal
    summaries; the tails of :data:`KEPT` keep the digest and those of :data:`READ` change it."""
    compared = 0
    for name, source in sources():
        variants = [source, *(source + tail for tail in KEPT + READ), source + KEPT[1] + KEPT[2]]
        digests = [summarized_digest(variant) for variant in variants]
        for tail, digest in zip(READ, digests[1 + len(KEPT) :], strict=False):
            assert digest != digests[0], (name, tail)
        reference = summary_of(source, name)
        for variant, digest in zip(variants[1:], digests[1:], strict=True):
            if digest == digests[0] and getattr(reference, "ok", False):
                assert summary_of(variant, name) == reference, (name, variant[-60:])
                compared += 1
    assert compared > 4 * len(sources())


@pytest.mark.parametrize("tail", KEPT)
def test_a_kept_tail_keeps_the_digest_of_a_file_that_ends_in_code(tail: bytes) -> None:
    source = b"import torch\n\nloader = torch.utils.data.DataLoader(ds)\n"
    assert summarized_digest(source + tail) == summarized_digest(source)
    assert summarized_length(source + tail) == len(source)


def test_the_first_two_lines_and_a_line_continued_by_a_backslash_are_kept() -> None:
    assert summarized_length(b"# -*- coding: latin-1 -*-\n\n# c\n") == 27
    assert summarized_length(b"x = 1 \\\n# c\n") == len(b"x = 1 \\\n# c\n")
    assert summarized_length(b"a = 1\nb = 2\n# c\n") == len(b"a = 1\nb = 2\n")

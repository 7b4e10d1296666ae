"""The byte search that decides which files are read further (``scan/read/byte_search.py``):
the C library's ``memmem`` where the process has one, and the same answers as ``bytes``
on every size, position and byte."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from lintloader.scan.read.byte_search import MEMMEM_MIN_SIZE, c_memmem, holds
from lintloader.scan.read.tokens import whole_word_in

PACKAGE = Path(__file__).resolve().parent.parent / "lintloader"
TOKENS = (b"oader", b"_iterator", b"_shutdown_workers", b"def ", b"\x00", b"import", b"zz\xff")


def real_sources() -> list[bytes]:
    """This package's own modules: real Python text of every size, small and large."""
    return [path.read_bytes() for path in sorted(PACKAGE.rglob("*.py"))]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and musl have memmem")
def test_the_c_librarys_memmem_is_found_on_linux() -> None:
    memmem = c_memmem()
    assert memmem is not None
    data = b"a" * MEMMEM_MIN_SIZE + b"needle"
    assert memmem(data, len(data), b"needle", 6) is not None
    assert memmem(data, len(data), b"needles", 7) is None


def test_holds_answers_as_bytes_on_real_sources() -> None:
    sources = real_sources()
    assert any(len(data) >= MEMMEM_MIN_SIZE for data in sources)  # both routes are taken
    assert any(len(data) < MEMMEM_MIN_SIZE for data in sources)
    for data in sources:
        for token in TOKENS:
            assert holds(data, token) == (token in data), token


@pytest.mark.parametrize("size", [0, 1, MEMMEM_MIN_SIZE - 1, MEMMEM_MIN_SIZE, 3 * MEMMEM_MIN_SIZE])
def test_holds_finds_a_token_at_either_end_and_across_nul_bytes(size: int) -> None:
    token = b"_shutdown_workers"
    filler = (b"x\x00y = 1\n" * size)[:size]
    assert not holds(filler, token)
    assert holds(token + filler, token)
    assert holds(filler + token, token)
    assert holds(filler[: size // 2] + token + filler[size // 2 :], token)
    assert not holds(filler + token[:-1], token)  # cut short at the very end
    assert holds(filler + b"\x00" + token[:5] + b"\x00" + token, token)


def test_whole_word_in_answers_as_the_pattern_on_real_sources() -> None:
    for data in real_sources():
        for word in (b"dataloader", b"iter", b"self", b"memmem"):
            pattern = re.compile(rb"(?<!\w)" + re.escape(word) + rb"(?!\w)")
            assert whole_word_in(data, word) == bool(pattern.search(data)), word

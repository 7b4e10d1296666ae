"""Time the byte search of a selection round four ways, on every ``.py`` file of a tree.

Issue 45 item 2: one multi-pattern pass per file instead of one ``bytes.find`` per token.
Every file's bytes are read into memory first (reading is not timed); then, for the tokens of
every rule's seed groups (the first round's search, ``select/policy.py``) or ``--names``
whole words on top (a later round's names), each way answers "which tokens does each file
hold" and must agree with the others:

* ``find``: today's primitive, ``scan/read/tokens.py``'s ``found_in`` per token and file,
  by the C library's ``memmem`` where there is one (``scan/read/byte_search.py``; the query
  engine, ``select/query.py``, skips a token whose prerequisite is absent: a round costs less
  than this column, more than one pass);
* ``bytes``: the same ``found_in`` with ``bytes`` searching every file (``memmem`` turned off by
  its size threshold), as before round 15 and where a platform has no ``memmem``;
* ``re``: one compiled alternation per token set over bytes, run with a look-ahead so that
  overlapping tokens (``oader`` inside ``DataLoader(``) are all seen, whole words checked
  after a hit as ``found_in`` does;
* ``ahocorasick``: `pyahocorasick <https://pypi.org/project/pyahocorasick/>`_ (a native wheel;
  skipped when not installed), on the bytes decoded as latin-1 (one character per byte: its
  PyPI wheels search text, not bytes), the decoding included in the time.

CPU time (``time.process_time``) per way, median of ``--repeats``; the machine's load average
is printed with it. Usage::

    .venv/bin/python benchmarks/bench_search.py [TREE] [--names 20] [--repeats 5] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import sysconfig
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from lintloader.conclude.checking import active_rules
from lintloader.scan.read import byte_search
from lintloader.scan.read.tokens import (
    SCOPE_MARK,
    SHAPE_MARK,
    WORD_MARK,
    found_in,
    searched_text,
    whole_word,
)
from lintloader.select.policy import seed_groups
from lintloader.settings.config import Config

Answers = list[frozenset[bytes]]  # per file, the tokens it holds
_WORD = frozenset(b"_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def seed_tokens() -> list[bytes]:
    """The seed groups' plain and whole-word tokens: what the byte search looks for (a scope
    token is asked as its package's whole word or by the module's name, a shape is a check of
    the bytes, ``scan/read/shapes.py``, that none of the other ways does)."""
    groups = seed_groups(active_rules(Config()))
    found = {token for group in groups for token in group}
    return sorted(t for t in found if not t.startswith((SCOPE_MARK, SHAPE_MARK)))


def name_tokens(datas: Sequence[bytes], count: int) -> list[bytes]:
    """``count`` whole-word names as a later round asks them: identifiers defined in the tree
    (``def name``), the most common first, so that most files are searched for each."""
    counts: dict[bytes, int] = {}
    for data in datas[:2000]:
        for name in re.findall(rb"\bdef (\w{6,})\(", data):
            counts[name] = counts.get(name, 0) + 1
    common = sorted(counts, key=lambda name: (-counts[name], name))[:count]
    return [whole_word(name) for name in common]


def by_find(datas: Sequence[bytes], tokens: Sequence[bytes]) -> Answers:
    return [frozenset(t for t in tokens if found_in(data, t)) for data in datas]


def by_bytes(datas: Sequence[bytes], tokens: Sequence[bytes]) -> Answers:
    threshold = byte_search.MEMMEM_MIN_SIZE
    byte_search.MEMMEM_MIN_SIZE = sys.maxsize  # no file is that large: bytes searches all
    try:
        return by_find(datas, tokens)
    finally:
        byte_search.MEMMEM_MIN_SIZE = threshold


def _whole_at(data: bytes | str, start: int, end: int, word: Callable[[int], bool]) -> bool:
    return (start == 0 or not word(start - 1)) and (end == len(data) or not word(end))


def by_regex(datas: Sequence[bytes], tokens: Sequence[bytes]) -> Answers:
    texts = sorted({searched_text(t) for t in tokens}, key=len, reverse=True)
    pattern = re.compile(b"(?=(" + b"|".join(map(re.escape, texts)) + b"))")
    wanted = _wanted(tokens)
    # the texts a match also holds at its start: only the longest alternative is reported
    also = {text: [o for o in texts if o != text and text.startswith(o)] for text in texts}
    answers = []
    for data in datas:
        held: set[bytes] = set()
        word = _byte_word(data)
        for match in pattern.finditer(data):
            start = match.start()
            for text in (match.group(1), *also[match.group(1)]):
                for token, whole in wanted[text]:
                    if not whole or _whole_at(data, start, start + len(text), word):
                        held.add(token)
        answers.append(frozenset(held))
    return answers


def _byte_word(data: bytes) -> Callable[[int], bool]:
    return lambda index: data[index] in _WORD


def _text_word(text: str, word: frozenset[str]) -> Callable[[int], bool]:
    return lambda index: text[index] in word


def _wanted(tokens: Sequence[bytes]) -> dict[bytes, list[tuple[bytes, bool]]]:
    wanted: dict[bytes, list[tuple[bytes, bool]]] = {}
    for token in tokens:
        wanted.setdefault(searched_text(token), []).append((token, token.startswith(WORD_MARK)))
    return wanted


def by_ahocorasick(datas: Sequence[bytes], tokens: Sequence[bytes]) -> Answers:
    import ahocorasick

    automaton = ahocorasick.Automaton()
    wanted = _wanted(tokens)
    for text, owners in wanted.items():
        automaton.add_word(text.decode("latin-1"), (len(text), owners))
    automaton.make_automaton()
    word = frozenset(chr(b) for b in _WORD)
    answers = []
    for data in datas:
        text = data.decode("latin-1")
        held: set[bytes] = set()
        is_word = _text_word(text, word)
        for end, (size, owners) in automaton.iter(text):
            start = end - size + 1
            for token, whole in owners:
                if not whole or _whole_at(text, start, end + 1, is_word):
                    held.add(token)
        answers.append(frozenset(held))
    return answers


def timed(way: Callable[[Sequence[bytes], Sequence[bytes]], Answers], *args: object) -> float:
    start = time.process_time()
    way(*args)  # type: ignore[arg-type]
    return time.process_time() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", default=sysconfig.get_paths()["purelib"])
    parser.add_argument("--names", type=int, default=20, help="whole words of a later round")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    datas = [path.read_bytes() for path in sorted(Path(args.tree).rglob("*.py"))]
    size = sum(map(len, datas))
    ways: dict[str, Callable[[Sequence[bytes], Sequence[bytes]], Answers]] = {
        "find": by_find,
        "bytes": by_bytes,
        "re": by_regex,
    }
    try:
        import ahocorasick  # noqa: F401

        ways["ahocorasick"] = by_ahocorasick
    except ImportError:
        print("pyahocorasick is not installed: skipped", file=sys.stderr)
    sets = {"seeds": seed_tokens(), "seeds+names": seed_tokens() + name_tokens(datas, args.names)}
    results: dict[str, object] = {
        "tree": args.tree,
        "files": len(datas),
        "bytes": size,
        "load_average": os.getloadavg()[0],
    }
    for label, tokens in sets.items():
        expected = by_find(datas, tokens)
        for name, way in ways.items():
            if way(datas, tokens) != expected:
                raise SystemExit(f"{name} disagrees with find on {label}")
            times = [timed(way, datas, tokens) for _ in range(args.repeats)]
            median = statistics.median(times)
            results[f"{label}/{name}"] = {"cpu_s": median, "runs": times, "tokens": len(tokens)}
            print(
                f"{label:12} {name:12} {len(tokens):3} tokens  {median:.3f} s CPU  "
                f"{size / median / 1e6:6.1f} MB/s",
                flush=True,
            )
    results["load_average_after"] = os.getloadavg()[0]
    print(f"{len(datas)} files, {size / 1e6:.1f} MB; load {results['load_average']:.1f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

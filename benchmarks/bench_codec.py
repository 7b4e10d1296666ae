#!/usr/bin/env python3
"""The cache codec alone: reading back the summaries a cache holds, this checkout's
``lintloader/cache/codec.py`` paired with another revision's, in one process.

The other revision's codec is loaded from ``git show REV:lintloader/cache/codec.py`` beside
this one; both decode the same entries (they must agree on the layout, and on what they
give back), alternating, ``--repeats`` times, with the garbage collector off as in a run. It
prints the median CPU time of ``json.loads`` alone and of each codec's whole ``loads``.

Usage (from the repository root; the cache of a warm ``bench_scale.py --only precommit``)::

    .venv/bin/python benchmarks/bench_codec.py --cache /tmp/lintloader-scale/cache-project-5k \\
        --base d3864d0
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lintloader.cache import codec  # noqa: E402
from lintloader.summary.model import SUMMARY_SCHEMA, FileSummary  # noqa: E402

KIND = f"summary {SUMMARY_SCHEMA}"


def revision_codec(revision: str, scratch: Path) -> ModuleType:
    text = subprocess.check_output(
        ["git", "show", f"{revision}:lintloader/cache/codec.py"], cwd=REPO
    )
    path = scratch / "codec_base.py"
    path.write_bytes(text)
    spec = importlib.util.spec_from_file_location("codec_base", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def entries(cache: Path) -> list[bytes]:
    head = codec.HEADER + KIND.encode() + b"\n"
    found = (path.read_bytes() for path in sorted(cache.glob("summaries-*/*/*.json")))
    return [data for data in found if data.startswith(head)]


def cpu_ms(read: Callable[[bytes], object], datas: list[bytes]) -> float:
    start = time.process_time()
    for data in datas:
        read(data)
    return (time.process_time() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, required=True, help="a lintloader cache dir")
    parser.add_argument("--base", required=True, help="the revision whose codec is paired")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    datas = entries(args.cache)
    if not datas:
        sys.exit(f"no summary {SUMMARY_SCHEMA} entries under {args.cache}")
    with tempfile.TemporaryDirectory() as scratch:
        base = revision_codec(args.base, Path(scratch))
    size = len(codec.HEADER + KIND.encode() + b"\n")
    readers: dict[str, Callable[[bytes], object]] = {
        "json_only": lambda data: json.loads(data[size:]),
        "base": lambda data: base.loads(KIND, FileSummary, data),
        "head": lambda data: codec.loads(KIND, FileSummary, data),
    }
    for data in datas:  # the same summaries, or the comparison means nothing
        assert readers["base"](data) == readers["head"](data)
    gc.disable()
    times: dict[str, list[float]] = {name: [] for name in readers}
    for _ in range(args.repeats):
        for name, read in readers.items():
            times[name].append(cpu_ms(read, datas))
    medians = {name: round(statistics.median(values), 1) for name, values in times.items()}
    print(json.dumps({"entries": len(datas), "kib": sum(map(len, datas)) // 1024,
                      "cpu_ms": medians}, indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

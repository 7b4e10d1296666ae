"""Time ``lintloader check`` on a class chain N deep against the same classes flat (issue 39:
a 2,000-deep chain took 27-59 s, 3,000: 181 s, before MRO and the walks along bases were made
linear in depth). Each run is a fresh CLI process without cache.

    .venv/bin/python benchmarks/deep_chain.py --depths 1000 2000 3000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_deep_hierarchy import chain  # the test's generator: one definition


def timed(folder: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "lintloader", "check", "--no-cache", "classes.py"],
        cwd=folder, capture_output=True, check=False, timeout=3600,
    )  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[1000, 2000, 3000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for depth in args.depths:
            row = {"depth": depth}
            for kind in ("deep", "flat"):
                folder = Path(scratch) / f"{kind}{depth}"
                folder.mkdir()
                (folder / "classes.py").write_text(chain(depth, flat=kind == "flat"))
                row[kind] = min(timed(folder) for _ in range(args.repeats))
            rows.append(row)
            print(f"depth {depth}: chain {row['deep']:.2f} s, flat {row['flat']:.2f} s", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""``python -m lintloader.dev``: contributor commands, not part of the ``lintloader`` CLI.

``python -m lintloader.dev regenerate [--check] [--root DIR]`` writes every generated file of
the checkout (:mod:`lintloader.dev.regenerate`); ``--root`` defaults to the checkout that holds
the imported package.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import lintloader


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m lintloader.dev")
    commands = parser.add_subparsers(dest="command", required=True)
    regenerate = commands.add_parser("regenerate", help="Write every generated file.")
    regenerate.add_argument("--check", action="store_true", help="Write nothing; exit 1 if stale.")
    regenerate.add_argument("--root", type=Path, default=Path(lintloader.__file__).parents[1])
    return parser


def main(argv: list[str]) -> int:
    from lintloader.dev.regenerate import out_of_date, regenerate

    args = _parser().parse_args(argv)
    root: Path = args.root
    if not (root / "README.md").is_file() or not (root / "docs").is_dir():
        print(f"lintloader.dev: error: {root} is not a lintloader checkout", file=sys.stderr)
        return 2
    try:
        changed = out_of_date(root) if args.check else regenerate(root)
    except (OSError, ValueError) as exc:
        print(f"lintloader.dev: error: {exc}", file=sys.stderr)
        return 2
    for output in changed:
        verb = "out of date" if args.check else "removed" if output.text is None else "updated"
        print(f"{verb}: {output.path.as_posix()}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))

"""Dump and time the summaries of a list of files, to compare two versions of the summarizer.

The ``lintloader`` imported is whichever is first on ``sys.path``: run with ``PYTHONPATH`` set
to a ``git archive`` of each version, the cwd outside any checkout. Three commands:

``list``: the files a ``check --no-cache -j 1`` of a project parses (its rounds' choices; the
arguments after ``--``), one JSON line each (path, module, is_package), or with ``--root``
every ``.py`` file under a folder (``--every N`` keeps every N-th), its module named by its
path under the root.

``dump``: every listed file's summary as the cache writes it (``cache/codec.py``), one
``path`` line and one entry line per file, to compare byte for byte.

``time``: summarizing the listed files in process, the collector off as the CLI runs: the best
of ``--repeats`` of ``ast.parse`` (``ParsedSource.parse``) and of the walk with its riders
(``summarize_parsed``), in process CPU seconds, each repeat on a fresh parse.

``pair``: two versions in one process, so that the machine's load weighs on both alike: each
``--base`` and ``--head`` folder's ``lintloader/`` is copied under its own package name (its
imports rewritten), every file is parsed once per repeat and summarized by both, in
alternating order; the sums of the per-file minimum CPU seconds, and head / base.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

Job = tuple[str, str, bool]  # path, module, is_package


def _parsed_by_check(arguments: list[str]) -> list[Job]:
    """The files a cold ``check --no-cache -j 1 ARGUMENTS`` summarizes."""
    import lintloader.select.parse as parse
    from lintloader.cli.main import main

    seen: list[Job] = []
    original = parse.summarize_source  # type: ignore[attr-defined]

    def recording(source: bytes, path: str, module: str, is_package: bool = False) -> Any:
        seen.append((path, module, is_package))
        return original(source, path, module, is_package)

    setattr(parse, "summarize_source", recording)  # noqa: B010 (the module's own name)
    try:
        check = ["check", "--no-cache", "-j", "1", "--exit-zero", *arguments]
        with contextlib.redirect_stdout(sys.stderr):  # its findings are not the list
            main(check, standalone_mode=False)
    except SystemExit:
        pass
    finally:
        setattr(parse, "summarize_source", original)  # noqa: B010
    return seen


def _under(root: str, every: int) -> list[Job]:
    base = Path(root)
    files = sorted(base.rglob("*.py"))[::every]
    jobs: list[Job] = []
    for file in files:
        parts = list(file.relative_to(base).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        jobs.append((str(file), ".".join(parts), package))
    return jobs


def _read(lists: list[str]) -> list[Job]:
    jobs: list[Job] = []
    for name in lists:
        with open(name, encoding="utf-8") as lines:
            for line in lines:
                path, module, package = json.loads(line)
                jobs.append((path, module, bool(package)))
    return jobs


def _dump(jobs: list[Job], out: str) -> None:
    from lintloader.cache import codec
    from lintloader.summary.model import FileSummary
    from lintloader.summary.summarize import summarize_source

    with open(out, "wb") as sink:
        for path, module, package in jobs:
            summary = summarize_source(Path(path).read_bytes(), path, module, package)
            sink.write(path.encode() + b"\n" + codec.dumps("summary", FileSummary, summary) + b"\n")


def _time(jobs: list[Job], repeats: int) -> dict[str, float]:
    from lintloader.summary.source_text import ParsedSource
    from lintloader.summary.summarize import summarize_parsed

    sources = [(Path(path).read_bytes(), path, module, package) for path, module, package in jobs]
    best_parse = best_walk = float("inf")
    gc.disable()
    for _ in range(repeats):
        parse = walk = 0.0
        for source, path, module, package in sources:
            start = time.process_time()
            try:
                parsed = ParsedSource.parse(source)
            except (SyntaxError, ValueError):
                continue
            middle = time.process_time()
            summarize_parsed(parsed, source, path, module, package)
            walk += time.process_time() - middle
            parse += middle - start
        best_parse, best_walk = min(best_parse, parse), min(best_walk, walk)
        gc.collect()
    gc.enable()
    size = sum(len(source) for source, *_ in sources)
    return {"files": len(sources), "bytes": size, "parse_s": best_parse, "walk_s": best_walk}


def _renamed(code: Path, root: Path, name: str) -> None:
    """``code``'s ``lintloader/`` as the package ``name`` under ``root``."""
    target = root / name
    shutil.copytree(code / "lintloader", target, ignore=shutil.ignore_patterns("__pycache__"))
    for module in target.rglob("*.py"):
        text = module.read_text(encoding="utf-8")
        text = re.sub(r"\blintloader\.", name + ".", text)
        module.write_text(re.sub(r"\bimport lintloader\b", "import " + name, text), "utf-8")


def _pair(jobs: list[Job], base: Path, head: Path, repeats: int) -> dict[str, float]:
    import ast

    root = Path(tempfile.mkdtemp(prefix="summary_pair_"))
    try:
        sides = {"base": base, "head": head}
        for side, code in sides.items():
            _renamed(code, root, "lintloader_" + side)
        sys.path.insert(0, str(root))
        versions = {
            side: (
                importlib.import_module(f"lintloader_{side}.summary.source_text").ParsedSource,
                importlib.import_module(f"lintloader_{side}.summary.summarize").summarize_parsed,
            )
            for side in sides
        }
        files = []
        for path, module, package in jobs:
            source = Path(path).read_bytes()
            try:
                text = versions["base"][0].parse(source).text
            except (SyntaxError, ValueError):
                continue
            files.append((source, text, path, module, package))
        best = {side: [float("inf")] * len(files) for side in sides}
        gc.disable()
        for repeat in range(repeats):
            for index, (source, text, path, module, package) in enumerate(files):
                tree = ast.parse(text)
                order = list(sides) if (repeat + index) % 2 else list(reversed(sides))
                for side in order:
                    parsed_source, summarize = versions[side]
                    parsed = parsed_source.of(text, tree)
                    start = time.process_time()
                    summarize(parsed, source, path, module, package)
                    spent = time.process_time() - start
                    best[side][index] = min(best[side][index], spent)
            gc.collect()
        gc.enable()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    found = {"files": len(files), "base_s": sum(best["base"]), "head_s": sum(best["head"])}
    return {**found, "ratio": found["head_s"] / found["base_s"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="list the files to summarize")
    listing.add_argument("check", nargs="*", help="the files a check with these arguments parses")
    listing.add_argument("--root", help="every .py file under this folder")
    listing.add_argument("--every", type=int, default=1, help="with --root: every N-th file")
    dump = commands.add_parser("dump", help="write every listed file's summary")
    dump.add_argument("lists", nargs="+", help="files written by the list command")
    dump.add_argument("--out", required=True)
    timing = commands.add_parser("time", help="time summarizing the listed files")
    timing.add_argument("lists", nargs="+", help="files written by the list command")
    timing.add_argument("--repeats", type=int, default=5)
    pair = commands.add_parser("pair", help="two versions in one process, file by file")
    pair.add_argument("lists", nargs="+", help="files written by the list command")
    pair.add_argument("--base", type=Path, required=True, help="a folder holding lintloader/")
    pair.add_argument("--head", type=Path, required=True, help="a folder holding lintloader/")
    pair.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    if args.command == "list":
        jobs = _under(args.root, args.every) if args.root else _parsed_by_check(args.check)
        sys.stdout.write("".join(json.dumps(job) + "\n" for job in jobs))
    elif args.command == "dump":
        _dump(_read(args.lists), args.out)
    elif args.command == "pair":
        print(json.dumps(_pair(_read(args.lists), args.base, args.head, args.repeats)))
    else:
        print(json.dumps(_time(_read(args.lists), args.repeats)))


if __name__ == "__main__":
    main()

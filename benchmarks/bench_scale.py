#!/usr/bin/env python3
"""Scale: how time and memory grow with the tree, paired against ruff in one run.

Trees of 1, 2 and 4 copies of a site-packages (each copy a folder of its own, so the copies
are separate projects to both tools), built two ways: hard links of identical files (what a
content-keyed cache parses once: it measures the dedup) and *distinct* copies, each ``.py`` of
copy N ending in a comment of its own (four teams' code: every file parsed). For each size
and way, runs alternate between
``ruff check --no-cache --select E,F`` and a cold ``lintloader check`` (an empty cache) on the
same tree, ``--repeats`` times; it reports the medians of wall time and peak RSS, the ratios to
ruff and the growth from 1x to 4x. Also, on one copy of a package turned into a git project:
flake8 with the LL plugin against flake8 alone, and a warm one-file ``check --project-root``
(what the pre-commit hook runs after a commit touching one file).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_scale.py --repeats 3 --json benchmarks/results-scale.json
    .venv/bin/python benchmarks/bench_scale.py --only precommit --repeats 9 --base <rev>
    .venv/bin/python benchmarks/bench_scale.py --only bigfile --repeats 7 --base <rev> \
        --big-file <site-packages>/transformers/trainer.py
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_site_packages import (
    BIN,
    Run,
    install_tool,
    purelib,
    py_files,
    report,
    rewrite,
    run_measured,
)
from compare_revisions import install_revision

SIZES = (1, 2, 4)
PROJECT_PACKAGE = "pytorch_lightning"  # a package of a few hundred files, made a git project
# with the largest packages of the dev venv beside it: a project of about 5,400 files
PRECOMMIT_PACKAGES = (PROJECT_PACKAGE, "torch", "sympy", "networkx", "numpy", "fontTools")


def build_tree(site: Path, work: Path, copies: int, distinct: bool = False) -> Path:
    """``copies`` copies of ``site``: hard links, or (``distinct``) with each ``.py`` file of
    copy N > 0 rewritten as its own bytes plus a comment naming the copy."""
    tree = work / f"tree-{copies}x{'-distinct' if distinct else ''}"
    for index in range(copies):
        target = tree / f"copy{index}"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cp", "-al", str(site), str(target)], check=True)
            if distinct and index:
                _make_distinct(target, index)
    return tree


def _make_distinct(copy: Path, index: int) -> None:
    for path in py_files(copy):
        data = path.read_bytes()
        path.unlink()  # a hard link: the original must stay as it is
        path.write_bytes(data + f"\n# copy {index}\n".encode())


def ruff_on(tree: Path) -> list[str]:
    return [str(BIN / "ruff"), "check", "--no-cache", "--select", "E,F", "--exit-zero",
            "--quiet", "--output-format", "concise", str(tree)]  # fmt: skip


def lintloader_on(tool: Path, tree: Path, cache: Path) -> list[str]:
    return [str(tool), "check", "--cache-dir", str(cache), "--exit-zero", "--output-format",
            "concise", str(tree)]  # fmt: skip


def median(runs: list[Run], attribute: str) -> float:
    return statistics.median(getattr(run, attribute) for run in runs)


def measure_sizes(tool: Path, site: Path, work: Path, repeats: int) -> dict[str, object]:
    rows: dict[str, object] = {}
    for distinct in (False, True):
        rows.update(_measure_trees(tool, site, work, repeats, distinct))
    return rows


def _measure_trees(
    tool: Path, site: Path, work: Path, repeats: int, distinct: bool
) -> dict[str, object]:
    rows: dict[str, object] = {}
    way = "-distinct" if distinct else ""
    for copies in SIZES:
        tree = build_tree(site, work, copies, distinct)
        ruff_runs, mine = [], []
        for repeat in range(repeats):
            cache = work / f"cache-{copies}x{way}-{repeat}"
            shutil.rmtree(cache, ignore_errors=True)
            ruff_runs.append(run_measured(ruff_on(tree)))
            mine.append(run_measured(lintloader_on(tool, tree, cache)))
            print(
                f"  {copies}x{way} run {repeat + 1}: lintloader {mine[-1].wall_s:6.2f} s "
                f"{mine[-1].peak_rss_mib:6.0f} MiB   ruff {ruff_runs[-1].wall_s:6.2f} s "
                f"{ruff_runs[-1].peak_rss_mib:6.0f} MiB",
                flush=True,
            )
        rows[f"{copies}x{way}"] = {
            "files": len(py_files(tree)),
            "lintloader_s": median(mine, "wall_s"),
            "lintloader_peak_mib": median(mine, "peak_rss_mib"),
            "ruff_s": median(ruff_runs, "wall_s"),
            "ruff_peak_mib": median(ruff_runs, "peak_rss_mib"),
            "time_ratio_to_ruff": statistics.median(
                m.wall_s / r.wall_s for m, r in zip(mine, ruff_runs, strict=True)
            ),
            "memory_ratio_to_ruff": statistics.median(
                m.peak_rss_mib / r.peak_rss_mib for m, r in zip(mine, ruff_runs, strict=True)
            ),
        }
    first, last = rows[f"1x{way}"], rows[f"{SIZES[-1]}x{way}"]
    growth = last["lintloader_s"] / first["lintloader_s"]  # type: ignore[index]
    rows[f"growth_1x_to_4x{way}"] = growth
    return rows


def git_project(site: Path, work: Path, name: str, packages: tuple[str, ...]) -> Path:
    """A git project (one commit) made of copies of the site's ``packages`` found there."""
    project = work / name
    if not (project / ".git").exists():
        for package in packages:
            if (site / package).is_dir():
                shutil.copytree(site / package, project / package)
        (project / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
        for command in (
            ["git", "init", "-q"],
            ["git", "add", "-A"],
            ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"],
        ):
            subprocess.run(command, cwd=project, check=True)  # fmt: skip
    return project


def measure_flake8(tool: Path, site: Path, work: Path, repeats: int) -> dict[str, object]:
    """flake8 with the LL plugin against flake8 alone, paired, on a package made a project."""
    project = git_project(site, work, "project", (PROJECT_PACKAGE,))
    flake8 = str(Path(tool).parent / "flake8")
    alone = [flake8, "--select", "E,F", "--exit-zero", PROJECT_PACKAGE]
    plugin = [flake8, "--select", "E,F,LL", "--exit-zero", PROJECT_PACKAGE]
    pairs = [(run_measured(alone, project), run_measured(plugin, project)) for _ in range(repeats)]
    return {
        "project_files": len(py_files(project)),
        "flake8_s": statistics.median(a.wall_s for a, _ in pairs),
        "flake8_with_ll_s": statistics.median(p.wall_s for _, p in pairs),
        "flake8_plugin_ratio": statistics.median(p.wall_s / a.wall_s for a, p in pairs),
    }


# the reset of the Lightning file the chain cases edit (in CombinedLoader.reset)
CHAIN_CALL = b"_shutdown_workers_and_reset_iterator(iterable)"
LINKING_CALL = "self._dataset_length();"  # one more each time: the file changes every commit


def measure_precommit(
    tool: Path, site: Path, work: Path, repeats: int, base: Path | None = None
) -> dict[str, object]:
    """What the pre-commit hook runs after a commit touching one file of a 5,000-file project:
    ``check --project-root=auto FILE``, warm (the commit before filled the cache), for eight
    kinds of commit, each paired with ``ruff check --no-cache FILE``:

    * ``outside``: a file no rule asks about (most files of a project);
    * ``taken_comment``: a comment added at the end of a file on a chain (its summary stays);
    * ``taken_shift``: a line inserted at the top of that file (every line below moves: its
      summary only moves, and no shown finding passes through it, so the stored findings
      hold; one that did would have the selection linked again and the rules run);
    * ``taken_move``: a blank line inserted in a method on the chain, one more each commit (the
      lines below move, those above do not: a rule may have computed with them, so the stored
      selection is linked again and the rules run, see ``incremental/moves.py``);
    * ``taken_code``: a helper added at the end of that file (its summary says more, but
      about a function no analysis reads and no file names: see ``incremental/inert.py``);
    * ``taken_calls``: a function that calls something added at the end of that file (no
      round and no rule reads its calls: the stored findings hold, see
      ``incremental/reads.py``);
    * ``taken_chain``: ``print()`` added next to the reset in a method on the chain (the
      rounds read that method's calls, but a call bearing no name of scanned code lands
      nowhere: the stored findings hold);
    * ``taken_link``: a call of a method of the class added there instead (it links: the run
      is selected, linked and analyzed again).

    With ``base`` (another revision's lintloader), each run is also paired with that
    revision's on the same edit, alternating which goes first, with a cache of its own: the
    paired ratio holds when this machine's speed drifts.
    """
    project = git_project(site, work, "project-5k", PRECOMMIT_PACKAGES)
    taken = project / PROJECT_PACKAGE / "utilities" / "combined_loader.py"
    outside = next(
        path
        for path in py_files(project / "sympy" / "core")
        if path.name != "__init__.py" and path.stat().st_size > 2000
    )
    added = "\n\ndef added_{}(x):\n    return x\n"
    calling = "\n\ndef added_{}(x):\n    return len(x)\n"
    edits = {
        "outside": (outside, lambda data, n: data + added.format(n).encode()),
        "taken_comment": (taken, lambda data, n: data + f"\n# commit {n}\n".encode()),
        # one more line each time: every line below moves since the commit before
        "taken_shift": (taken, lambda data, n: b"# commit\n" * (n + 1) + data),
        "taken_move": (taken, lambda data, n: _call_before(data, CHAIN_CALL, "\n" * n)),
        "taken_code": (taken, lambda data, n: data + added.format(n).encode()),
        "taken_calls": (taken, lambda data, n: data + calling.format(n).encode()),
        "taken_chain": (taken, lambda data, n: _call_before(data, CHAIN_CALL, f"print({n})")),
        "taken_link": (
            taken,
            lambda data, n: _call_before(data, CHAIN_CALL, LINKING_CALL * (n + 1)),
        ),
    }
    results: dict[str, object] = {"project_files": len(py_files(project))}
    for case, (changed, edit) in edits.items():
        results[case] = _measure_commits(tool, base, work / "cache-project-5k", project,
                                         changed, edit, repeats)  # fmt: skip
    return results


def measure_big_file(
    tool: Path, big: Path, work: Path, repeats: int, base: Path | None = None
) -> dict[str, object]:
    """A comment appended to one large file on a chain, the file's top-level package made a
    git project (transformers' ``trainer.py``, 265 KB: ``--big-file``), as ``taken_comment``
    above: the stored summary is reused when only comment lines at the end changed
    (``incremental/trailing.py``)."""
    package = big.parent
    while (package.parent / "__init__.py").exists():
        package = package.parent
    project = git_project(package.parent, work, f"project-{package.name}", (package.name,))
    changed = project / big.relative_to(package.parent)

    def comment(data: bytes, n: int) -> bytes:
        return data + f"\n# commit {n}\n".encode()

    cache = work / f"cache-{package.name}"
    for folder in (cache, cache.with_name(cache.name + "-base")):  # no summary of an earlier
        shutil.rmtree(folder, ignore_errors=True)  # run's commits: each one is a new edit
    case = _measure_commits(tool, base, cache, project, changed, comment, repeats)
    return {"project_files": len(py_files(project)), "bytes": big.stat().st_size, "comment": case}


def _measure_commits(
    tool: Path,
    base: Path | None,
    cache: Path,
    project: Path,
    changed: Path,
    edit: Callable[[bytes, int], bytes],
    repeats: int,
) -> dict[str, object]:
    """The hook after ``repeats`` commits, each ``edit`` of ``changed``'s original bytes,
    paired with ruff on the file (and with ``base``'s hook, alternating which goes first)."""
    relative = str(changed.relative_to(project))
    hooks = {"head": _hook(tool, cache, relative)}
    if base is not None:
        hooks["base"] = _hook(base, cache.with_name(cache.name + "-base"), relative)
    ruff = [str(BIN / "ruff"), "check", "--no-cache", "--select", "E,F", "--exit-zero",
            relative]  # fmt: skip
    original = changed.read_bytes()
    for hook in hooks.values():
        run_measured(hook, project)  # the commit before: fills the cache
    runs: dict[str, list[Run]] = {name: [] for name in (*hooks, "ruff")}
    try:
        for repeat in range(repeats):
            rewrite(changed, edit(original, repeat))
            order = list(hooks) if repeat % 2 == 0 else list(reversed(hooks))
            for name in order:
                runs[name].append(run_measured(hooks[name], project))
            runs["ruff"].append(run_measured(ruff, project))
    finally:
        rewrite(changed, original)
    return _precommit_case(relative, runs)


def _call_before(data: bytes, marker: bytes, call: str) -> bytes:
    """``call`` on a line of its own just before the line holding ``marker``, indented alike."""
    at = data.index(marker)
    start = data.rindex(b"\n", 0, at) + 1
    indent = data[start:at]
    return data[:start] + indent + call.encode() + b"\n" + data[start:]


def _hook(tool: Path, cache: Path, relative: str) -> list[str]:
    return [
        str(tool),
        "check",
        "-v",
        "--project-root=auto",
        "--cache-dir",
        str(cache),
        "--exit-zero",
        relative,
    ]  # fmt: skip (-v: the summary line's parse counts)


def _precommit_case(relative: str, runs: dict[str, list[Run]]) -> dict[str, object]:
    ours = runs["head"]
    case: dict[str, object] = {
        "file": relative,
        "lintloader_s": median(ours, "wall_s"),
        "lintloader_cpu_s": median(ours, "cpu_s"),
        "ruff_one_file_s": median(runs["ruff"], "wall_s"),
        "runs_s": [round(run.wall_s, 3) for run in ours],
        "runs_cpu_s": [round(run.cpu_s, 3) for run in ours],
        "parsed": [_parsed(run.stderr) for run in ours],
    }
    if "base" in runs:
        theirs = runs["base"]
        case["base_s"] = median(theirs, "wall_s")
        case["base_cpu_s"] = median(theirs, "cpu_s")
        case["ratio_to_base"] = statistics.median(
            a.wall_s / b.wall_s for a, b in zip(ours, theirs, strict=True)
        )
        case["cpu_ratio_to_base"] = statistics.median(
            a.cpu_s / b.cpu_s for a, b in zip(ours, theirs, strict=True)
        )
        case["same_output_as_base"] = all(
            a.stdout == b.stdout for a, b in zip(ours, theirs, strict=True)
        )
    return case


def _parsed(stderr: str) -> int:
    """How many files a run parsed, from its summary line."""
    found = re.search(r"\((\d+) parsed", stderr)
    return int(found.group(1)) if found else -1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, default=BIN / "python")
    parser.add_argument("--work", type=Path, default=Path("/tmp/lintloader-scale"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--only", choices=("sizes", "flake8", "precommit", "bigfile"), help="measure one part only"
    )
    parser.add_argument(
        "--big-file",
        type=Path,
        help="bigfile: a large file on a chain, in its package (e.g. transformers/trainer.py)",
    )
    parser.add_argument("--base", help="precommit: also pair each run with this revision's")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    tool = install_tool(args.work)
    subprocess.run([str(tool.parent / "pip"), "install", "-q", "flake8"], check=True)
    site = purelib(args.python.absolute())
    print(f"site-packages: {site} ({len(py_files(site))} .py files); {os.cpu_count()} CPUs")
    base = install_revision(args.base, args.work) if args.base else None
    parts = {"sizes": measure_sizes, "flake8": measure_flake8}
    summary: dict[str, object] = {"cpus": os.cpu_count(), "load": os.getloadavg()[0]}
    for name, measure in parts.items():
        if args.only in (None, name):
            summary[name] = measure(tool, site, args.work, args.repeats)
    if args.only in (None, "precommit"):
        summary["precommit"] = measure_precommit(tool, site, args.work, args.repeats, base)
        summary["precommit_base"] = args.base
    if args.only == "bigfile" or (args.only is None and args.big_file):
        summary["bigfile"] = measure_big_file(tool, args.big_file, args.work, args.repeats, base)
    report(summary, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

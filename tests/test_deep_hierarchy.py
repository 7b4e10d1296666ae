"""Class hierarchies are worked out in time linear in their depth, with no recursion the input
controls (issue 39): a chain deeper than the interpreter's recursion limit checks as its flat
equivalent does, in about its CPU time (a real CLI run), a 3,000-deep one links in process, and
the linker's MRO is Python's own on random hierarchies. Timings: benchmarks/deep_chain.py."""

from __future__ import annotations

import random
import resource
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from lintloader.link.program import Program
from lintloader.summary.summarize import summarize_source

DEPTH = 3000
# the CLI run's depth: past the recursion limit (1,000) by a fifth, which a walk of one frame
# per class does not reach the end of (test_the_cli_depth_is_past_the_recursion_limit); the
# check of a chain costs its depth linearly (a 1,500-deep one about 10 s of CPU), so more
# proves no more
CLI_DEPTH = 1200


def chain(depth: int, flat: bool = False) -> str:
    """``depth`` classes, each deriving from the one before (``flat``: all from the first),
    the first resetting a DataLoader iterator, reached from ``__iter__`` and an epoch loop."""
    parts = [
        "class C0:\n    def reset(self):\n"
        "        if self.loader._iterator is not None:\n"
        "            self.loader._iterator._shutdown_workers()\n"
        "        self.loader._iterator = None\n\n"
    ]
    for index in range(1, depth):
        base = "C0" if flat else f"C{index - 1}"
        parts.append(
            f"class C{index}({base}):\n    def m{index}(self):\n        return {index}\n\n"
        )
    last = f"C{depth - 1}"
    parts.append(
        f"class Fetcher({last}):\n    def __iter__(self):\n        self.reset()\n"
        "        return iter(self.loader)\n\n\n"
        f"def train(model: {last}, loader):\n    for epoch in range(3):\n"
        "        model.reset()\n        for batch in loader:\n            pass\n"
    )
    return "".join(parts)


def children_cpu_s() -> float:
    """CPU seconds of this process's waited-for children (and theirs) so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def test_a_chain_past_the_recursion_limit_checks_as_its_flat_equivalent(tmp_path: Path) -> None:
    assert sys.getrecursionlimit() < CLI_DEPTH
    results, cpu_s = {}, {}
    for kind in ("deep", "flat"):
        folder = tmp_path / kind
        folder.mkdir()
        (folder / "classes.py").write_text(chain(CLI_DEPTH, flat=kind == "flat"))
        before = children_cpu_s()
        results[kind] = run_cli("check", "--no-cache", "classes.py", cwd=folder, timeout=300)
        cpu_s[kind] = children_cpu_s() - before
    deep, flat = results["deep"], results["flat"]
    assert "internal error" not in deep.stderr and "RecursionError" not in deep.stderr
    assert deep.returncode == flat.returncode == 1, deep.stderr
    assert deep.stdout == flat.stdout
    assert "LL101" in deep.stdout and "LL105" in deep.stdout
    # linear in the depth: the chain costs what its flat equivalent does (walks quadratic in the
    # depth took over 300 s at 3,000, 15 times as long); CPU time, which load barely moves
    assert cpu_s["deep"] < 2 * cpu_s["flat"], cpu_s


@pytest.mark.fast
def test_the_cli_depth_is_past_the_recursion_limit() -> None:
    """A walk of the chain with one frame per class, as a recursive MRO or ancestor walk
    takes, runs out of frames at :data:`CLI_DEPTH` in the interpreter the CLI runs."""
    base = {index: index - 1 for index in range(1, CLI_DEPTH)}

    def ancestors(index: int) -> int:
        return 0 if index not in base else 1 + ancestors(base[index])

    assert ancestors(CLI_DEPTH // 2) == CLI_DEPTH // 2  # shallower: the walk ends
    with pytest.raises(RecursionError):
        ancestors(CLI_DEPTH - 1)


def program_of(source: str) -> Program:
    summary = summarize_source(source.encode(), "classes.py", "classes")
    assert summary.ok, summary.error
    return Program([summary])


@pytest.mark.fast
def test_the_mro_of_a_deep_chain_and_its_subclasses() -> None:
    program = program_of(chain(DEPTH))
    keys = [f"classes:C{index}" for index in range(DEPTH)]
    assert program.mro("classes:Fetcher") == ("classes:Fetcher", *reversed(keys))
    assert set(program.subclasses.get("classes:C0")) == {*keys[1:], "classes:Fetcher"}
    assert program.subclasses.get("classes:Fetcher", ()) == ()


def random_hierarchy(rng: random.Random, classes: int) -> str:
    lines = []
    for index in range(classes):
        bases = rng.sample(range(index), k=min(index, rng.randint(0, 3)))
        listed = ", ".join(f"K{b}" for b in bases)
        lines.append(f"class K{index}({listed}):\n    pass\n")
    return "\n".join(lines)


def python_mros(source: str) -> dict[str, tuple[str, ...]] | None:
    """Python's own MRO of each class, None when Python refuses the hierarchy."""
    namespace: dict[str, object] = {}
    try:
        exec(compile(source, "classes.py", "exec"), namespace)
    except TypeError:  # no consistent MRO: C3 fails, the linker falls back to depth-first
        return None
    return {
        f"classes:{name}": tuple(f"classes:{k.__name__}" for k in value.__mro__[:-1])
        for name, value in namespace.items()
        if isinstance(value, type)
    }


@pytest.mark.fast
def test_the_mro_is_pythons_own_on_random_hierarchies() -> None:
    rng = random.Random(39)
    compared = 0
    for _ in range(600):
        source = random_hierarchy(rng, rng.randint(1, 10))
        expected = python_mros(source)
        if expected is None:
            continue
        program = program_of(source)
        assert {key: program.mro(key) for key in expected} == expected, source
        compared += 1
    assert compared > 200

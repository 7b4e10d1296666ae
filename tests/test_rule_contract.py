"""What replaying a stored run relies on from every rule (``incremental/revisit.py``), checked on
every fixture tree through the CLI, so that a new rule with its fixtures is checked too:

* every line of a file moved by one offset (a new first line) moves its findings' lines and
  changes nothing else (no finding appears, none goes, no other file's finding changes): a rule
  may compare lines or compute their differences (other moves run the rules again,
  ``incremental/moves.py``), not test a line's own number;
* a message quotes a line (``path:line``; ``(line N)`` of the finding's own file) only of a
  file the finding is in or its chain passes through (revisit also runs the rules again when a
  message names a moved file, but a ``(line N)`` names none);
* a function that calls nothing, resets nothing, loops over nothing and is named nowhere else
  (``incremental/inert.py``) changes no finding, whatever its name;
* nothing in ``analysis/`` or ``rules/`` reads a function's calls but through the program's
  recording accessors (``incremental/reads.py``);
* a call that links to scanned code ends in a name ``Program.linkable_names`` gives (a bare
  name call, in one of the names it gives with ``bare``), and in one of the names
  ``Program.names_landing_in`` gives for the function it lands in.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, REPO, run_cli

from lintloader.link.program import Edge, Program
from lintloader.scan.discover.paths import discover_paths
from lintloader.summary.summarize import summarize_source

TREES = ("check", "rules")
QUOTED_PLACE = re.compile(r"([\w./\\-]+\.pyi?):(\d+)")
QUOTED_LINE = re.compile(r"\(line (\d+)\)")
# names a root or a hook could be found by, and one no rule knows
INERT_NAMES = (
    "helper_written_later",
    "train_dataloader",
    "val_dataloader",
    "setup",
    "build",
    "teardown",
    "on_train_epoch_start",
    "on_run_start",
    "on_advance_start",
    "prepare",
    "initialize",
    "shutdown",
)


def findings(tree: Path) -> list[dict[str, Any]]:
    result = run_cli(
        "check", str(tree), "--min-severity", "info", "--no-cache", "--output-format", "json"
    )
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def places(finding: dict[str, Any]) -> set[tuple[str, int]]:
    hops = [*finding["chain"], *finding.get("also_reaches", ())]
    return {(finding["path"], finding["line"]), *((hop["path"], hop["line"]) for hop in hops)}


@pytest.fixture(scope="module", params=TREES)
def tree(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("contract") / request.param
    shutil.copytree(FIXTURES / request.param, copy)
    return copy


@pytest.fixture(scope="module")
def before(tree: Path) -> list[dict[str, Any]]:
    """The findings of the unedited ``tree``: one run that each test compares with."""
    return findings(tree)


def test_a_message_quotes_only_files_its_finding_holds(before: list[dict[str, Any]]) -> None:
    quoted = 0
    for finding in before:
        held = {path for path, _ in places(finding)}
        for path, _ in QUOTED_PLACE.findall(finding["message"]):
            assert path in held, finding
            quoted += 1
    assert quoted >= 5  # the fixtures do quote places ("(line N)" is of the finding's file)


def test_moved_lines_and_inert_functions_change_nothing_else(
    tree: Path, before: list[dict[str, Any]], tmp_path: Path
) -> None:
    """One edited copy of ``tree``, one run: every file moved by a few lines and given the
    inert functions at its end. Its findings are the unedited ones with their lines moved:
    a finding that a move or an inert function changed, added or dropped fails it (the
    appended functions move no line, so no change of one hides a change of the other)."""
    assert before
    edited = tmp_path / tree.name
    shutil.copytree(tree, edited)
    files = sorted(edited.rglob("*.py"))
    texts = "\n".join(path.read_text() for path in files)
    names = [n for n in INERT_NAMES if not re.search(rf"\b{n}\b", texts)]
    assert len(names) >= 4
    helpers = "".join(f"\n\ndef {name}(value):\n    return value\n" for name in names)
    shifts: dict[str, int] = {}
    for number, path in enumerate(files):
        text = path.read_text() + helpers
        if "coding" not in "".join(text.splitlines(keepends=True)[:2]):
            # an encoding cookie must stay in the first two lines: such a file is not moved
            shifts[str(path.relative_to(edited))] = shift = number % 3 + 1
            text = "# moved\n" * shift + text
        path.write_text(text)
    assert len(shifts) > 10
    after = findings(edited)
    expected = [_shifted(finding, tree, shifts) for finding in before]
    assert [_relative(f, edited) for f in after] == expected


def _relative(finding: dict[str, Any], root: Path) -> str:
    """The finding as JSON text, its tree's folder written as ROOT."""
    return json.dumps(finding, sort_keys=True).replace(str(root), "ROOT")


def _shifted(finding: dict[str, Any], root: Path, shifts: dict[str, int]) -> str:
    """The finding as JSON text, each line of a moved file moved as that file was."""

    def by(path: str) -> int:
        return shifts.get(str(Path(path).relative_to(root)), 0)

    own = by(finding["path"])
    moved = dict(finding)
    for key in ("line", "end_line"):
        moved[key] = finding[key] + own
    for key in ("chain", "also_reaches"):
        if key in finding:
            moved[key] = [{**hop, "line": hop["line"] + by(hop["path"])} for hop in finding[key]]
    message = QUOTED_PLACE.sub(lambda m: f"{m[1]}:{int(m[2]) + by(m[1])}", finding["message"])
    moved["message"] = QUOTED_LINE.sub(lambda m: f"(line {int(m[1]) + own})", message)
    return _relative(moved, root)


# Reads call sites for the end positions of findings already made (analysis/ranges.py): a call
# added where no finding starts changes no end a finding takes.
CALLS_READ_FOR_POSITIONS = {"ranges.py"}


def test_calls_are_read_only_through_the_program() -> None:
    """``function.calls`` read directly would escape Program.read_calls, and a commit that
    changed those calls would replay findings that depended on them."""
    read = []
    for folder in ("analysis", "rules"):
        for path in sorted((REPO / "lintloader" / folder).glob("*.py")):
            if path.name in CALLS_READ_FOR_POSITIONS:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Attribute) and node.attr == "calls":
                    read.append(f"{folder}/{path.name}:{node.lineno}")
    assert read == [], "use Program.calls_of or edges_from: " + ", ".join(read)


def _linked_whole(project: Path) -> Program:
    files = discover_paths([str(project)]).files
    return Program(
        summarize_source(Path(f.path).read_bytes(), f.path, f.module, f.is_package) for f in files
    )


def _edges_by_linkable(program: Program) -> list[tuple[Edge, bool]]:
    """Every edge of ``program``, with whether its call ends in a linkable name and in a
    name of those ``Program.edges_into`` links the calls of for its callee."""
    linkable, bare = program.linkable_names(), program.linkable_names(bare=True)
    return [
        (
            edge,
            edge.call.target[-1] in (bare if len(edge.call.target) == 1 else linkable)
            and edge.call.target[-1] in program.names_landing_in(edge.callee),
        )
        for key in program.functions
        for edge in program.edges_from(key)
    ]


# Every way a call can reach scanned code: renamed imports, re-exports, star imports, nested
# functions, super(), classes and their nested classes, attributes of modules.
CORNERS = {
    "pkg/__init__.py": "from pkg.impl import shutdown as stop_all\nfrom pkg.impl import *\n",
    "pkg/impl.py": (
        "def shutdown(loader):\n    loader._iterator = None\n\n\n"
        "class Base:\n    def __init__(self):\n        pass\n\n"
        "    def reset(self):\n        shutdown(self)\n\n"
        "    class Inner:\n        def __init__(self):\n            pass\n"
    ),
    "use.py": (
        "import pkg\nimport pkg.impl as impl\nfrom pkg import stop_all as halt, Base\n"
        "from pkg import *\n\n\n"
        "class Child(Base):\n    def reset(self):\n        super().reset()\n"
        "        def nested():\n            halt(self)\n        nested()\n"
        "        pkg.stop_all(self)\n        impl.Base.Inner()\n        shutdown(self)\n\n"
        "    def __iter__(self):\n        self.reset()\n        Child()\n        return self\n"
    ),
}


@pytest.mark.parametrize("trees", [("check", "rules"), ("pytorch_lightning",), ("corners",)])
def test_every_call_that_links_bears_a_linkable_name(
    trees: tuple[str, ...], tmp_path: Path
) -> None:
    """A call ending in a name that is not linkable is set aside from a function whose edges
    were read (``incremental/reads.py``): it must never have an edge. Checked on every
    fixture project, and on the installed pytorch_lightning, each linked whole."""
    if trees == ("corners",):
        for name, text in CORNERS.items():
            (tmp_path / name).parent.mkdir(exist_ok=True)
            (tmp_path / name).write_text(text)
        projects = [tmp_path]
    elif trees == ("pytorch_lightning",):
        lightning = pytest.importorskip("pytorch_lightning", reason="the runtime extra is absent")
        projects = [tmp_path / "pytorch_lightning"]  # outside the venv, which is not scanned
        shutil.copytree(Path(lightning.__file__).parent, projects[0])
    else:
        projects = [p for tree in trees for p in sorted((FIXTURES / tree).iterdir()) if p.is_dir()]
    edges = [edge for project in projects for edge in _edges_by_linkable(_linked_whole(project))]
    assert len(edges) > (8 if trees == ("corners",) else 100)
    assert [edge for edge, linkable in edges if not linkable] == []

"""The bucketed token search that demand selection uses answers exactly as the plain definition
("the file's code contains every token of some group": comments and docstrings left out), and its
answers survive in the stat index."""

from __future__ import annotations

import itertools
import os
import textwrap
import time
from pathlib import Path

import pytest
from conftest import FIXTURES

from lintloader.analysis.reset_demand import demanding_sinks, functions_reaching_sinks
from lintloader.finding.findings import Confidence
from lintloader.link.program import Program
from lintloader.pipeline.engine import CheckOptions, read_source, run_check
from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.read import sources as source_module
from lintloader.scan.read.code_view import code_view
from lintloader.scan.read.sources import SourceSet
from lintloader.scan.read.stamps import RACY_NS
from lintloader.scan.read.statindex import StatIndex
from lintloader.scan.read.tokens import (
    absence_implies,
    package_scope,
    prerequisites,
    shape,
    shared_parts,
    whole_word,
)
from lintloader.select.query import GroupQuery
from lintloader.settings.config import Config
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

TOKENS = (b"._iterator", b"reset", b"__iter__", b"teardown", b"DataLoader", b"self", b"nothing!")


def plain(data: bytes, groups: list[tuple[bytes, ...]]) -> bool:
    code = code_view(data)
    return any(all(token in code for token in group) for group in groups)


def all_groups() -> list[list[tuple[bytes, ...]]]:
    singles = [(t,) for t in TOKENS]
    pairs = list(itertools.combinations(TOKENS, 2))
    return [singles[:2], pairs, pairs[::3] + singles[-1:], [(b"nothing!",)], [], singles + pairs]


def test_group_query_agrees_with_the_definition_on_real_files() -> None:
    discovery = discover_paths([str(FIXTURES / "check")], ())
    sources = SourceSet(read_source)
    files = sources.load(discovery.files, [])
    assert len(files) > 10
    for groups in all_groups():
        query = GroupQuery.build(groups)
        for file in files:
            expected = plain(read_source(file.path) or b"", groups)
            assert query.matches(sources, file) == expected, (groups, file.path)


def test_token_answers_are_remembered_across_runs(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "a.py").write_text("class A:\n    def reset(self):\n        self._iterator = None\n")
    (root / "b.py").write_text("x = 1\n")
    old = time.time_ns() - 10 * RACY_NS
    for path in root.iterdir():  # mtime far in the past; ctime is "now", so wait it out
        os.utime(path, ns=(old, old))
    time.sleep(RACY_NS / 1e9 + 0.2)
    discovery = discover_paths([str(root)], ())
    cache = tmp_path / "cache"
    first = SourceSet(read_source, cache_dir=cache, roots=discovery.roots)
    files = first.load(discovery.files, [])
    query = GroupQuery.build([(b"reset", b"._iterator")])
    assert [f.path.endswith("a.py") for f in files if query.matches(first, f)] == [True]
    first.save()
    second = SourceSet(read_source, cache_dir=cache, roots=discovery.roots)
    again = second.load(discovery.files, [])
    assert [f.path.endswith("a.py") for f in again if query.matches(second, f)] == [True]
    assert second.read_count == 0  # every answer came from the index
    unknown = GroupQuery.build([(b"teardown",)])
    assert not any(unknown.matches(second, f) for f in again)
    assert second.read_count == len(again)  # a new token needs the bytes


def _reaching_by_definition(program: Program) -> set[str]:
    """Every function with a chain of sure edges into a demanding sink, found by resolving
    every call of every function (what functions_reaching_sinks must agree with)."""
    reaching = set(demanding_sinks(program))
    grew = True
    while grew:
        grew = False
        for key in program.functions:
            if key in reaching:
                continue
            if any(
                e.callee in reaching and e.confidence is Confidence.HIGH
                for e in program.edges_from(key)
            ):
                reaching.add(key)
                grew = True
    return reaching


def test_reaching_functions_follow_aliases_renamed_reexports_and_inherited_constructors() -> None:
    files = {
        "pkg/core.py": """
            class Holder:
                def __init__(self, loader):
                    loader._iterator = None

            def reset_loader(loader):
                loader._iterator = None
            """,
        "pkg/__init__.py": "from .core import reset_loader as restart, Holder\n",
        "pkg/sub.py": """
            from pkg.core import Holder as Base

            class Child(Base):
                pass
            """,
        "user.py": """
            import pkg
            from pkg.core import reset_loader as again
            from pkg.sub import Child

            def by_reexport(loader):
                pkg.restart(loader)

            def by_alias(loader):
                again(loader)

            def by_subclass(loader):
                return Child(loader)

            def unrelated(loader):
                return len(loader)
            """,
    }
    summaries = [
        summarize_source(
            textwrap.dedent(text).encode(),
            path,
            path.removesuffix(".py").removesuffix("/__init__").replace("/", "."),
            path.endswith("__init__.py"),
        )
        for path, text in files.items()
    ]
    program = Program(summaries)
    found = functions_reaching_sinks(program)
    assert found == _reaching_by_definition(program)
    assert {"user:by_reexport", "user:by_alias", "user:by_subclass"} <= found
    assert "user:unrelated" not in found


def test_scope_tokens_match_files_inside_the_package_or_naming_it(tmp_path: Path) -> None:
    """A caller of a package's function is inside that package or imports it by name: a file
    elsewhere that only shares the function's and module's names is never parsed."""
    files = {
        "pkg_a/__init__.py": "",
        "pkg_a/core.py": "def reset_loader(loader):\n    loader._iterator = None\n",
        "pkg_a/fetch.py": textwrap.dedent(
            """
            from .core import reset_loader

            class Fetcher:
                def __iter__(self):
                    reset_loader(self.loader)
                    return self
            """
        ),
        "user/__init__.py": "",
        "user/train.py": textwrap.dedent(
            """
            from pkg_a import core

            class Epochs:
                def __iter__(self):
                    core.reset_loader(self.loader)
                    return self
            """
        ),
        "stranger/__init__.py": "",
        "stranger/core.py": "def reset_loader(x):\n    return x\n",
        "stranger/use.py": "from .core import reset_loader\n\nreset_loader(1)\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = run_check(discover_paths([str(tmp_path)], ()), CheckOptions(config=Config(), jobs=1))
    parsed = {Path(path).relative_to(tmp_path).as_posix() for path in result.summaries}
    assert parsed == {"pkg_a/core.py", "pkg_a/fetch.py", "user/train.py"}
    assert sorted((f.code, Path(f.path).name) for f in result.findings) == [
        ("LL101", "fetch.py"),
        ("LL101", "train.py"),
    ]
    scope = package_scope("pkg_a.core")
    query = GroupQuery.build([(whole_word("reset_loader"), scope)])
    sources = SourceSet(read_source)
    loaded = sources.load(discover_paths([str(tmp_path)], ()).files, [])
    matching = {
        Path(f.path).relative_to(tmp_path).as_posix() for f in loaded if query.matches(sources, f)
    }
    assert matching == {"pkg_a/core.py", "pkg_a/fetch.py", "user/train.py"}


def test_a_group_asks_its_most_shared_token_first(tmp_path: Path) -> None:
    """Groups ``(XPipeline, __call__)`` in one bucket (issue 45: transformers' third round):
    a file without ``__call__`` fails them all on one search of it, no class name searched."""
    (tmp_path / "plain.py").write_text("import pkg\n\nclass Pipe3:\n    pass\n")
    (tmp_path / "called.py").write_text("import pkg\n\nclass Pipe3:\n    def __call__(self): ...\n")
    discovery = discover_paths([str(tmp_path)], ())
    sources = SourceSet(read_source)
    files = {Path(f.path).name: f for f in sources.load(discovery.files, [])}
    scope, call = package_scope("pkg.core"), whole_word("__call__")
    pipes = [whole_word(f"Pipe{n}") for n in range(5)]
    groups = [(scope, pipe, call) for pipe in pipes] + [(scope, whole_word("Other"), b"evaluate")]
    query = GroupQuery.build(groups)
    assert list(query.buckets) == [scope]  # the most shared token heads the bucket
    assert not query.matches(sources, files["plain.py"])
    checked, _ = sources.answers(files["plain.py"].path)
    asked = {t for t in sources.index.tokens if checked & sources.index.bit(t)}
    assert asked == {whole_word("pkg"), call, whole_word("Other")}
    assert query.matches(sources, files["called.py"])


def test_class_names_sharing_a_part_are_answered_by_one_search_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Groups ``(XPipeline, __call__)`` of many subclasses (issue 45: transformers' third
    round searched 22 class names in each of its 459 files holding ``__call__``): a file
    without ``Pipeline`` fails them all on one search of it; a file holding the part
    somewhere else is searched for each name, and the answers stay the definition's."""
    bodies = {
        "bare.py": "import pkg\n\nclass Mask:\n    def __call__(self): ...\n",
        "other.py": "import pkg\n\nclass MyPipeline:\n    def __call__(self): ...\n",
        "user.py": "import pkg\n\nclass A:\n    def __call__(self): return FillMaskPipeline()\n",
        "comment.py": "import pkg\n\nclass A:\n    def __call__(self): ...  # FillMaskPipeline\n",
    }
    for name, body in bodies.items():
        (tmp_path / name).write_text(body)
    discovery = discover_paths([str(tmp_path)], ())
    sources = SourceSet(read_source)
    files = {Path(f.path).name: f for f in sources.load(discovery.files, [])}
    scope, call = package_scope("pkg.core"), whole_word("__call__")
    names = ["FillMaskPipeline", "TranslationPipeline", "ImageToTextPipeline", "TextPipe"]
    groups = [(scope, whole_word(name), call) for name in names]
    query = GroupQuery.build(groups)
    assert query.needs[whole_word("FillMaskPipeline")] == (b"Pipeline",)
    assert whole_word("TextPipe") not in query.needs  # "Pipe" is short, "Text" shared by one
    searched: list[bytes] = []
    real = source_module.found_in
    monkeypatch.setattr(
        source_module, "found_in", lambda data, t: searched.append(t) or real(data, t)
    )
    assert not query.matches(sources, files["bare.py"])
    assert sorted(searched) == sorted(
        [whole_word("pkg"), call, b"Pipeline", whole_word("TextPipe")]
    )
    assert b"Pipeline" in sources.index.tokens
    for name, file in files.items():
        expected = plain(read_source(file.path) or b"", [(b"FillMaskPipeline",)])
        assert query.matches(sources, file) == expected, name
    other, _ = sources.answers(files["other.py"].path)
    assert other & sources.index.bit(whole_word("TranslationPipeline"))


def test_a_part_shared_by_fewer_than_three_names_is_no_prerequisite() -> None:
    words = [whole_word(w) for w in ("FillMaskPipeline", "TranslationPipeline", "get_loader")]
    assert shared_parts(words) == {}
    words.append(whole_word("ImageToTextPipeline"))
    assert shared_parts(words) == dict.fromkeys(words[:2] + words[3:], b"Pipeline")
    assert prerequisites([*words, b"Pipe"])[b"Pipeline"] == (b"Pipe",)


@pytest.mark.enumerates_rules
def test_buckets_are_asked_shortest_prerequisite_first(tmp_path: Path) -> None:
    """The seed query asks ``oader`` before ``.get_eval_dataloader(``: a file without it
    fails every bucket that holds it on that one search (issue 45: the seed round searched
    each ``get_*_dataloader`` first, about six searches a file instead of three)."""
    from lintloader.rules.registry import all_rules
    from lintloader.select.policy import seed_groups

    (tmp_path / "plain.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    discovery = discover_paths([str(tmp_path)], ())
    sources = SourceSet(read_source)
    (file,) = sources.load(discovery.files, [])
    query = GroupQuery.build(seed_groups(all_rules()))
    heads = list(query.buckets)
    assert heads.index(b"oader") < heads.index(b".get_eval_dataloader(")
    assert not query.matches(sources, file)
    checked, present = sources.answers(file.path)
    asked = {t for t in sources.index.tokens if checked & sources.index.bit(t)}
    assert present == 0 and b"oader" in asked and b"_iterator" in asked
    assert not {b"get_eval_dataloader", b"_MultiProcessingDataLoaderIter"} & asked


@pytest.mark.enumerates_rules
def test_a_file_without_the_gate_tokens_fails_every_head_on_their_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seed query's 17 heads in a file none was asked of yet (issue 45, round 13): a file
    holding none of ``oader``, ``_iterator`` and ``_shutdown_workers`` is searched for those
    three only, and every head is then known absent from it (a warm run rejects it on its
    bits); a file holding one of them is asked head by head, as the definition says."""
    from lintloader.rules.registry import all_rules
    from lintloader.select.policy import seed_groups

    (tmp_path / "plain.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    (tmp_path / "loads.py").write_text("from torch.utils.data import DataLoader\n")
    (tmp_path / "loop.py").write_text(
        "from torch.utils.data import DataLoader\n\n"
        "def main(data):\n    for _ in range(3):\n"
        "        for b in DataLoader(data, num_workers=2):\n            pass\n"
    )
    discovery = discover_paths([str(tmp_path)], ())
    sources = SourceSet(read_source)
    files = {Path(f.path).name: f for f in sources.load(discovery.files, [])}
    query = GroupQuery.build(seed_groups(all_rules()))
    searched: list[bytes] = []
    real = source_module.found_in
    monkeypatch.setattr(
        source_module, "found_in", lambda data, t: searched.append(t) or real(data, t)
    )
    assert not query.matches(sources, files["plain.py"])
    # the shipped rules' gate (a rule added to them, as the new-rule copy adds one, may add its
    # own token): each searched once, and no head beyond the gate
    assert {b"oader", b"_iterator", b"_shutdown_workers"} <= set(searched)
    assert len(searched) == len(set(searched)) and b"DataLoader" not in searched
    checked, present = sources.answers(files["plain.py"].path)
    heads = 0
    for head in query.buckets:
        heads |= sources.index.bit(head)
    assert present == 0 and checked & heads == heads
    searched.clear()
    # it holds oader: asked head by head (whether a rule takes an import alone is the rules'
    # business, not the gate's: the new-rule copy adds one that may)
    query.matches(sources, files["loads.py"])
    assert searched[0] == b"oader" and b"DataLoader" in searched
    assert query.matches(sources, files["loop.py"])


def test_inner_bits_are_the_absences_that_imply_a_tokens_as_the_table_grows() -> None:
    """``StatIndex.inner_bits`` (plain tokens only, those added since it last looked) gives the
    bits of :func:`absence_implies` over the whole table, asked before and after it grows."""
    table = [
        b"oader",
        whole_word("DataLoader"),
        b"DataLoader",
        package_scope("torch.utils"),
        b"DataLoader(",
        shape("DataLoader"),
        b"Loader",
        whole_word("oader"),
        b"._iterator",
        b"_iterator",
    ]
    index = StatIndex()
    asked = [b"DataLoader(", whole_word("DataLoader"), b"._iterator", shape("DataLoader")]
    for token in table:
        index.bit(token)
        for wanted in [*asked, *index.tokens]:
            expected = sum(
                1 << number
                for number, inner in enumerate(index.tokens)
                if absence_implies(inner, wanted)
            )
            assert index.inner_bits(wanted) == expected, (wanted, index.tokens)
    assert index.inner_bits(b"DataLoader(") == 0b1000101  # oader, DataLoader, Loader

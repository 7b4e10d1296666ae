"""The ``ast`` summarizer on inputs where byte offsets, line breaks and scopes are easy to get
wrong: columns must be characters (what editors, SARIF and libcst count), text must be the exact
source, and what a ``def`` evaluates belongs to the scope around it."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from lintloader.summary.model import FileSummary
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)


def summarize(source: str | bytes) -> FileSummary:
    data = textwrap.dedent(source).encode() if isinstance(source, str) else source
    summary = summarize_source(data, "example.py", "example")
    assert summary.ok, summary.error
    return summary


def libcst_start(source: bytes, predicate: Callable[[cst.CSTNode], bool]) -> tuple[int, int]:
    """Where libcst (the fixers' parser) puts the first node matching ``predicate``."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    for node, position in positions.items():
        if predicate(node):
            return position.start.line, position.start.column + 1
    raise AssertionError("no such node")


def test_columns_count_characters_not_bytes_and_agree_with_libcst() -> None:
    source = (
        'label = "\u00e9p\u043e\u0445\u0430 \u2713"; loader._iterator = None  # \u00fc\n'.encode()
    )
    sink = summarize(source).functions["<module>"].sinks[0]
    assert (sink.site.line, sink.site.column) == (1, 20)
    expected = libcst_start(
        source, lambda n: isinstance(n, cst.Attribute) and n.attr.value == "_iterator"
    )
    assert (sink.site.line, sink.site.column) == expected
    assert sink.site.text == "loader._iterator = None"


def libcst_range(
    source: bytes, predicate: Callable[[cst.CSTNode], bool]
) -> tuple[int, int, int, int]:
    """Start and end (line, 1-based column; the end just after the last character)."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    for node, position in wrapper.resolve(PositionProvider).items():
        if predicate(node):
            start, end = position.start, position.end
            return start.line, start.column + 1, end.line, end.column + 1
    raise AssertionError("no such node")


def test_end_positions_agree_with_libcst() -> None:
    source = (
        "from torch.utils.data import DataLoader\n"
        'x = "\u00e9\u00e9"; loader = DataLoader(\n'
        "    range(4),\n"
        '    num_workers=0, persistent_workers="\u2713" != "",\n'
        ")\n"
        'y = "\u00fc"; loader._iterator._shutdown_workers()\n'
    ).encode()
    summary = summarize(source)
    module = summary.functions["<module>"]
    call = next(c for c in module.calls if c.target == ("DataLoader",))
    sink = module.sinks[0]

    def called(name: str) -> Callable[[cst.CSTNode], bool]:
        def predicate(node: cst.CSTNode) -> bool:
            if not isinstance(node, cst.Call):
                return False
            func = node.func
            named = func.attr if isinstance(func, cst.Attribute) else func
            return isinstance(named, cst.Name) and named.value == name

        return predicate

    for site, predicate in (
        (call.site, called("DataLoader")),
        (sink.site, called("_shutdown_workers")),
    ):
        got = (site.line, site.column, site.end_line, site.end_column)
        assert got == libcst_range(source, predicate)
    loader_call = summary.loaders.functions["<module>"].loader_calls[0]
    assert (loader_call.site.end_line, loader_call.site.end_column) == (5, 2)


def test_crlf_form_feed_and_latin1_cookie() -> None:
    source = (
        b"# -*- coding: latin-1 -*-\r\n"
        b"\x0c\r\n"
        b"name = '\xe9t\xe9'\r\n"
        b"def reset(loader):\r\n"
        b"    loader._iterator._shutdown_workers(\r\n"
        b"        )\r\n"
    )
    function = summarize(source).functions["reset"]
    (sink,) = function.sinks
    assert sink.kind == "shutdown-workers"
    assert (sink.site.line, sink.site.column, sink.site.end_line) == (5, 5, 6)
    assert sink.site.text == "loader._iterator._shutdown_workers( )"
    assert sink.receiver == ("loader", "_iterator")


def test_async_functions_and_loops() -> None:
    summary = summarize(
        """
        class Fetcher:
            async def __aiter__(self):
                async for batch in self.source:
                    self.reset()
        """
    )
    function = summary.functions["Fetcher.__aiter__"]
    assert function.kind == "method" and function.self_name == "self"
    (call,) = [c for c in function.calls if c.target == ("self", "reset")]
    assert call.in_loop
    assert summary.classes["Fetcher"].methods == ["__aiter__"]


def test_what_a_def_evaluates_belongs_to_the_enclosing_scope() -> None:
    summary = summarize(
        """
        import functools

        @functools.lru_cache(maxsize=make_size())
        def build(flag=default_flag()):
            return helper()
        """
    )
    module_calls = {c.target for c in summary.functions["<module>"].calls}
    build_calls = {c.target for c in summary.functions["build"].calls}
    assert {("functools", "lru_cache"), ("make_size",), ("default_flag",)} <= module_calls
    assert build_calls == {("helper",)}


def test_sinks_in_tuples_del_setattr_and_guards() -> None:
    summary = summarize(
        """
        def teardown(a, b, loader):
            del a._iterator, b._iterator
            a._iterator, b._iterator = None, None
            setattr(loader, "_iterator", None)
            delattr(loader, "_iterator")
            if not loader.persistent_workers:
                loader._iterator = None
        """
    )
    sinks = summary.functions["teardown"].sinks
    assert [(s.kind, s.receiver, s.site.line) for s in sinks] == [
        ("delete", ("a",), 3),
        ("delete", ("b",), 3),
        ("assign-none", ("a",), 4),
        ("assign-none", ("b",), 4),
        ("setattr", ("loader",), 5),
        ("delete", ("loader",), 6),
        ("assign-none", ("loader",), 8),
    ]
    assert [s.persistent_guard for s in sinks] == [False] * 6 + [True]
    assert sinks[0].site.text == "del a._iterator"


def test_arguments_keep_source_order_and_stars() -> None:
    summary = summarize(
        """
        from torch.utils.data import DataLoader as DL

        def make(dataset, extra, options):
            return DL(dataset, num_workers=max(2, n), *extra, persistent_workers=True, **options)
        """
    )
    (call,) = summary.loaders.functions["make"].loader_calls
    assert [(a.keyword, a.star, a.text) for a in call.arguments] == [
        (None, "", "dataset"),
        ("num_workers", "", "max(2, n)"),
        (None, "*", "extra"),
        ("persistent_workers", "", "True"),
        (None, "**", "options"),
    ]
    assert call.keyword("num_workers").lower_bound == 2
    assert call.keyword("persistent_workers").literal is True
    assert call.bound_to == ("<return>",)
    assert summary.loaders.loader_aliases == frozenset({"DL"})


def test_statement_line_is_the_statement_not_the_call() -> None:
    summary = summarize(
        """
        def epoch(self):
            result = compute(
                self.reset(),
            )
        """
    )
    (call,) = [c for c in summary.functions["epoch"].calls if c.target == ("self", "reset")]
    assert (call.site.line, call.site.statement_line) == (4, 3)


def test_fixed_loops_are_read_per_scope() -> None:
    summary = summarize(
        """
        from torch.utils.data import DataLoader

        SPLITS = ["train", "val"]
        for split in SPLITS:
            pass

        class Config:
            for name in ("a", "b"):
                pass

        def train(data, xla):
            options = [False] if xla else [True, False]
            for option in options:
                def inner(options):
                    for option in options:
                        DataLoader(data)
                    for kind in ("a",):
                        DataLoader(data)
            for split in SPLITS:
                DataLoader(data)
            later = [1, 2]
            for item in later:
                DataLoader(data)
            later = load()

        def grown(data):
            names = ["a"]
            names.append("b")
            for name in names:
                DataLoader(data)
        """
    )

    def fixed(qualname: str) -> list[tuple[str, bool]]:
        return [(loop.header, loop.fixed) for loop in summary.functions[qualname].loops]

    assert fixed("<module>") == [
        ("for split in SPLITS", True),
        ('for name in ("a", "b")', False),  # in a class body: the module's, never fixed
    ]
    assert fixed("train") == [
        ("for option in options", True),
        ("for split in SPLITS", False),  # a module name: not bound in this function
        ("for item in later", False),  # bound to a call after the loop
    ]
    assert fixed("train.<locals>.inner") == [
        ("for option in options", False),
        ('for kind in ("a",)', True),
    ]
    assert fixed("grown") == [("for name in names", False)]  # changed in place
    assert summary.loaders is not None
    loader_loops = summary.loaders.functions["train"].loops
    assert [loop.fixed for loop in loader_loops] == [True, False, False]


def test_a_guard_sees_a_store_nested_deep_in_its_branch() -> None:
    summary = summarize(
        """
        from torch.utils.data import DataLoader

        class Data:
            def loader(self, flag):
                if self._loader is None:
                    with lock:
                        try:
                            if flag:
                                self._loader = DataLoader(self.ds, num_workers=2)
                        finally:
                            pass
                elif flag:
                    pass
                elif self._other is None:
                    def later():
                        self._other = 1
                return self._loader
        """
    )
    assert summary.loaders is not None
    facts = summary.loaders.functions["Data.loader"]
    assert facts.kept_blocks == [(7, 12)]
    (call,) = facts.loader_calls
    assert [c.once for c in call.context.conditions] == [True, False]

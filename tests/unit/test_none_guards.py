"""None guards (``summary/none_guards.py``): which calls run only while a parameter is None,
as the real summarizer records them, and which parameters a function may itself set to None
(they guard nothing). The LL202 side is pinned by fixtures/rules/LL202/none_guard_*.py and
tests/test_loader_shapes.py."""

from __future__ import annotations

import textwrap

import pytest

from lintloader.summary.model import FunctionSummary
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)


def function(source: str, name: str = "f") -> FunctionSummary:
    summary = summarize_source(textwrap.dedent(source).encode(), "example.py", "example")
    assert summary.ok, summary.error
    return summary.functions[name]


def guards(source: str, name: str = "f") -> dict[str, tuple[str, ...]]:
    """Each call's name (its last part) and its ``none_guard``."""
    return {call.target[-1]: call.none_guard for call in function(source, name).calls}


def test_each_shape_of_a_none_test_guards_its_branch() -> None:
    found = guards(
        """
        def f(a=None, b=None, c=None, d=None, e=None, *, k=None):
            if a is None:
                in_a()
            else:
                not_a()
            if not b:
                b = in_b()
            if c is not None:
                filled_c()
            else:
                in_c()
            d = d or in_d()
            e = e if e is not None else in_e()
            if k is None and ready():
                in_k()
            if a is None or ready2():
                either()
        """
    )
    assert found == {
        "in_a": ("a",),
        "not_a": (),
        "in_b": ("b",),
        "filled_c": (),
        "in_c": ("c",),
        "in_d": ("d",),
        "in_e": ("e",),
        "ready": ("k",),  # the right of `and` runs only when the left holds
        "in_k": ("k",),
        "ready2": (),  # the right of `or` runs only when `a` is not None
        "either": (),
    }


def test_nested_guards_add_up() -> None:
    found = guards(
        """
        def f(a=None, b=None):
            if a is None:
                if b is None:
                    both()
        """
    )
    assert found == {"both": ("a", "b")}


def test_a_parameter_the_function_may_set_to_none_guards_nothing() -> None:
    found = guards(
        """
        def f(a=None, b=None, c=None, reset=False):
            if reset:
                a = None
            for b in range(3):
                pass
            if a is None:
                make_a()
            if b is None:
                make_b()
            if c is None:
                c = make_c()
        """
    )
    assert found == {"range": (), "make_a": (), "make_b": (), "make_c": ("c",)}


def test_a_nested_scope_that_rebinds_the_parameter_drops_its_guard() -> None:
    found = guards(
        """
        def f(a=None):
            def clear():
                nonlocal a
                a = None
            if a is None:
                make()
        """
    )
    assert found == {"make": ()}


def test_names_of_lambdas_and_comprehensions_are_their_own() -> None:
    found = guards(
        """
        def f(a=None, items=()):
            g = lambda a: a or make()
            return [a or build() for a in items]
        """
    )
    assert found == {"make": (), "build": ()}


def test_only_parameters_a_caller_can_fill_guard() -> None:
    found = guards(
        """
        def f(a=None, /, *args, **kwargs):
            local = None
            if a is None:
                one()
            if not args:
                two()
            if local is None:
                three()
        """
    )
    assert found == {"one": (), "two": (), "three": ()}


def test_names_that_may_hold_none() -> None:
    info = function(
        """
        def f(a, b=None, c=0, d=1, *, e=None, g=[]):
            x = None
            y: int = 0
            z = loader if ready else None
            w = loader
            if (v := None) is None:
                pass
        """
    )
    assert info.none_names == ("b", "e", "v", "x", "z")  # None only: `c=0` is everywhere


def test_a_local_bound_once_to_a_none_test_stands_for_it() -> None:
    found = guards(
        """
        def f(model=None, dataloader=None):
            training = model is not None
            if training:
                model.eval()
            else:
                model = load()
                dataloader = build()
        """
    )
    assert found == {"eval": (), "load": ("model",), "build": ("model",)}


def test_a_local_bound_twice_stands_for_nothing() -> None:
    found = guards(
        """
        def f(model=None, force=False):
            training = model is not None
            if force:
                training = False
            if not training:
                build()
        """
    )
    assert found == {"build": ()}


def test_every_target_of_a_chained_assignment_keeps_its_facts() -> None:
    info = function(
        """
        def f(model=None):
            first = second = Loader()
            self_a = self_b = None
        """
    )
    assert info.local_types == {"first": ("Loader",), "second": ("Loader",)}
    assert info.none_names == ("model", "self_a", "self_b")


def test_attributes_a_class_may_leave_none() -> None:
    summary = summarize_source(
        textwrap.dedent(
            """
            class Trainer:
                checkpoint = None
                limit: int = 0

                def __init__(self, loader=None):
                    self.loader = loader
                    self.val_loader = None
                    self.other.attribute = None
                    local = None
            """
        ).encode(),
        "example.py",
        "example",
    )
    assert summary.classes["Trainer"].none_attrs == ("checkpoint", "val_loader")
    assert summary.functions["Trainer.__init__"].none_names == ("loader", "local")


def test_a_walrus_anywhere_in_the_function_counts_as_a_binding() -> None:
    found = guards(
        """
        def f(a=None, items=()):
            found = [a := item for item in items]
            if a is None:
                make()
            return [b for a in items for b in a]
        """
    )
    assert found == {"make": ()}


def test_a_flag_guards_nothing_unless_its_branch_fills_it() -> None:
    found = guards(
        """
        def f(stateful=False, loader=None, other=None):
            if stateful:
                one()
            else:
                two()
            if not loader:
                loader = three()
            x = other or four()
            loader = loader or five()
        """
    )
    assert found == {"one": (), "two": (), "three": ("loader",), "four": (), "five": ("loader",)}

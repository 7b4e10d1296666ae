"""Binding a call's arguments to its callee's parameters (``link/arguments.py``), on calls and
functions as the real summarizer records them. What the LL2xx rules make of a binding is
pinned by their fixtures (fixtures/rules/LL202/unbound_method_*.py: ``Base.build(self, ds)``
binds ``self`` like ``self.build(ds)``)."""

from __future__ import annotations

import textwrap

import pytest

from lintloader.link.arguments import Binding, bind, bind_loader_call, binding
from lintloader.link.program import Program
from lintloader.summary.model import FileSummary, Passed
from lintloader.summary.summarize import summarize_source

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

CLASSES = """
from torch.utils.data import DataLoader

class Base:
    def build(self, dataset, workers=0, *rest, flag=False, **options):
        pass

    @classmethod
    def make(cls, dataset, workers=0):
        pass

    @staticmethod
    def plain(dataset, workers=0):
        pass

class Child(Base):
    def build(self, dataset, workers=0, *rest, flag=False, **options):
        pass

    def caller(self, ds, n, items, extra):
        CALL
"""


def summary(call: str) -> FileSummary:
    source = textwrap.dedent(CLASSES).replace("CALL", call)
    found = summarize_source(source.encode(), "example.py", "example")
    assert found.ok, found.error
    return found


def bound(call: str, callee: str = "Base.build") -> Binding:
    """The binding of the first call written in ``Child.caller`` to ``callee``."""
    file = summary(call)
    (site, *_) = file.functions["Child.caller"].calls
    return bind(site, file.functions[callee])


def text(argument: Passed | None) -> str | None:
    return None if argument is None else argument.text


@pytest.mark.parametrize(
    ("call", "self_argument"),
    [
        ("self.build(ds, n)", None),
        ("Base.build(self, ds, n)", "self"),
        ("super().build(ds, n)", None),
        ("obj.build(ds, n)", None),
    ],
)
def test_self_is_the_object_or_the_first_argument_through_the_class(
    call: str, self_argument: str | None
) -> None:
    found = bound(call)
    assert (text(found.written("dataset")), text(found.written("workers"))) == ("ds", "n")
    assert text(found.written("self")) == self_argument
    assert found.passes("flag") is False


def test_through_the_class_workers_are_left_out_as_through_self() -> None:
    assert bound("Base.build(self, ds)").passes("workers") is False
    assert bound("self.build(ds)").passes("workers") is False
    assert bound("self.build(ds)").params == ("dataset", "workers")


@pytest.mark.parametrize("call", ["cls.make(ds, n)", "Base.make(ds, n)", "self.make(ds, n)"])
def test_a_classmethod_binds_cls_however_it_is_called(call: str) -> None:
    found = bound(call, "Base.make")
    assert (text(found.written("dataset")), text(found.written("workers"))) == ("ds", "n")


def test_a_staticmethod_has_no_self() -> None:
    found = bound("Base.plain(ds, n)", "Base.plain")
    assert found.params == ("dataset", "workers")
    assert text(found.written("workers")) == "n"


def test_stars_may_fill_what_is_not_written() -> None:
    found = bound("self.build(ds, *items)")
    assert text(found.written("dataset")) == "ds"
    assert (found.passes("dataset"), found.passes("workers")) == (True, None)
    assert found.written("workers") is None
    found = bound("self.build(ds, **extra)")
    assert (found.passes("workers"), found.passes("flag")) == (None, None)
    found = bound("self.build(*items, workers=n)")
    assert (found.passes("dataset"), text(found.written("workers"))) == (None, "n")


def test_keywords_land_in_their_parameter_else_in_kwargs() -> None:
    found = bound("self.build(ds, flag=True, other=n)")
    assert found.passes("flag") is True
    fills = {slot.argument.text: slot.fills for slot in found.slots}
    assert fills == {"self": ("self",), "ds": ("dataset",), "True": ("flag",), "n": ("options",)}


def test_slots_say_which_parameters_an_argument_may_reach() -> None:
    found = bound("self.build(ds, n, items, *extra)")
    fills = {slot.argument.text: slot.fills for slot in found.slots}
    # past the named parameters: into ``*rest``; a starred one: any parameter
    assert fills == {
        "self": ("self",),
        "ds": ("dataset",),
        "n": ("workers",),
        "items": ("rest",),
        "extra": None,
    }
    fills = {s.argument.text: s.fills for s in bound("Base.build(self, ds)").slots}
    assert fills == {"self": ("self",), "ds": ("dataset",)}  # the class is no receiver


def test_a_cut_text_is_read_from_the_summary_shape() -> None:
    long = "x" * 130
    found = bound(f"self.build(ds, flag='{long}')")
    assert not found.parsed and found.slots == ()
    assert (found.passes("dataset"), found.passes("flag"), found.passes("workers")) == (
        True,
        True,
        False,
    )
    written = found.written("dataset")  # read from the tree, though its text is cut
    assert written is not None and written.text == "ds"
    assert bound(f"self.build(*items, flag='{long}')").passes("workers") is None


def test_a_function_passed_as_a_value_may_be_passed_anything_later() -> None:
    file = summary("run(target=self.build)")
    reference = next(c for c in file.functions["Child.caller"].calls if c.is_reference)
    found = bind(reference, file.functions["Base.build"])
    assert found.reference and found.passes("workers") is None and found.slots == ()


def test_a_construction_binds_its_recorded_arguments_to_init() -> None:
    source = """
    from torch.utils.data import DataLoader

    class Loader(DataLoader):
        def __init__(self, dataset, num_workers=0, **kwargs):
            super().__init__(dataset, num_workers=num_workers, **kwargs)

    def make(ds, options):
        a = Loader(ds)
        b = Loader(ds, 2)
        c = Loader(ds, **options)
        d = Loader(ds, num_workers=4)
    """
    file = summarize_source(textwrap.dedent(source).encode(), "example.py", "example")
    assert file.loaders is not None
    facts = file.loaders.facts("make")
    assert facts is not None
    init = file.functions["Loader.__init__"]
    passes = [bind_loader_call(c, init).passes("num_workers") for c in facts.loader_calls]
    assert passes == [False, True, None, True]


def test_an_edge_is_bound_once_per_program() -> None:
    program = Program([summary("self.build(ds, n)")])
    (edge,) = [e for e in program.edges_from("example:Child.caller") if not e.call.is_reference]
    assert binding(program, edge) is binding(program, edge)
    assert text(binding(program, edge).written("workers")) == "n"

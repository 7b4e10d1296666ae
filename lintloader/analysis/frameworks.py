"""What the frameworks people train with call, and how often, from lintloader's own stubs
(``lintloader/data/frameworks.toml``), for a framework whose code is not read.

In a project scan the framework a class subclasses is read from the environment as context
(``scan/environment/project.py``): its loops then reach the user's overrides through the call graph.
Run from a venv of its own (pipx, pre-commit), lintloader finds no framework there, and the
overrides are reached from nothing. Then the stubs say which methods of such a subclass the
framework calls on every step, evaluation or epoch: each is a root, as a declared root is
(``extend-roots``). A framework any of whose modules is linked is read as it is; its stubs
are not used.
"""

from __future__ import annotations

import pkgutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from lintloader.analysis.vocabulary import Vocabulary, function_keys
from lintloader.link.folder_modules import own_name
from lintloader.link.program import FunctionInfo, Program

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on old interpreters
    import tomli as tomllib

# How often the framework calls a method: the kinds that make it a root, in order.
REPEATED = ("per_step", "per_interval", "per_evaluation", "per_epoch")
KINDS = (*REPEATED, "per_reload", "once")


@dataclass(frozen=True)
class StubClass:
    """A framework class users subclass: its import paths, and its methods by how often the
    framework calls them (``KINDS``)."""

    bases: frozenset[str]
    methods: Mapping[str, frozenset[str]]
    builds: frozenset[str] = frozenset()  # its methods that return a new DataLoader each call
    # of the ``once`` methods, the set-up hooks the framework calls before the first pass over
    # any loader (``before_first_pass``): a reset there has no worker pool to shut down yet
    setup: frozenset[str] = frozenset()

    def repeated(self) -> dict[str, str]:
        """The methods the framework calls again and again, each with how often."""
        return {name: kind for kind in reversed(REPEATED) for name in self.methods[kind]}


@dataclass(frozen=True)
class Framework:
    name: str
    packages: frozenset[str]
    classes: tuple[StubClass, ...]
    calls: Mapping[str, str]  # framework functions the user calls -> what they do (for readers)


@dataclass(frozen=True, eq=False)
class StubRoots:
    """The methods of the program the stubs make roots: key -> (how often the framework calls
    it, the framework's name)."""

    keys: Mapping[str, tuple[str, str]]


@cache
def known_frameworks() -> tuple[Framework, ...]:
    # pkgutil, not importlib.resources: the same bytes through the package's loader (a zip
    # too), without importing tempfile, shutil and the archive modules (~3.5 ms a run)
    data = pkgutil.get_data("lintloader", "data/frameworks.toml")
    if data is None:
        raise OSError("lintloader's loader cannot read data/frameworks.toml")
    text = data.decode("utf-8")
    return tuple(_framework(item) for item in tomllib.loads(text)["framework"])


def builder_tokens() -> tuple[tuple[bytes], ...]:
    """What a file that calls a stubbed framework's loader-building method holds
    (``.get_eval_dataloader(``): a seed of LL202's demand, as ``DataLoader(`` is."""
    methods = {m for f in known_frameworks() for stub in f.classes for m in stub.builds}
    return tuple((f".{method}(".encode(),) for method in sorted(methods))


def _framework(item: Mapping[str, object]) -> Framework:
    classes, calls = item.get("class", []), item.get("call", [])
    assert isinstance(classes, list) and isinstance(calls, list)
    return Framework(
        str(item["name"]),
        frozenset(map(str, item["packages"])),  # type: ignore[call-overload]
        tuple(_class(entry) for entry in classes),
        {str(call["function"]): str(call["does"]) for call in calls},
    )


def _class(entry: Mapping[str, Iterable[object]]) -> StubClass:
    methods = {kind: frozenset(map(str, entry.get(kind, ()))) for kind in KINDS}
    builds = frozenset(map(str, entry.get("builds", ())))
    setup = frozenset(map(str, entry.get("before_first_pass", ())))
    return StubClass(frozenset(map(str, entry["bases"])), methods, builds, setup)


def stub_roots(program: Program) -> StubRoots:
    """The roots the stubs give: the methods of each linked class that subclasses a stubbed
    framework class (of a framework none of whose modules is linked) which the framework
    calls every step, interval, evaluation or epoch. Worked out once per program."""
    return program.derived(_stub_roots)


def unlinked(program: Program) -> list[Framework]:
    """The known frameworks none of whose modules is linked (read as context or scanned)."""
    linked = {own_name(module).partition(".")[0] for module in program.files}
    return [f for f in known_frameworks() if not f.packages & linked]


def _stub_roots(program: Program) -> StubRoots:
    frameworks = unlinked(program)
    keys: dict[str, tuple[str, str]] = {}
    for class_key in program.classes:
        bases = program.external_bases(class_key)
        if not bases:
            continue
        for framework in frameworks:
            for stub in framework.classes:
                if not stub.bases & bases:
                    continue
                for name, kind in stub.repeated().items():
                    key = program.lookup_method(class_key, name)
                    if key is not None and key in program.functions:
                        keys.setdefault(key, (kind, framework.name))
    return StubRoots(keys)


def setup_hook(program: Program, info: FunctionInfo) -> str | None:
    """The framework whose stubs say it calls ``info`` once, before the first pass over any
    loader (mmengine's ``Hook.before_train``, Lightning's ``setup``), else None. Read from the
    stubs whether or not the framework is linked: the order is the framework's, not the scan's."""
    class_key = info.class_key
    if class_key is None or class_key not in program.classes:
        return None
    bases = program.external_bases(class_key)
    name = info.function.name
    for framework in known_frameworks():
        if any(stub.bases & bases and name in stub.setup for stub in framework.classes):
            return framework.name
    return None


def stub_hook_kind(program: Program, key: str) -> str | None:
    """How often a stubbed framework calls the method ``key`` (``"per-step hook"``), if the
    stubs make it a root."""
    found = stub_roots(program).keys.get(key)
    return f"{found[0].replace('_', '-')} hook" if found else None


def root_keys(program: Program, vocabulary: Vocabulary) -> frozenset[str]:
    """Every root besides those lintloader knows by name: the declared ones
    (``extend-roots``) and those the frameworks' stubs give."""
    declared = function_keys(program, vocabulary.roots)
    return frozenset(declared) | frozenset(stub_roots(program).keys)

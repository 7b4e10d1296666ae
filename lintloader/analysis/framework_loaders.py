"""Loaders a framework builds for the user: ``trainer.get_eval_dataloader(ds)`` on an object
of a stubbed class (``lintloader/data/frameworks.toml``'s ``builds``), the framework not linked.
Each such call is a DataLoader construction with the framework's own worker setting (LL202).
Also the stub hooks a run's findings pass through (the summary line names them): they include
these builders' callers, so they live here, above ``frameworks.py``, with no import loop."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from lintloader.analysis.frameworks import stub_roots, unlinked
from lintloader.analysis.loaders import LoaderSite, functions_building
from lintloader.finding.findings import Finding
from lintloader.link.hierarchy import FOREIGN
from lintloader.link.program import FunctionInfo, Program
from lintloader.link.symbols import symbol_key
from lintloader.summary.model import Argument


@dataclass(frozen=True, eq=False)
class FrameworkBuilt:
    """The calls of a stubbed framework's loader-building method (``trainer.get_eval_dataloader
    (ds)`` on a ``transformers.Trainer`` object), the framework not linked: each a DataLoader
    construction with the framework's own worker count (a setting of the user's)."""

    sites: tuple[LoaderSite, ...]
    frameworks: Mapping[str, str]  # function key -> the framework's name


# The worker count of a loader a framework builds: its own setting, not known here.
FRAMEWORK_WORKERS = Argument("num_workers", "the framework's worker setting")


def framework_built(program: Program) -> FrameworkBuilt:
    """Worked out once per program (LL202 and the summary line ask)."""
    return program.derived(_framework_built)


def _framework_built(program: Program) -> FrameworkBuilt:
    builders = {
        base: (stub.builds, framework.name)
        for framework in unlinked(program)
        for stub in framework.classes
        if stub.builds
        for base in stub.bases
    }
    sites: list[LoaderSite] = []
    names: dict[str, str] = {}
    if not builders:
        return FrameworkBuilt((), {})
    for info, facts in functions_building(program):
        for call in facts.loader_calls:
            name = _builder(program, info, call.target, builders)
            if name is not None:
                built = call._replace(arguments=(*call.arguments, FRAMEWORK_WORKERS))
                sites.append(LoaderSite(info, facts, built, subclass=False))
                names[info.key] = name
    return FrameworkBuilt(tuple(sites), names)


def _builder(
    program: Program,
    info: FunctionInfo,
    target: tuple[str, ...],
    builders: Mapping[str, tuple[frozenset[str], str]],
) -> str | None:
    """The framework whose loader-building method ``target`` (``receiver.method``) calls on
    an object of a stubbed class (or of a subclass that does not override the method)."""
    if len(target) != 2:
        return None
    typed = _receiver_class(program, info, target[0])
    if typed is None:
        return None
    if typed.startswith(FOREIGN):
        bases = frozenset({typed[len(FOREIGN) :]})
    elif program.lookup_method(typed, target[1]) is None:
        bases = program.external_bases(typed)
    else:
        return None  # the class's own method: read as any other
    for base in sorted(bases & builders.keys()):
        methods, name = builders[base]
        if target[1] in methods:
            return name
    return None


def _receiver_class(program: Program, info: FunctionInfo, name: str) -> str | None:
    """The class of the object a local name holds: the function's own local, else (a free
    variable of a function or class defined in another function) the enclosing function's."""
    qualname = info.function.qualname
    current: FunctionInfo | None = info
    while current is not None:
        function = current.function
        if name in function.local_types:
            return program.class_of_type(current, function.local_types[name])
        if name in function.params or name in function.keyword_only or ".<locals>." not in qualname:
            return None
        qualname = qualname.rsplit(".<locals>.", 1)[0]
        current = program.functions.get(symbol_key(info.file.module, qualname))
    return None


StubHook = tuple[str, str, str]  # (path as shown, function, framework)


def stub_hooks(
    program: Program, findings: Iterable[Finding], display: Callable[[str], str]
) -> tuple[StubHook, ...]:
    """The roots the stubs gave that some finding's chain starts from or passes, each with
    its framework (what the summary line names, of the findings it reports)."""
    keys = {key: name for key, (_, name) in stub_roots(program).keys.items()}
    keys.update(framework_built(program).frameworks)
    if not keys:
        return ()
    places = {
        (display(program.functions[key].file.path), program.functions[key].display_name): name
        for key, name in keys.items()
    }
    used = {(hop.path, hop.function) for finding in findings for hop in finding.chain}
    return tuple(sorted((*place, name) for place, name in places.items() if place in used))

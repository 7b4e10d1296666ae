"""Randomness drawn at each build: what a construction built once, instead of at each call or
pass, would no longer draw again.

A project's dataset may draw its data when it is made (MAML-Pytorch's ``MiniImagenet.__init__``
calls ``self.create_batch``, which picks random episodes with ``np.random.choice``): built at
each evaluation, each one reads a new draw; built once, every evaluation reads the same. The
fixes that build once what was built per call or pass (``pass-loader-in``,
``hoist-loader-call``, ``hoist-dataloader``, ``cache-loader-per-dataset``, ``keep-eval-loader``)
check here what they move or keep, and are refused naming the class or function and the draw.

A call in the construction that resolves to a class of the project is followed into its
``__init__`` (along its MRO), a function of the project into its body; from there the methods
called on ``self`` (``super()`` included) and the project's classes and functions it calls,
whichever file of the scanned project defines them (the linked program's summaries, no parse).
A draw is a call of the ``random`` module, of ``numpy.random`` or of torch's samplers
(``torch.rand*``, ``torch.normal``, ...), named through the file's imports (``np.random.choice``,
``from random import shuffle``); seeding and making a generator (``np.random.seed``,
``np.random.default_rng``) are not draws. A class or function the program does not define (a
library's dataset) is not followed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import libcst as cst

from lintloader.fixers.base import FixError, FixRequest
from lintloader.fixers.edit.cst_edit import nodes_of
from lintloader.fixers.edit.epoch_state import dotted
from lintloader.link.program import Program
from lintloader.link.symbols import FunctionInfo, Symbol
from lintloader.summary.model import Dotted, FileSummary
from lintloader.summary.summarize import summarize_source

# how far calls are followed from the construction (a class's __init__ counts as one step)
_DEPTH = 4
# the random modules' functions that draw nothing
_NOT_DRAWS = frozenset(
    {
        *("seed", "getstate", "setstate", "get_state", "set_state"),
        *("Random", "SystemRandom", "RandomState", "default_rng", "Generator", "SeedSequence"),
    }
)
_TORCH_DRAWS = frozenset({"normal", "bernoulli", "multinomial", "poisson"})


def refuse_draws(request: FixRequest, path: str, built: Iterable[cst.CSTNode]) -> None:
    """FixError when a construction in ``built`` (the statements or calls of ``path`` that the
    fix builds once) calls a class or function of the project that draws randomness."""
    program = request.program
    summary = program.derived(_by_path).get(path)
    if summary is None:
        return
    for node in built:
        for call in _calls(node):
            name = dotted(call.func)
            if name is None:
                continue
            found = _drawn_by(request, summary, tuple(name.split(".")))
            if found is not None:
                draw, where = found
                raise FixError(
                    f"`{name}(...)` draws at each build (`{draw}` in `{where}`): built "
                    "once, each use would read the same draw"
                )


def _by_path(program: Program) -> dict[str, FileSummary]:
    return {summary.path: summary for summary in program.files.values()}


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    return nodes_of(node, cst.Call)


def _drawn_by(request: FixRequest, file: FileSummary, name: Dotted) -> tuple[str, str] | None:
    """The draw (as written) and the name of the function it is in, for the project's class
    or function ``name`` as written in ``file``: one the program links, else one of a file of
    the scanned tree the program did not link (the fix's check reads only the files the
    analysis needed: a dataset's file often is not one), read here alone."""
    program = request.program
    symbol = program.resolve(file.module, name)
    if symbol is not None and symbol.kind == "external":
        program, symbol = unlinked(request, file, symbol.key)
    start = _start(program, symbol)
    return _first_draw(program, start) if start is not None else None


def _start(program: Program, symbol: Symbol | None) -> str | None:
    """Where a call of ``symbol`` runs: a class's ``__init__``, a function's body."""
    if symbol is not None and symbol.kind == "class":
        return program.lookup_method(symbol.key, "__init__")
    return symbol.key if symbol is not None and symbol.kind == "function" else None


def unlinked(request: FixRequest, importer: FileSummary, key: str) -> tuple[Program, Symbol | None]:
    """``key`` (``episodes.Episodes``) in the scanned file of its module, nearest the importer,
    summarized alone (its own calls to other files are not followed)."""
    parts = key.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        path = _file_of(request, importer.path, parts[:cut])
        if path is not None:
            module = ".".join(parts[:cut])
            package = os.path.basename(path) == "__init__.py"  # its `from .x import` reads below it
            alone = Program([summarize_source(request.sources[path], path, module, package)])
            return alone, alone.resolve(module, tuple(parts[cut:]))
    return request.program, None


def _file_of(request: FixRequest, importer: str, module: list[str]) -> str | None:
    """The scanned file of ``module`` (``a/b.py`` or ``a/b/__init__.py``) whose folder shares
    the most with the importer's; None when none or two tie."""
    ends = ("/" + "/".join(module) + ".py", "/" + "/".join(module) + "/__init__.py")
    found = [p for p in set(request.displays.values()) if p.replace("\\", "/").endswith(ends)]
    near = sorted((-len(os.path.commonpath([p, importer])), p) for p in found)
    if not near or (len(near) > 1 and near[0][0] == near[1][0]):
        return None
    return near[0][1]


def _first_draw(program: Program, start: str) -> tuple[str, str] | None:
    seen = {start}
    todo = [(start, 0)]
    while todo:
        key, depth = todo.pop(0)
        info = program.functions.get(key)
        if info is None:
            continue
        for call in info.function.calls:
            if call.is_reference:
                continue
            if _is_draw(_imported_name(program, info.file, call.target)):
                return ".".join(call.target), _qualified(info)
            callee = _callee(program, info, call.target)
            if callee is not None and callee not in seen and depth < _DEPTH:
                seen.add(callee)
                todo.append((callee, depth + 1))
    return None


def _qualified(info: FunctionInfo) -> str:
    """``TextDataset.__init__``, or a function's own name."""
    owner = info.function.class_qualname
    return f"{owner}.{info.function.name}" if owner else info.function.name


def _callee(program: Program, info: FunctionInfo, target: Dotted) -> str | None:
    """The project function a call of ``info`` runs: a method on ``self`` or ``super()``, a
    class's ``__init__``, or a function, as the file resolves it."""
    owner = info.class_key
    if owner is not None and len(target) == 2 and owner in program.classes:
        if target[0] == info.function.self_name:
            return program.lookup_method(owner, target[1])
        if target[0] == "super()":
            return program.lookup_method(owner, target[1], skip_self=True)
    return _start(program, program.resolve(info.file.module, target))


def _imported_name(program: Program, file: FileSummary, target: Dotted) -> Dotted:
    """``target`` as the linker resolves it through the file's imports when it names something
    outside the project (``np.random.choice`` -> ``numpy.random.choice``), else as written."""
    symbol = program.resolve(file.module, target)
    if symbol is not None and symbol.kind == "external":
        return tuple(symbol.key.split("."))
    return target


def _is_draw(name: Dotted) -> bool:
    if len(name) == 2 and name[0] == "random":
        return name[1] not in _NOT_DRAWS
    if len(name) == 3 and name[:2] == ("numpy", "random"):
        return name[2] not in _NOT_DRAWS
    if len(name) == 2 and name[0] == "torch":
        return name[1].startswith("rand") or name[1] in _TORCH_DRAWS
    return False

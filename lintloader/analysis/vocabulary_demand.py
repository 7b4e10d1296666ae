"""The demand of a declared vocabulary (``extend-resets``, ``extend-loaders``): the files that
could call a declared function, or a function that leads to one, are parsed next."""

from __future__ import annotations

from lintloader.analysis.context import Demand, TokenGroup
from lintloader.analysis.vocabulary import Vocabulary, function_keys
from lintloader.link.program import Program
from lintloader.scan.read.tokens import function_groups, method_group


def vocabulary_demand(program: Program, vocabulary: Vocabulary) -> Demand:
    """The files that could call a declared reset or loader factory, or a function that leads
    to one (they mention its name, with its class's name for a method)."""
    declared = function_keys(program, (*vocabulary.resets, *vocabulary.loaders))
    reaching, frontier = set(declared), list(declared)
    while frontier:
        frontier = [
            edge.caller
            for key in frontier
            for edge in program.edges_into(key)
            if edge.caller not in reaching
        ]
        reaching.update(frontier)
    groups: set[TokenGroup] = set()
    for key in reaching:
        info = program.functions[key]
        function, class_key = info.function, info.class_key
        if function.kind == "module":
            continue
        if class_key is None or class_key not in program.classes:
            groups |= function_groups(function.name, info.file.module)
        else:
            holder = program.classes[class_key]
            groups.add(method_group(function.name, holder.klass.name, holder.file.module))
    return Demand(frozenset(groups))

"""What a worker setting read from a configuration object defaults to (issue 29, shape 1):
``persistent_workers=self.persistent_workers``, ``=self.args.dataloader_persistent_workers``,
``=cfg.persistent_workers`` where the class's field, class attribute or stored ``__init__``
parameter defaults to a literal (``summary/config_defaults.py``), followed through the class
hierarchy and the attribute types the program records (``self.args: TrainingArguments``).
"""

from __future__ import annotations

from typing import NamedTuple

from lintloader.analysis.context import Demand
from lintloader.link.program import FOREIGN, FunctionInfo, Program
from lintloader.scan.read.tokens import package_scope, whole_word
from lintloader.summary.config_defaults import REWRITTEN


class ConfigDefault(NamedTuple):
    value: int | bool | None
    owner: str  # the class that declares it, as shown (``TrainingArguments``)


def holder_classes(program: Program, info: FunctionInfo, path: tuple[str, ...]) -> set[str]:
    """The classes the object ``path[:-1]`` names in ``info`` can be (``self``, ``self.args``,
    a parameter typed ``cfg: Config``), as class keys or :data:`FOREIGN` + a path; several
    for a mixin whose subclasses each take their own (empty: unknown)."""
    function = info.function
    loaders = info.file.loaders
    facts = loaders.facts(function.qualname) if loaders is not None else None
    alias = facts.attribute_aliases.get(path[0]) if facts is not None else None
    if alias is not None and path[0] not in function.local_types:
        path = (*alias, *path[1:])  # `args = self.args`, then `args.flag`
    head, *middle = path[:-1]
    if head == function.self_name and function.self_name:
        held = {info.class_key} if info.class_key else set()
    else:
        type_ = function.local_types.get(head)
        typed = program.class_of_type(info, type_) if type_ else None
        held = {typed} if typed else set()
    for attribute in middle:
        if not held or any(h.startswith(FOREIGN) or h not in program.classes for h in held):
            return set()
        classes = {found for h in held for found in _attribute_classes(program, h, attribute)}
        if None in classes:
            return set()
        held = {found for found in classes if found is not None}
    return held


def _attribute_classes(program: Program, class_key: str, attribute: str) -> set[str | None]:
    """The class ``self.<attribute>`` holds, or, for a mixin that does not type it, the
    classes its scanned subclasses do (``class Trainer(ArgsMixin, LoaderMixin)``, where
    ``ArgsMixin.__init__`` takes it); {None} when one of them is unknown."""
    found = _attribute_class(program, class_key, attribute)
    if found is not None:
        return {found}
    subclasses = [sub for sub in program.subclasses.get(class_key, ()) if sub in program.classes]
    if not subclasses:
        return {None}
    return {_attribute_class(program, sub, attribute) for sub in subclasses}


def _attribute_class(program: Program, class_key: str, attribute: str) -> str | None:
    found = program.attribute_class(class_key, attribute)
    return found or _stored_class(program, class_key, attribute)


def _stored_class(program: Program, class_key: str, attribute: str) -> str | None:
    """The class of an annotated ``__init__`` parameter stored in ``self.<attribute>``."""
    for key in program.mro(class_key):
        holder = program.classes[key]
        loaders = holder.file.loaders
        stores = loaders.class_stores.get(holder.klass.qualname, {}) if loaders else {}
        if attribute in stores:
            symbol = program.resolve(holder.file.module, stores[attribute])
            if symbol is None or symbol.kind in ("function", "module"):
                return None
            return symbol.key if symbol.kind == "class" else FOREIGN + symbol.key
    return None


def config_default(program: Program, info: FunctionInfo, text: str) -> ConfigDefault | None:
    """The literal default of the attribute ``text`` reads, when one is proven (the same
    in every class the object can be)."""
    path = tuple(text.split("."))
    if len(path) < 2 or not all(part.isidentifier() for part in path):
        return None
    held = holder_classes(program, info, path)
    if not held or any(h not in program.classes for h in held):
        return None
    found = {_class_default(program, h, path[-1]) for h in sorted(held)}
    if len(found) != 1 or None in found:
        return None
    return found.pop()


def _class_default(program: Program, held: str, attribute: str) -> ConfigDefault | None:
    for key in program.mro(held):
        holder = program.classes[key]
        loaders = holder.file.loaders
        defaults = loaders.class_defaults.get(holder.klass.qualname, {}) if loaders else {}
        if attribute in defaults:
            value = defaults[attribute]
            if value == REWRITTEN or isinstance(value, str):
                return None
            return ConfigDefault(value, holder.klass.name)
    return None


def config_demand(program: Program, texts: list[tuple[FunctionInfo, str]]) -> Demand:
    """The modules of the unparsed configuration classes that ``texts`` read from, and the
    files that could subclass a mixin whose ``self.<attr>`` only a subclass types."""
    modules: set[str] = set()
    groups: set[tuple[bytes, ...]] = set()
    for info, text in texts:
        path = tuple(text.split("."))
        if len(path) < 2 or not all(part.isidentifier() for part in path):
            continue
        held = holder_classes(program, info, path)
        class_key = info.class_key
        if not held and class_key in program.classes:
            holder = program.classes[class_key]
            scope = package_scope(holder.file.module)
            groups.add((whole_word(holder.klass.name), scope))
        for one in held:
            if one.startswith(FOREIGN):
                modules.add(one[len(FOREIGN) :])
            elif one in program.classes:
                modules.update(program.external_bases(one))
    return Demand(frozenset(groups), frozenset(modules))

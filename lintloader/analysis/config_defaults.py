"""What a worker setting read from a configuration object defaults to (issue 29, shape 1):
``persistent_workers=self.persistent_workers``, ``=self.args.dataloader_persistent_workers``,
``=cfg.persistent_workers`` where the class's field, class attribute or stored ``__init__``
parameter defaults to a literal (``summary/config_defaults.py``), followed through the class
hierarchy and the attribute types the program records (``self.args: TrainingArguments``).
"""

from __future__ import annotations

from typing import NamedTuple

from lintloader.program import FOREIGN, FunctionInfo, Program
from lintloader.rules.base import Demand
from lintloader.summary.config_defaults import REWRITTEN


class ConfigDefault(NamedTuple):
    value: int | bool | None
    owner: str  # the class that declares it, as shown (``TrainingArguments``)


def holder_class(program: Program, info: FunctionInfo, path: tuple[str, ...]) -> str | None:
    """The class of the object ``path[:-1]`` names in ``info`` (``self``, ``self.args``,
    a parameter typed ``cfg: Config``), as a class key or :data:`FOREIGN` + its path."""
    function = info.function
    head, *middle = path[:-1]
    if head == function.self_name and function.self_name:
        held = info.class_key
    else:
        type_ = function.local_types.get(head)
        held = program.class_of_type(info, type_) if type_ else None
    for attribute in middle:
        if held is None or held.startswith(FOREIGN) or held not in program.classes:
            return None
        held = program.attribute_class(held, attribute) or _stored_class(program, held, attribute)
    return held


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
    """The literal default of the attribute ``text`` reads, when one is proven."""
    path = tuple(text.split("."))
    if len(path) < 2 or not all(part.isidentifier() for part in path):
        return None
    held = holder_class(program, info, path)
    if held is None or held not in program.classes:
        return None
    attribute = path[-1]
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
    """The modules of the unparsed configuration classes that ``texts`` read from."""
    modules: set[str] = set()
    for info, text in texts:
        path = tuple(text.split("."))
        if len(path) < 2 or not all(part.isidentifier() for part in path):
            continue
        held = holder_class(program, info, path)
        if held is not None and held.startswith(FOREIGN):
            modules.add(held[len(FOREIGN) :])
        elif held is not None and held in program.classes:
            modules.update(
                base.key
                for ancestor in program.mro(held)
                for base in program.bases(ancestor)
                if base.kind == "external"
            )
    return Demand(modules=frozenset(modules))

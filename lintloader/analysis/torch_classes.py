"""Which linked classes are torch's DataLoader or one of its iterators: torch knowledge the
linker leaves to the analyses (``domain/torch_api.py`` holds the names)."""

from __future__ import annotations

from lintloader.domain.torch_api import DATALOADER_ITER_MARKERS, DATALOADER_PATHS
from lintloader.link.program import Program
from lintloader.link.symbols import ClassInfo


def is_dataloader_class(program: Program, class_key: str) -> bool:
    """Whether ``class_key`` is torch's ``DataLoader`` or derives from it (scanned or not)."""
    if program.lineage_any(class_key, _is_torch_dataloader):
        return True
    return bool(program.external_bases(class_key) & DATALOADER_PATHS)


def is_dataloader_iterator_class(program: Program, class_key: str) -> bool:
    """Whether a name in the lineage of ``class_key`` says it is a DataLoader iterator."""
    if program.lineage_any(class_key, _named_iterator):
        return True
    return any(
        _iterator_name(path.rsplit(".", 1)[-1]) for path in program.external_bases(class_key)
    )


def _is_torch_dataloader(info: ClassInfo) -> bool:
    return info.key.endswith(":DataLoader") and info.key.startswith("torch.utils.data")


def _named_iterator(info: ClassInfo) -> bool:
    return _iterator_name(info.klass.name)


def _iterator_name(name: str) -> bool:
    return any(marker in name for marker in DATALOADER_ITER_MARKERS)

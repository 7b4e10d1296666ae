"""Which linked classes are torch's DataLoader or one of its iterators: torch knowledge the
linker leaves to the analyses (``torch_api.py`` holds the names)."""

from __future__ import annotations

from lintloader.link.program import Program
from lintloader.torch_api import DATALOADER_ITER_MARKERS, DATALOADER_PATHS


def is_dataloader_class(program: Program, class_key: str) -> bool:
    """Whether ``class_key`` is torch's ``DataLoader`` or derives from it (scanned or not)."""
    if any(
        key.endswith(":DataLoader") and key.startswith("torch.utils.data")
        for key in program.mro(class_key)
    ):
        return True
    return bool(program.external_bases(class_key) & DATALOADER_PATHS)


def is_dataloader_iterator_class(program: Program, class_key: str) -> bool:
    """Whether a name in the lineage of ``class_key`` says it is a DataLoader iterator."""
    names = program.lineage_names(class_key)
    return any(marker in name for name in names for marker in DATALOADER_ITER_MARKERS)

"""A fix fixture of several files (``fixtures/fix/<name>/<module>.in.py`` and ``.out.py``):
copied into a folder as a user's files, and compared with what a fix left there."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path


def copy_in(pair: Path, modules: Sequence[str], folder: Path) -> None:
    """Each of ``modules`` of ``pair`` as it is before the fix, as ``<module>.py``."""
    for name in modules:
        shutil.copy(pair / f"{name}.in.py", folder / f"{name}.py")


def texts(folder: Path) -> dict[str, str]:
    """Each ``.py`` file in ``folder`` (not below it), by name: its text."""
    return {p.name: p.read_text() for p in sorted(folder.glob("*.py"))}


def stage(pair: Path, modules: Sequence[str], name: str) -> dict[str, str]:
    """The files of ``pair`` at stage ``name`` (``in`` or ``out``), by the names they are
    copied under: what :func:`texts` gives of a folder holding exactly that stage."""
    return {f"{module}.py": (pair / f"{module}.{name}.py").read_text() for module in modules}

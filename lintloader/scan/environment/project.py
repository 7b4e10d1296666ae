"""The environment a project runs in, as context: the site directories of the running
interpreter (or of ``--python``), where the frameworks a project's classes subclass live.

A project scan (``lintloader check src/``) reads the base classes of its classes from there,
the way ``--site-packages B`` reads B's bases from the other distributions: a user's
``class MyTrainer(Trainer)`` override is then reached from the framework's loops. The
directories are asked for only when selection first wants a module no scanned file is, so a
run that needs no context (or a replayed one) never asks an interpreter.
"""

from __future__ import annotations

from dataclasses import dataclass

from lintloader.domain.torch_api import KNOWN_PACKAGES
from lintloader.scan.environment.locate import ModuleLocator
from lintloader.scan.model import Environment, SourceFile


@dataclass(eq=False, repr=False)
class EnvironmentLocator(ModuleLocator):
    """A :class:`ModuleLocator` over ``extra`` and the environment's site directories, asked
    for on the first look-up."""

    environment: Environment | None = None
    _asked: bool = False

    def find(self, dotted: str) -> SourceFile | None:
        if dotted.partition(".")[0] in KNOWN_PACKAGES:
            return None  # known by name (domain/torch_api.py): parsing it would only cost time
        if not self._asked:
            self._asked = True
            self.directories = [*self.directories, *environment_sites(self.environment)]
        return super().find(dotted)


def environment_sites(environment: Environment | None) -> list[str]:
    """The site directories of the environment's interpreter; none when it cannot say (the
    scan then goes on without context)."""
    from lintloader.scan.environment.interpreter import query_interpreter
    from lintloader.scan.model import DiscoveryError

    environment = environment or Environment()
    if environment.sites is not None:
        return list(environment.sites)
    try:
        answer = query_interpreter(environment.python, [], environment.cache_dir)
    except (DiscoveryError, OSError):
        return []
    return [str(site) for site in answer.get("sites", [])]

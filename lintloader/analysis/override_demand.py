"""Base classes across distributions: package B subclasses a trainer of package A and overrides
the method A's loop calls on every evaluation (``get_eval_dataloader``) to build a DataLoader.

B's class is linked to A's only when A's module is parsed: this demand asks for the modules of
the unparsed bases of every class with a method that builds a DataLoader with workers. Then
A's ``self.get_eval_dataloader()`` dispatches to B's override (class-hierarchy analysis), and
the loop in A reaches the construction in B. (The reset chase asks the same for classes whose
methods reach a reset, in :mod:`lintloader.analysis.reset_demand`.) With ``--site-packages B``
such modules are looked up outside the scanned files (:mod:`lintloader.scan.environment.locate`).
"""

from __future__ import annotations

from lintloader.analysis.context import Demand
from lintloader.analysis.loaders import Workers, loader_sites
from lintloader.link.program import Program


def override_demand(program: Program) -> Demand:
    """The modules of unparsed bases of classes whose methods build a DataLoader with workers."""
    owners = {
        site.info.class_key
        for site in loader_sites(program)
        if site.workers is not Workers.ZERO and site.info.class_key is not None
    }
    paths: set[str] = set()
    for class_key in sorted(owners):
        if class_key not in program.classes:
            continue
        paths.update(program.external_bases(class_key))
    return Demand(modules=frozenset(paths))

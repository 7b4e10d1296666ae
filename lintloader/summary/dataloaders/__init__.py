"""The loader facts: per-file facts about DataLoader construction and use (LL2xx).

A rider of the summary's one walk (``summary/walk.py``): told what the main summarizer's
walk passes, it fills :class:`~lintloader.summary.model.LoaderFacts`: plain, picklable data
per function (keyed by the same qualnames as ``FileSummary.functions``):

* ``loops``: every ``for``/``while`` loop, with the names it binds and assigns, what it iterates;
* ``loader_calls``: calls that may construct a DataLoader (the linker decides which really do),
  with their arguments as source text and literal values, and the loop/guard context;
* ``iter_calls``: ``iter(x)`` and ``next(iter(x))``;
* ``trainer_calls``: calls that may construct a Lightning ``Trainer``;
* ``returns``: dotted names returned.

One module per concern: ``visitor.py`` (the rider and its per-function state), ``bounds.py``
(proven minimums of worker counts, tests for 0), ``dict_flow.py`` (keyword arguments passed
through dicts, ``**cfg``), ``loader_classes.py`` (names that hold a loader class),
``expressions.py`` (what the walk reads off expressions and signatures). Nothing here resolves
names: that is the linker's job (``lintloader/link/``).
"""

from lintloader.summary.dataloaders.visitor import RETURNED, UNPACKED, loader_rider

__all__ = ["RETURNED", "UNPACKED", "loader_rider"]

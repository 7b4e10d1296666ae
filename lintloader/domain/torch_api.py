"""Every torch and Lightning name lintloader knows, in one place.

The summarizers, the linker, the rules and the fixers read these; the prefilter's byte tokens
are derived from them (:data:`LOADER_TOKENS`, :data:`LOADER_FACT_TOKENS`).
This is the module a configuration of in-house loader classes and hooks would extend.
"""

from __future__ import annotations

import re

# -- the DataLoader and its iterator ------------------------------------------------------------
DATALOADER_CLASS = "DataLoader"
DATALOADER_PATHS = frozenset(
    {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
)
# Packages whose classes the analysis knows by the names above: a project scan never reads
# them from the environment as context (scan/environment/project.py).
KNOWN_PACKAGES = frozenset({"torch"})
# Modules whose ``from ... import *`` brings ``DataLoader`` in.
DATALOADER_STAR_SOURCES = frozenset({"torch.utils.data", "torch.utils.data.dataloader"})
# A class whose name contains one of these is a DataLoader iterator
# (``_MultiProcessingDataLoaderIter``).
DATALOADER_ITER_MARKERS = ("DataLoaderIter",)
# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)
NUM_WORKERS_POSITION = 5
# Keywords only a DataLoader-like call takes: a call with one is a candidate construction.
LOADER_KEYWORDS = frozenset({"num_workers", "persistent_workers"})
# Calls that start a DataLoader's worker pool themselves: the multi-process iterator, and
# ``DataLoader._get_iterator`` (which ``DataLoader.__iter__`` only calls once when the workers
# persist).
POOL_ITERATOR_CLASS = "_MultiProcessingDataLoaderIter"
POOL_ITERATOR_PATHS = frozenset(
    {
        f"torch.utils.data.dataloader.{POOL_ITERATOR_CLASS}",
        f"torch.utils.data.{POOL_ITERATOR_CLASS}",
    }
)
GET_ITERATOR_METHOD = "_get_iterator"
POOL_FACTORIES = frozenset({POOL_ITERATOR_CLASS, GET_ITERATOR_METHOD})
# Calls that return at least 1 (``num_workers=os.cpu_count()`` is never 0).
CPU_COUNT_CALLS = frozenset(
    {("os", "cpu_count"), ("cpu_count",), ("multiprocessing", "cpu_count"), ("mp", "cpu_count")}
)

# -- resets (sinks): what throws a worker pool away ---------------------------------------------
SINK_ATTRIBUTE = "_iterator"  # ``loader._iterator = None`` / ``del`` / ``setattr`` / ``delattr``
SHUTDOWN_METHOD = "_shutdown_workers"  # ``loader._iterator._shutdown_workers()``
# Order in which sinks of one function are reported: the reset itself before the shutdown.
SINK_PRIORITY = {"assign-none": 0, "delete": 0, "setattr": 0, "shutdown-workers": 1}
# Calls whose method name looks like a reset (LL104 reports them when nothing defines them).
RESET_LIKE = re.compile(r"^_?(reset|reset_\w+|\w+_reset)$")

# -- roots: where a per-epoch path starts -------------------------------------------------------
ITER_ROOTS = frozenset({"__iter__"})
# Hooks that run once an epoch: ``on_*_epoch_start`` and ``on_*_epoch_end`` (an epoch's end is
# no teardown: it comes again next epoch), a loop's ``on_run_start`` and ``on_advance_start``.
EPOCH_HOOKS = re.compile(r"^(on_(\w+_)?epoch_(start|end)|on_run_start|on_advance_start)$")
# Methods of a Lightning loop class that run once per epoch (or per step).
LOOP_METHODS = frozenset({"reset", "advance", "run"})
# A for/while loop whose header names one of these words runs once per epoch or per step: a
# loop root (``for epoch in range(epochs)``, ``while step < max_steps``, ``for batch in loader``).
STEP_LOOP_WORDS = frozenset(
    {"epoch", "epochs", "step", "steps", "iteration", "iterations", "batch", "batches"}
)
# LightningModule hooks Lightning calls again on every reload.
LIGHTNING_EPOCH_HOOKS = frozenset({"train_dataloader", "val_dataloader"})
# The hooks whose loaders ``reload_dataloaders_every_n_epochs`` drops and builds again.
LIGHTNING_RELOADED_HOOKS = LIGHTNING_EPOCH_HOOKS | {"test_dataloader", "predict_dataloader"}

# -- where a reset belongs: teardown and lifecycle ----------------------------------------------
TEARDOWN_NAMES = ("teardown", "close", "shutdown", "__del__", "__exit__")
LIFECYCLE_NAMES = frozenset({"setup", "__enter__", "start", "open", "connect"})
# Functions that do the per-epoch work itself: moving their statements would move the work.
WORK_NAMES = frozenset({"__init__", "__iter__", "__next__", "__call__", "run", "advance", "main"})
# Methods that run once per pass over a loader, or per batch: a DataLoader built there is
# built again every epoch (as a root of LL202, next to the per-epoch hooks).
CONSTRUCTION_ROOTS = frozenset({"__iter__", "__next__"})
# Functions passed to these run at exit, collection or on a signal: never per epoch.
DEFERRED_REGISTRATIONS = frozenset(
    {("atexit", "register"), ("weakref", "finalize"), ("signal", "signal")}
)
# Builtins that look at their arguments and never call them (``isinstance(m, ModelPT)``).
INSPECTING_BUILTINS = frozenset(
    {("isinstance",), ("issubclass",), ("hasattr",), ("getattr",), ("callable",), ("type",)}
)

# -- Lightning's Trainer ------------------------------------------------------------------------
TRAINER_PATHS = frozenset(
    {
        "pytorch_lightning.Trainer",
        "pytorch_lightning.trainer.Trainer",
        "pytorch_lightning.trainer.trainer.Trainer",
        "lightning.Trainer",
        "lightning.pytorch.Trainer",
        "lightning.pytorch.trainer.Trainer",
        "lightning.pytorch.trainer.trainer.Trainer",
    }
)
TRAINER_MODULES = ("pytorch_lightning.", "lightning.")
TRAINER_KEYWORDS = frozenset({"reload_dataloaders_every_n_epochs", "max_epochs"})
RELOAD_KEYWORD = "reload_dataloaders_every_n_epochs"

# -- the prefilter's byte tokens, derived from the names above ----------------------------------
# (the reset rules' seeds, which also check a shape of the bytes: analysis/reset_demand.py)
_LOADER = DATALOADER_CLASS.encode()
# Files that can construct a DataLoader themselves: they call it or bind another name to it.
# (A file that only names the class, in an import, a type hint or a docstring, cannot; calls of
# factories and subclasses elsewhere are found by the LL2xx demand.)
LOADER_TOKENS = (
    (_LOADER + b"(",),
    (_LOADER + b" (",),
    (_LOADER + b" as ",),
    (b"= " + _LOADER,),
    (b"=" + _LOADER,),  # `loader_cls=DataLoader`: a class passed as a value
)
# Files that start a worker pool by hand (LL202's ``__iter__`` roots).
POOL_TOKENS = ((POOL_ITERATOR_CLASS.encode() + b"(",), (GET_ITERATOR_METHOD.encode() + b"(",))
# A file mentioning none of these gets no DataLoader facts (the second visitor is skipped).
LOADER_FACT_TOKENS = (
    b"oader",
    b"iter(",
    b"Trainer",
    *(keyword.encode() for keyword in sorted(LOADER_KEYWORDS)),
)

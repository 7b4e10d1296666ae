"""The ``lintloader`` command line: thin wrappers that parse options and call the library.

Exit codes (as ruff): 0 no finding at or above the threshold, 1 findings, 2 usage, configuration
or internal error.

This module is the console script's: it imports neither click nor the commands until the warm
fast path of ``check`` (``cli/fast.py``) has had its chance. ``main`` (the click group) and
``LAZY_COMMANDS`` are ``cli/group.py``'s, reached here as before.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import TYPE_CHECKING, Any

from lintloader.cli.exits import CheckDone

if TYPE_CHECKING:
    from lintloader.cli.fast_record import Witness


def run(prog_name: str | None = None) -> None:
    """The console script: :func:`main`; for a ``check``, first the warm fast path, then with
    the garbage collector off, and leaving without tearing the interpreter down. A check of a
    site-packages leaves hundreds of thousands of objects; freeing them one by one and a last
    garbage collection took 40-70 ms of a one-changed-file run. Only ``check`` ends this way:
    it leaves no process and registers no exit handler (``verify``'s DataLoader workers, for
    one, are cleaned up by ``atexit``). In-process callers of :func:`main` keep the collector
    and the teardown."""
    witness = None
    if sys.argv[1:2] == ["check"]:
        # a short-lived process whose objects hold no cycles (see engine.collector_paused):
        # the collector stays off until it exits, rather than walking everything the run
        # allocated once when run_check re-enables it (45 ms after a one-file change in a
        # whole site-packages)
        gc.disable()
        witness = _fast_check(sys.argv[1:])
    from lintloader.cli.group import main

    try:
        main(prog_name=prog_name, obj=witness)
    except CheckDone as done:
        code = done.code if isinstance(done.code, int) else 1
        for stream in (sys.stdout, sys.stderr):
            # a closed pipe (`lintloader check | head`): nothing left to flush to
            with contextlib.suppress(OSError):
                stream.flush()
        if witness is not None:
            witness.store(code)
        os._exit(code)


def _fast_check(argv: list[str]) -> Witness | None:
    """Leave with the stored answer of ``check ARGS`` if it still holds (``cli/fast.py``);
    else a witness that may store this run's answer for the next one."""
    from lintloader.cli import fast

    code = fast.answer(argv)
    if code is not None:
        os._exit(code)
    from lintloader.cli.fast_record import Witness

    return Witness.watch(argv)


def __getattr__(name: str) -> Any:
    """``main`` and ``LAZY_COMMANDS`` from ``cli/group.py``, imported when first asked for."""
    if name in ("main", "LAZY_COMMANDS", "LazyGroup"):
        from lintloader.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    run()

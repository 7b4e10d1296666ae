"""How ``check`` ends, in a module of its own: the console script (``cli/main.py``) catches it
without importing the analysis, so that ``lintloader server`` answers the editor sooner."""

from __future__ import annotations


class CheckDone(SystemExit):
    """How ``check`` ends (a ``SystemExit`` with its exit code): the console script leaves
    the process at once on it (see :func:`lintloader.cli.main.run`)."""

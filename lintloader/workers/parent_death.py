"""Worker processes die with the process that started them.

A parse worker (a forked shard, a process-pool worker) whose parent is killed (the OOM killer,
a CI timeout's SIGKILL) has nobody to send its result to, and a pool worker waits for work
forever. On Linux each worker asks the kernel for SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)``, through ctypes), then checks that the parent did not die before
it asked. Elsewhere nothing changes (the forked path runs on Linux only).
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(parent_pid: int) -> None:
    """Called first thing in a worker whose parent is ``parent_pid``."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # no usable libc: the worker still ends with its work
        return
    if os.getppid() != parent_pid:  # the parent died before the request: nobody waits
        os._exit(1)

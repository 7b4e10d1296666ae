"""Whether a file's bytes hold a token: the one home of the byte search that decides which
files are worth parsing (``tokens.py`` asks it for every plain and whole-word token).

CPython's ``bytes.__contains__`` searches at about 2 GB/s on this kind of text; the C
library's ``memmem`` (glibc, musl, macOS and the BSDs have one) at 2-2.6 times that: over a
site-packages' 150 MB of Python, ``oader`` 79.5 -> 30.7 ms, ``_iterator`` 57.0 -> 23.4 ms,
``_shutdown_workers`` 34.4 -> 15.4 ms (glibc 2.36, docs/performance.md "Round 15, the byte
search"). It is reached through ``ctypes`` in the process's own namespace (``dlopen(NULL)``:
no library is looked up or loaded by a path, so nothing on disk chooses what runs). A call
through ``ctypes`` costs about a microsecond, more than ``bytes`` takes for a few KiB, so
smaller data is searched by ``bytes`` itself; so is everything where there is no ``memmem``
(Windows) or no ``ctypes``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

# the size from which ``memmem`` answers sooner than ``bytes``, call included (measured: 1.5
# against 1.8 µs at 2 KiB, 2.3 against 1.9 µs at 4 KiB, 5.6 against 1.6 µs at 8 KiB)
MEMMEM_MIN_SIZE = 4096

# memmem(haystack, its size, needle, its size): the address of the first occurrence, or None
_Memmem = Callable[[bytes, int, bytes, int], "int | None"]


@functools.cache
def c_memmem() -> _Memmem | None:
    """The C library's ``memmem``, its argument and result types declared; None where the
    process has none (loaded once per process; a forked child inherits it)."""
    try:
        import ctypes  # here: 2 ms of import that a warm run never needs

        function = ctypes.CDLL(None).memmem
    except (ImportError, OSError, AttributeError, TypeError):
        return None
    function.restype = ctypes.c_void_p
    function.argtypes = (ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t)
    found: _Memmem = function
    return found


def holds(data: bytes, token: bytes) -> bool:
    """Whether ``token`` (not empty) occurs in ``data``: ``token in data``, by ``memmem``
    where that is sooner."""
    if len(data) >= MEMMEM_MIN_SIZE and type(data) is bytes:
        memmem = c_memmem()
        if memmem is not None:
            return memmem(data, len(data), token, len(token)) is not None
    return token in data

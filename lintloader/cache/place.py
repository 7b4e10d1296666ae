"""Where the cache directory is and whose it is, with ``os`` alone: the warm fast path
(``cli/fast.py``) finds and trusts its stored run before anything else is imported.
``cache/files.py`` builds on these."""

from __future__ import annotations

import os


def default_cache_folder() -> str:
    """``$LINTLOADER_CACHE_DIR``, else ``$XDG_CACHE_HOME/lintloader``, else
    ``~/.cache/lintloader``."""
    override = os.environ.get("LINTLOADER_CACHE_DIR")
    if override:
        return override
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lintloader")


def foreign_problem(status: os.stat_result) -> str | None:
    """Why a cache directory with ``status`` could hold entries written by someone else
    (another user owns it, or others may write in it); None when only the user can."""
    if hasattr(os, "geteuid") and status.st_uid != os.geteuid():
        return f"owned by another user (uid {status.st_uid}); its entries are not trusted"
    if status.st_mode & 0o002:
        return "writable by every user; its entries are not trusted"
    if status.st_mode & 0o020:
        return "writable by its group; its entries are not trusted (chmod 700 it)"
    return None

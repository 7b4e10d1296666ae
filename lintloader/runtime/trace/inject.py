"""The temporary directory that hooks ``lintloader trace`` into every Python process: a
``sitecustomize.py`` that installs the hook and then runs the user's own ``sitecustomize`` (if
any), a copy of the hook module, and the run directory the processes write their records to.

Only the traced command's environment changes (``PYTHONPATH`` gains the directory in front);
nothing of the user's is edited.

The directory lives inside a private directory of the user's (mode 0700:
``$XDG_RUNTIME_DIR/lintloader-trace`` when that is the user's, else
``~/.cache/lintloader/trace``), never directly in the shared temporary directory: a process
that outlives the traced command keeps ``PYTHONPATH`` pointing at it after it is removed, and
no other user may re-create it there with their own ``sitecustomize.py``. The
``sitecustomize`` and the hook both refuse a directory that is not the user's alone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lintloader.runtime.trace import hook
from lintloader.trust.safe_file import write_atomic

HOOK_MODULE = "_lintloader_trace_hook"

SITECUSTOMIZE = f'''"""Written by lintloader trace: its hook, then the next sitecustomize."""


def _lintloader_trace() -> None:
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    uid = os.getuid()
    for directory in (here, os.path.dirname(here)):
        info = os.stat(directory)
        if info.st_uid != uid or info.st_mode & 0o022:
            sys.stderr.write(f"lintloader trace: hook not run: {{directory}} is not private\\n")
            return
    try:
        import {HOOK_MODULE}

        {HOOK_MODULE}.install()
    except Exception as exc:
        sys.stderr.write(f"lintloader trace: hook not installed: {{exc}}\\n")
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_lintloader_trace()
'''


@dataclass(frozen=True)
class Injection:
    """The hook directory and the run directory inside it."""

    root: Path
    max_passes: int | None = None

    @property
    def hook_dir(self) -> Path:
        return self.root / "hook"

    @property
    def run_dir(self) -> Path:
        return self.root / "records"

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with the hook directory first on ``PYTHONPATH`` and the run directory (and
        the pass limit) named."""
        env = dict(base)
        previous = env.get("PYTHONPATH")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.hook_dir), previous]))
        env[hook.RUN_DIR_ENV] = str(self.run_dir)
        env.pop(hook.MAX_PASSES_ENV, None)
        if self.max_passes is not None:
            env[hook.MAX_PASSES_ENV] = str(self.max_passes)
        return env

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class UntrustedDirectory(Exception):
    """The private parent directory exists but is not the user's alone (one line)."""


def private_parent(environ: dict[str, str] | None = None) -> Path:
    """The user's own 0700 directory that holds the traced runs' hook directories (created
    0700 whatever the umask); one owned by someone else, or that others can write, is
    refused."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR", "")
    base = Path(runtime) if runtime and _owned_private(Path(runtime)) else None
    parent = (
        base / "lintloader-trace"
        if base is not None
        else Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lintloader" / "trace"
    )
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = parent.lstat()
    if info.st_uid != os.getuid() or not parent.is_dir() or parent.is_symlink():
        raise UntrustedDirectory(f"{parent} is not a directory of this user's")
    if info.st_mode & 0o077:
        os.chmod(parent, 0o700)
    return parent


def _owned_private(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return path.is_dir() and info.st_uid == os.getuid() and not info.st_mode & 0o077


def prepare(max_passes: int | None = None) -> Injection:
    """A fresh private directory with the hook files and an empty run directory."""
    root = Path(tempfile.mkdtemp(prefix="run-", dir=private_parent()))
    injection = Injection(root, max_passes)
    injection.hook_dir.mkdir(mode=0o700)
    injection.run_dir.mkdir(mode=0o700)
    for directory in (injection.hook_dir, injection.run_dir):
        os.chmod(directory, 0o700)  # whatever the umask
    write_atomic(injection.hook_dir / "sitecustomize.py", SITECUSTOMIZE.encode(), private=True)
    hook_source = Path(hook.__file__).read_bytes()
    write_atomic(injection.hook_dir / f"{HOOK_MODULE}.py", hook_source, private=True)
    return injection

"""Asking an interpreter what its site directories and installed distributions are.

Another interpreter is asked through a subprocess running
:mod:`lintloader.scan.environment.site_query` (``-I -S``), so that scanned code is never
imported; the running one is asked in-process. A virtual environment's interpreter is never
run: its ``pyvenv.cfg`` names the standard library it starts with (``home``), which ``-I -S``
does not keep from running (``encodings``, ``os``), so the running interpreter works out its
site directories from its prefix and the version its ``pyvenv.cfg`` records
(docs/guarantees.md, "What --python runs").
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from lintloader.scan.environment import site_query
from lintloader.scan.environment.interpreter_memo import remember_answer, remembered_answer
from lintloader.scan.model import DiscoveryError
from lintloader.scan.read.stamps import stamp_of

if TYPE_CHECKING:  # the answer's shape (site_query.py runs without typing)
    from lintloader.scan.environment.site_query import Answer


def normalize_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def query_interpreter(
    python: str | None, dists: Iterable[str], cache_dir: Path | None = None
) -> Answer:
    """The site directories of ``python`` (default: this interpreter) and the files of the
    distributions ``dists``, as :mod:`lintloader.scan.environment.site_query` answers them.
    With ``cache_dir``,
    what another interpreter answered about its site directories (no distributions asked) is
    remembered there, keyed by the interpreter's stat; which of its candidate directories exist
    is checked again on every use."""
    wanted = list(dists)
    if is_running_interpreter(python):
        # the very code the subprocess would run, with what ``-S`` leaves in site.ENABLE_USER_SITE
        return site_query.answer(wanted, sys.executable, None)
    executable = python or sys.executable
    venv = venv_version(executable)
    if venv is not None:  # never run: answered here, from its prefix and its version
        return site_query.answer(wanted, executable, None, venv)
    remember = cache_dir is not None and not wanted and os.sep in executable
    stamp = interpreter_stamp(executable) if remember else None
    if cache_dir is not None and stamp is not None:
        answer = remembered_answer(cache_dir, stamp)
        if answer is not None:
            return answer
    answer = _ask_interpreter(executable, wanted)
    if cache_dir is not None and stamp is not None:
        remember_answer(cache_dir, stamp, answer)
    return answer


def venv_version(executable: str) -> str | None:
    """The Python version ("3.12.1") of the virtual environment ``executable`` belongs to, as its
    ``pyvenv.cfg`` records it (``version`` or ``version_info``); None when it belongs to none.
    ``DiscoveryError`` when its ``pyvenv.cfg`` records none."""
    bindir = os.path.dirname(os.path.abspath(executable))
    for folder in (bindir, os.path.dirname(bindir)):
        config = os.path.join(folder, "pyvenv.cfg")
        if os.path.isfile(config):
            found = _recorded_version(config)
            if found is None:
                raise DiscoveryError(
                    f"--python {executable}: {config} records no Python version; not running it"
                )
            return found
    return None


def _recorded_version(config: str) -> str | None:
    try:
        with open(config, encoding="utf-8", errors="replace") as stream:
            text = stream.read(64 * 1024)
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        value = value.strip()
        if key.strip() in ("version", "version_info") and re.fullmatch(r"3\.\d+(\.\S*)?", value):
            return value
    return None


def interpreter_stamp(executable: str) -> tuple[object, ...] | None:
    """What the answer about ``executable`` (a path) depends on besides the files of its
    standard library: its absolute path (the venv detection starts from it), the link and the
    file it resolves to, and the ``pyvenv.cfg`` files the venv detection looks for. None when
    it cannot be stat'ed."""
    path = os.path.abspath(executable)
    bindir = os.path.dirname(path)
    configs = [os.path.join(folder, "pyvenv.cfg") for folder in (bindir, os.path.dirname(bindir))]
    itself = (_stat_stamp(os.lstat, path), _stat_stamp(os.stat, path))
    if None in itself:
        return None
    return (path, *itself, *(_stat_stamp(os.stat, config) for config in configs))


def _stat_stamp(
    stat_call: Callable[[str], os.stat_result], path: str
) -> tuple[int, int, int, int] | None:
    try:
        status = stat_call(path)
    except OSError:
        return None
    return stamp_of(status)


def _ask_interpreter(executable: str, wanted: list[str]) -> Answer:
    """Run :mod:`lintloader.scan.environment.site_query` in ``executable`` (``-I -S``: no site
    hooks)."""
    import json
    import subprocess

    from lintloader.workers.process_group import interpreter_timeout, run_grouped

    source = Path(site_query.__file__).read_text(encoding="utf-8")
    timeout = interpreter_timeout()
    try:
        result = run_grouped([executable, "-I", "-S", "-c", source, json.dumps(wanted)], timeout)
    except OSError as exc:
        raise DiscoveryError(f"--python {executable}: cannot run it ({exc.strerror})") from None
    except subprocess.TimeoutExpired:
        raise DiscoveryError(
            f"--python {executable}: did not answer within {timeout:g} s; stopped it and "
            "its child processes"
        ) from None
    answer: object
    try:
        answer = json.loads(result.stdout)
    except ValueError:
        answer = None
    if not site_query.is_answer(answer):
        stderr = result.stderr.decode(errors="replace").strip().splitlines()
        why = stderr[-1] if stderr else f"exit code {result.returncode}, no usable answer"
        raise DiscoveryError(f"--python {executable}: not a usable Python ({why})")
    return answer


def is_running_interpreter(python: str | None) -> bool:
    """Whether ``python`` names the interpreter lintloader runs in (then it is asked directly:
    its own site hooks have already run, so asking it in-process executes nothing new)."""
    if not sys.executable:
        return False
    return python is None or os.path.abspath(python) == os.path.abspath(sys.executable)

"""One way for a test to run lintloader (as ruff's ``CliTest``): the real console script in a
subprocess, as a user runs it, with one set of flags and one environment, giving back stdout,
stderr and the exit status (``returncode``) of a ``subprocess.CompletedProcess``.

Every test that runs the CLI goes through :func:`run_cli` (or :func:`run_python` for ``python
-m ...`` in another checkout or interpreter; :func:`run_cli_forked` for many runs that are a
test's oracle or probe; :func:`run_scripts_forked` for fixture scripts run with plain Python);
a module adds its own defaults (``--no-cache``, a format) in a helper that calls it, never its
own ``subprocess.run``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path

from child_processes import run_once

REPO = Path(__file__).resolve().parent.parent
FORKED_CLI = Path(__file__).resolve().with_name("forked_cli.py")
# what a developer's shell may set that would change what the CLI prints (colours)
_UNSET = ("FORCE_COLOR", "NO_COLOR", "CLICOLOR_FORCE")


def lintloader_command(python: Path | None = None) -> list[str]:
    """The console script of the running environment (else ``python -m lintloader``); with
    ``python``, that interpreter's ``-m lintloader``."""
    if python is not None:
        return [str(python), "-m", "lintloader"]
    script = Path(sys.executable).parent / "lintloader"
    return [str(script)] if script.exists() else [sys.executable, "-m", "lintloader"]


def environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test process's environment without the colour switches, plus ``env``."""
    merged = {key: value for key, value in os.environ.items() if key not in _UNSET}
    merged.update(env or {})
    return merged


def keep_bytecode(environ: MutableMapping[str, str], folder: Path) -> None:
    """Where ``environ`` turns bytecode off (``PYTHONDONTWRITEBYTECODE``, as a sandbox may
    set), every command a test starts compiles lintloader's modules from source again: some
    0.3 s of CPU per CLI run, thousands of them a suite. Let the commands keep their bytecode
    in ``folder`` (``PYTHONPYCACHEPREFIX``, unless one is set: never beside the sources)."""
    if environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        environ.setdefault("PYTHONPYCACHEPREFIX", str(folder))


# what most of the commands the tests start import, slowest to compile first
HEAVY_IMPORTS = ("torch", "pytorch_lightning")


def warm_bytecode(folder: Path, modules: Sequence[str] = HEAVY_IMPORTS) -> list[str]:
    """Compile into ``folder`` (the ``PYTHONPYCACHEPREFIX`` of the run's commands) what
    importing ``modules`` compiles, in one process, where ``folder`` has no bytecode of their
    package yet: otherwise the first commands to import them (test_trace starts six at once)
    each compile them again. The modules it imported, none where all were there."""
    cold = []
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue  # not installed: the tests that need it skip
        source = Path(spec.origin).resolve()
        cached = folder / source.parent.relative_to(source.anchor)
        if not (cached / f"{source.stem}.{sys.implementation.cache_tag}.pyc").exists():
            cold.append(name)
    if cold:
        env = {"PYTHONPYCACHEPREFIX": str(folder)}
        run_python("-c", "; ".join(f"import {name}" for name in cold), env=env, timeout=300)
    return cold


def drop_gone_bytecode(folder: Path, temp: Path | None = None) -> None:
    """Remove from ``folder`` (a ``PYTHONPYCACHEPREFIX`` kept from run to run, which mirrors
    the sources' absolute folders) the bytecode of the folders under ``temp`` (the temporary
    folder) that are gone, two levels down (``/tmp/pytest-of-root/pytest-7``): earlier runs'
    copies of the checkout and scenes. The rest is kept."""
    temp = Path(temp or tempfile.gettempdir()).resolve()
    mirror = folder / temp.relative_to(temp.anchor)
    for level in (mirror, *(d for d in mirror.glob("*") if d.is_dir())):
        for kept in [d for d in level.glob("*") if d.is_dir()]:
            if not (temp / kept.relative_to(mirror)).exists():
                shutil.rmtree(kept, ignore_errors=True)


def beside_the_sources() -> dict[str, str]:
    """The environment for a command that writes bytecode where Python puts it by default,
    in ``__pycache__`` beside the source (``py_compile`` as a user runs it): without the
    folder :func:`keep_bytecode` gave the run's commands."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPYCACHEPREFIX"}


def run_cli(
    *args: str,
    cwd: Path | str = REPO,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    input: str | None = None,
    python: Path | None = None,
    umask: int = -1,
) -> subprocess.CompletedProcess[str]:
    """``lintloader ARGS`` in ``cwd``: ``env`` is added to the environment, ``input`` is
    stdin, ``python`` runs another interpreter's lintloader, ``umask`` the child's umask."""
    return _run([*lintloader_command(python), *args], cwd, env, timeout, input, umask)


def run_python(
    *args: str,
    cwd: Path | str = REPO,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    python: Path | str = sys.executable,
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` (``-m lintloader.dev regenerate``, ``-m pytest`` in a copy of the
    checkout, a fixture script) with the same environment as :func:`run_cli`."""
    return _run([str(python), *args], cwd, env, timeout, None, -1)


# what `check` and `fix` import when they run (the fix trial's libcst among them)
CLI_MODULES = ("lintloader.cli.group", "lintloader.cli.check", "lintloader.cli.fix")


def run_cli_forked(
    runs: Sequence[tuple[Sequence[str], Path | str]],
    preload: Sequence[str] = CLI_MODULES,
    timeout: float = 600,
) -> list[subprocess.CompletedProcess[str]]:
    """``lintloader ARGS`` in ``cwd`` for each ``(ARGS, cwd)`` of ``runs``, in order, each in
    a child forked from one process that imported ``preload`` first (tests/forked_cli.py): the
    console script's own code, a cold run, without an interpreter start and the imports each.
    For a test that runs many commands as its oracle or probe; the command a test is about
    runs through :func:`run_cli`."""
    spec = [{"cwd": str(c), "args": list(a)} for a, c in runs]
    results = _forked(preload, spec, None, timeout)
    return [
        subprocess.CompletedProcess(["lintloader", *a], r["code"], r["stdout"], r["stderr"])
        for (a, _), r in zip(runs, results, strict=True)
    ]


def run_scripts_forked(
    runs: Sequence[tuple[Path, Sequence[str]]],
    preload: Sequence[str] = ("torch",),
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
) -> list[subprocess.CompletedProcess[str]]:
    """``python SCRIPT ARGS`` in the script's folder for each ``(SCRIPT, ARGS)`` of ``runs``,
    in order, each in a child forked from one process that imported ``preload`` first
    (tests/forked_cli.py), ``env`` added to its environment: fixture scripts that a test runs
    with real DataLoader workers, torch imported once, not once a script."""
    spec = [{"cwd": str(s.parent), "args": list(a), "script": str(s)} for s, a in runs]
    results = _forked(preload, spec, env, timeout)
    return [
        subprocess.CompletedProcess(["python", str(s), *a], r["code"], r["stdout"], r["stderr"])
        for (s, a), r in zip(runs, results, strict=True)
    ]


def _forked(
    preload: Sequence[str],
    runs: list[dict[str, object]],
    env: Mapping[str, str] | None,
    timeout: float,
) -> list[dict]:
    spec = {"preload": list(preload), "runs": runs}
    done = run_python(str(FORKED_CLI), json.dumps(spec), env=env, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"tests/forked_cli.py exited {done.returncode}: {done.stderr}")
    return [json.loads(line) for line in done.stdout.splitlines()]


def _run(
    command: list[str],
    cwd: Path | str,
    env: Mapping[str, str] | None,
    timeout: float,
    input: str | None,
    umask: int,
) -> subprocess.CompletedProcess[str]:
    # in a process group of its own, killed with whatever it started once it ends, times out
    # or is interrupted (tests/child_processes.py)
    return run_once(
        command, cwd=str(cwd), env=environment(env), input=input, timeout=timeout, umask=umask
    )

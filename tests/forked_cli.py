"""Run several ``lintloader`` commands from one process that imports once what they import:
each is the console script's own code (``lintloader.cli.main.run``) with its own arguments, in
a child forked from this process, in its own folder, with real worker processes; its exit
handlers (verify's shut its DataLoader workers down) run before it exits. Each run is still a
cold one: this process imports modules and runs nothing. Started by tests/harness.py's
``run_cli_forked`` (not a test module itself).

    python tests/forked_cli.py SPEC_JSON

SPEC_JSON: ``{"preload": [module, ...], "runs": [{"cwd": DIR, "args": [...]}, ...]}``. One
JSON line per run comes out, in order: ``{"code": n, "stdout": "...", "stderr": "..."}``.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import sys
import tempfile

from lintloader.cli.main import run


def _child(cwd: str, args: list[str], out: int, err: int) -> None:
    """The forked child: ``lintloader ARGS`` in ``cwd``; never returns."""
    code = 1
    try:
        os.chdir(cwd)
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.argv = ["lintloader", *args]
        run(prog_name="lintloader")
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run_forked(cwd: str, args: list[str]) -> dict[str, object]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(cwd, args, out.fileno(), err.fileno())
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        return {
            "code": os.waitstatus_to_exitcode(status),
            "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
        }


def main() -> None:
    spec = json.loads(sys.argv[1])
    for module in spec["preload"]:
        importlib.import_module(module)
    for one in spec["runs"]:
        print(json.dumps(run_forked(one["cwd"], one["args"])), flush=True)


if __name__ == "__main__":
    main()

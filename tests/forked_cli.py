"""Run several ``lintloader`` commands from one process that imports once what they import:
each is the console script's own code (``lintloader.cli.main.run``) with its own arguments, in
a child forked from this process, in its own folder, with real worker processes; its exit
handlers (verify's shut its DataLoader workers down) run before it exits. Each run is still a
cold one: this process imports modules and runs nothing. Started by tests/harness.py's
``run_cli_forked`` (not a test module itself).

    python tests/forked_cli.py SPEC_JSON

SPEC_JSON: ``{"preload": [module, ...], "runs": [{"cwd": DIR, "args": [...]}, ...]}``. One
JSON line per run comes out, in order: ``{"code": n, "stdout": "...", "stderr": "..."}``. A run
with ``"script": PATH`` is ``python PATH ARGS`` instead (a fixture script, no lintloader): its
``__main__``, its folder first on ``sys.path``, an uncaught exception's traceback on stderr
and exit status 1, as the interpreter gives them (tests/harness.py's ``run_scripts_forked``).
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import runpy
import sys
import tempfile
import traceback

from lintloader.cli.main import run


def _child(cwd: str, args: list[str], out: int, err: int, script: str | None) -> None:
    """The forked child: ``lintloader ARGS`` (or ``python SCRIPT ARGS``) in ``cwd``; never
    returns."""
    code = 1
    try:
        os.chdir(cwd)
        os.dup2(out, 1)
        os.dup2(err, 2)
        if script is None:
            sys.argv = ["lintloader", *args]
            run(prog_name="lintloader")
        else:
            sys.argv = [script, *args]
            sys.path[0] = os.path.dirname(os.path.abspath(script))
            runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # what the interpreter prints for an uncaught exception
        traceback.print_exc()
    finally:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run_forked(cwd: str, args: list[str], script: str | None = None) -> dict[str, object]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(cwd, args, out.fileno(), err.fileno(), script)
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
        print(json.dumps(run_forked(one["cwd"], one["args"], one.get("script"))), flush=True)


if __name__ == "__main__":
    main()

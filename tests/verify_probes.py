"""Run ``lintloader verify ARGS`` in each of several folders from one process that imports
torch once: each run is the console script's own code (``lintloader.cli.main.run``) in a child
forked from this process, in its folder, with its own modules and real DataLoader workers; its
exit handlers (which shut the workers down) run before it exits. Used by
tests/test_fix_proof.py as a subprocess (not a test module itself).

    python tests/verify_probes.py ARGS_JSON FOLDER...

One JSON line per folder comes out, in order: ``{"code": n, "stdout": "...", "stderr": "..."}``.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import tempfile

import torch.utils.data  # noqa: F401 (imported once, before the forks)

from lintloader.cli.main import run


def _child(folder: str, args: list[str], out: int, err: int) -> None:
    """The forked child: ``lintloader ARGS`` in ``folder``; never returns."""
    code = 1
    try:
        os.chdir(folder)
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


def verify_in(folder: str, args: list[str]) -> dict[str, object]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(folder, args, out.fileno(), err.fileno())
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        return {
            "code": os.waitstatus_to_exitcode(status),
            "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
        }


def main() -> None:
    args = json.loads(sys.argv[1])
    for folder in sys.argv[2:]:
        print(json.dumps(verify_in(folder, args)), flush=True)


if __name__ == "__main__":
    main()

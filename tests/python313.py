"""Python 3.13 on this machine, to compare with: its own ``ast`` needs nothing installed.

Found as ``$LINTLOADER_TEST_PYTHON313``, ``python3.13`` on PATH, or a pyenv version; the tests
that need it skip, saying so, when there is none.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import textwrap
from pathlib import Path

from conftest import REPO

from lintloader.summary.model import FileSummary

# Summaries of the files named on the command line, built by the running interpreter's ast,
# pickled to argv[1]; prints which of libcst and click it imported (none are needed).
SUMMARIZE = textwrap.dedent(
    """
    import pickle, sys
    from lintloader.summary.summarize import summarize_source
    paths = sys.argv[2:]
    out = {p: summarize_source(open(p, "rb").read(), p, "m") for p in paths}
    with open(sys.argv[1], "wb") as handle:
        pickle.dump(out, handle)
    print(sorted(m for m in sys.modules if m.startswith(("libcst", "click"))))
    """
)


def find_python313() -> str | None:
    """A working Python 3.13 interpreter, if this machine has one."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [
        os.environ.get("LINTLOADER_TEST_PYTHON313"),
        shutil.which("python3.13"),
        *sorted(str(p) for p in pyenv.glob("3.13*/bin/python3.13")),
    ]
    for candidate in filter(None, candidates):
        done = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 13))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.stdout.strip() == "True":
            return candidate
    return None


def summaries_under(python: str, paths: list[str], scratch: Path) -> dict[str, FileSummary]:
    """``python``'s own summaries of ``paths`` (this checkout's summary modules, its ``ast``)."""
    result = scratch / "summaries.pickle"
    done = subprocess.run(
        [python, "-c", SUMMARIZE, str(result), *paths],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout  # its ast read them: no libcst needed
    with result.open("rb") as handle:
        return pickle.load(handle)

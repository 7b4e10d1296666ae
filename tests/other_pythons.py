"""Other Python interpreters on this machine, to compare with (3.13's own ``ast`` needs
nothing installed; a whole CLI run needs libcst and click, installed for it at test time).

Python X.Y is found as ``$LINTLOADER_TEST_PYTHONXY`` (``LINTLOADER_TEST_PYTHON313``),
``pythonX.Y`` on PATH, or a pyenv version; the tests that need one skip, saying so, when there
is none.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import textwrap
from pathlib import Path

from conftest import REPO, WHEEL_CACHE

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


def find_python(version: str = "3.13") -> str | None:
    """A working Python ``version`` ("3.13") interpreter, if this machine has one."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [
        os.environ.get("LINTLOADER_TEST_PYTHON" + version.replace(".", "")),
        shutil.which(f"python{version}"),
        *sorted(str(p) for p in pyenv.glob(f"{version}.*/bin/python{version}")),
    ]
    wanted = tuple(int(part) for part in version.split("."))
    for candidate in filter(None, candidates):
        done = subprocess.run(
            [candidate, "-c", f"import sys; print(sys.version_info[:2] == {wanted})"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.stdout.strip() == "True":
            return candidate
    return None


_PACKAGES = (
    *("-c", str(REPO / "constraints.txt")),
    *("libcst>=1.4", "click>=8.0", "tomli>=1.1; python_version < '3.11'"),
)


def with_cli(python: str, version: str) -> dict[str, str] | str:
    """The environment that runs ``python -m lintloader`` from this checkout, with libcst and
    click installed for ``python`` (once, into the test cache, from the package index); or
    why not."""
    target = WHEEL_CACHE / f"python{version}-cli"
    env = {**os.environ, "PYTHONPATH": f"{target}{os.pathsep}{REPO}"}
    probe = [python, "-c", "import libcst, click, lintloader.cli.main"]
    if subprocess.run(probe, env=env, capture_output=True, check=False).returncode == 0:
        return env
    shutil.rmtree(target, ignore_errors=True)
    install = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--target", str(target), *_PACKAGES],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if install.returncode != 0:
        return f"cannot install libcst and click for Python {version}: {install.stderr[-300:]}"
    return env


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

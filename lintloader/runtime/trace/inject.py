"""The temporary directory that hooks ``lintloader trace`` into every Python process: a
``sitecustomize.py`` that installs the hook and then runs the user's own ``sitecustomize`` (if
any), a copy of the hook module, and the run directory the processes write their records to.

Only the traced command's environment changes (``PYTHONPATH`` gains the directory in front);
nothing of the user's is edited.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lintloader.runtime.trace import hook

HOOK_MODULE = "_lintloader_trace_hook"

SITECUSTOMIZE = f'''"""Written by lintloader trace: its hook, then the next sitecustomize."""


def _lintloader_trace() -> None:
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
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


def prepare(max_passes: int | None = None) -> Injection:
    """A fresh temporary directory with the hook files and an empty run directory."""
    injection = Injection(Path(tempfile.mkdtemp(prefix="lintloader-trace-")), max_passes)
    injection.hook_dir.mkdir()
    injection.run_dir.mkdir()
    (injection.hook_dir / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    hook_source = Path(hook.__file__).read_text(encoding="utf-8")
    (injection.hook_dir / f"{HOOK_MODULE}.py").write_text(hook_source, encoding="utf-8")
    return injection

"""Input the user controls must not turn into an internal error (issue 28, bugs): a valid
class hierarchy 600 deep, and ``LINTLOADER_INTERPRETER_TIMEOUT=1e309``. Real CLI runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from trust_support import CLI

DEPTH = 600  # beyond Python's default recursion limit (1000 frames, a few per class)


def deep_hierarchy() -> str:
    lines = ["class C0:", "    def reset(self):", "        self.loader._iterator = None", ""]
    for index in range(1, DEPTH):
        lines += [f"class C{index}(C{index - 1}):", "    pass", ""]
    lines += [
        f"def train(model: C{DEPTH - 1}, loader):",
        "    for epoch in range(3):",
        "        model.reset()",
        "        for batch in loader:",
        "            pass",
        "",
    ]
    return "\n".join(lines)


def test_a_deep_class_hierarchy_is_analyzed(tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_text(deep_hierarchy())
    result = subprocess.run(
        [*CLI, "check", "deep.py", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "internal error" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr
    assert "LL105" in result.stdout and "C0.reset" in result.stdout


def test_an_endless_interpreter_timeout_is_a_long_one(tmp_path: Path) -> None:
    """Another interpreter (not the running one) is asked, with the timeout at infinity."""
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    for value in ("1e309", "inf", "1e300"):
        result = subprocess.run(
            [*CLI, "check", "--site-packages", "--python", str(env_dir / "bin" / "python"),
             "--no-cache"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "LINTLOADER_INTERPRETER_TIMEOUT": value},
        )  # fmt: skip
        assert result.returncode == 0, (value, result.stderr)
        assert "internal error" not in result.stderr

"""The GitHub Action (action.yml) runs as GitHub would run it: its steps' scripts, with the
expressions filled in, install lintloader from this repository at its commit into a fresh
venv, write SARIF with a result, and annotate (exit 1) a project with a finding."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
BUG = "class Fetcher:\n    def __iter__(self):\n        self.loader._iterator = None\n"


def action() -> dict:
    return yaml.safe_load((REPO / "action.yml").read_text())


def fill(text: str, values: dict[str, str]) -> str:
    """Replace ``${{ name }}`` expressions (inputs.*, github.*) as the runner would."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        if name not in values:
            raise AssertionError(f"expression {name!r} has no value in this test")
        return values[name]

    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", value, text)


def condition_holds(condition: str, values: dict[str, str]) -> bool:
    """The conditions this action uses: ``inputs.X != ''`` joined by ``&&``, ``always()``,
    ``hashFiles(inputs.X) != ''``."""
    for part in (p.strip() for p in condition.split("&&")):
        if part == "always()":
            continue
        hashed = re.fullmatch(r"hashFiles\((inputs\.[\w-]+)\) != ''", part)
        if hashed:
            if not Path(values["cwd"], values[hashed.group(1)]).is_file():
                return False
            continue
        compared = re.fullmatch(r"(inputs\.[\w-]+) != ''", part)
        assert compared, f"condition {part!r} not understood by this test"
        if values[compared.group(1)] == "":
            return False
    return True


def test_the_action_declares_a_composite_install_check_and_upload() -> None:
    spec = action()
    assert spec["runs"]["using"] == "composite"
    names = [step["name"] for step in spec["runs"]["steps"]]
    assert names == ["Install lintloader", "lintloader", "Upload SARIF"]
    assert spec["runs"]["steps"][-1]["uses"].startswith("github/codeql-action/upload-sarif@")


def venv_with_pip(venv: Path) -> None:
    """A fresh venv with pip in it and nothing else, as a runner's Python has: this
    environment's pip copied in, compiled (``python -m venv`` would have ensurepip unpack and
    compile its own, some 2.5 s of CPU)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    query = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    python = str(venv / "bin" / "python")
    site = Path(subprocess.run([python, "-c", query], capture_output=True, text=True,
                               check=True).stdout.strip())  # fmt: skip
    spec = importlib.util.find_spec("pip")
    assert spec is not None and spec.origin is not None, "this environment has no pip"
    pip = Path(spec.origin).parent
    for source in (pip, *pip.parent.glob("pip-*.dist-info")):
        shutil.copytree(source, site / source.name, symlinks=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to install from a commit")
def test_the_action_steps_run_as_written(tmp_path: Path) -> None:
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
    ).stdout.strip()
    if not sha:
        pytest.skip("the checkout has no commit to install from")
    venv = tmp_path / "venv"
    venv_with_pip(venv)
    project = tmp_path / "project"
    project.mkdir()
    (project / "fetch.py").write_text(BUG)
    spec = action()
    values = {f"inputs.{k}": str(v.get("default", "")) for k, v in spec["inputs"].items()}
    values.update(
        {
            "github.action_repository": "lintloader/lintloader",
            "github.action_ref": sha,
            "cwd": str(project),
        }
    )
    values["inputs.source"] = f"lintloader @ git+file://localhost{REPO}@{sha}"
    environment = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    environment.pop("PYTHONPATH", None)
    codes = {}
    for step in spec["runs"]["steps"]:
        if "run" not in step or not condition_holds(step.get("if", "always()"), values):
            continue
        step_env = {k: fill(str(v), values) for k, v in step.get("env", {}).items()}
        done = subprocess.run(
            ["bash", "-e", "-c", fill(step["run"], values)],
            cwd=project, env={**environment, **step_env},
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        codes[step["name"]] = (done.returncode, done.stdout, done.stderr)
    assert codes["Install lintloader"][0] == 0, codes["Install lintloader"][2][-2000:]
    installed = (venv / "bin" / "lintloader").exists()
    assert installed, "the install step did not put lintloader on PATH"
    sarif = json.loads((project / values["inputs.sarif"]).read_text())
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["LL101"]
    check_code, annotations, _ = codes["lintloader"]
    assert check_code == 1 and annotations.startswith("::error file=fetch.py,line=3,col=9")
    assert condition_holds(spec["runs"]["steps"][-1]["if"], values)  # the upload would run


HOSTILE_NAMES = [
    "x$(id>PWNED-dollar).py",
    "y`id>PWNED-backtick`.py",
    'q\'"$(id>PWNED-quote)".py',
    "*.py",
    "-starts-with-dash.py",
]


def run_check_steps(spec: dict, values: dict[str, str], cwd: Path) -> dict[str, tuple]:
    """The action's check step, as the runner runs them, with the test's own lintloader."""
    bindir = str(Path(sys.executable).parent)
    environment = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    codes = {}
    for step in spec["runs"]["steps"]:
        if step["name"] != "lintloader":
            continue
        step_env = {k: fill(str(v), values) for k, v in step.get("env", {}).items()}
        done = subprocess.run(
            ["bash", "-e", "-c", fill(step["run"], values)],
            cwd=cwd, env={**environment, **step_env},
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        codes[step["name"]] = (done.returncode, done.stdout, done.stderr)
    return codes


@pytest.mark.parametrize("separator", [" ", "\n"])
@pytest.mark.skipif(
    not (Path(sys.executable).parent / "lintloader").exists(), reason="no lintloader script"
)
def test_hostile_inputs_are_data_never_shell_code(tmp_path: Path, separator: str) -> None:
    names = [*HOSTILE_NAMES, *(["with space.py"] if separator == "\n" else [])]
    for name in names:
        (tmp_path / name).write_text(BUG)
    (tmp_path / "ignored.py").write_text(BUG)  # what `*.py` would add if it were expanded
    spec = action()
    values = {
        "inputs.src": separator.join(names),
        "inputs.args": "--min-severity info $(id>PWNED-args) `id>PWNED-args2`",
        "inputs.sarif": "out $(id>PWNED-sarif).sarif",
    }
    codes = run_check_steps(spec, values, tmp_path)
    assert sorted(p.name for p in tmp_path.glob("PWNED*")) == []
    # the stray words of args reach lintloader as paths, which do not exist: one error each
    assert codes["lintloader"][0] == 2, codes["lintloader"]
    assert "$(id>PWNED-args)" in codes["lintloader"][2]
    values["inputs.args"] = "--min-severity info"
    codes = run_check_steps(spec, values, tmp_path)
    assert sorted(p.name for p in tmp_path.glob("PWNED*")) == []
    sarif = json.loads((tmp_path / values["inputs.sarif"]).read_text())
    uris = sorted(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    )
    assert len(uris) == len(names) and not any("ignored" in uri for uri in uris)
    check_code, annotations, errors = codes["lintloader"]
    assert check_code == 1, errors
    files = sorted(re.findall(r"^::error file=([^,]*),", annotations, re.MULTILINE))
    assert len(files) == len(names) and "ignored.py" not in files

"""Issue 14, shape 6: package B subclasses package A's trainer and overrides the method A's epoch
loop calls; ``check --site-packages B`` looks A's base class up as context, reaches the override
from A's loop, and reports the finding in B (never in A, which was not asked for); with both
given, the finding is in B too (the chain enters B through the override)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, run_cli

TREE = FIXTURES / "check" / "cross_dist"


def venv_with(tmp_path: Path, packages: dict[str, str]) -> Path:
    """A venv (no pip) whose site-packages holds copies of ``packages`` (dist name -> package
    folder of TREE), each with a minimal .dist-info and RECORD, like installed distributions."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                               check=True).stdout.strip())  # fmt: skip
    for dist, folder in packages.items():
        names = []
        for file in sorted((TREE / folder).rglob("*.py")):
            relative = file.relative_to(TREE)
            (site / relative).parent.mkdir(parents=True, exist_ok=True)
            (site / relative).write_bytes(file.read_bytes())
            names.append(relative.as_posix())
        info = site / f"{dist}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        (info / "RECORD").write_text("".join(f"{n},,\n" for n in names))
    return python


def check(python: Path, cwd: Path, *dists: str) -> list[dict]:
    args = ("check", "--site-packages", *dists, "--python", str(python), "--no-cache")
    result = run_cli(*args, "--min-severity", "info", "--output-format", "json", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def by_code(findings: list[dict]) -> dict[str, dict]:
    assert len({f["code"] for f in findings}) == len(findings), findings
    return {f["code"]: f for f in findings}


def test_override_in_b_is_reached_from_a_loop_and_reported_in_b(tmp_path: Path) -> None:
    python = venv_with(tmp_path, {"basetrain": "basetrain", "evalplug": "evalplug"})
    found = by_code(check(python, tmp_path, "evalplug"))
    assert set(found) == {"LL101", "LL103", "LL202"}
    assert all("site-packages/evalplug/" in f["path"] for f in found.values())
    finding = found["LL202"]
    assert finding["severity"] == "warning"
    assert finding["path"].endswith("site-packages/evalplug/trainers.py")
    assert finding["line"] == 10  # PluginTrainer.get_eval_dataloader's DataLoader(...)
    functions = [hop["function"] for hop in finding["chain"]]
    assert functions == [
        "Trainer.train",  # the loop header
        "Trainer.train",  # the call in it
        "Trainer.evaluate",
        "PluginTrainer.get_eval_dataloader",
    ]
    assert [hop["verb"] for hop in finding["chain"]] == ["loop", "calls", "calls", "builds"]
    assert finding["chain"][0]["path"].endswith("site-packages/basetrain/trainer.py")
    assert finding["fixes"] == []  # its fixers would edit A's file
    reset = found["LL101"]
    assert reset["severity"] == "error"
    assert reset["path"].endswith("site-packages/evalplug/fetchers.py") and reset["line"] == 10
    assert [h["function"] for h in reset["chain"]] == [
        "Fetcher.__iter__",
        "RestartingFetcher.prepare",
    ]


def test_a_alone_and_both_together(tmp_path: Path) -> None:
    python = venv_with(tmp_path, {"basetrain": "basetrain", "evalplug": "evalplug"})
    assert check(python, tmp_path, "basetrain") == []
    both = by_code(check(python, tmp_path, "basetrain", "evalplug"))
    assert both["LL202"]["path"].endswith("site-packages/evalplug/trainers.py")  # the override
    assert both["LL202"]["chain"][0]["path"].endswith("site-packages/basetrain/trainer.py")
    assert both["LL101"]["path"].endswith("site-packages/evalplug/fetchers.py")


def test_without_a_installed_there_is_nothing_to_reach(tmp_path: Path) -> None:
    python = venv_with(tmp_path, {"evalplug": "evalplug"})
    assert [f for f in check(python, tmp_path, "evalplug") if f["severity"] != "info"] == []


def test_a_changed_base_is_seen_by_a_warm_run(tmp_path: Path) -> None:
    """B's files are unchanged, A's base class now caches its loader: a warm run must not
    replay the old finding (the replay key covers the scanned files, not the context)."""
    python = venv_with(tmp_path, {"basetrain": "basetrain", "evalplug": "evalplug"})
    cache = tmp_path / "cache"
    args = ("check", "--site-packages", "evalplug", "--python", str(python))
    args += ("--cache-dir", str(cache), "--output-format", "json")
    first = json.loads(run_cli(*args, cwd=tmp_path).stdout)
    assert {f["code"] for f in first} >= {"LL101", "LL202"}
    site = next((tmp_path / "venv").rglob("site-packages/basetrain/fetching.py"))
    site.write_text(site.read_text().replace("self.prepare()\n", "pass\n"))
    second = json.loads(run_cli(*args, cwd=tmp_path).stdout)
    assert "LL101" not in {f["code"] for f in second}

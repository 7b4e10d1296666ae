"""What a user reads, through the real CLI: the command list in ``lintloader --help`` is whole
(no summary cut at an abbreviation's full stop) and says what the commands find and fix (the
waste, not only resets), and every JSON finding links to the page that explains it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import FIXTURES, run_cli


def test_the_command_list_is_whole_and_names_the_waste() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    commands = done.stdout.split("Commands:", 1)[1]
    rows = dict(re.findall(r"^  (\w+)\s+(.+)$", commands, re.MULTILINE))
    assert set(rows) == {"check", "clean", "fix", "plot", "rule", "server", "trace", "verify"}
    assert not [name for name, text in rows.items() if text.endswith("...")], rows
    assert "worker pools" in rows["check"]
    assert "iterator resets" not in rows["check"] + rows["fix"]
    assert rows["rule"] == "Show a rule's documentation, or list the rules."


def test_a_json_finding_links_its_rule_page(tmp_path: Path) -> None:
    done = run_cli(
        "check",
        "--no-cache",
        "--output-format",
        "json",
        ".",
        cwd=FIXTURES / "check" / "lightning150",
    )
    [finding] = json.loads(done.stdout)
    assert finding["url"] == (
        "https://github.com/lintloader/lintloader/blob/main/docs/rules/LL101.md"
    )
    (tmp_path / "broken.py").write_text("loader = DataLoader(data, num_workers=2\n")
    broken = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    [parse_error] = json.loads(broken.stdout)
    assert parse_error["code"] == "LL000"
    assert parse_error["url"].endswith("/docs/guarantees.md#a-bad-file-never-stops-a-run")

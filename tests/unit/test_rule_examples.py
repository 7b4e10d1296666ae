"""Fixit-style: every rule's inline VALID examples yield none of its findings and every INVALID
example yields at least one. Each example is written to a file and run through the engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from lintloader.finding.findings import Severity
from lintloader.pipeline.engine import CheckOptions, run_check
from lintloader.rules.registry import all_rules
from lintloader.scan.discover.paths import discover_paths
from lintloader.settings.config import Config

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

CASES = [
    (rule.code, kind, index, source)
    for rule in all_rules()
    for kind, examples in (("valid", rule.valid), ("invalid", rule.invalid))
    for index, source in enumerate(examples)
]


def codes_for(source: str, tmp_path: Path) -> list[str]:
    (tmp_path / "example.py").write_text(source)
    config = Config(min_severity=Severity.INFO)
    result = run_check(discover_paths([str(tmp_path)]), CheckOptions(config=config, jobs=1))
    return [f.code for f in result.findings]


@pytest.mark.enumerates_rules
@pytest.mark.parametrize(
    ("code", "kind", "index", "source"), CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES]
)
def test_rule_example(code: str, kind: str, index: int, source: str, tmp_path: Path) -> None:
    found = codes_for(source, tmp_path)
    if kind == "valid":
        assert code not in found
    else:
        assert code in found


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("rule", all_rules(), ids=[r.code for r in all_rules()])
def test_rule_is_documented_in_ruff_style(rule) -> None:
    for section in ("### What it does", "### Why is this bad?", "### Example", "### Fix safety"):
        assert section in rule.doc, f"{rule.code} lacks {section!r}"
    assert rule.valid and rule.invalid, f"{rule.code} lacks VALID or INVALID examples"
    assert rule.name and rule.summary

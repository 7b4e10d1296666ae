"""``--output-format sarif``: SARIF 2.1.0, as GitHub code scanning and other viewers read it.

One run; ``tool.driver.rules`` holds every rule (id, name, descriptions, the rule's doc as help,
default level from its severity). A result's location is the finding's; its chain becomes one
``codeFlows[].threadFlows[]`` whose locations are the hops, so a viewer steps through every call
down to the reset; resets also reached from the same line are ``relatedLocations``. Paths inside
``context.root`` are relative URIs against ``%SRCROOT%``; others are absolute ``file://`` URIs.
``partialFingerprints["lintloaderChain/v1"]`` hashes the rule, file, root function and reset but
no line number, so a finding keeps its identity when code above it moves.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from lintloader import DOCS_URL, __version__
from lintloader.finding.findings import PARSE_ERROR_CODE, Finding, Hop, Severity, documentation_url
from lintloader.finding.fix_safety import fix_text, safety_of
from lintloader.report.context import ReportContext
from lintloader.rules.base import Rule
from lintloader.rules.registry import all_rules
from lintloader.suppress.unused_noqa import CODE as UNUSED_NOQA

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
INFORMATION_URI = f"{DOCS_URL}/README.md"
FINGERPRINT_KEY = "lintloaderChain/v1"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
PARSE_ERROR_RULE = {
    "id": PARSE_ERROR_CODE,
    "name": "unanalyzable-file",
    "shortDescription": {"text": "a file that could not be read or parsed"},
    "fullDescription": {
        "text": "A file that could not be read, decoded or parsed; it was left out of the analysis "
        "(chains through it are not seen)."
    },
    "help": {"text": "Fix the file (or exclude it); lintloader analyzes what it can parse."},
    "defaultConfiguration": {"level": "error"},
}
UNUSED_NOQA_RULE = {
    "id": UNUSED_NOQA,
    "name": "unused-noqa",
    "shortDescription": {"text": "a `# noqa: LLxxx` that suppresses nothing"},
    "fullDescription": {
        "text": "A `# noqa` code that suppresses no finding on its line or statement (on by "
        "default, as flake8-noqa's NQA102; ruff's RUF100)."
    },
    "help": {"text": "Remove the code from the comment; `lintloader check --fix` does."},
    "defaultConfiguration": {"level": "warning"},
}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return json.dumps(sarif_log(findings, context), indent=2) + "\n"


def sarif_log(findings: Sequence[Finding], context: ReportContext) -> dict[str, Any]:
    root = os.path.abspath(context.root)
    index = {rule.code: position for position, rule in enumerate(all_rules())}
    index[PARSE_ERROR_CODE] = len(all_rules())
    index[UNUSED_NOQA] = len(all_rules()) + 1
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "lintloader",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [
                            *map(rule_descriptor, all_rules()),
                            PARSE_ERROR_RULE,
                            UNUSED_NOQA_RULE,
                        ],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": Path(root).as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": unique_fingerprints([result(f, root, index) for f in findings]),
            }
        ],
    }


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "helpUri": documentation_url(rule.code),
        "fullDescription": {"text": what_it_does(rule.doc) or rule.summary},
        "help": {"text": rule.doc.strip(), "markdown": rule.doc.strip()},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": ["pytorch", "dataloader", "performance"],
            "fixSafety": fix_text(rule.fixes),
        },
    }


def what_it_does(doc: str) -> str:
    """The paragraph under '### What it does', on one line."""
    match = re.search(r"^### What it does\s*\n(.*?)(?:\n\s*\n|\n###|\Z)", doc, re.S | re.M)
    return " ".join(match.group(1).split()) if match else ""


def result(finding: Finding, root: str, index: dict[str, int]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "ruleId": finding.code,
        "level": LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [location(finding.path, finding.line, finding.column, root, finding)],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(finding)},
    }
    if finding.code in index:
        data["ruleIndex"] = index[finding.code]
    if finding.chain:
        hops = [thread_location(hop, root) for hop in finding.chain]
        data["codeFlows"] = [{"threadFlows": [{"locations": hops}]}]
    if finding.also:
        data["relatedLocations"] = [
            {
                "id": number,
                **location(hop.path, hop.line, hop.column, root),
                "message": {"text": f"{hop.verb or 'also reaches'} {hop.action} in {hop.function}"},
            }
            for number, hop in enumerate(finding.also, start=1)
        ]
    properties: dict[str, Any] = {}
    if finding.cell:
        properties["cell"] = finding.cell
    if finding.advisory:
        properties["advisory"] = finding.advisory.to_json()
    if finding.fixes:
        properties["fixSafety"] = [entry.to_json() for entry in safety_of(finding.fixes)]
    if properties:
        data["properties"] = properties
    return data


def location(
    path: str, line: int, column: int, root: str, finding: Finding | None = None
) -> dict[str, Any]:
    region: dict[str, int] = {"startLine": max(line, 1), "startColumn": max(column, 1)}
    if (
        finding is not None
        and finding.end_line >= line
        and (finding.end_line > line or finding.end_column > column)
    ):
        region["endLine"] = finding.end_line
        region["endColumn"] = max(finding.end_column, 1)
    return {"physicalLocation": {"artifactLocation": artifact(path, root), "region": region}}


def artifact(path: str, root: str) -> dict[str, str]:
    absolute = os.path.abspath(os.path.join(root, path))
    if absolute == root or not absolute.startswith(root.rstrip(os.sep) + os.sep):
        return {"uri": Path(absolute).as_uri()}
    relative = PurePosixPath(*Path(os.path.relpath(absolute, root)).parts)
    return {"uri": quote(str(relative)), "uriBaseId": SRCROOT}


def thread_location(hop: Hop, root: str) -> dict[str, Any]:
    return {
        "location": {
            **location(hop.path, hop.line, hop.column, root),
            "message": {"text": f"{hop.function}: {hop.action}"},
        },
        "properties": {"confidence": hop.confidence.label},
    }


def unique_fingerprints(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Two results with the same fingerprint (the same call twice in one function) get ``:2``,
    ``:3``... in order of appearance."""
    seen: dict[str, int] = {}
    for item in results:
        prints = item["partialFingerprints"]
        count = seen[prints[FINGERPRINT_KEY]] = seen.get(prints[FINGERPRINT_KEY], 0) + 1
        if count > 1:
            prints[FINGERPRINT_KEY] += f":{count}"
    return results


def fingerprint(finding: Finding) -> str:
    first = finding.chain[0] if finding.chain else None
    last = finding.chain[-1] if finding.chain else None
    parts = [
        finding.code,
        finding.path.replace(os.sep, "/"),
        first.function if first else "",
        first.action if first else "",
        f"{last.function}:{last.action}" if last else finding.message,
    ]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()

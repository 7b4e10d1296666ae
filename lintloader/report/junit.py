"""``--output-format junit``: JUnit XML as CI test-report views read it, as ruff writes it:
one ``testsuite`` per file, one ``testcase`` per finding (``name`` the code and place,
``classname`` the file), each with a ``failure`` carrying the message and the chain. A run
without findings is one passing test case, so the report is never empty."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import groupby
from xml.etree import ElementTree

from lintloader.finding.findings import Finding
from lintloader.report.context import ReportContext
from lintloader.report.text import render as render_text

# characters XML 1.0 cannot hold, even escaped: each becomes U+FFFD
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    suites = ElementTree.Element(
        "testsuites",
        name="lintloader",
        tests=str(max(len(findings), 1)),
        failures=str(len(findings)),
    )
    if not findings:
        suite = ElementTree.SubElement(suites, "testsuite", name="lintloader", tests="1")
        suite.set("failures", "0")
        ElementTree.SubElement(suite, "testcase", name="No findings", classname="lintloader")
    for path, group in groupby(findings, key=lambda finding: finding.path):
        cases = list(group)
        suite = ElementTree.SubElement(suites, "testsuite", name=_xml(path), tests=str(len(cases)))
        suite.set("failures", str(len(cases)))
        for finding in cases:
            suite.append(_case(finding, context))
    ElementTree.indent(suites)
    body = ElementTree.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _case(finding: Finding, context: ReportContext) -> ElementTree.Element:
    case = ElementTree.Element(
        "testcase", name=_xml(f"{finding.code} {finding.place}"), classname=_xml(finding.path)
    )
    case.set("line", str(finding.line))
    failure = ElementTree.SubElement(
        case, "failure", message=_xml(finding.message), type=finding.severity.label
    )
    plain = ReportContext(color=False, show_chain=context.show_chain, root=context.root)
    failure.text = _xml(render_text([finding], plain))
    return case

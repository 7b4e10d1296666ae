"""``--output-format markdown``: for pull-request comments and job summaries, which GitHub
renders: a table of the findings, then each finding with its chain as a mermaid flowchart
(root -> hops -> sink, ``file:line`` on every node)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from lintloader.finding.findings import Finding
from lintloader.report.chain_graph import Node, also_nodes, chain_nodes
from lintloader.report.context import ReportContext
from lintloader.report.markdown_text import code_span, inline
from lintloader.text.wording import counted

_ESCAPES = {'"': "#quot;", "<": "#lt;", ">": "#gt;", "`": "#96;", "\n": " "}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    if not findings:
        return "## lintloader\n\nNo findings.\n"
    counts = Counter(f.severity.label for f in findings)
    totals = ", ".join(f"{counts[s]} {s}" for s in ("error", "warning", "info") if counts[s])
    rows = "".join(
        f"| [{index}](#finding-{index}) | `{finding.code}` | "
        f"{code_span(finding.place, cell=True)} | {inline(finding.message, cell=True)} |\n"
        for index, finding in enumerate(findings, start=1)
    )
    parts = [
        f"## lintloader: {counted(len(findings), 'finding')} ({totals})\n",
        "| | Code | Location | Message |\n| --- | --- | --- | --- |\n" + rows,
        *(_finding(index, finding) for index, finding in enumerate(findings, start=1)),
    ]
    return "\n".join(parts)


def _finding(index: int, finding: Finding) -> str:
    lines = [
        f'<a id="finding-{index}"></a>',
        f"### {index}. `{finding.code}` [{finding.severity.label}] {code_span(finding.place)}",
        "",
        inline(finding.message),
        "",
        *([f"> **Advisory:** {inline(finding.advisory.message)}", ""] if finding.advisory else []),
        "```mermaid",
        *flowchart(finding),
        "```",
    ]
    return "\n".join(lines) + "\n"


def flowchart(finding: Finding) -> list[str]:
    """Mermaid lines: one node per hop, arrows in order, the sink highlighted, other resets
    the root reaches as dotted arrows."""
    nodes = chain_nodes(finding)
    lines = ["flowchart TD"]
    for number, node in enumerate(nodes):
        lines.append(f'    n{number}["{_label(node)}"]')
    for number in range(1, len(nodes)):
        arrow = "-. matched by name .->" if nodes[number].guessed else "-->"
        lines.append(f"    n{number - 1} {arrow} n{number}")
    also = zip(also_nodes(finding), finding.also, strict=True)
    for number, (node, hop) in enumerate(also, start=len(nodes)):
        lines.append(f'    n{number}["{_label(node)}"]')
        if hop.verb:  # LL202: another loop that also reaches the same construction
            lines.append(f"    n{number} -. also reaches .-> n{len(nodes) - 1}")
        else:
            lines.append(f"    n0 -. also reaches .-> n{number}")
    lines.append(f"    class n{len(nodes) - 1} sink")
    lines.append("    classDef sink fill:#fdd,stroke:#c00")
    return lines


def _label(node: Node) -> str:
    parts = [node.place, node.function, node.action]
    return "<br/>".join(_escape(p) for p in parts if p)


def _escape(text: str) -> str:
    return "".join(_ESCAPES.get(character, character) for character in text)

"""``--output-format dot``: Graphviz DOT, one cluster per finding with its chain
(root -> hops -> sink, ``file:line`` on every node); render with ``dot -Tsvg``."""

from __future__ import annotations

from collections.abc import Sequence

from lintloader.finding.findings import Finding
from lintloader.report.chain_graph import Node, also_nodes, chain_nodes
from lintloader.report.context import ReportContext

_COLORS = {"error": "#cc0000", "warning": "#c77c00", "info": "#2a6ebb"}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    lines = [
        "digraph lintloader {",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for index, finding in enumerate(findings):
        lines.extend(_cluster(index, finding))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cluster(index: int, finding: Finding) -> list[str]:
    color = _COLORS[finding.severity.label]
    title = f"{finding.code} [{finding.severity.label}] {finding.place}"
    lines = [
        f"  subgraph cluster_{index} {{",
        f'    label="{_quote(title)}"; color="{color}"; fontname="Helvetica";',
    ]
    nodes = chain_nodes(finding)
    for number, node in enumerate(nodes):
        sink = number == len(nodes) - 1
        style = f', color="{color}", penwidth=2' if sink else ""
        lines.append(f'    f{index}_{number} [label="{_label(node)}"{style}];')
    for number in range(1, len(nodes)):
        dashed = ', style=dashed, label="matched by name"' if nodes[number].guessed else ""
        lines.append(f"    f{index}_{number - 1} -> f{index}_{number} [{dashed.lstrip(', ')}];")
    for number, node in enumerate(also_nodes(finding), start=len(nodes)):
        lines.append(f'    f{index}_{number} [label="{_label(node)}", style=dashed];')
        lines.append(f'    f{index}_0 -> f{index}_{number} [style=dotted, label="also"];')
    lines.append("  }")
    return lines


def _label(node: Node) -> str:
    return "\\n".join(_quote(part) for part in (node.place, node.function, node.action) if part)


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")

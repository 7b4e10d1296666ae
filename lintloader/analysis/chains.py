"""Shared by the chain rules (LL101, LL102): turn reachability chains into findings."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.frameworks import setup_hook
from lintloader.analysis.reachability import (
    Chain,
    LoopRoot,
    chain_hops,
    group_by_start,
    sink_hop,
)
from lintloader.analysis.vocabulary import DECLARED_RESET
from lintloader.finding.findings import Confidence, Finding, Hop, Severity
from lintloader.link.program import FunctionInfo
from lintloader.text.wording import counted


def chain_severity(base: Severity, chain: Chain) -> Severity:
    """A chain with a step matched by method name among several classes, or a reset guarded
    by ``persistent_workers``, is info: a lead for a reviewer, not a proven defect. A step
    guessed from the receiver's name (one class hierarchy) caps it at warning."""
    if chain.guarded or chain.confidence is Confidence.LOW:
        return Severity.INFO
    if chain.confidence is Confidence.MEDIUM:
        return min(base, Severity.WARNING)
    return base


_UNSURE = {
    Confidence.LOW: " (unsure: a receiver's type was guessed by method name)",
    Confidence.MEDIUM: " (a receiver's type was guessed from its name and the method's)",
}


def chain_fixes(chain: Chain) -> tuple[str, ...]:
    if chain.edges:
        return ("relocate", "remove-reset-call", "remove-call")
    return () if chain.sink.sink.kind == DECLARED_RESET else ("remove-sink",)


def findings_for_roots(
    ctx: AnalysisContext,
    code: str,
    base: Severity,
    roots: Iterable[FunctionInfo],
    describe: str,
    per_root: bool = False,
) -> Iterator[Finding]:
    """One finding per root line that starts a chain (``per_root``: per root); the other
    sinks it reaches go in ``also``."""
    program = ctx.program
    for root in roots:
        chains = ctx.reachability.chains_from(root.key)
        groups = [chains] if per_root and chains else group_by_start(chains)
        for group in groups:
            best = group[0]
            hops = chain_hops(program, best, ctx.display)
            message = f"{describe}`{root.display_name}` " + _resets(best, hops)
            yield Finding(
                code=code,
                severity=chain_severity(base, best),
                path=ctx.display(root.file.path),
                line=best.start_line,
                column=best.start_column,
                message=message,
                chain=hops,
                fixes=chain_fixes(best),
                also=tuple(sink_hop(program, c.sink, ctx.display) for c in group[1:]),
            )


def _resets(best: Chain, hops: tuple[Hop, ...], when: str = "every epoch") -> str:
    """What the best chain does, from the root's name on."""
    sink = best.sink.sink
    where = f"{hops[-1].path}:{hops[-1].line}"
    calls = len(best.edges)
    via = f" through {counted(calls, 'call')}" if calls else ""
    unsure = _UNSURE.get(best.confidence, "")
    guard = " (only when persistent_workers is off)" if best.guarded else ""
    return (
        f"resets a DataLoader iterator{via}: `{sink.site.text}` at {where} shuts down the "
        f"worker pool {when}{unsure}{guard}"
    )


def findings_for_loops(
    ctx: AnalysisContext, code: str, base: Severity, roots: Iterable[LoopRoot]
) -> Iterator[Finding]:
    """One finding per epoch or step loop that reaches a reset, on the loop's line; its first
    hop is the loop itself, other sinks it reaches go in ``also``."""
    program = ctx.program
    for root in roots:
        chains = ctx.reachability.chains_from_loop(root)
        if not chains:
            continue
        best = chains[0]
        info = program.functions[root.function]
        loop = info.function.loops[root.loop]
        path = ctx.display(info.file.path)
        action = f"loop `{loop.header}`"
        start = Hop(path, loop.line, loop.column, info.display_name, loop.header, verb="loop")
        hops = (start, *chain_hops(program, best, ctx.display))
        framework = setup_hook(program, info)
        if framework is not None:  # nothing iterated yet: the reset has no pool to shut down
            setup = f"`{info.function.name}`, which {framework} calls once before the first pass"
            yield Finding(
                code=code,
                severity=Severity.INFO,
                path=path,
                line=loop.line,
                column=loop.column,
                end_line=loop.header_end[0],
                end_column=loop.header_end[1],
                message=f"{action} in `{info.display_name}` reaches a DataLoader iterator reset "
                f"in a set-up hook ({setup} over any loader): no worker pool to shut down yet",
                chain=hops,
            )
            continue
        yield Finding(
            code=code,
            severity=chain_severity(base, best),
            path=path,
            line=loop.line,
            column=loop.column,
            end_line=loop.header_end[0],
            end_column=loop.header_end[1],
            message=f"{action} in `{info.display_name}` " + _resets(best, hops, "every iteration"),
            chain=hops,
            also=tuple(sink_hop(program, c.sink, ctx.display) for c in chains[1:]),
            fixes=("move-reset-after-loop",) if best.edges else (),
        )

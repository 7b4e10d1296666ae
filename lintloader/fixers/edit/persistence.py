"""Making a DataLoader call keep its worker pool: what ``persistent_workers`` becomes, shared by
the LL2xx strategies that move or reuse a loader (hoist-dataloader, reuse-iterator) and by
add-persistent-workers.

The value follows what the analysis knows about ``num_workers`` (:class:`Workers`, the same
facts LL201 and LL204 read): ``True`` when it is certainly positive (a literal ``4``,
``max(1, n)``), ``<num_workers expression> > 0`` when it may be 0 (``args.workers``), so the
edit never introduces LL201's ``ValueError``. A call whose ``num_workers`` or
``persistent_workers`` cannot be seen (``**kwargs``, an expression) is refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import libcst as cst

from lintloader.analysis.loaders import LoaderSite, Workers, loader_sites
from lintloader.domain.torch_api import NUM_WORKERS_POSITION
from lintloader.fixers.base import FixError, FixRequest
from lintloader.fixers.edit.loader_calls import Target, call_at, keyword_arg
from lintloader.fixers.edit.replace import replaced
from lintloader.link.program import Program

Item = TypeVar("Item", cst.Arg, cst.Param)  # what a call or a signature lists
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer)


def site_at(program: Program, path: str, line: int, column: int) -> LoaderSite | None:
    """The DataLoader construction the analysis found at ``path:line:column`` (1-based)."""
    # worked out once per program: the re-check after a fix asks a lot
    return program.derived(_loader_places).get((path, line, column))


def _loader_places(program: Program) -> dict[tuple[str, int, int], LoaderSite]:
    return {
        (s.info.file.path, s.call.site.line, s.call.site.column): s for s in loader_sites(program)
    }


def workers_arg(call: cst.Call) -> cst.Arg | None:
    """The ``num_workers`` argument, by keyword or by position."""
    found = keyword_arg(call, "num_workers")
    if found is None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) > NUM_WORKERS_POSITION:
            found = positional[NUM_WORKERS_POSITION]
    return found


def has_workers_expression(call: cst.Call) -> cst.BaseExpression:
    """``<num_workers> > 0`` (parenthesized when it is not an atom)."""
    workers = workers_arg(call)
    if workers is None:
        raise FixError("`num_workers` is not an argument of the call")
    value = workers.value
    if not isinstance(value, _ATOMS):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Comparison(
        value.deep_clone(), [cst.ComparisonTarget(cst.GreaterThan(), cst.Integer("0"))]
    )


def persistent_value(call: cst.Call, site: LoaderSite) -> cst.BaseExpression:
    """What ``persistent_workers`` must be for the loader to keep a pool it has."""
    workers = site.workers
    if workers is Workers.ZERO:
        raise FixError("the loader has no workers (`num_workers` is 0 or missing)")
    if workers is Workers.POSITIVE:
        return cst.Name("True")
    # a scanned subclass may order its parameters differently: only a keyword counts there
    found = keyword_arg(call, "num_workers") if site.subclass else workers_arg(call)
    if found is None:
        raise FixError("`num_workers` comes from `**kwargs` or a subclass: cannot test it")
    return has_workers_expression(call)


def is_true(arg: cst.Arg) -> bool:
    return isinstance(arg.value, cst.Name) and arg.value.value == "True"


def is_guarded(call: cst.Call, persistent: cst.Arg) -> bool:
    """``persistent_workers=<num_workers> > 0`` (persistent-workers-guard's edit): persistent
    whenever the loader has workers, so a fix that needs persistence composes with it."""
    if workers_arg(call) is None:
        return False
    code = cst.Module([]).code_for_node
    return code(persistent.value) == code(has_workers_expression(call))


def made_persistent(call: cst.Call, site: LoaderSite) -> cst.Call:
    """``call`` with ``persistent_workers`` on: added, or a literal ``False`` replaced; the call
    itself when it is already ``True``."""
    existing = keyword_arg(call, "persistent_workers")
    if existing is not None and (is_true(existing) or is_guarded(call, existing)):
        return call
    value = persistent_value(call, site)
    if existing is not None:
        if not (isinstance(existing.value, cst.Name) and existing.value.value == "False"):
            code = cst.Module([]).code_for_node(existing.value)
            raise FixError(f"`persistent_workers={code}` is an expression: not overriding it")
        return replaced(call, existing, existing.with_changes(value=value))
    if any(a.star == "**" for a in call.args):
        raise FixError("the call passes `**kwargs`, which may set persistent_workers")
    return with_keyword(call, "persistent_workers", value)


def tight_equal() -> cst.AssignEqual:
    """The ``=`` of ``name=value`` with no space around it (a keyword, a parameter's default)."""
    return cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


def with_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` also passing ``name=value``, after its other arguments (:func:`appended`)."""
    added = cst.Arg(value=value, keyword=cst.Name(name), equal=tight_equal())
    return call.with_changes(args=appended(list(call.args), added))


def appended(args: list[Item], added: Item) -> list[Item]:
    """``args`` plus ``added`` at the end, laid out like the call (or the signature, for
    parameters): the last one takes the comma that separates the others, and the new argument
    takes the last one's trailing comma (and line break), or the space before the closing
    parenthesis when there is none."""
    if not args:
        return [added]
    last = args[-1]
    between = args[-2].comma if len(args) > 1 else cst.MaybeSentinel.DEFAULT
    if not isinstance(between, cst.Comma):
        between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if not isinstance(last.comma, cst.Comma):  # the line break before `)` stays before it
        after = "whitespace_after_arg" if isinstance(last, cst.Arg) else "whitespace_after_param"
        space = getattr(last, after)
        last = last.with_changes(comma=between, **{after: cst.SimpleWhitespace("")})
        return _then(args[:-1], last, added.with_changes(**{after: space}))
    kept, ending = _with_comment(between, last.comma), _uncommented(last.comma)
    return _then(args[:-1], last.with_changes(comma=kept), added.with_changes(comma=ending))


def _then(head: list[Item], *more: Item) -> list[Item]:
    head.extend(more)
    return head


def _with_comment(between: cst.Comma, ending: cst.Comma) -> cst.Comma:
    """``between`` carrying the comment that ends the last argument's line (``num_workers=2,
    # two workers``): the comment stays on that argument's line."""
    line, gap = ending.whitespace_after, between.whitespace_after
    if not (
        isinstance(line, cst.ParenthesizedWhitespace)
        and line.first_line.comment is not None
        and isinstance(gap, cst.ParenthesizedWhitespace)
    ):
        return between
    first = gap.first_line.with_changes(
        whitespace=line.first_line.whitespace, comment=line.first_line.comment
    )
    return between.with_changes(whitespace_after=gap.with_changes(first_line=first))


def _uncommented(ending: cst.Comma) -> cst.Comma:
    line = ending.whitespace_after
    if not isinstance(line, cst.ParenthesizedWhitespace) or line.first_line.comment is None:
        return ending
    first = line.first_line.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)
    return ending.with_changes(whitespace_after=line.with_changes(first_line=first))


@dataclass(frozen=True)
class Build:
    """The DataLoader construction at the end of a finding's chain, in the parse of its file
    that the fix edits (``target`` when it is the same file), with what makes it persistent."""

    target: Target
    call: cst.Call
    site: LoaderSite

    def persistent(self, updated: cst.CSTNode) -> cst.CSTNode:
        """``updated`` (this call as rewritten below it) with ``persistent_workers`` on."""
        assert isinstance(updated, cst.Call)
        return made_persistent(updated, self.site)

    def made_persistent_alone(self) -> dict[str, bytes]:
        """Its file with only this call made persistent (the construction is in another file
        than the one the fix rewrites)."""
        module = self.target.module
        return self.target.result(
            replaced(module, self.call, made_persistent(self.call, self.site))
        )


def build_of(request: FixRequest, target: Target) -> Build:
    """The construction the finding's chain ends at, checked to be one that can be made
    persistent (FixError with the reason otherwise)."""
    build = construction_of(request, target)
    try:
        made_persistent(build.call, build.site)
    except FixError as exc:
        raise FixError(f"the loader kept must be persistent: {exc}") from None
    return build


def construction_of(request: FixRequest, target: Target) -> Build:
    """The construction the finding's chain ends at, as it is."""
    hop = request.finding.chain[-1]
    path = request.path_of(hop)
    site = site_at(request.program, path, hop.line, hop.column)
    if site is None:
        raise FixError(f"`{hop.action}` is not a DataLoader construction the analysis knows")
    if path == target.path:
        call = target.call_at(hop.line, hop.column)
        where = target
    else:
        where = call_at(request, path, hop.line, hop.column)
        call = where.call
    if call is None:
        raise FixError(f"{hop.path}:{hop.line}: no call there")
    return Build(where, call, site)

"""Small ``ast`` helpers both summary visitors use; they define how names and scopes are spelled."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from lintloader.summary.model import Dotted, LoopInfo
from lintloader.summary.source_text import ParsedSource

TEXT_LIMIT = 120  # longest source text a summary keeps for one site


def one_line(text: str) -> str:
    """``text`` on one line, whitespace collapsed, cut to :data:`TEXT_LIMIT` characters."""
    text = " ".join(text.split())
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 3] + "..."


Scope = tuple[str, str]  # ("class" or "function", qualname) of an enclosing definition


def qualname_in(scopes: Sequence[Scope], name: str) -> str:
    """The qualname of ``name`` defined inside ``scopes`` (outermost first; empty: at module
    level), as Python spells it: ``C.m``, ``f.<locals>.g``. The summaries, the DataLoader
    facts and the fixers key functions by it, so they must agree."""
    if not scopes:
        return name
    kind, parent = scopes[-1]
    return f"{parent}.<locals>.{name}" if kind == "function" else f"{parent}.{name}"


def dotted(node: ast.AST) -> Dotted | None:
    """``a.b.c`` -> ("a", "b", "c"); ``super().m`` -> ("super()", "m"); anything else -> None."""
    kind = node.__class__  # classes compared, not isinstance: asked of most nodes, often twice
    if kind is _NAME:  # most often: a name alone
        return (node.id,)  # type: ignore[attr-defined]
    attributes: list[str] = []
    while kind is _ATTRIBUTE:  # a loop, not a call per level
        attributes.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
        kind = node.__class__
    if kind is _NAME:
        head = node.id  # type: ignore[attr-defined]
    elif kind is _CALL and node.func.__class__ is _NAME and node.func.id == "super":  # type: ignore[attr-defined]
        head = "super()"
    else:
        return None
    attributes.append(head)
    attributes.reverse()
    return tuple(attributes)


def parameter_defaults(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
) -> list[tuple[ast.arg, ast.expr]]:
    """Every parameter of ``function`` that has a default, with it: positional ones, then
    keyword-only ones (most functions have none: nothing is built)."""
    arguments = function.args
    if not arguments.defaults and not any(arguments.kw_defaults):
        return []
    positional = (*arguments.posonlyargs, *arguments.args)
    with_default = positional[len(positional) - len(arguments.defaults) :]
    pairs = list(zip(with_default, arguments.defaults, strict=True))
    keyword_only = zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    return pairs + [(p, d) for p, d in keyword_only if d is not None]


_NAME, _ATTRIBUTE, _CALL = ast.Name, ast.Attribute, ast.Call


def call_arguments(node: ast.Call) -> list[tuple[str | None, str, ast.expr]]:
    """A call's arguments in source order as (keyword, star, value): ``f(a, *b, c=d, **e)``
    gives (None, "", a), (None, "*", b), ("c", "", d), (None, "**", e)."""
    found: list[tuple[str | None, str, ast.expr]] = []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            found.append((None, "*", arg.value))
        else:
            found.append((None, "", arg))
    for keyword in node.keywords:
        found.append((keyword.arg, "" if keyword.arg else "**", keyword.value))
    if node.keywords and node.args:  # `f(a=1, *b)` is legal: keep the order they were written
        found.sort(key=lambda item: (item[2].lineno, item[2].col_offset))
    return found


def loop_info(
    parsed: ParsedSource,
    node: ast.For | ast.AsyncFor | ast.While,
    header: str,
    scope: ast.AST | None,
    **facts: Any,
) -> LoopInfo:
    """A loop's kind, position, body start and header, as both summary visitors record it;
    ``scope``: the innermost def or class around it (None: the module); ``facts``: the rest
    of what the caller knows (targets, enclosing loop, ...)."""
    first = node.body[0]
    return LoopInfo(
        "while" if isinstance(node, ast.While) else "for",
        node.lineno,
        parsed.column(node),
        node.end_lineno or node.lineno,
        first.lineno,
        parsed.column(first),
        one_line(header),
        fixed=parsed.fixed_loop(node, scope),
        retry=retry_shaped(node),
        **facts,
    )


def retry_shaped(node: ast.For | ast.AsyncFor | ast.While) -> bool:
    """A bounded retry loop by its shape: a ``for`` whose body tries something and leaves the
    loop with ``break`` once it worked (``break`` ends the ``try`` body or its ``else``, or
    follows the ``try`` at the end of the body): it runs once, plus once per failed attempt."""
    if isinstance(node, ast.While):
        return False
    tries = [statement for statement in node.body if isinstance(statement, ast.Try)]
    if not tries:
        return False
    last = node.body[-1]
    if isinstance(last, ast.Break):
        return True
    return any(_ends_in_break(t.body) or _ends_in_break(t.orelse) for t in tries)


def _ends_in_break(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Break)

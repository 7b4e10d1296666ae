"""A builder in another file made able to build a persistent loader, for keep-builder-loader: the
function that returns ``DataLoader(...)`` gains a keyword that its callers leave off::

    def make_eval_loader(dataset, name, num_workers=2, persistent_workers=False):
        return DataLoader(
            Split(dataset, name),
            num_workers=num_workers,
            persistent_workers=persistent_workers and num_workers > 0,
        )

The default keeps what every other caller gets; the loader is persistent only when it has
workers (LL201). Refused, with the reason, where the keyword could not reach the construction
or the construction cannot be seen: the builder takes ``**kwargs`` (which would swallow a
keyword it already hands on), has a ``persistent_workers`` parameter, builds its loader in a
loop or a nested function (a list of loaders), or passes ``**kwargs`` to ``DataLoader``; a
decorator is followed (the project's own, read from its file) and accepted only when each of its
wrappers that takes ``**kwargs`` hands them on to the function it wraps (``orig(*args,
**kwargs)``, or a mapping built from them: ``orig(**explicit)`` after ``explicit =
from_config(*args, **kwargs)``), and no function given to the decorator (``from_config=``) takes
``**kwargs`` or the keyword itself, which would take it before the builder does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import libcst as cst

from lintloader.analysis.loaders import Workers
from lintloader.fixers.base import FixError, FixRequest
from lintloader.fixers.edit.cst_edit import nodes_of
from lintloader.fixers.edit.draws import unlinked
from lintloader.fixers.edit.epoch_state import dotted
from lintloader.fixers.edit.kept import keep_in_module
from lintloader.fixers.edit.loader_calls import Target, keyword_arg
from lintloader.fixers.edit.persistence import (
    Build,
    appended,
    has_workers_expression,
    made_persistent,
    tight_equal,
    with_keyword,
)
from lintloader.fixers.edit.rewrite import Result, rewritten
from lintloader.fixers.edit.shared_parse import parsed
from lintloader.summary.model import FileSummary

KEYWORD = "persistent_workers"
Node = TypeVar("Node", cst.Arg, cst.Param)
# how many re-exports (``from .config import configurable``) a decorator's name is followed
_REEXPORTS = 3
# where a call the fix lengthens is broken over lines (black's default)
LINE_LENGTH = 88


@dataclass(frozen=True)
class Builder:
    """The function of ``build`` (its construction) that returns the loader."""

    build: Build
    function: cst.FunctionDef
    ready: bool = False  # it takes the keyword already (an earlier fix of another caller)

    @property
    def name(self) -> str:
        return self.function.name.value

    def edited(self) -> dict[str, bytes]:
        """The builder's file with the keyword added and handed to its ``DataLoader(...)``."""
        if self.ready:
            return {}
        edits = {self.function: self._signed, self.build.call: self._persistent_when_asked}
        target = self.build.target
        return target.result(rewritten(target.module, edits))

    def kept_by(
        self,
        target: Target,
        function: cst.FunctionDef,
        statement: cst.SimpleStatementLine,
        key: str,
        per: str = "one per dataset",
    ) -> dict[str, bytes]:
        """Both files: the caller's call of the builder (``statement`` of ``function``) kept in
        a dict of its module keyed by ``key`` (:func:`keep_in_module`) and asking for
        ``persistent_workers=True``, laid out as black would; the builder given the keyword."""
        slot, edits = keep_in_module(target, function, statement, key, per=per)
        take = edits[target.call]
        place = target.positions.get(statement)
        indent = (place.start.column if place is not None else 0) + 4  # in the `if`
        column = indent + len(f"{slot.value} = ")

        def asking(updated: cst.CSTNode) -> Result:
            assert isinstance(updated, cst.Call)
            return take(fitted(with_keyword(updated, KEYWORD, cst.Name("True")), column, indent))

        edits[target.call] = asking
        result = self.edited()
        result.update(target.result(rewritten(target.module, edits)))
        return result

    def _signed(self, updated: cst.CSTNode) -> cst.CSTNode:
        """The ``def`` with the keyword, its parameters laid out as black would."""
        assert isinstance(updated, cst.FunctionDef)
        params = _with_keyword(updated.params)
        place = self.build.target.positions.get(self.function)
        header = cst.Module([]).code_for_node(
            updated.with_changes(params=params, body=cst.SimpleStatementSuite([cst.Pass()]))
        )
        signature = header.strip().splitlines()[-1].rsplit(":", 1)[0] + ":"
        column = place.start.column if place is not None else 0
        if "\n" in cst.Module([]).code_for_node(params) or column + len(signature) <= LINE_LENGTH:
            return updated.with_changes(params=params)
        if isinstance(params.star_arg, (cst.Param, cst.ParamStar)) or params.kwonly_params:
            return updated.with_changes(params=params)  # a marker in the list: left on its line
        laid = _over_lines(list(params.params), column, "whitespace_after_param")  # no `/` here
        return updated.with_changes(
            params=params.with_changes(params=laid), whitespace_before_params=_broken("    ")
        )

    def _persistent_when_asked(self, updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        target = self.build.target
        place = target.positions.get(self.build.call)
        around = target.positions.get(target.enclosing(cst.SimpleStatementLine, "a statement"))
        column = place.start.column if place is not None else 0
        indent = around.start.column if around is not None else 0
        return fitted(with_keyword(updated, KEYWORD, _asked(self.build)), column, indent)


def fitted(call: cst.Call, column: int, indent: int) -> cst.Call:
    """``call`` (written on one line, starting at ``column``, in a statement indented by
    ``indent``) laid out as black lays out a line that passes :data:`LINE_LENGTH`: its arguments
    on one line of their own, or one per line when they do not fit there either; a call already
    written over several lines is kept."""
    code = cst.Module([]).code_for_node(call)
    if "\n" in code or column + len(code) <= LINE_LENGTH or not call.args:
        return call
    args = _over_lines(list(call.args), indent, "whitespace_after_arg")
    return call.with_changes(args=args, whitespace_before_args=_broken("    "))


def _over_lines(items: list[Node], column: int, after: str) -> list[Node]:
    """Arguments or parameters (of a statement indented by ``column``) on one indented line
    after the ``(`` and the ``)`` on the next, or, when that line would be too long, one per
    line with a trailing comma."""
    one_line = _on_one_line(items)
    last = len(items) - 1
    if column + 4 + len(one_line) <= LINE_LENGTH:
        space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return [
            item.with_changes(comma=space, **{after: cst.SimpleWhitespace("")})
            if number < last
            else item.with_changes(comma=cst.MaybeSentinel.DEFAULT, **{after: _broken("")})
            for number, item in enumerate(items)
        ]
    return [
        item.with_changes(
            comma=cst.Comma(whitespace_after=_broken("" if number == last else "    ")),
            **{after: cst.SimpleWhitespace("")},
        )
        for number, item in enumerate(items)
    ]


def _on_one_line(items: list[Node]) -> str:
    """``a, b=2`` (what the items read as on one line)."""
    code = cst.Module([]).code_for_node
    bare: list[cst.Arg | cst.Param] = [
        item.with_changes(comma=cst.MaybeSentinel.DEFAULT) for item in items
    ]
    if all(isinstance(item, cst.Param) for item in bare):
        return code(cst.Parameters([item for item in bare if isinstance(item, cst.Param)]))
    call = code(cst.Call(cst.Name("f"), [item for item in bare if isinstance(item, cst.Arg)]))
    return call[2:-1]


def _broken(indent: str) -> cst.ParenthesizedWhitespace:
    """A line break, then the statement's indentation and ``indent``."""
    return cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(), indent=True, last_line=cst.SimpleWhitespace(indent)
    )


def _asked(build: Build) -> cst.BaseExpression:
    """``persistent_workers and <num_workers> > 0`` (``persistent_workers`` when the loader
    surely has workers): persistent when asked and only with workers (LL201)."""
    if build.site.workers is Workers.POSITIVE:
        return cst.Name(KEYWORD)
    code = cst.Module([]).code_for_node(has_workers_expression(build.call))
    return cst.parse_expression(f"{KEYWORD} and {code}")


def builder_of(
    request: FixRequest, build: Build, file: FileSummary, looped: bool = False
) -> Builder:
    """The function around ``build``'s construction, checked to take the keyword (FixError with
    the reason otherwise). ``looped``: a construction in a loop of the builder is accepted (the
    caller keeps all the builder returns, not one loader of it)."""
    function, between = _enclosing(build)
    build.target.enclosing(cst.SimpleStatementLine, "a simple statement")  # where it is laid out
    name = function.name.value
    if between and not (looped and between == "a loop"):
        raise FixError(
            f"`{name}` builds its loader in {between}: one construction per call is not "
            "what it returns"
        )
    params = function.params
    if isinstance(params.star_kwarg, cst.Param):
        raise FixError(
            f"`{name}` takes `**{params.star_kwarg.name.value}`, which would swallow a "
            f"`{KEYWORD}` keyword"
        )
    for decorator in function.decorators:
        _check_decorator(request, file, decorator.decorator)
    if any(p.name.value == KEYWORD for p in _named(params)):
        if _hands_it_on(build):
            return Builder(build, function, ready=True)
        raise FixError(f"`{name}` has a `{KEYWORD}` parameter it does not hand on as this fix does")
    call = build.call
    if keyword_arg(call, KEYWORD) is not None or any(a.star == "**" for a in call.args):
        raise FixError(f"`{name}`'s DataLoader(...) already says or may say `{KEYWORD}`")
    made_persistent(call, build.site)  # it can be made persistent (FixError with why not)
    return Builder(build, function)


def _hands_it_on(build: Build) -> bool:
    """The construction says ``persistent_workers=`` as :meth:`Builder.edited` writes it."""
    given = keyword_arg(build.call, KEYWORD)
    code = cst.Module([]).code_for_node
    return given is not None and code(given.value) == code(_asked(build))


def _enclosing(build: Build) -> tuple[cst.FunctionDef, str]:
    """The function around the construction, and what lies between them (a loop, a nested
    function, a comprehension: ``""`` when nothing)."""
    target = build.target
    node: cst.CSTNode | None = target.parent(build.call)
    between = ""
    while node is not None and not isinstance(node, cst.FunctionDef):
        if isinstance(node, (cst.For, cst.While)):
            between = between or "a loop"
        elif isinstance(node, (cst.Lambda, cst.CompFor)):
            between = between or "a comprehension or a lambda"
        node = target.parent(node)
    if node is None:
        raise FixError("the loader is not built in a function")
    return node, between


def _named(params: cst.Parameters) -> Sequence[cst.Param]:
    return (*params.posonly_params, *params.params, *params.kwonly_params)


def _with_keyword(updated: cst.Parameters) -> cst.Parameters:
    """``persistent_workers=False`` after the last named parameter (keyword-only when there are
    keyword-only ones or ``*args``), annotated ``bool`` when the others are annotated."""
    annotated = any(p.annotation is not None for p in _named(updated))
    param = cst.Param(
        cst.Name(KEYWORD),
        annotation=cst.Annotation(cst.Name("bool")) if annotated else None,
        equal=cst.AssignEqual() if annotated else tight_equal(),
        default=cst.Name("False"),
    )
    keyword_only = bool(updated.kwonly_params) or isinstance(updated.star_arg, cst.Param)
    if keyword_only or isinstance(updated.star_arg, cst.ParamStar):
        return updated.with_changes(kwonly_params=appended(list(updated.kwonly_params), param))
    return updated.with_changes(params=appended(list(updated.params), param))


# -- a decorator: followed into the project's own definition ----------------------------------
def _check_decorator(request: FixRequest, file: FileSummary, decorator: cst.BaseExpression) -> None:
    call = decorator if isinstance(decorator, cst.Call) else None
    name = dotted(call.func if call is not None else decorator)
    shown = cst.Module([]).code_for_node(decorator)
    definition = _definition(request, file, name) if name is not None else None
    if definition is None:
        raise FixError(f"`@{shown}` is not a function of the project: cannot see what it passes on")
    if not _hands_keywords_on(definition):
        raise FixError(f"`@{shown}` does not hand its `**kwargs` on to the function it wraps")
    for arg in call.args if call is not None else ():
        given = dotted(arg.value)
        taken = _definition(request, file, given) if given is not None else None
        if taken is not None and _takes_keyword(taken):
            raise FixError(
                f"`@{shown}` is given `{given}`, which takes `**kwargs` or `{KEYWORD}`: it would "
                "take the keyword before the builder does"
            )


def _definition(request: FixRequest, file: FileSummary, name: str) -> cst.FunctionDef | None:
    """The project's function ``name`` (as written in ``file``), parsed from its file."""
    program = request.program
    symbol = program.resolve(file.module, tuple(name.split(".")))
    for _ in range(_REEXPORTS):  # a file the analysis did not link, read alone
        if symbol is None or symbol.kind != "external":
            break
        program, symbol = unlinked(request, file, symbol.key)
    if symbol is None or symbol.kind != "function":
        return None
    info = program.functions[symbol.key]
    source = request.sources.get(info.file.path)
    if source is None:
        return None
    read = parsed(request, info.file.path, source)
    for node in nodes_of(read.module, cst.FunctionDef):
        place = read.positions.get(node)
        lines = range(place.start.line, place.end.line + 1) if place is not None else range(0)
        if node.name.value == info.function.name and info.function.line in lines:
            return node
    return None


def _takes_keyword(function: cst.FunctionDef) -> bool:
    params = function.params
    star = isinstance(params.star_kwarg, cst.Param)
    return star or any(p.name.value == KEYWORD for p in _named(params))


def _hands_keywords_on(decorator: cst.FunctionDef) -> bool:
    """Each wrapper in ``decorator`` (a nested function taking ``**kwargs``) that calls the
    function it wraps (a parameter of a function around it) passes a ``**`` mapping made from
    its ``**kwargs``; at least one does."""
    wrapped = {p.name.value for f in nodes_of(decorator, cst.FunctionDef) for p in _named(f.params)}
    calls = 0
    for wrapper in nodes_of(decorator, cst.FunctionDef):
        star = wrapper.params.star_kwarg
        if wrapper is decorator or not isinstance(star, cst.Param):
            continue
        made = _made_from(wrapper, star.name.value)
        for call in nodes_of(wrapper, cst.Call):
            if isinstance(call.func, cst.Name) and call.func.value in wrapped - {"self"}:
                calls += 1
                mapping = next((a.value for a in call.args if a.star == "**"), None)
                if not (isinstance(mapping, cst.Name) and mapping.value in made):
                    return False
    return calls > 0


def _made_from(wrapper: cst.FunctionDef, kwargs: str) -> set[str]:
    """``kwargs`` and the names the wrapper binds to a call that is handed ``**kwargs``."""
    made = {kwargs}
    for assign in nodes_of(wrapper, cst.Assign):
        value = assign.value
        if isinstance(value, cst.Call) and any(
            a.star == "**" and isinstance(a.value, cst.Name) and a.value.value == kwargs
            for a in value.args
        ):
            made |= {t.target.value for t in assign.targets if isinstance(t.target, cst.Name)}
    return made

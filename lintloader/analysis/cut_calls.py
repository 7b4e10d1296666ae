"""Which parameters a call receives a value in when its text was cut at the text limit.

A long call (``validate(model, valset, iteration, hparams.batch_size, ...)``) is kept in the
summary with its text cut, so it cannot be parsed again; the summary keeps, per argument, the
names it reads (``CallSite.reads``) with the keyword names and the positional count. From
those the parameters that receive a given value are still known: the length of a call changes
no verdict (issue 42, shape 13).
"""

from __future__ import annotations

from collections.abc import Callable

from lintloader.summary.model import CallSite, FunctionSummary


def cut_call_targets(
    call: CallSite,
    function: FunctionSummary,
    reads: Callable[[str], bool],
    every: set[str],
) -> set[str]:
    """The parameters of ``function`` that receive an argument of ``call`` for which
    ``reads(names)`` holds (``every`` where a ``*args`` or ``**kwargs`` hides which)."""
    params = function.params
    offset = 1 if function.self_name else 0
    found: set[str] = set()
    receiver = " ".join(call.target[:-1])
    if function.self_name and receiver and reads(receiver):
        found.add(function.self_name)
    for index, names in enumerate(call.reads):
        if not reads(names):
            continue
        if call.positional < 0:
            return every
        if index < call.positional:
            slot = offset + index
            if slot < len(params):
                found.add(params[slot])
            else:
                found |= {function.star_args} if function.star_args else every
            continue
        keyword = call.keywords[index - call.positional]
        if keyword == "**":
            return every
        named = keyword in params or keyword in function.keyword_only
        found.add(function.star_kwargs if function.star_kwargs and not named else keyword)
    return found

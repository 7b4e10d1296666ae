"""Text from scanned code made inert in Markdown (GitHub's flavour): a file name or a message
can neither break the table it stands in nor bring raw HTML into the page.

:func:`code_span` quotes any text as one code span (a fence longer than any run of backticks
in it); :func:`inline` keeps a message's code spans and escapes ``<``, ``>`` and ``&`` outside
them. With ``cell=True`` a ``|`` is escaped too, which GFM honours even inside a code span.
"""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def code_span(text: str, cell: bool = False) -> str:
    text = " ".join(text.splitlines())
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return _cell(f"{fence}{pad}{text}{pad}{fence}", cell)


def inline(text: str, cell: bool = False) -> str:
    """``text`` (a message: prose with code spans) with HTML escaped outside its code spans."""
    text = " ".join(text.splitlines())
    parts, index = [], 0
    for start, end in _spans(text):
        parts.append(_escape_html(text[index:start]))
        parts.append(text[start:end])
        index = end
    parts.append(_escape_html(text[index:]))
    return _cell("".join(parts), cell)


def _spans(text: str) -> list[tuple[int, int]]:
    """The code spans of ``text`` as CommonMark finds them: a run of n backticks up to the
    next run of exactly n."""
    runs = list(_BACKTICKS.finditer(text))
    spans, taken = [], -1
    for number, opening in enumerate(runs):
        if opening.start() < taken:
            continue
        closing = next(
            (r for r in runs[number + 1 :] if len(r.group()) == len(opening.group())), None
        )
        if closing is not None:
            spans.append((opening.start(), closing.end()))
            taken = closing.end()
    return spans


def _escape_html(text: str) -> str:
    return "".join(_HTML.get(char, char) for char in text)


def _cell(text: str, cell: bool) -> str:
    return text.replace("|", "\\|") if cell else text

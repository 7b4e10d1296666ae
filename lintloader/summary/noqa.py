"""``# noqa`` comments of a file: which lines suppress which codes (all codes: ``None``)."""

from __future__ import annotations

import re

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)


def noqa_lines(code: str) -> dict[int, frozenset[str] | None]:
    found: dict[int, frozenset[str] | None] = {}
    if "noqa" not in code.lower():
        return found
    for number, line in enumerate(code.splitlines(), start=1):
        match = _NOQA.search(line)
        if match:
            codes = match.group("codes")
            found[number] = (
                frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else None
            )
    return found

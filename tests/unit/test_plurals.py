"""One home for a plural (issue 40): ``wording.counted`` and ``wording.plural``, and no hand
plural left in the package."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lintloader.text.wording import counted, plural

pytestmark = pytest.mark.fast

PACKAGE = Path(__file__).resolve().parents[2] / "lintloader"
# ``'s' * (n != 1)``, ``'ies' if n != 1 else 'y'``, ``'y' if n == 1 else 'ies'``
_HAND_PLURAL = re.compile(r"""['"]s['"] \* \(|['"]\w*['"] if [\w.()]+ [!=]= 1 else ['"]""")


def test_a_count_and_its_noun() -> None:
    assert [counted(n, "finding") for n in (0, 1, 2)] == ["0 findings", "1 finding", "2 findings"]
    assert counted(1, "cache entry", "cache entries") == "1 cache entry"
    assert counted(3, "cache entry", "cache entries") == "3 cache entries"
    assert (plural(1, "it", "them"), plural(2, "it", "them"), plural(2, "file")) == (
        "it",
        "them",
        "files",
    )


def test_no_module_writes_a_plural_by_hand() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "wording.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _HAND_PLURAL.search(line)
    ]
    assert found == []
    assert _HAND_PLURAL.search("f\"{n} file{'s' * (n != 1)}\"")
    assert _HAND_PLURAL.search("f\"entr{'ies' if count != 1 else 'y'}\"")

"""Findings and the call chains they carry: the one data model every report and fixer reads."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import Any

from lintloader import DOCS_URL

PARSE_ERROR_CODE = "LL000"  # a file that cannot be read or parsed (not a rule: always on)
PARSE_ERROR_PAGE = f"{DOCS_URL}/guarantees.md#a-bad-file-never-stops-a-run"
UNUSED_NOQA_CODE = "LL001"  # an unused noqa code (not a rule: no page under rules/)
PAGES = {
    PARSE_ERROR_CODE: PARSE_ERROR_PAGE,
    UNUSED_NOQA_CODE: f"{DOCS_URL}/configuration.md#noqa",
}


def documentation_url(code: str) -> str:
    """Where a finding's code is explained: its rule's page (LL000: the guarantee it keeps;
    LL001: the ``# noqa`` section of the configuration page)."""
    return PAGES.get(code, f"{DOCS_URL}/rules/{code}.md")


class Severity(enum.IntEnum):
    """How bad a finding is; ordered so that ``ERROR > WARNING > INFO``."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(s.name.lower() for s in cls)
            raise ValueError(f"unknown severity {text!r} (expected one of: {names})") from None

    @property
    def label(self) -> str:
        return self.name.lower()


class Confidence(enum.IntEnum):
    """How sure the call graph is that an edge exists."""

    LOW = 1  # receiver type unknown: matched a method by name only, among several classes
    # receiver type unknown, but its name agrees with the only class hierarchy that defines
    # the method (``epoch_itr.next_epoch_itr()``): a guess that may carry a warning
    MEDIUM = 2
    HIGH = 3  # resolved through imports, ``self``/``super()``, known attribute types

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Hop:
    """One step of a chain: where it happens and what happens there.

    ``line`` and ``column`` are 1-based; ``function`` is the qualified name of the function the
    step is in (``AbstractDataFetcher.__iter__``); ``action`` is the source of the call or sink.
    ``verb`` says what happens there (``loop``, ``calls``, ``builds``); empty for a reset chain,
    whose hops are calls down to the reset.
    """

    path: str
    line: int
    column: int
    function: str
    action: str
    confidence: Confidence = Confidence.HIGH
    cell: int = 0  # in a notebook: the cell (1-based), and ``line`` is the line in that cell
    verb: str = ""

    @property
    def place(self) -> str:
        """``path:line:col``, or ``path:cell N:line:col`` in a notebook."""
        return _place(self.path, self.cell, self.line, self.column)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["confidence"] = self.confidence.label
        data["cell"] = self.cell or None
        return data


@dataclass(frozen=True)
class Advisory:
    """A released version known to ship the bug a finding reports, and the release that fixed
    it, if one has (from ``lintloader/data/advisories.toml``); attached to a finding, never
    instead of one."""

    distribution: str
    version: str
    fixed: str | None  # None: affected, no fixed release yet
    summary: str
    reference: str
    kind: str = "affected"  # or "advice": an avoidable cost, not a bug (issue 41's cost model)

    @property
    def message(self) -> str:
        if self.kind == "advice":
            fixed = "no release avoids it yet" if self.fixed is None else f"{self.fixed} avoids it"
            return (
                f"{self.distribution} {self.version}: advice, an avoidable cost, not a bug; "
                f"{fixed} \u2014 {self.summary} ({self.reference})"
            )
        if self.fixed is None:
            return (
                f"{self.distribution} {self.version} is affected; no fixed release yet \u2014 "
                f"{self.summary} ({self.reference})"
            )
        return (
            f"{self.distribution} {self.version} is affected; fixed in {self.fixed} \u2014 "
            f"upgrading is better than patching: pip install '{self.distribution}>={self.fixed}'"
        )

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "message": self.message}


@dataclass(frozen=True)
class Finding:
    """A rule violation at one location, with the chain that proves it.

    The reported location is where a user acts: for a chain, the line in the root function that
    starts it. ``chain`` runs from that line to the reset itself.
    """

    code: str
    severity: Severity
    path: str
    line: int
    column: int
    message: str
    chain: tuple[Hop, ...] = ()
    fixes: tuple[str, ...] = ()  # names of fixers that can act on this finding
    also: tuple[Hop, ...] = ()  # other reset sites reached from the same root line
    end_line: int = 0
    end_column: int = 0
    cell: int = 0  # in a notebook: the cell (1-based); line and end_line count in that cell
    advisory: Advisory | None = None  # the finding is in a release known to be affected

    @property
    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.cell, self.line, self.column, self.code)

    @property
    def place(self) -> str:
        """``path:line:col``, or ``path:cell N:line:col`` in a notebook."""
        return _place(self.path, self.cell, self.line, self.column)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.label,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line or self.line,
            "end_column": self.end_column or self.column,
            "cell": self.cell or None,
            "message": self.message,
            "chain": [hop.to_json() for hop in self.chain],
            "also_reaches": [hop.to_json() for hop in self.also],
            "fixes": list(self.fixes),
            "advisory": self.advisory.to_json() if self.advisory else None,
        }


def _place(path: str, cell: int, line: int, column: int) -> str:
    return f"{path}:cell {cell}:{line}:{column}" if cell else f"{path}:{line}:{column}"

"""Static and runtime agree (issue 41): for every extra pool a traced run counts, the finding
of ``lintloader check`` that ``trace`` links to its creating frames names the same site and
the same kind of cost (defeated, avoidable, raise). Used by the trace tests on the runs they
already make (real workers); where the two cannot agree, the caller names the site and why
(docs/concepts.md, "Where check and trace can differ")."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import PurePath
from typing import Any


def finding_kind(link: Mapping[str, Any]) -> str:
    """The cost model's kind of a linked finding, as its rule and message say it: LL201 is a
    raise; a finding whose message offers persistence ("avoidable with") is avoidable; every
    other LL1xx/LL2xx finding is a defeated pool."""
    if link["code"] == "LL201":
        return "raise"
    return "avoidable" if "avoidable with" in link["message"] else "defeated"


def _names_site(link: Mapping[str, Any], frames: list[Mapping[str, Any]]) -> bool:
    """The finding is reported at one of ``frames``, the site's creating frames or those of the
    extra pool (a reset's), not borrowed from a chain that merely passes through a helper the
    site shares."""
    name = PurePath(str(link["path"])).name
    return any(PurePath(f["path"]).name == name and f["line"] == link["line"] for f in frames)


def caller_of(site: Mapping[str, Any]) -> str:
    """The function that calls the site's construction (the creating frame's, without one)."""
    frame = site["created_by"][1] if len(site["created_by"]) > 1 else site["created_at"]
    return str(frame["function"])


def disagreements(
    name: str, report: Mapping[str, Any], unlinked: Mapping[tuple[str, str], str]
) -> Iterator[str]:
    """What does not agree in one run's report: an extra pool whose linked finding is of
    another kind, one with no finding that ``unlinked`` does not explain (keyed by run name and
    the function that calls the loader's construction), and an explanation no longer needed."""
    said: set[str] = set()
    for site in report["sites"]:
        where = (name, caller_of(site))
        for extra in site["extra_pools"]:
            link, kind = extra["static"], extra["cost_kind"]
            frames = [*site["created_by"], *(extra.get("frames") or ())]
            if link is not None and not _names_site(link, frames):
                link = None  # a finding about another caller of the same helper
            if link is None and where not in unlinked:
                line = f"{where}: trace counts {kind} pools, check reports nothing there"
            elif link is not None and where in unlinked:
                line = f"{where}: now linked to {link['code']}: drop its explanation"
            elif link is not None and finding_kind(link) != kind:
                line = f"{where}: trace says {kind}, {link['code']} says {finding_kind(link)}"
            else:
                continue
            if line not in said:
                said.add(line)
                yield line

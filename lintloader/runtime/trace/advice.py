"""What to change, per creation site: the lintloader command that fixes it when a fixer covers
the culprit (``--unsafe-fixes`` named when only an unsafe one does), else the change to make
by hand."""

from __future__ import annotations

from collections.abc import Callable

from lintloader.runtime.trace.records import Frame
from lintloader.runtime.trace.sites import ExtraPool, Site
from lintloader.runtime.trace.static_link import StaticLink

Linker = Callable[[tuple[Frame, ...], bool], StaticLink | None]
Shown = Callable[[Frame], str]


def site_advice(site: Site, link_of: Linker, shown: Shown) -> list[str]:
    """One line per kind of extra pool of ``site`` (or for a non-persistent site)."""
    lines: list[str] = []
    for kind, extras in grouped_by_kind(site.extras).items():
        lines.append(_advice(kind, extras[0], site, link_of, shown))
    if not site.persistent and len(site.pools) > 1 and site.created_at is not None:
        lines.append(
            f"persistent_workers=False starts a pool per pass by design; pass "
            f"persistent_workers=True at {shown(site.created_at)} to keep one "
            f"({site.startup_s:.3f} s spent starting pools)"
        )
    return lines


def grouped_by_kind(extras: list[ExtraPool]) -> dict[str, list[ExtraPool]]:
    groups: dict[str, list[ExtraPool]] = {}
    for extra in extras:
        groups.setdefault(extra.kind, []).append(extra)
    return groups


def _advice(kind: str, extra: ExtraPool, site: Site, link_of: Linker, shown: Shown) -> str:
    if kind == "lightning reload":
        every = site.lightning_reload
        return (
            f"Lightning rebuilds this loader every {every} epoch(s): "
            f"`Trainer(reload_dataloaders_every_n_epochs={every})`; leave it at 0 (the "
            "default) unless the data must change between epochs. No fixer edits a Trainer "
            "argument: change it by hand"
        )
    link = link_of(extra.frames, extra.kind == "respawn")
    if link is not None and link.fixes:
        return link.advice
    found = (
        f"{link.code} at {link.path}:{link.line} (`lintloader rule {link.code}`); no fixer "
        "covers it"
        if link is not None
        else "no lintloader finding and no fixer cover it"
    )
    if kind == "respawn":
        where = f" at {shown(extra.frames[0])}" if extra.frames else ""
        return (
            f"{found}: by hand, keep the loader's iterator between passes and move the "
            f"shutdown{where} to the end of training (teardown)"
        )
    caller = site.frames[1] if len(site.frames) > 1 else site.created_at
    where = f" that runs {shown(caller)}" if caller is not None else ""
    return (
        f"{found}: by hand, build the loader once, outside the loop{where}, and pass that "
        "one loader to every epoch or evaluation"
    )

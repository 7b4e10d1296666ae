"""What to change, per creation site and kind of extra pool: the lintloader command that fixes
it when a finding of a rule about *that* kind covers the culprit (``--unsafe-fixes`` named when
only an unsafe fixer does), else the change to make by hand. A finding of another rule never
stands in (the LL201 guard only prevents a ValueError; it keeps no pool)."""

from __future__ import annotations

from collections.abc import Callable

from lintloader.runtime.trace.records import Frame
from lintloader.runtime.trace.sites import PER_STEP, ExtraPool, Site
from lintloader.runtime.trace.static_link import StaticLink

Linker = Callable[[tuple[Frame, ...], bool], StaticLink | None]
Shown = Callable[[Frame], str]

RESETS = ("LL101", "LL102", "LL103", "LL104", "LL105")
# the rules whose findings name the fix for each kind of extra pool
RULES_FOR = {
    "respawn": RESETS,
    "new loader": ("LL202", "LL205"),
    "lightning reload": ("LL205",),
    PER_STEP: ("LL203", "LL202"),
    "pool per pass": ("LL204",),
    "rebuilt": ("LL202",),
}
CAVEAT = (
    "unless the dataset changes per epoch in the main process, as `set_epoch` or a "
    "curriculum does: persistent workers never see it"
)


def site_advice(site: Site, link_of: Linker, shown: Shown) -> list[str]:
    """One line per kind of extra pool of ``site``."""
    return [
        _advice(kind, extras, site, link_of, shown)
        for kind, extras in grouped_by_kind(site.extras).items()
    ]


def grouped_by_kind(extras: list[ExtraPool]) -> dict[str, list[ExtraPool]]:
    groups: dict[str, list[ExtraPool]] = {}
    for extra in extras:
        groups.setdefault(extra.kind, []).append(extra)
    return groups


def linked(kind: str, extra: ExtraPool, link_of: Linker) -> StaticLink | None:
    """The finding that covers ``extra``'s culprit, when it is one of a rule about ``kind``."""
    link = link_of(extra.frames, extra.kind == "respawn")
    return link if link is not None and link.code in RULES_FOR.get(kind, ()) else None


def _advice(kind: str, extras: list[ExtraPool], site: Site, link_of: Linker, shown: Shown) -> str:
    extra = extras[0]
    if kind == "lightning reload":
        every = site.lightning_reload
        return (
            f"Lightning rebuilds this loader every {every} epoch(s): "
            f"`Trainer(reload_dataloaders_every_n_epochs={every})`; leave it at 0 (the "
            "default) unless the data must change between epochs. No fixer edits a Trainer "
            "argument: change it by hand"
        )
    saved = sum(item.cost_s for item in extras)
    price = f" ({'lost' if extra.defeated else 'could save'} {saved:.3f} s)"
    link = linked(kind, extra, link_of)
    if link is not None and link.fixes:
        return link.advice + price
    found = (
        f"{link.code} at {link.path}:{link.line} (`lintloader rule {link.code}`); no fixer "
        "covers it"
        if link is not None
        else "no lintloader finding and no fixer cover it"
    )
    return f"{found}: by hand, {_by_hand(kind, extra, site, shown)}{price}"


def _by_hand(kind: str, extra: ExtraPool, site: Site, shown: Shown) -> str:
    created = f" at {shown(site.created_at)}" if site.created_at is not None else ""
    caller = site.frames[1] if len(site.frames) > 1 else site.created_at
    loop = f" that runs {shown(caller)}" if caller is not None else ""
    if kind == "respawn":
        where = f" at {shown(extra.frames[0])}" if extra.frames else ""
        return (
            "keep the loader's iterator between passes and move the shutdown"
            f"{where} to the end of training (teardown)"
        )
    if kind == PER_STEP:
        return (
            "take the batches of a step from one iterator: `it = iter(loader)` once, before "
            "the loop, `next(it)` per step (a new `iter(loader)` on StopIteration), with the "
            f"loader{created} built once"
        )
    if kind == "pool per pass":
        return f"pass persistent_workers=True{created} to keep one pool ({CAVEAT})"
    if kind == "rebuilt":
        return (
            f"build the loader once, outside the loop{loop}, with persistent_workers=True, "
            f"and pass that one loader to every epoch or evaluation ({CAVEAT})"
        )
    return (
        f"build the loader once, outside the loop{loop}, and pass that one loader to every "
        "epoch or evaluation"
    )

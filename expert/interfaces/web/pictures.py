"""The page's pictures, as numbers the SVG templates draw: per option a
stacked memory bar (weights, gradients, optimizer states, activations,
overhead) against a device's memory, and the options' training time and
cost side by side.

Every figure shown is the library's own, read from the result, formatted
as the CLI formats it: the bar's total is the option's ``per_device_gib``
(`expert advise`'s "about 53.5 GiB each"), its parts the option's ``memory``
(the estimator's breakdown of the very setup it was sized with, which the
result carries); the hours and costs are the rows of the CLI's "Time and
cost" chart (:func:`expert.explanation.chart.time_and_cost`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...explanation.chart import time_and_cost
from ...explanation.wording import own_short_label, sized_for
from ...i18n import Localizer
from ...inference.estimate import COMPONENTS  # weights, gradients, optimizer, activations, overhead
from ...knowledge import KnowledgeBase

WIDTH = 640                           # the drawing's width, in its own units
BAR_X, BAR_WIDTH = 8, 624


@dataclass(frozen=True)
class Segment:
    component: str      # one of COMPONENTS (the CSS class colours it)
    label: str          # "weights"
    figure: str         # "36 GiB"
    x: float
    width: float


@dataclass(frozen=True)
class MemoryBar:
    rank: int
    title: str          # what the picture shows, for a screen reader
    segments: list[Segment]
    need: str           # "53.5 GiB": what each device needs
    vram: str           # "79.6 GiB": what each device has, as its driver reports it
    vram_x: float       # where the device's memory line is
    need_x: float
    fits: bool
    sized: str          # the settings it was sized for, the person's and the rules' ("4,096-token sequences ...")


@dataclass(frozen=True)
class Bar:
    label: str
    figure: str
    width: float


@dataclass(frozen=True)
class TimeAndCost:
    rows: list[tuple[int, str, Bar, Bar, bool | None]]   # rank, label, hours bar, cost bar, meets the deadline
    deadline: str | None
    deadline_x: float | None
    budget: str


def _labels(tr: Localizer) -> dict[str, str]:
    _ = tr.gettext
    return {"weights": _("weights"), "gradients": _("gradients"), "optimizer": _("optimizer state"),
            "activations": _("activations"), "overhead": _("framework overhead")}


def memory_bars(result: Any, kb: KnowledgeBase, tr: Localizer) -> list[MemoryBar]:
    """One bar per recommendation: what a device holds, part by part, against its memory."""
    _ = tr.gettext
    labels = _labels(tr)
    bars = []
    for rec in result.recommendations:
        if rec.memory is None:      # a result made by hand, without the breakdown: no bar
            continue
        parts = rec.memory.parts()      # GiB, as the device's memory as its driver reports it
        device, need = rec.memory.device_memory_gib, rec.memory.per_device_gib
        scale = BAR_WIDTH / (max(device, need, sum(parts.values())) * 1.02)
        x, segments = float(BAR_X), []
        for component in COMPONENTS:
            width = parts.get(component, 0.0) * scale
            segments.append(Segment(component, labels[component], tr.gib_part(parts.get(component, 0.0)), round(x, 1),
                                    round(width, 1)))
            x += width
        title = _("%(option)s: about %(need)s of each device's %(vram)s") % {
            "option": own_short_label(kb, tr, result.profile) if rec.gpu == "own" else f"{rec.count} × {rec.name}",
            "need": tr.gib(need), "vram": tr.gib(device)}
        bars.append(MemoryBar(rec.rank, title, segments, tr.gib(need), tr.gib(device),
                              round(BAR_X + device * scale, 1), round(BAR_X + need * scale, 1),
                              need <= device,
                              sized_for(tr, rec.setup) if rec.setup is not None else ""))
    return bars


def time_cost(result: Any, kb: KnowledgeBase, tr: Localizer) -> TimeAndCost | None:
    """The options' hours and costs side by side (None with fewer than two options, as on the CLI)."""
    chart = time_and_cost(result, kb, tr, 80)
    if chart is None:
        return None
    recs = result.shown()
    deadline = result.profile.get("deadline_h")
    longest = max([rec.hours for rec in recs] + ([deadline] if deadline else []))
    dearest = max(rec.cost["total"] for rec in recs) or 1.0
    rows = []
    for rec, row in zip(recs, chart.rows, strict=True):
        rows.append((row.rank, row.label, Bar(row.label, row.hours, round(rec.hours / longest * 100, 1)),
                     Bar(row.label, row.cost, round(rec.cost["total"] / dearest * 100, 1)), row.meets))
    deadline_x = round(deadline / longest * 100, 1) if deadline else None
    return TimeAndCost(rows, chart.deadline, deadline_x, chart.budget)

"""The trade-off at a glance: each recommended option's training time and
total cost side by side, with the deadline marked and the budget's weighting
stated (H18, H34, H35). Rendered as bars in the terminal and as a table in
markdown; the numbers are the recommendations' own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..escape import one_line
from ..i18n import Localizer
from .wording import own_label, own_short_label, sentence

LABEL_MAX = 42
# A card's name in the options table gives way to the width without the memory the next column shows.
_SIZE = re.compile(r" \d+ GB$")
DEADLINE_MARK = "┆"


@dataclass(frozen=True)
class Row:
    rank: int
    label: str
    hours: str
    cost: str
    meets: bool | None
    hours_bar: str
    cost_bar: str


@dataclass(frozen=True)
class Chart:
    rows: list[Row]
    lines: list[str]         # the terminal's lines: one per option, and the deadline's mark under the bars
    deadline: str | None     # "8 hr"
    budget: str              # how the budget weighs cost against time
    ranked: str              # the same in a line (the one-screen answer)


def _bar(value: float, largest: float, width: int) -> str:
    """A bar of ``width`` columns at most; never empty for a value above 0."""
    if value <= 0 or largest <= 0:
        return ""
    return "█" * max(1, round(value / largest * width))


def _short(text: str) -> str:
    text = one_line(text)
    return text if len(text) <= LABEL_MAX else text[:LABEL_MAX - 1] + "…"


def time_and_cost(result: Any, kb: Any, tr: Localizer, width: int) -> Chart | None:
    """The chart of ``result``'s recommendations, or None with fewer than two."""
    recs = result.shown()
    if len(recs) < 2:
        return None
    _ = tr.gettext
    deadline = result.profile.get("deadline_h")
    own = own_short_label(kb, tr, result.profile)
    labels = [_short(own if rec.gpu == "own" else f"{rec.count} × {rec.name}") for rec in recs]
    hours = [tr.hours_alone(rec.hours) for rec in recs]
    costs = [_("nothing to rent") if rec.cost["pricing"] is None else tr.money(rec.cost["total"]) for rec in recs]
    hours_width = max(len(text) for text in hours)
    cost_width = max(len(text) for text in costs)
    # A name gives way to the width as in the options table (without its maker, then its memory), never
    # cut: one that still leaves the bars less than 4 columns each takes a line of its own, its bars under.
    fits = max(width, 40) - 6 - hours_width - cost_width - 6 - 2 * 4
    names = [_own_names(kb, tr, result.profile, label) if rec.gpu == "own"
             else _shorter_names(kb, rec, f"{rec.count} × {one_line(rec.name)}")     # (whole: LABEL_MAX aside)
             for rec, label in zip(recs, labels, strict=True)]
    shown = [next((name for name in n if len(name) <= fits), None) for n in names]
    label_width = max([len(name) for name in shown if name is not None] or [0])
    # "  1. label  hours bar  cost bar": what is left goes to the bars, shared.
    room = max(width, 40) - 6 - label_width - hours_width - cost_width - 6
    bar_width = max(4, room // 2)
    longest = max([rec.hours for rec in recs] + ([deadline] if deadline else []))
    dearest = max(rec.cost["total"] for rec in recs)
    deadline_at = None
    if deadline:
        deadline_at = min(bar_width, round(deadline / longest * bar_width))
    rows, lines = [], []
    for rec, label, name, whole, hour_text, cost_text in zip(recs, labels, shown, names, hours, costs, strict=True):
        bar = _bar(rec.hours, longest, bar_width).ljust(bar_width)
        if deadline_at is not None:
            at = min(deadline_at, bar_width - 1)
            bar = bar[:at] + DEADLINE_MARK + bar[at + 1:]
        row = Row(rec.rank, label, hour_text, cost_text, rec.meets_deadline, bar,
                  _bar(rec.cost["total"], dearest, bar_width))
        rows.append(row)
        figures = f"{hour_text:>{hours_width}} {bar}  {cost_text:>{cost_width}} {row.cost_bar}"
        if name is None:        # its name alone (whole), the bars under their columns
            lines += [f"  {f'{row.rank}.':<3} {whole[0]}", (" " * (6 + label_width + 2) + figures).rstrip()]
        else:
            lines.append(f"  {f'{row.rank}.':<3} {name:<{label_width}}  {figures}".rstrip())
    budget = _("Ranked for a %(budget)s budget: the total cost weighed against the training time, and the "
               "guide's preferences (the + lines); the best first, and an option beaten on both money and time "
               "after it (the explanation of each option shows how it ranks).") % {
        "budget": _(kb.fields["budget"].choice_labels[result.profile["budget"]])}
    ranked = _("Ranked for a %(budget)s budget, the total cost weighed against the training time.") % {
        "budget": _(kb.fields["budget"].choice_labels[result.profile["budget"]])}
    if any(rec.cost["pricing"] is not None for rec in recs):
        # the costs shown are billed hours: the setup a rental bills before training (ranking.toml setup_hours)
        # and so does the deadline (ranking.toml [billing]): "37 min, late" for a deadline of 1 hr read as an
        # error where nothing said the setup counts against it
        setup = (_("A rented option's cost, and its time against the deadline, also count %(setup)s of setup "
                   "before it trains.") if deadline else
                 _("A rented option's cost also counts %(setup)s of setup before it trains.")) % {
            "setup": tr.hours(float(kb.ranking["setup_hours"]))}
        budget, ranked = f"{budget} {setup}", f"{ranked} {setup}"
    if deadline:
        lines.append(" " * (6 + label_width + 2 + hours_width + 1 + min(deadline_at or 0, bar_width - 1))
                     + DEADLINE_MARK + " " + _("deadline: %(deadline)s") % {"deadline": tr.hours(deadline)})
    return Chart(rows, lines, tr.hours(deadline) if deadline else None, budget, ranked)


@dataclass(frozen=True)
class OptionRow:
    rank: int
    label: str     # "1 × <card>": the count and the card
    memory: str    # "19.9 of 24 GiB": what the recipe uses of each device, of its memory as its driver reports it
    hours: str     # the training, without the setup ("9.7 hr, late" past the deadline)
    cost: str      # "$0.69" (on spot: "$0.45 on spot"); "—" for one's own card
    price: str     # whose price and when it was read: "RunPod 2026-09-25"; nothing to rent


@dataclass(frozen=True)
class Options:
    """The options side by side, a row each, as the one-screen answer shows them."""

    rows: list[OptionRow]
    pick: str              # the pick as the answer names it: one's own card by its name
    headings: tuple[str, str, str, str, str]
    lines: list[str]       # the terminal's lines: the headings, then a row per option


def _shorter_names(kb: Any, rec: Any, label: str) -> tuple[str, str, str]:
    """``label`` whole, without the card's maker (its name's first word when that is its vendor:
    "NVIDIA"), and without the memory too (one's own cards too: "Your 2 × RTX 4060 Ti")."""
    card = kb.card(rec.gpu) if rec.gpu != "own" else None
    count, _, name = label.partition(" × ")
    maker, _, rest = name.partition(" ")
    if card is None or not rest or maker.lower() != card.vendor:
        return label, label, _SIZE.sub("", label)
    return label, f"{count} × {rest}", f"{count} × {_SIZE.sub('', rest)}"


def _own_names(kb: Any, tr: Localizer, profile: Any, label: str) -> tuple[str, ...]:
    """One's own card's label whole, then by the catalog's short name where the card is a catalog's
    ("Your 2 × RTX PRO 6000", not "... RTX PRO 6000 Blackwell"), then without the memory: shorter
    names, never a cut one."""
    card = kb.known_card(profile.get("own_gpu")) if profile.get("own_gpu") else None
    short = own_short_label(kb, tr, profile, card.short) if card is not None and card.short else label
    short = sentence(short) if label[:1].isupper() else short      # as the table or the chart begins it
    return tuple(dict.fromkeys((label, *sorted({short, _SIZE.sub("", short), _SIZE.sub("", label)}, key=len,
                                                reverse=True))))


def _flow(indent: int, widths: list[int], gap: int, width: int) -> list[list[int]]:
    """The figure columns (1 to 4 of ``widths``) packed onto lines of ``width`` after ``indent``: as many
    side by side as fit, in order; a column alone on its line wherever it is wider than the room."""
    lines: list[list[int]] = [[]]
    used = indent
    for column in range(1, len(widths)):
        need = widths[column] + (gap if lines[-1] else 0)
        if lines[-1] and used + need > width:
            lines.append([])
            used, need = indent, widths[column]
        lines[-1].append(column)
        used += need
    return lines


def options_table(result: Any, kb: Any, tr: Localizer, width: int) -> Options:
    """The shown recommendations as a compact table: cards × count, the
    memory each device uses of what it has, the training hours, the cost
    with the provider and the date of its price."""
    _ = tr.gettext
    rows, names = [], []
    for rec in result.shown():
        memory = _("%(used)s of %(total)s") % {"used": tr.number(rec.per_device_gib, 1),
                                               "total": tr.gib(rec.device_memory_gib)}
        cost, price = "—", _("nothing to rent")
        if rec.cost["pricing"] is not None:
            cost = tr.money(rec.cost["total"])
            if rec.cost["pricing"] == "spot":
                cost = _("%(cost)s on spot") % {"cost": cost}
            if rec.cost["price_assumed"]:
                price = _("assumed from its cost class")
            elif rec.cost.get("provider"):
                price = f"{one_line(rec.cost['provider'])} {rec.cost['price_date']}"
            else:
                price = _("your price")
        label = (sentence(own_short_label(kb, tr, result.profile)) if rec.gpu == "own"
                 else _short(f"{rec.count} × {rec.name}"))
        hours = tr.hours(rec.hours)
        if rec.meets_deadline is False:     # its hours and the setup a rental bills run past the deadline
            hours = _("%(hours)s, late") % {"hours": hours}
        rows.append(OptionRow(rec.rank, label, memory, hours, cost, price))
        names.append(_own_names(kb, tr, result.profile, label) if rec.gpu == "own"     # (whole: LABEL_MAX aside)
                     else _shorter_names(kb, rec, f"{rec.count} × {one_line(rec.name)}"))
    headings = (_("Option"), _("Memory used"), _("Time"), _("Cost"), _("Price from"))
    widths = [max([len(headings[i])] + [len(getattr(r, name)) for r in rows])
              for i, name in enumerate(("label", "memory", "hours", "cost", "price"))]
    # the labels give way to the width: "  1.  label  memory  time  cost  price", the columns two spaces
    # apart, or one where that keeps every card's shortest name whole (a Spanish row "4,9 h, tarde")
    shortest = max(len(n[-1]) for n in names) if names else 0
    gap = 2 if width - 6 - 8 - sum(widths[1:]) >= shortest else 1
    room = width - 6 - 4 * gap - sum(widths[1:])
    # A name is never cut, nor broken across lines (a line longer than the terminal wraps where the
    # terminal's edge falls). A name that does not fit its column, even shortened, takes a line of its
    # own and its figures follow under their columns; where the figures leave no room for a name at all
    # (60 columns, a crowded row), every option does so, its figures on as many lines as they need.
    stacked = len(headings[0]) > room
    widths[0] = width - 6 if stacked else max(min(widths[0], room), len(headings[0]))
    fitting = [n for n in names if len(n[-1]) <= widths[0]]
    # names whole when they all fit; else every one without its maker, and each that still does not fit
    # without the memory the next column shows; a name that fits no way is shown whole, on its own line
    first = 0 if all(len(n[0]) <= widths[0] for n in fitting) else 1
    shown = {r.label: next((name for name in n[first:] if len(name) <= widths[0]), None)
             for r, n in zip(rows, names, strict=True)}
    whole = {r.label: next((name for name in n if len(name) <= width - 6), n[-1])
             for r, n in zip(rows, names, strict=True)}
    sep = " " * gap

    def figures(columns: list[int], cells: tuple[str, str, str, str, str]) -> str:
        return sep.join(f"{cells[c]:<{widths[c]}}" if c == 4 else f"{cells[c]:>{widths[c]}}" for c in columns)

    def line(rank: str, cells: tuple[str, str, str, str, str]) -> list[str]:
        label = shown.get(cells[0]) if rank else cells[0]
        if stacked:
            return [f"  {rank:<3} {whole.get(cells[0], cells[0])}".rstrip()] + [
                (" " * 6 + figures(columns, cells)).rstrip() for columns in _flow(6, widths, gap, width)]
        if label is None:       # its name alone, the figures under their columns
            return [f"  {rank:<3} {whole[cells[0]]}",
                    (" " * (6 + widths[0]) + sep + figures([1, 2, 3, 4], cells)).rstrip()]
        return [f"  {rank:<3} {label:<{widths[0]}}{sep}{figures([1, 2, 3, 4], cells)}".rstrip()]

    lines = line("", headings)
    for r in rows:
        lines += line(f"{r.rank}.", (r.label, r.memory, r.hours, r.cost, r.price))
    pick = ""
    if rows:
        top = result.recommendations[0]
        pick = sentence(own_label(kb, tr, result.profile, top.total_vram_gb, top.device_memory_gib)) if top.gpu == "own" else rows[0].label
    return Options(rows, pick, headings, lines)

"""Generic arithmetic the derive rules call. Every number comes from the
knowledge base (``kb.requirements``, ``kb.timing``, ``kb.ranking``, the
catalog); nothing here knows a card, a size or a threshold."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from .kb import Card, KnowledgeBase


def round_up(value: float, digits: int = 1) -> float:
    scale = 10**digits
    return math.ceil(value * scale - 1e-9) / scale


def piecewise(size: float, points: Sequence[tuple[float, float]], band: float) -> tuple[float, str, list[list[float]]]:
    """The figure for ``size`` from a table of (size, GB) points.

    A size within ``band`` above a point takes that point's figure (a size
    class); between classes the figure is linear; outside the table it is
    scaled in proportion to the size. Returns the figure, how it was obtained
    (``table``, ``band``, ``interpolated``, ``extrapolated``) and the points
    used.
    """
    first_x, first_y = points[0]
    if size < first_x:
        return first_y * size / first_x, "extrapolated", [[first_x, first_y]]
    for (x, y), (next_x, next_y) in zip(points, points[1:]):
        band_end = min(x * (1 + band), next_x)
        if size <= band_end:
            return y, ("table" if size == x else "band"), [[x, y]]
        if size < next_x:
            share = (size - band_end) / (next_x - band_end)
            return y + share * (next_y - y), "interpolated", [[x, y], [next_x, next_y]]
    last_x, last_y = points[-1]
    band_end = last_x * (1 + band)
    if size <= band_end:
        return last_y, ("table" if size == last_x else "band"), [[last_x, last_y]]
    return last_y * size / band_end, "extrapolated", [[last_x, last_y]]


def table_figure(kb: KnowledgeBase, size: float, method: str) -> tuple[float, str, list[list[float]]]:
    spec = kb.requirements
    if method in spec["table"]:
        return piecewise(size, spec["table"][method], spec["class_band"])
    qlora = spec["qlora"]
    figure, basis, anchors = piecewise(size, spec["table"][qlora["of"]], spec["class_band"])
    return figure * qlora["factor"], basis, anchors


def requirement(kb: KnowledgeBase, profile: Mapping[str, Any], basis: str = "guide") -> dict[str, Any]:
    """What the run needs: the guide's figure (basis "guide"), or the
    first-principles estimate for a typical setup (basis "estimate"), never
    below the weights alone; with the other figure for the cross-check."""
    from .estimate import estimate, guide_holds_with, typical

    size, method = profile["model_size_b"], profile["method"]
    spec, timing = kb.requirements, kb.timing

    def floored(for_method: str) -> tuple[float, float, float, str, list[list[float]]]:
        figure, basis, anchors = table_figure(kb, size, for_method)
        table_gb = round_up(figure)
        weights_gb = round_up(size * spec["floor"][for_method])
        return max(table_gb, weights_gb), table_gb, weights_gb, basis, anchors

    vram_gb, table_gb, weights_gb, how, anchors = floored(method)
    ref_hours = (timing["base_hours"][method] * size / timing["anchor_size_b"]
                 * profile["dataset_examples"] / timing["anchor_examples"])
    first_principles = round_up(estimate(kb, typical(kb, size, method)).per_gpu_gb)
    if basis == "estimate":
        vram_gb, how = max(first_principles, weights_gb), "estimate"
    return {
        "vram_gb": vram_gb,
        "table_gb": table_gb,
        "weights_gb": weights_gb,
        "floor_binds": weights_gb > (first_principles if basis == "estimate" else table_gb),
        "basis": how,
        "anchors": anchors,
        "qlora_vram_gb": floored("qlora")[0],
        "first_principles_gb": first_principles,
        "guide_holds_with": guide_holds_with(kb, size, method, table_gb) if basis == "guide" else None,
        "ref_hours": ref_hours,
    }


def own_card(kb: KnowledgeBase, profile: Mapping[str, Any]) -> Card:
    """The person's own GPU, as a card: its speed is unknown (see timing.toml)."""
    return Card("own", "own", "unknown", float(profile["vram_gb"]), 1, "own", "own", False,
                kb.timing["own_speed"], "timing.toml [own]", (), 0.0, 0.0, (), "profile")


def hours_on(kb: KnowledgeBase, ref_hours: float, card: Card, count: int) -> float:
    efficiency = kb.timing["efficiency"] if count > 1 else 1.0
    return ref_hours / (card.speed * count * efficiency)


def configure(kb: KnowledgeBase, profile: Mapping[str, Any], req: Mapping[str, Any], card: Card,
              where: str) -> dict[str, Any]:
    """Size one option: the fewest cards that hold the requirement, more only
    to meet a deadline (on cards with a fast interconnect, up to one node)."""
    ranking = kb.ranking
    need = req["vram_gb"]
    counts = ranking["counts"] if where == "cloud" else [1]
    min_count = next((c for c in counts if c * card.vram_gb >= need), counts[-1])
    count = min_count
    deadline = profile["deadline_h"]
    if (where == "cloud" and deadline is not None and card.fast_interconnect
            and hours_on(kb, req["ref_hours"], card, count) > deadline):
        for candidate in counts:
            if min_count < candidate <= ranking["max_count_for_speed"]:
                count = candidate
                if hours_on(kb, req["ref_hours"], card, candidate) <= deadline:
                    break
    hours = hours_on(kb, req["ref_hours"], card, count)
    device_vram = card.vram_gb / card.devices
    strategies = ranking["strategy"]
    if count * card.devices == 1:
        strategy = strategies["single"]
    elif need > device_vram:
        strategy = strategies["sharded"]
    else:
        strategy = strategies["replicated"]
    total = count * card.vram_gb
    return {
        "gpu": card.id,
        "vendor": card.vendor,
        "cost": card.cost,
        "count": count,
        "min_count": min_count,
        "devices": card.devices,
        "vram_gb": card.vram_gb,
        "device_vram_gb": device_vram,
        "total_vram_gb": total,
        "strategy": strategy,
        "hours": hours,
        "min_count_hours": hours_on(kb, req["ref_hours"], card, min_count),
        "where": where,
        "pricing": None if where == "own" else ("spot" if profile["interruptible"] else "on-demand"),
        "headroom": 1 - need / total,
        "relative_cost": ranking["price_index"][card.cost] * count * hours,
    }


def score(kb: KnowledgeBase, profile: Mapping[str, Any], option: Mapping[str, Any], factors: Sequence[float]) -> float:
    """Lower is better: relative cost and hours weighed by the budget (H35, H39)."""
    weights = kb.ranking["budget_weights"][profile["budget"]]
    value = option["relative_cost"] ** weights["cost"] * option["hours"] ** weights["time"]
    for factor in factors:
        value *= factor
    return value

"""Generic arithmetic the configuration rules call: the memory one
configuration needs per device, whether it fits, how long it takes and what
it costs, relative to the other options. Every number comes from the
knowledge base (``recipes.toml``, ``estimator.toml``, ``timing.toml``,
``ranking.toml``, the catalog); nothing here knows a card, a size or a
threshold, and nothing here decides which configuration to try: the rules
of ``rules.toml`` do, step by step.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from .estimate import estimate, guide_holds_with, typical
from .kb import SCALE_OUT, Card, KnowledgeBase


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
    size, method = profile["model_size_b"], profile["method"]
    spec, timing = kb.requirements, kb.timing

    def floored(for_method: str) -> tuple[float, float, float, str, list[list[float]]]:
        figure, basis, anchors = table_figure(kb, size, for_method)
        table_gb = round_up(figure)
        weights_gb = round_up(size * spec["floor"][for_method])
        return max(table_gb, weights_gb), table_gb, weights_gb, basis, anchors

    vram_gb, table_gb, weights_gb, how, anchors = floored(method)
    # Compute follows the parameters each token goes through: for a mixture
    # of experts, the active ones (memory above counts them all).
    active = profile.get("model_active_b") or size
    ref_hours = (timing["base_hours"][method] * active / timing["anchor_size_b"]
                 * profile["dataset_examples"] / timing["anchor_examples"])
    shape = profile.get("model_shape")
    setup = typical(kb, size, method, shape)
    first_principles = round_up(estimate(kb, setup).per_gpu_gb)
    if basis == "estimate":
        vram_gb, how = max(first_principles, weights_gb), "estimate"
    return {
        "vram_gb": vram_gb,
        "table_gb": table_gb,
        "weights_gb": weights_gb,
        "floor_binds": weights_gb > (first_principles if basis == "estimate" else table_gb),
        "basis": how,
        # Where the figure stated comes from: the guide's table, the weights
        # alone when they take more, or the estimate.
        "source": "estimate" if basis == "estimate" else ("floor" if weights_gb > table_gb else how),
        "anchors": anchors,
        "qlora_vram_gb": floored("qlora")[0],
        "first_principles_gb": first_principles,
        "guide_holds_with": guide_holds_with(kb, size, method, table_gb, shape) if basis != "estimate" else None,
        "ref_hours": ref_hours,
        # the typical sequence: estimator.toml's, or the model's context when shorter
        "seq_len": setup.seq_len,
    }


def own_card(kb: KnowledgeBase, profile: Mapping[str, Any]) -> Card:
    """The person's own GPU, as a card: one device, no fast link, and the
    speed timing.toml gives an unknown card."""
    return Card("own", "own", "unknown", float(profile["vram_gb"]), 1, "own", "own", False,
                kb.timing["own_speed"], "timing.toml [own]", (), 0.0, 0.0, (), "profile")


def hours_on(kb: KnowledgeBase, ref_hours: float, card: Mapping[str, Any], count: int, time_factor: float) -> float:
    efficiency = kb.timing["efficiency"] if count > 1 else 1.0
    return ref_hours * time_factor / (card["speed"] * count * efficiency)


def ladder_after(kb: KnowledgeBase, method: str, step: str) -> str | None:
    """The step that follows ``step`` on ``method``'s ladder, or None."""
    names = [entry["step"] for entry in kb.recipes["ladder"][method]]
    if step not in names:
        return None
    at = names.index(step) + 1
    return names[at] if at < len(names) else None


def ladder_step(kb: KnowledgeBase, method: str, step: str) -> dict[str, Any]:
    return next(entry for entry in kb.recipes["ladder"][method] if entry["step"] == step)


class Sizer:
    """Sizes configurations of one consultation: its profile, requirement and basis."""

    def __init__(self, kb: KnowledgeBase, profile: Mapping[str, Any], req: Mapping[str, Any], basis: str) -> None:
        self.kb, self.profile, self.req, self.basis = kb, profile, req, basis
        self.strategies = kb.ranking["strategy"]

    def strategy(self, devices: int, sharded: bool) -> str:
        if devices == 1:
            return str(self.strategies["single"])
        return str(self.strategies["sharded" if sharded else "replicated"])

    def configuration(self, card: Mapping[str, Any], step: str, recipe_id: str, count: int,
                      sharded: bool) -> dict[str, Any]:
        """One configuration: ``count`` cards of ``card`` running ``recipe_id``,
        whole weights on every device or sharded (ZeRO-3/FSDP)."""
        kb, profile, req = self.kb, self.profile, self.req
        recipe = kb.recipes["recipe"][recipe_id]
        devices = count * int(card["devices"])
        strategy = self.strategy(devices, sharded)
        setup = typical(kb, profile["model_size_b"], profile["method"], profile.get("model_shape"),
                        precision=recipe["precision"],
                        optimizer=recipe["optimizer"], base_bits=recipe["base_bits"],
                        checkpointing=recipe["checkpointing"], offload=recipe["offload"], gpus=devices,
                        strategy=strategy)
        result = estimate(kb, setup)
        device_gb = float(card["vram_gb"]) / int(card["devices"])
        usable = device_gb * (1 - kb.recipes["margin"])
        # The guide's figure is for the whole run: every device holds all of it
        # unless the weights are sharded (used only by the strict guide reading).
        guide_share = req["vram_gb"] / (devices if sharded else 1)
        estimate_gb = round_up(result.per_gpu_gb)
        if self.basis == "guide":  # the strict guide reading: its figure, whatever the recipe
            need, fits = round_up(guide_share), guide_share <= device_gb
        else:  # what the recipe needs on every device, with the margin left free
            need, fits = estimate_gb, estimate_gb <= usable
        where = "own" if card["id"] == "own" else "cloud"
        hours = hours_on(kb, req["ref_hours"], card, count, recipe["time_factor"])
        ranking = kb.ranking
        return {
            "gpu": card["id"],
            "vendor": card["vendor"],
            "cost": card["cost"],
            "segment": card["segment"],
            "where": where,
            "step": step,
            "next_step": ladder_after(kb, profile["method"], step),
            "possible": True,
            "recipe": recipe_id,
            "strategy": strategy,
            "count": count,
            "card_devices": int(card["devices"]),
            "devices": devices,
            "vram_gb": float(card["vram_gb"]),
            "device_vram_gb": device_gb,
            "total_vram_gb": count * float(card["vram_gb"]),
            "per_device_gb": need,
            "fits": fits,
            "headroom": 1 - need / device_gb,
            "host_ram_gb": round_up(result.cpu_gb) if recipe["offload"] else None,
            "hours": hours,
            "min_count": count,
            "min_count_hours": hours,
            "can_scale": bool(fits and where == "cloud" and card["fast_interconnect"]
                              and count < ranking["max_count_for_speed"]),
            "relative_cost": ranking["price_index"][card["cost"]] * count * hours,
        }

    def counts(self, card: Mapping[str, Any], smallest: int, largest: int | None = None) -> list[int]:
        """The card counts of ranking.toml from ``smallest`` up (to ``largest``);
        more than one card only with a fast interconnect."""
        top = largest if largest is not None else self.kb.ranking["counts"][-1]
        return [c for c in self.kb.ranking["counts"]
                if smallest <= c <= top and (c == 1 or card["fast_interconnect"])]

    def step(self, card: Mapping[str, Any], step: str, previous: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The configuration a ladder step proposes on ``card``: one card, or
        the fewest cards that fit (the largest count tried when none does).
        A step that cannot spread over more cards (one card, no fast link)
        keeps the ``previous`` configuration, marked not possible."""
        entry = ladder_step(self.kb, self.profile["method"], step)
        recipe, spread = entry["recipe"], entry["spread"]
        if spread == "card":
            return self.configuration(card, step, recipe, 1, sharded=False)
        # Sharding within one card needs several devices on it (a dual-die card);
        # across cards it needs a fast link.
        smallest = 1 if spread == "fewest" or int(card["devices"]) > 1 else 2
        counts = self.counts(card, smallest)
        if not counts:  # no count to try: one card with no fast link
            base = previous or self.configuration(card, step, recipe, 1, sharded=False)
            return {**base, "step": step, "next_step": ladder_after(self.kb, self.profile["method"], step),
                    "possible": False, "fits": False, "can_scale": False}

        def on(count: int) -> dict[str, Any]:
            return self.configuration(card, step, recipe, count, sharded=count * int(card["devices"]) > 1)

        # Sharded, the need per device only falls as cards are added: when the
        # most cards do not fit, no count does.
        most = on(counts[-1])
        if not most["fits"]:
            return most
        return next((config for config in map(on, counts[:-1]) if config["fits"]), most)

    def scale_out(self, card: Mapping[str, Any], candidate: Mapping[str, Any]) -> dict[str, Any]:
        """More cards of a fitting configuration, to meet the deadline: the
        fewest that do, up to one node (ranking.toml). On more cards a recipe
        higher on the ladder may fit again, so each count tries the ladder's
        recipes in order, up to the candidate's own, whole weights first."""
        deadline = self.profile["deadline_h"]
        recipes = list(dict.fromkeys(entry["recipe"] for entry in self.kb.recipes["ladder"][self.profile["method"]]))
        tried = recipes[:recipes.index(candidate["recipe"]) + 1] if candidate["recipe"] in recipes else [candidate["recipe"]]
        best = None
        for count in self.counts(card, int(candidate["count"]) + 1, self.kb.ranking["max_count_for_speed"]):
            config = next((c for recipe in tried for sharded in (False, True)
                           for c in (self.configuration(card, SCALE_OUT, recipe, count, sharded),) if c["fits"]), None)
            if config is None:
                continue
            best = config
            if config["hours"] <= deadline:
                break
        best = best or dict(candidate)
        best.update(step=SCALE_OUT, next_step=None, can_scale=False, min_count=candidate["count"],
                    min_count_hours=candidate["hours"])
        return best


def score(kb: KnowledgeBase, profile: Mapping[str, Any], option: Mapping[str, Any], factors: Sequence[float]) -> float:
    """Lower is better: relative cost and hours weighed by the budget (H35, H39),
    times the factors of the preference rules that fired on the option."""
    weights = kb.ranking["budget_weights"][profile["budget"]]
    value = option["relative_cost"] ** weights["cost"] * option["hours"] ** weights["time"]
    for factor in factors:
        value *= factor
    return value

"""Generic arithmetic the configuration rules call: the memory one
configuration needs per device, whether it fits, how long it takes (from the
card's FLOPs) and what it costs (from its hourly price). Every number comes
from the knowledge base (``recipes.toml``, ``estimator.toml``,
``timing.toml``, ``ranking.toml``, the catalog); nothing here knows a card, a
size or a threshold, and nothing here decides which configuration to try:
the rules of ``rules.toml`` do, step by step.
"""

from __future__ import annotations

import math
from collections import ChainMap
from dataclasses import replace
from typing import Any, Mapping, Sequence

from .estimate import estimate, guide_holds_with, shape_for, typical
from .kb import SCALE_OUT, SPEED_UP, Card, KnowledgeBase


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
    spec = kb.requirements

    def floored(for_method: str) -> tuple[float, float, float, str, list[list[float]]]:
        figure, basis, anchors = table_figure(kb, size, for_method)
        table_gb = round_up(figure)
        weights_gb = round_up(size * spec["floor"][for_method])
        return max(table_gb, weights_gb), table_gb, weights_gb, basis, anchors

    vram_gb, table_gb, weights_gb, how, anchors = floored(method)
    shape = profile.get("model_shape")
    setup = replace(typical(kb, size, method, shape), seq_len=seq_len(kb, profile))
    first_principles = round_up(estimate(kb, setup).per_gpu_gb)
    run_tokens = tokens(profile)
    per_token = flops_per_token(kb, shape_of(kb, size, shape), active_b(profile), method, setup.checkpointing,
                                profile["tokens_per_example"])
    ref_hours = hours(kb, run_tokens, per_token, method, reference_card(kb).fact(), 1, 1, False, 1.0)
    if basis == "estimate":
        vram_gb, how = max(first_principles, weights_gb), "estimate"
    req = {
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
        # Hours on the reference card (timing.toml [own]) with
        # the method's plain recipe: how long the run is, whatever it runs on.
        "ref_hours": ref_hours,
        "tokens": run_tokens,
        "flops_per_token": per_token,
        "active_b": active_b(profile),
        # the sequence memory is sized for (seq_len below)
        "seq_len": setup.seq_len,
        # what sizes the configurations: checked, estimate or guide
        "sized_by": basis,
    }
    req.update(own_qlora(kb, profile, req, basis))
    return req


def own_qlora(kb: KnowledgeBase, profile: Mapping[str, Any], req: Mapping[str, Any], basis: str) -> dict[str, Any]:
    """The person's own GPU running the same model with QLoRA's recipe
    (recipes.toml: the first step of the qlora ladder): whether it fits, the
    memory it needs and its training hours; None without an own GPU."""
    if not profile.get("vram_gb"):
        return {"own_qlora_fits": None, "own_qlora_gb": None, "own_qlora_hours": None}
    entry = kb.recipes["ladder"]["qlora"][0]
    qlora = ChainMap({"method": "qlora"}, profile)  # reads of the profile stay the fields used
    config = Sizer(kb, qlora, {**req, "vram_gb": req["qlora_vram_gb"]}, basis).configuration(own_card(kb, profile).fact(), entry["step"], entry["recipe"],
                                                        1, sharded=False)
    return {"own_qlora_fits": config["fits"], "own_qlora_gb": config["per_device_gb"],
            "own_qlora_hours": config["hours"]}


def own_card(kb: KnowledgeBase, profile: Mapping[str, Any]) -> Card:
    """The person's own GPU, as a card: one device, no fast link, nothing to
    rent; as fast as the card the person named (``own_gpu``: rules/owned.toml
    or the catalog), else as timing.toml [own] says, and marked assumed."""
    named = named_card(kb, profile.get("own_gpu"))
    like = named or reference_card(kb)
    return Card("own", "own", named.vendor if named else "unknown", float(profile.get("vram_gb") or 0.0), 1, "own",
                "own", False, like.bf16_tflops, like.memory_bandwidth_gbs, "pcie", 0.0, 1, like.hardware_source,
                0.0, 0.0, "", (), 0.0, 0.0, (), "profile", "own", speed_assumed=named is None,
                bf16=named.bf16 if named else True)


def named_card(kb: KnowledgeBase, gpu: str | None) -> Card | None:
    """The card an id names, with its speed: a catalog card, or a card people
    own (rules/owned.toml) as one device of its own; None for no id."""
    if not gpu:
        return None
    card = kb.card(gpu)
    if card is not None:
        return card
    owned = next((c for c in kb.owned if c.id == gpu), None)
    if owned is None:
        return None
    return Card(owned.id, owned.name, "nvidia", owned.vram_gb, 1, "own", "consumer", False, owned.bf16_tflops,
                owned.memory_bandwidth_gbs, "pcie", 0.0, 1, owned.hardware_source, 0.0, 0.0, "", (), 0.0, 0.0, (),
                "owned.toml", "owned", bf16=owned.bf16)


def reference_card(kb: KnowledgeBase) -> Card:
    """The card an unnamed own GPU is taken to be as fast as (timing.toml [own])."""
    card = kb.card(kb.timing["own"]["as_fast_as"])
    assert card is not None, "checked when the knowledge base loads"
    return card


# --- Time: tokens x FLOPs per token / what the cards sustain (timing.toml) ----

def seq_len(kb: KnowledgeBase, profile: Mapping[str, Any]) -> int:
    """The sequence length memory is sized for: the estimator's, or the
    examples' when longer; never beyond the model's context."""
    seq = max(int(kb.estimator["typical"]["seq_len"]), int(profile["tokens_per_example"]))
    shape = profile.get("model_shape")
    if shape and shape.get("context"):
        seq = min(seq, int(shape["context"]))
    return seq


def active_b(profile: Mapping[str, Any]) -> float:
    """Parameters (billions) that compute every token: for a mixture of
    experts the active ones (memory counts them all)."""
    return float(profile.get("model_active_b") or profile["model_size_b"])


def shape_of(kb: KnowledgeBase, size_b: float, shape: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The model's architecture, or the typical one nearest in size."""
    return shape or shape_for(kb, size_b)


def tokens(profile: Mapping[str, Any]) -> float:
    """Tokens the run trains on: examples x tokens per example x epochs."""
    return float(profile["dataset_examples"]) * float(profile["tokens_per_example"]) * float(profile["epochs"])


def flops_per_token(kb: KnowledgeBase, shape: Mapping[str, Any], active: float, method: str, checkpointing: bool,
                    sequence: float) -> float:
    """Training FLOPs per token: forward, backward (half of it with a frozen
    base) and the recomputed forward of activation checkpointing, each
    2 x active parameters plus attention over the sequence."""
    passes = kb.timing["passes"]
    count = (passes["forward"] + (passes["backward"] if method == "full" else passes["backward_frozen"])
             + (passes["recompute"] if checkpointing else 0.0))
    attention = kb.timing["attention_per_pass"] * shape["layers"] * shape["hidden"] * sequence
    return count * (2 * active * 1e9 + attention)


def scaling(kb: KnowledgeBase, card: Mapping[str, Any], devices: int, count: int, sharded: bool) -> float:
    """Share of the ideal speed-up ``devices`` keep: per doubling, by link and
    strategy; beyond one node, also per doubling of the nodes."""
    if devices <= 1:
        return 1.0
    link = kb.timing["scaling"][card["interconnect"]]["sharded" if sharded else "replicated"]
    value = float(link) ** math.log2(devices)
    spanned = nodes(card, count)
    if spanned > 1:
        value *= float(kb.timing["between_nodes"]) ** math.log2(spanned)
    return value


def nodes(card: Mapping[str, Any], count: int) -> int:
    """The nodes ``count`` cards take (the card's per_node in one)."""
    return math.ceil(count / max(int(card["per_node"]), 1))


def bandwidth_share(kb: KnowledgeBase, card: Mapping[str, Any]) -> float:
    """The share of the method's utilization a card keeps when its peak
    outgrows its memory bandwidth (timing.toml [bandwidth])."""
    spec = kb.timing["bandwidth"]
    intensity = float(card["bf16_tflops"]) * 1000 / float(card["memory_bandwidth_gbs"])
    return min(1.0, (spec["reference_flops_per_byte"] / intensity) ** spec["exponent"])


def hours(kb: KnowledgeBase, run_tokens: float, per_token: float, method: str, card: Mapping[str, Any],
          count: int, devices: int, sharded: bool, time_factor: float) -> float:
    """Training hours on ``count`` cards: the FLOPs over what they sustain."""
    flops = (count * float(card["bf16_tflops"]) * 1e12 * kb.timing["utilization"][method]
             * bandwidth_share(kb, card) * kb.timing["vendor_share"].get(card["vendor"], 1.0)
             * scaling(kb, card, devices, count, sharded) / time_factor)
    return run_tokens * per_token / flops / 3600


def run_time(kb: KnowledgeBase, setup: Any, card: Card, examples: float, tokens_per_example: float,
             epochs: float) -> dict[str, Any]:
    """How long ``setup`` (an estimator Setup) trains on ``card``: the JSON
    ``time`` of ``expert estimate``. The recipe's time_factor is that of the
    recipe with the same method, base bits and offload (1 when none)."""
    recipe = next((r for r in kb.recipes["recipe"].values() if r["method"] == setup.method
                   and r["base_bits"] == setup.base_bits and r["offload"] == setup.offload), None)
    count = max(1, math.ceil(setup.gpus / card.devices))
    run_tokens = examples * tokens_per_example * epochs
    shape = shape_of(kb, setup.model_size_b, setup.shape)
    per_token = flops_per_token(kb, shape, float(shape.get("active_b") or setup.model_size_b), setup.method,
                                setup.checkpointing, tokens_per_example)
    fact = card.fact()
    taken = hours(kb, run_tokens, per_token, setup.method, fact, count, setup.gpus,
                  setup.strategy in ("zero3", "fsdp"), recipe["time_factor"] if recipe else 1.0)
    return {"gpu": None if card.id == "own" else card.id, "count": count, "tokens": int(run_tokens),
            "flops_per_token": round(per_token), "tokens_per_second": round(run_tokens / (taken * 3600), 1),
            "hours": round(taken, 3), "speed_assumed": card.speed_assumed}


def calibration(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """The time model against timing.toml [calibration]: the guide's anchors
    (hours), published throughput (tokens per GPU per second) and speed
    ratios, each with what the model predicts, the published range and
    whether the prediction is within tolerance. Rows whose cards are not in
    ``kb``'s catalog are left out."""
    spec = kb.timing["calibration"]
    tolerance, slower = spec["tolerance"], spec["limits"]["measurement_slower"]
    rows = []

    def rate(card: Card, count: int, method: str, recipe_id: str, strategy: str, size: float, seq: int,
             checkpointing: bool | None = None) -> float:
        """Tokens per second per GPU."""
        recipe = kb.recipes["recipe"][recipe_id]
        per_token = flops_per_token(kb, shape_for(kb, size), size, method, recipe["checkpointing"] if checkpointing is None
                                    else checkpointing, seq)
        taken = hours(kb, 1.0, per_token, method, card.fact(), count, count * card.devices, strategy == "sharded",
                      recipe["time_factor"])
        return 1 / (taken * 3600) / count

    for entry in spec["anchor"]:
        card = kb.card(entry["gpu"])
        if card is None:
            continue
        per_gpu = rate(card, entry["count"], entry["method"], entry["recipe"], entry["strategy"],
                       entry["model_size_b"], int(kb.fields["tokens_per_example"].default))
        run_tokens = entry["dataset_examples"] * kb.fields["tokens_per_example"].default * kb.fields["epochs"].default
        predicted = run_tokens / (per_gpu * entry["count"]) / 3600
        low, high = entry["hours"]
        rows.append({"kind": "anchor", "id": entry["id"], "unit": "hours", "predicted": predicted,
                     "published": [low, high], "holds": low / tolerance <= predicted <= high * tolerance,
                     "source": entry["source"]})
    for entry in spec["measurement"]:
        card = kb.card(entry["gpu"])
        if card is None:
            continue
        predicted = rate(card, entry["count"], entry["method"], entry["recipe"], entry["strategy"],
                         entry["model_size_b"], entry["seq_len"], entry.get("checkpointing"))
        published = entry["tokens_per_second"]
        rows.append({"kind": "measurement", "id": entry["id"], "unit": "tokens/s per GPU", "predicted": predicted,
                     "published": [published, published],
                     "holds": published / slower <= predicted <= published * tolerance, "source": entry["source"]})
    for entry in spec["ratio"]:
        faster, slowest = kb.card(entry["faster"]), kb.card(entry["slower"])
        if faster is None or slowest is None:
            continue
        count = entry.get("faster_count", 1)
        strategy = "sharded" if count > 1 else "single"
        predicted = (rate(faster, count, "full", "mixed-adamw", strategy, 7.0, 1024) * count
                     / rate(slowest, 1, "full", "mixed-adamw", "single", 7.0, 1024))
        low, high = entry["published"]
        rows.append({"kind": "ratio", "id": entry["id"], "unit": "ratio", "predicted": predicted,
                     "published": [low, high], "holds": low / tolerance <= predicted <= high * tolerance,
                     "source": entry["source"]})
    return rows


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
        if not card["bf16"] and recipe.get("fp16"):  # a card without bf16 runs the recipe's fp16 twin
            recipe_id = recipe["fp16"]
            recipe = kb.recipes["recipe"][recipe_id]
        devices = count * int(card["devices"])
        strategy = self.strategy(devices, sharded)
        # A recipe that needs bf16 or one device cannot run here at all.
        runs = (card["bf16"] or not recipe.get("needs_bf16")) and (devices == 1 or not recipe.get("single_device"))
        setup = typical(kb, profile["model_size_b"], profile["method"], profile.get("model_shape"),
                        precision=recipe["precision"],
                        optimizer=recipe["optimizer"], base_bits=recipe["base_bits"],
                        checkpointing=recipe["checkpointing"], offload=recipe["offload"], gpus=devices,
                        strategy=strategy, seq_len=seq_len(kb, profile),
                        optimizer_in_backward=bool(recipe.get("optimizer_in_backward")))
        result = estimate(kb, setup)
        device_gb = float(card["vram_gb"]) / int(card["devices"])
        usable = device_gb * (1 - kb.recipes["margin"])
        # The guide's figure is for the whole run: every device holds all of it
        # unless the weights are sharded (used only by the strict guide reading).
        guide_share = req["vram_gb"] / (devices if sharded else 1)
        estimate_gb = round_up(result.per_gpu_gb)
        if self.basis == "guide":  # the guide's figure must fit, and the recipe must be able to start
            need = max(round_up(guide_share), estimate_gb)
            fits = guide_share <= device_gb and estimate_gb <= usable
        else:  # what the recipe needs on every device, with the margin left free
            need, fits = estimate_gb, estimate_gb <= usable
        fits = fits and bool(runs)
        where = "own" if card["id"] == "own" else "cloud"
        per_token = flops_per_token(kb, shape_of(kb, profile["model_size_b"], profile.get("model_shape")),
                                    req["active_b"], profile["method"], recipe["checkpointing"],
                                    profile["tokens_per_example"])
        taken = hours(kb, req["tokens"], per_token, profile["method"], card, count, devices, sharded,
                      recipe["time_factor"])
        # Spot when the run tolerates interruptions and the price basis lists a
        # spot price for the card; on demand otherwise.
        spot_market = bool(card["spot_market"]) or where == "own"
        pricing = None if where == "own" else ("spot" if profile["interruptible"] and spot_market else "on-demand")
        on_demand, spot = count * float(card["price_on_demand"]), count * float(card["price_spot"])
        per_hour = {None: 0.0, "spot": spot, "on-demand": on_demand}[pricing]
        # A rented card bills its setup too (ranking.toml [billing]); one's own bills nothing.
        billed = taken + kb.ranking["setup_hours"] if where == "cloud" else 0.0
        return {
            "gpu": card["id"],
            "vendor": card["vendor"],
            "cost": card["cost"],
            "segment": card["segment"],
            "where": where,
            "step": step,
            "next_step": ladder_after(kb, profile["method"], step),
            "possible": bool(runs),
            "recipe": recipe_id,
            "precision": recipe["precision"],
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
            "host_ram_gb": round_up(result.cpu_gb) if result.cpu_gb > 0 else None,
            "hours": taken,
            "min_count": count,
            "min_count_hours": taken,
            "min_count_cost": per_hour * billed,
            "time_factor": float(recipe["time_factor"]),
            "sped_up": False,
            "can_scale": bool(fits and where == "cloud" and card["fast_interconnect"]
                              and count < kb.ranking["counts"][-1]),
            "nodes": nodes(card, count),
            "flops_per_token": per_token,
            "tokens_per_second": req["tokens"] / (taken * 3600),
            "speed_assumed": bool(card["speed_assumed"]),
            "price_assumed": bool(card["price_assumed"]),
            "pricing": pricing,
            "per_hour": per_hour,
            "billed_hours": billed,
            # when the result is there: the training and, on a rented card, the
            # setup the bill counts (ranking.toml [billing])
            "elapsed_hours": taken + kb.ranking["setup_hours"] if where == "cloud" else taken,
            "total_cost": per_hour * billed,
            "on_demand_cost": on_demand * billed,
            "spot_cost": spot * billed if spot_market else None,
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

    def speed_up(self, card: Mapping[str, Any], candidate: Mapping[str, Any]) -> dict[str, Any]:
        """A configuration that fits only with a slow recipe (an 8-bit base,
        CPU offload): the fewest cards, within one node, on which a faster
        recipe of the ladder fits and is both quicker and no dearer in all;
        the candidate itself when there is none. Either way it is marked
        sped up, so that the deadline rules may follow."""
        ladder = list(dict.fromkeys(entry["recipe"] for entry in self.kb.recipes["ladder"][self.profile["method"]]))
        recipes = self.kb.recipes["recipe"]
        faster = [r for r in ladder if recipes[r]["time_factor"] < candidate["time_factor"]]
        found = None
        for count in self.counts(card, int(candidate["count"]) + 1, int(card["per_node"])):
            found = next((c for recipe in faster for sharded in (False, True)
                          for c in (self.configuration(card, SPEED_UP, recipe, count, sharded),)
                          if c["fits"] and c["hours"] < candidate["hours"]
                          and c["total_cost"] <= candidate["total_cost"]), None)
            if found is not None:
                break
        if found is None:
            return {**candidate, "sped_up": True}
        found.update(next_step=None, sped_up=True, min_count=candidate["count"], min_count_hours=candidate["hours"],
                     min_count_cost=candidate["total_cost"])
        return found

    def scale_out(self, card: Mapping[str, Any], candidate: Mapping[str, Any]) -> dict[str, Any]:
        """More cards of a fitting configuration, to meet the deadline: the
        fewest that do, across nodes if need be. On more cards a recipe
        higher on the ladder may fit again, so each count tries the ladder's
        recipes in order, up to the candidate's own, whole weights first.
        When no count meets the deadline, the fastest: the closest to it."""
        deadline = self.profile["deadline_h"]
        recipes = list(dict.fromkeys(entry["recipe"] for entry in self.kb.recipes["ladder"][self.profile["method"]]))
        tried = recipes[:recipes.index(candidate["recipe"]) + 1] if candidate["recipe"] in recipes else [candidate["recipe"]]
        best = None
        for count in self.counts(card, int(candidate["count"]) + 1):
            config = next((c for recipe in tried for sharded in (False, True)
                           for c in (self.configuration(card, SCALE_OUT, recipe, count, sharded),) if c["fits"]), None)
            if config is None:
                continue
            if config["elapsed_hours"] <= deadline:
                best = config
                break
            if best is None or config["hours"] < best["hours"]:
                best = config
        best = dict(best or candidate)
        best.update(step=SCALE_OUT, next_step=None, can_scale=False, sped_up=True, min_count=candidate["count"],
                    min_count_hours=candidate["hours"], min_count_cost=candidate["total_cost"])
        return best


def score(kb: KnowledgeBase, profile: Mapping[str, Any], option: Mapping[str, Any], factors: Sequence[float]) -> float:
    """Lower is better: total cost (USD) and hours weighed by the budget (H35,
    H39), times the factors of the preference rules that fired on the option."""
    weights = kb.ranking["budget_weights"][profile["budget"]]
    value = option["total_cost"] ** weights["cost"] * option["hours"] ** weights["time"]
    for factor in factors:
        value *= factor
    return value

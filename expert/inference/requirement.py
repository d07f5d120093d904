"""What a run needs, and the cards it is weighed on: the guide's figure for a
model size and method (``requirements.toml``, piecewise over its table), the
first-principles estimate for the cross-check, the person's own GPU with
QLoRA's recipe, and the cards an id names (the catalog's, those people own,
the reference card of ``timing.toml`` [own]).
"""

from __future__ import annotations

import itertools
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..knowledge import Card, KnowledgeBase
from .estimate import GB, GIB, estimate, guide_holds_with, round_up, typical, usable_gib
from .sizing import Sizer
from .time_model import (
    accumulation,
    active_b,
    host_link,
    optimizer_step,
    run_hours,
    run_time,
    seq_len,
    shape_of,
    stack_of,
    throughput,
    tokens,
)


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
    for (x, y), (next_x, next_y) in itertools.pairwise(points):
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
    typical_run = estimate(kb, setup)
    first_principles, first_principles_gb = round_up(typical_run.per_gpu_gib), round_up(typical_run.per_gpu_gb)
    # the same for QLoRA's usual recipe, which the advice about QLoRA sets beside it
    qlora_first_principles = (first_principles if method == "qlora" else round_up(estimate(kb, replace(
        typical(kb, size, "qlora", shape), seq_len=setup.seq_len)).per_gpu_gib))
    run_tokens = tokens(profile)
    reference = throughput(kb, reference_card(kb).fact(), 1, 1, False, stack=stack_of(kb, profile), method=method,
                           shape=shape_of(kb, size, shape), total_b=size, active_b=active_b(profile),
                           seq=profile["tokens_per_example"], micro_batch=1, checkpointing=setup.checkpointing,
                           time_factor=1.0, base_bits=16,
                           optimizer=optimizer_step(kb, trainable_b=typical_run.trainable_b, precision=setup.precision,
                                                    optimizer=setup.optimizer, strategy="single", devices=1,
                                                    offload=False, micro_steps=accumulation(kb, 1, 1)))
    per_token = reference["flops_per_token"]
    ref_hours = run_hours(kb, run_tokens, reference)
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
        # the estimate of the typical setup, in GiB (compared and shown) and in GB (10**9 bytes)
        "first_principles_gib": first_principles,
        "first_principles_gb": first_principles_gb,
        "qlora_first_principles_gib": qlora_first_principles,
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
    req.update(own_fit(kb, profile, req, basis))
    req.update(cheap_qlora(kb, profile, req, basis))
    return req


CHEAP_QLORA_NONE = {"cheap_qlora_gpu": None, "cheap_qlora_name": None, "cheap_qlora_gb": None, "cheap_qlora_gib": None,
                    "cheap_qlora_hours": None, "cheap_qlora_cost": None, "cheap_qlora_rate": None}


def cheap_qlora(kb: KnowledgeBase, profile: Mapping[str, Any], req: Mapping[str, Any], basis: str) -> dict[str, Any]:
    """At a low budget, a LoRA run done with QLoRA's recipe (recipes.toml: the
    first step of the qlora ladder) on one rented NVIDIA card (bitsandbytes'
    4-bit kernels are CUDA's, H28) that holds it: the one that costs least in
    all (hours and setup billed, at the pricing the run uses), with its
    memory, hours, cost and whose rate; None when no card holds it or the
    question does not arise (another method, another budget)."""
    if profile.get("method") != "lora" or profile.get("budget") != "low":
        return dict(CHEAP_QLORA_NONE)
    entry = kb.recipes["ladder"]["qlora"][0]
    # reads of the profile stay the fields used; typeshed wants every map of a ChainMap mutable, but only
    # the first one is written
    qlora = ChainMap({"method": "qlora"}, profile)  # type: ignore[arg-type]
    sizer = Sizer(kb, qlora, {**req, "vram_gb": req["qlora_vram_gb"]}, basis)
    best: tuple[float, str, dict[str, Any], Card] | None = None
    for card in kb.catalog:
        if card.vendor != "nvidia" or not card.priced or card.price_assumed:
            continue
        config = sizer.batched(card.fact(), entry["step"], entry["recipe"], 1, False)
        if config["fits"] and (best is None or (config["total_cost"], card.id) < best[:2]):
            best = (config["total_cost"], card.id, config, card)
    if best is None:
        return dict(CHEAP_QLORA_NONE)
    cost, gpu, config, card = best
    spot = config["pricing"] == "spot" and bool(card.spot_provider)
    provider, date = (card.spot_provider, card.spot_date) if spot else (card.price_provider, card.price_date)
    return {"cheap_qlora_gpu": gpu, "cheap_qlora_name": card.shown_name, "cheap_qlora_gb": config["per_device_gb"],
            "cheap_qlora_gib": config["per_device_gib"],
            "cheap_qlora_hours": config["hours"], "cheap_qlora_cost": cost,
            "cheap_qlora_rate": f"{provider}, {date}" if provider else None}


def own_qlora(kb: KnowledgeBase, profile: Mapping[str, Any], req: Mapping[str, Any], basis: str) -> dict[str, Any]:
    """The person's own GPU running the same model with QLoRA (recipes.toml:
    the first step of the qlora ladder on one card that fits it, the usual
    recipe first): whether it fits, the memory it needs and its training
    hours; None without an own GPU."""
    if not profile.get("vram_gb"):
        return {"own_qlora_fits": None, "own_qlora_gb": None, "own_qlora_gib": None, "own_qlora_hours": None,
                "own_qlora_sharded": None, "own_qlora_host_gib": None}
    first = kb.recipes["ladder"]["qlora"][0]
    # reads of the profile stay the fields used; typeshed wants every map of a ChainMap mutable, but only
    # the first one is written
    qlora = ChainMap({"method": "qlora"}, profile)  # type: ignore[arg-type]
    sizer = Sizer(kb, qlora, {**req, "vram_gb": req["qlora_vram_gb"]}, basis)
    card = own_card(kb, profile).fact()
    # the ladder's steps on one card, in order, as a QLoRA answer tries them on it: the first that fits (the
    # adapters' optimizer paged to CPU memory fits 8B on an 8 GiB RTX 4060, which the usual recipe misses by
    # a little; a LoRA answer told the student to rent without a word of it), else the usual recipe's figure
    entry, config = first, sizer.configuration(card, first["step"], first["recipe"], 1, sharded=False)
    for later in (e for e in kb.recipes["ladder"]["qlora"][1:] if e["spread"] == "card"):
        if config["fits"]:
            break
        tried = sizer.configuration(card, later["step"], later["recipe"], 1, sharded=False)
        if tried["fits"]:
            entry, config = later, tried
    sharded = False
    if not config["fits"] and (profile.get("own_gpu_count") or 1) > 1:
        # several cards of one's own that a whole 4-bit copy each does not fit: the base sharded over them
        # (FSDP or ZeRO-3 over PCIe), as the qlora ladder's sharding step runs it on rented cards
        entry = first
        shared = sizer.configuration(card, entry["step"], entry["recipe"], 1, sharded=True)
        if shared["fits"]:
            config, sharded = shared, True
        else:
            # nor sharded: the later sharded steps, the base kept in CPU memory (70B on two 24 GB cards, as a
            # QLoRA answer trains it: Answer.AI's FSDP + QLoRA; a LoRA answer said nothing of it)
            for later in (e for e in kb.recipes["ladder"]["qlora"] if e["spread"] == "shard" and e is not first
                          and e["recipe"] != first["recipe"]):
                tried = sizer.configuration(card, later["step"], later["recipe"], 1, sharded=True)
                if tried["fits"]:
                    entry, config, sharded = later, tried, True
                    break
    # the memory it needs (a micro-batch of 1); the hours at the fastest micro-batch that fits, as the
    # answer would train it (larger-micro-batch)
    fastest = sizer.batched(card, entry["step"], entry["recipe"], 1, sharded, config)
    return {"own_qlora_fits": config["fits"], "own_qlora_gb": config["per_device_gb"],
            "own_qlora_gib": config["per_device_gib"],
            "own_qlora_hours": fastest["hours"], "own_qlora_sharded": sharded,
            # the host RAM of a base kept in CPU memory, which a machine must have; None for none
            "own_qlora_host_gib": config["host_ram_gib"] if config["fits"] and kb.recipes["recipe"][entry["recipe"]].get(
                "offload_params") else None}


OWN_FIT_NONE = {"own_fit_gb": None, "own_fit_gib": None, "own_fit_recipe": None, "own_fit_strategy": None, "own_usable_gb": None, "own_usable_gib": None,
                "own_tuned_gb": None, "own_tuned_gib": None, "own_tuned_fits": None, "own_short_seq": None,
                "own_short_gb": None, "own_short_gib": None}


def own_fit(kb: KnowledgeBase, profile: Mapping[str, Any], req: Mapping[str, Any], basis: str) -> dict[str, Any]:
    """When the person's own GPU misses with the leanest recipe its method's
    ladder tries on one card (several of one's own: that, a whole copy on
    each, or the base sharded over them all, the leaner): the recipe and
    strategy, what it needs of each device, what it needs on
    a tuned stack (estimator.toml [loss]) and whether that fits, and the
    longest sequence of recipes.toml [own_fit] that fits, with its need; what
    may be used of one of its devices, the margin kept free. All
    None when it fits, or with no own GPU; the rules decide what to say."""
    if not profile.get("vram_gb"):
        return dict(OWN_FIT_NONE)
    ladder = kb.recipes["ladder"][profile["method"]]
    several = (profile.get("own_gpu_count") or 1) > 1
    tried = _own_tries(ladder, several)
    card = own_card(kb, profile).fact()
    sizer = Sizer(kb, profile, req, basis)
    configs = [(sizer.configuration(card, e["step"], e["recipe"], 1, sharded=sharded), e, sharded)
               for e, sharded in tried]
    # It fits when any step the answer tries on one's own cards fits, the later ones too (the base kept
    # in CPU memory, FSDP + QLoRA: 70B on two own RTX 3090s, 20.6 GiB of each, was told it needed 26.6).
    later = [sizer.configuration(card, e["step"], e["recipe"], 1, sharded=several) for e in ladder
             if e["spread"] == "fewest" or (several and e["spread"] == "shard")]
    if any(config["fits"] for config in later + [c for c, _, _ in configs]) or not any(
            config["possible"] for config, _, _ in configs):
        return dict(OWN_FIT_NONE)
    plain, entry, sharded = min((c for c in configs if c[0]["possible"]), key=lambda c: c[0]["per_device_gib"])
    # what may be used of one device as its driver reports it, the margin kept free: a need of 8.0 GiB
    # misses an 8 GiB card by it
    usable = usable_gib(kb, plain["device_memory_gib"])
    return {"own_fit_gb": plain["per_device_gb"], "own_fit_gib": plain["per_device_gib"],
            "own_fit_recipe": plain["recipe"], "own_fit_strategy": plain["strategy"],
            "own_usable_gb": round(usable * GIB / GB, 1), "own_usable_gib": round(usable, 1),
            **_own_tuned(kb, profile, req, basis, card, entry, sharded),
            **_own_shorter(kb, sizer, req, card, entry, sharded)}


def _own_tries(ladder: Sequence[Mapping[str, Any]], several: bool) -> list[tuple[Mapping[str, Any], bool]]:
    """The ladder's steps own_fit weighs, each with whether it shards. Several cards of one's own are one
    machine of that many devices, which the answer trains with a whole copy on each or with the base
    sharded over them all (the ladder's sharding step, FSDP or ZeRO-3): the leaner of the two, each
    figure a device's; one card, its leanest one-card recipe."""
    tried: list[tuple[Mapping[str, Any], bool]] = [([e for e in ladder if e["spread"] == "card"][-1], False)]
    if several:
        tried.append((next(e for e in ladder if e["spread"] == "shard"), True))
    return tried


def _own_tuned(kb: KnowledgeBase, profile: Mapping[str, Any], req: Mapping[str, Any], basis: str, card: Any,
               entry: Mapping[str, Any], sharded: bool) -> dict[str, Any]:
    """What own_fit's leanest setup needs on a tuned stack (estimator.toml [loss]), and whether that fits;
    None where the stack is tuned already."""
    if stack_of(kb, profile) == "tuned":
        return {"own_tuned_gb": None, "own_tuned_gib": None, "own_tuned_fits": None}
    # reads of the profile stay the fields used; typeshed wants every map of a ChainMap mutable
    tuned = ChainMap({"stack": "tuned"}, profile)  # type: ignore[arg-type]
    config = Sizer(kb, tuned, req, basis).configuration(card, entry["step"], entry["recipe"], 1, sharded=sharded)
    return {"own_tuned_gb": config["per_device_gb"], "own_tuned_gib": config["per_device_gib"],
            "own_tuned_fits": config["fits"]}


def _own_shorter(kb: KnowledgeBase, sizer: Sizer, req: Mapping[str, Any], card: Any, entry: Mapping[str, Any],
                 sharded: bool) -> dict[str, Any]:
    """The longest sequence of recipes.toml [own_fit] shorter than the run's on which own_fit's leanest
    setup fits, with its need; None where none does."""
    for seq in kb.recipes["own_fit"]["sequences"]:   # longest first: the first that fits
        if seq < req["seq_len"]:
            config = sizer.configuration(card, entry["step"], entry["recipe"], 1, sharded=sharded, seq=seq)
            if config["fits"]:
                return {"own_short_seq": seq, "own_short_gb": config["per_device_gb"],
                        "own_short_gib": config["per_device_gib"]}
    return {"own_short_seq": None, "own_short_gb": None, "own_short_gib": None}


def own_card(kb: KnowledgeBase, profile: Mapping[str, Any]) -> Card:
    """The person's own GPU, as a card: nothing to rent; as fast as the card
    the person named (``own_gpu``: rules/owned.toml or the catalog), else as
    timing.toml [own] says, and marked assumed. Several of them
    (``own_gpu_count``: "2x" a card) are one card of that many devices in
    one machine, never more: the cards one owns are all there is. Between
    them, the named catalog card's link; a card of rules/owned.toml (or an
    unnamed one) sits in a PCIe slot, linked as the reference card of
    timing.toml [own] is (no NVLink assumed)."""
    named = named_card(kb, profile.get("own_gpu"))
    like = named or reference_card(kb)
    count = int(profile.get("own_gpu_count") or 1)
    linked = like if named is not None and named.origin != "owned" else reference_card(kb)
    vram = float(profile.get("vram_gb") or 0.0)
    # what its driver reports, where the card named gives it for that memory (a catalog card's memory_mib);
    # else the card is taken at its size (estimate.device_memory_gib)
    reported = named.memory_mib / named.devices if named and named.memory_mib and named.vram_gb / named.devices == vram \
        else 0.0
    return Card(id="own", name="own", vendor=named.vendor if named else "unknown",
                vram_gb=vram * count, memory_mib=reported * count, devices=count, cost="own", segment="own",
                fast_interconnect=False,
                # a card's figures are for all its devices (records.Card): n cards compute and read n times as much
                bf16_tflops=like.bf16_tflops * count, memory_bandwidth_gbs=like.memory_bandwidth_gbs * count,
                interconnect=linked.interconnect if count > 1 else "pcie",
                link_gbs=linked.link_gbs if count > 1 else 0.0, per_node=1, hardware_source=like.hardware_source,
                price_on_demand=0.0, price_spot=0.0, price_source="", ideal_methods=(), ideal_min_b=0.0,
                ideal_max_b=0.0, heuristics=(), source="profile", origin="own", speed_assumed=named is None,
                bf16=named.bf16 if named else True, speed_of=like.id)


def assumed_card(kb: KnowledgeBase) -> Card:
    """The card ``expert estimate`` times a run on when none is named: as fast
    as the reference card (timing.toml [own]), marked assumed, and, over
    several GPUs, with the reference card's link between them (an own card's
    is none: one device)."""
    like = reference_card(kb)
    return replace(own_card(kb, {}), interconnect=like.interconnect, link_gbs=like.link_gbs,
                   fast_interconnect=like.fast_interconnect, per_node=like.per_node)


def estimate_time(kb: KnowledgeBase, setup: Any, run: Mapping[str, Any]) -> dict[str, Any]:
    """The ``time`` of ``expert estimate``: ``setup`` (an estimator Setup) on
    the card ``run`` names (estimate_input.from_input), else on :func:`assumed_card`."""
    card = named_card(kb, run["gpu"]) or assumed_card(kb)
    return run_time(kb, setup, card, run["dataset_examples"], run["tokens_per_example"], run["epochs"],
                    run.get("stack"))


def named_card(kb: KnowledgeBase, gpu: str | None) -> Card | None:
    """The card an id names, with its speed: a catalog card, or a card people
    own (rules/owned.toml) as one device of its own; None for no id."""
    if not gpu:
        return None
    card = kb.known_card(gpu)      # a shipped card not weighed is named by one's own card too
    if card is not None:
        return card
    owned = next((c for c in kb.owned if c.id == gpu), None)
    if owned is None:
        return None
    # several of them talk over PCIe, through the host: the slot's link, both ways (timing.toml [host_link])
    return Card(id=owned.id, name=owned.name, vendor="nvidia", vram_gb=owned.vram_gb, devices=1, cost="own",
                segment="consumer", fast_interconnect=False, bf16_tflops=owned.bf16_tflops,
                memory_bandwidth_gbs=owned.memory_bandwidth_gbs, interconnect="pcie",
                link_gbs=2 * host_link(kb, owned.id)["gbs"], per_node=1,
                hardware_source=owned.hardware_source, price_on_demand=0.0, price_spot=0.0, price_source="",
                ideal_methods=(), ideal_min_b=0.0, ideal_max_b=0.0, heuristics=(), source="owned.toml",
                origin="owned", bf16=owned.bf16)


def reference_card(kb: KnowledgeBase) -> Card:
    """The card an unnamed own GPU is taken to be as fast as (timing.toml [own])."""
    card = kb.card(kb.timing["own"]["as_fast_as"])
    assert card is not None, "checked when the knowledge base loads"
    return card


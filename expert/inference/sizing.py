"""Generic arithmetic the configuration rules call: the memory one
configuration needs per device, whether it fits, how long it takes (from the
card's FLOPs) and what it costs (from its hourly price). Every number comes
from the knowledge base (``recipes.toml``, ``estimator.toml``,
``timing.toml``, ``ranking.toml``, the catalog); nothing here knows a card, a
size or a threshold, and nothing here decides which configuration to try:
the rules of ``rules.toml`` do, step by step.
"""

from __future__ import annotations

import itertools
import math
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..knowledge import LARGER_BATCH, SCALE_OUT, SPEED_UP, Card, KnowledgeBase
from .estimate import estimate, guide_holds_with, shape_for, typical


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
    first_principles = round_up(estimate(kb, setup).per_gpu_gb)
    run_tokens = tokens(profile)
    reference = throughput(kb, reference_card(kb).fact(), 1, 1, False, stack=stack_of(kb, profile), method=method,
                           shape=shape_of(kb, size, shape), total_b=size, active_b=active_b(profile),
                           seq=profile["tokens_per_example"], micro_batch=1, checkpointing=setup.checkpointing,
                           time_factor=1.0, base_bits=16)
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
    # reads of the profile stay the fields used; typeshed wants every map of a ChainMap mutable, but only
    # the first one is written
    qlora = ChainMap({"method": "qlora"}, profile)  # type: ignore[arg-type]
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
    return Card(id="own", name="own", vendor=named.vendor if named else "unknown",
                vram_gb=float(profile.get("vram_gb") or 0.0), devices=1, cost="own", segment="own",
                fast_interconnect=False, bf16_tflops=like.bf16_tflops, memory_bandwidth_gbs=like.memory_bandwidth_gbs,
                interconnect="pcie", link_gbs=0.0, per_node=1, hardware_source=like.hardware_source,
                price_on_demand=0.0, price_spot=0.0, price_source="", ideal_methods=(), ideal_min_b=0.0,
                ideal_max_b=0.0, heuristics=(), source="profile", origin="own", speed_assumed=named is None,
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
    return Card(id=owned.id, name=owned.name, vendor="nvidia", vram_gb=owned.vram_gb, devices=1, cost="own",
                segment="consumer", fast_interconnect=False, bf16_tflops=owned.bf16_tflops,
                memory_bandwidth_gbs=owned.memory_bandwidth_gbs, interconnect="pcie", link_gbs=0.0, per_node=1,
                hardware_source=owned.hardware_source, price_on_demand=0.0, price_spot=0.0, price_source="",
                ideal_methods=(), ideal_min_b=0.0, ideal_max_b=0.0, heuristics=(), source="owned.toml",
                origin="owned", bf16=owned.bf16)


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


def stack_of(kb: KnowledgeBase, profile: Mapping[str, Any]) -> str:
    """The software stack the hours assume (profile field ``stack``)."""
    return str(profile.get("stack") or kb.fields["stack"].default)


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


def nodes(card: Mapping[str, Any], count: int) -> int:
    """The nodes ``count`` cards take (the card's per_node in one)."""
    return math.ceil(count / max(int(card["per_node"]), 1))


def bandwidth_share(kb: KnowledgeBase, card: Mapping[str, Any]) -> float:
    """The share of the stack's utilization a card keeps when its peak
    outgrows its memory bandwidth (timing.toml [bandwidth])."""
    spec = kb.timing["bandwidth"]
    intensity = float(card["bf16_tflops"]) * 1000 / float(card["memory_bandwidth_gbs"])
    return min(1.0, (spec["reference_flops_per_byte"] / intensity) ** spec["exponent"])


def link_gbs(kb: KnowledgeBase, card: Mapping[str, Any], spanned: int) -> float:
    """GB/s one device sustains in a collective (all-gather, reduce-scatter):
    within a node its link's one-way bandwidth times the share NCCL/RCCL
    reach on it; across nodes the network's share per GPU (timing.toml
    [links])."""
    spec = kb.timing["links"]
    if spanned > 1:
        return float(spec["between_nodes_gbs"].get(card["id"], spec["between_nodes_gbs"]["default"]))
    share = float(spec["share"].get(card["interconnect"], spec["share"]["pcie"]))
    return max(float(card.get("link_gbs") or 0.0), 1.0) / 2 * share


def micro_batches(kb: KnowledgeBase, devices: int) -> list[int]:
    """The micro-batches a configuration may run, smallest first: powers of
    two up to timing.toml [batch] most, never more than the global batch
    spread over the devices needs."""
    spec = kb.timing["batch"]
    top = max(1, min(int(spec["most_micro_batch"]), int(spec["global_sequences"]) // max(devices, 1)))
    sizes, size = [], 1
    while size <= top:
        sizes.append(size)
        size *= 2
    return sizes


def accumulation(kb: KnowledgeBase, micro_batch: int, devices: int) -> int:
    """Gradient accumulation steps that keep the global batch (timing.toml [batch])."""
    return max(1, math.ceil(int(kb.timing["batch"]["global_sequences"]) / (micro_batch * max(devices, 1))))


def throughput(kb: KnowledgeBase, card: Mapping[str, Any], count: int, devices: int, sharded: bool, *, stack: str,
               method: str, shape: Mapping[str, Any], total_b: float, active_b: float, seq: float,
               micro_batch: int, checkpointing: bool, time_factor: float, base_bits: int) -> dict[str, float]:
    """Tokens per second ``count`` cards train (timing.toml): one micro-step
    of every device is its fixed overhead, the FLOPs of its tokens at the
    stack's utilization (less the padding of unpacked batches), the
    de-quantization of a 4-bit base, and the communication the compute does
    not hide. A mixture of experts computes by its active parameters at the
    stack's MoE efficiency; sharded weights are gathered whole."""
    spec = kb.timing["stack"][stack]
    per_token = flops_per_token(kb, shape, active_b, method, checkpointing, seq)
    # A mixture of experts computes its active parameters' FLOPs at a share of the dense speed.
    efficiency = float(spec["moe_efficiency"]) if active_b < total_b * 0.99 else 1.0
    card_devices = max(int(card["devices"]), 1)
    peak = float(card["bf16_tflops"]) * 1e12 / card_devices
    utilization = (float(spec["utilization"][method]) * bandwidth_share(kb, card)
                   * kb.timing["vendor_share"].get(card["vendor"], 1.0))
    tokens = micro_batch * seq
    padding = 1 + float(spec["padding_waste"]) * (1 - 1 / micro_batch)
    compute = tokens * per_token * padding / (peak * utilization * efficiency) * time_factor
    fixed = float(spec["overhead_per_layer_s"]) * int(shape["layers"])
    quantized = kb.timing["quantized"]
    dequantize = (float(quantized["seconds_per_b"]) * total_b * float(quantized["reference_bandwidth_gbs"])
                  / (float(card["memory_bandwidth_gbs"]) / card_devices)) if base_bits == 4 else 0.0
    communication = 0.0
    if devices > 1:
        ring = (devices - 1) / devices
        params = total_b * 1e9
        weight_bytes = 2.0 if method == "full" else base_bits / 8
        if sharded:  # ZeRO-3/FSDP: every layer's weights gathered whole for each pass, gradients reduce-scattered
            moved = float(kb.timing["sharding"]["gathers"]) * params * weight_bytes
            if method == "full":
                moved += params * 2.0
        elif method == "full":  # whole weights: the gradients all-reduced once per optimizer step
            moved = 2 * params * 2.0 / accumulation(kb, micro_batch, devices)
        else:
            moved = 0.0
        # Within a node every device moves its share over the card's link; across
        # nodes each node's share crosses the network, spread over its devices' NICs.
        spanned = nodes(card, count)
        local = min(devices, int(card["per_node"]) * card_devices)
        communication = moved * ring / (link_gbs(kb, card, 1) * 1e9)
        if spanned > 1:
            communication = max(communication, moved * (spanned - 1) / spanned
                                / (link_gbs(kb, card, spanned) * 1e9 * local))
    exposed = max(0.0, communication - float(spec["overlap"]) * compute)
    step = compute + fixed + dequantize + exposed
    return {"tokens_per_second": tokens / step * devices, "flops_per_token": per_token, "step_s": step}


def run_hours(kb: KnowledgeBase, run_tokens: float, rate: Mapping[str, float]) -> float:
    return run_tokens / rate["tokens_per_second"] / 3600


def run_time(kb: KnowledgeBase, setup: Any, card: Card, examples: float, tokens_per_example: float,
             epochs: float, stack: str | None = None) -> dict[str, Any]:
    """How long ``setup`` (an estimator Setup) trains on ``card``: the JSON
    ``time`` of ``expert estimate``, on ``stack`` and on the other one. The
    recipe's time_factor is that of the recipe with the same method, base
    bits and offload (1 when none)."""
    stack = stack or str(kb.fields["stack"].default)
    recipe = next((r for r in kb.recipes["recipe"].values() if r["method"] == setup.method
                   and r["base_bits"] == setup.base_bits and r["offload"] == setup.offload), None)
    count = max(1, math.ceil(setup.gpus / card.devices))
    run_tokens = examples * tokens_per_example * epochs
    shape = shape_of(kb, setup.model_size_b, setup.shape)
    fact = card.fact()

    def on(which: str) -> dict[str, float]:
        return throughput(kb, fact, count, setup.gpus, setup.strategy in ("zero3", "fsdp"), stack=which,
                          method=setup.method, shape=shape, total_b=setup.model_size_b,
                          active_b=float(shape.get("active_b") or setup.model_size_b), seq=tokens_per_example,
                          micro_batch=setup.batch, checkpointing=setup.checkpointing,
                          time_factor=recipe["time_factor"] if recipe else 1.0, base_bits=setup.base_bits)

    rate, other = on(stack), on(other_stack(kb, stack))
    taken = run_hours(kb, run_tokens, rate)
    return {"gpu": None if card.id == "own" else card.id, "count": count, "tokens": int(run_tokens),
            "flops_per_token": round(rate["flops_per_token"]), "tokens_per_second": round(rate["tokens_per_second"], 1),
            "hours": round(taken, 3), "speed_assumed": card.speed_assumed, "stack": stack,
            "other_stack": {"stack": other_stack(kb, stack), "hours": round(run_hours(kb, run_tokens, other), 3)}}


def other_stack(kb: KnowledgeBase, stack: str) -> str:
    """The stack the answer compares with: the next one of profile.toml's choices."""
    choices = list(kb.fields["stack"].choices)
    return choices[(choices.index(stack) + 1) % len(choices)]


def calibration(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """The time model against timing.toml [calibration]: the guide's anchors
    (hours, on the typical stack), published throughput (tokens per GPU per
    second, each on its own stack) and speed ratios, each with what the model
    predicts, the published figure and whether the prediction is within
    tolerance. Rows whose cards are not in ``kb``'s catalog are left out."""
    spec = kb.timing["calibration"]
    tolerance = spec["tolerance"]
    default_stack = str(kb.fields["stack"].default)
    rows = []

    def rate(card: Card, count: int, method: str, recipe_id: str, strategy: str, size: float, seq: int, *,
             stack: str = default_stack, model: str | None = None, micro_batch: int = 1,
             checkpointing: bool | None = None, active_b: float | None = None) -> float:
        """Tokens per second per card."""
        recipe = kb.recipes["recipe"][recipe_id]
        found = kb.model(model) if model else None
        shape = found.shape() if found else shape_for(kb, size)
        total = found.params_b if found else size
        active = found.active_b if found else (active_b or size)
        speed = throughput(kb, card.fact(), count, count * card.devices, strategy == "sharded", stack=stack,
                           method=method, shape=shape, total_b=total, active_b=active, seq=seq,
                           micro_batch=micro_batch,
                           checkpointing=recipe["checkpointing"] if checkpointing is None else checkpointing,
                           time_factor=recipe["time_factor"], base_bits=recipe["base_bits"])
        return speed["tokens_per_second"] / count

    for entry in spec["anchor"]:
        card = kb.card(entry["gpu"])
        if card is None:
            continue
        per_card = rate(card, entry["count"], entry["method"], entry["recipe"], entry["strategy"],
                        entry["model_size_b"], int(kb.fields["tokens_per_example"].default))
        run_tokens = entry["dataset_examples"] * kb.fields["tokens_per_example"].default * kb.fields["epochs"].default
        predicted = run_tokens / (per_card * entry["count"]) / 3600
        low, high = entry["hours"]
        rows.append({"kind": "anchor", "id": entry["id"], "stack": default_stack, "unit": "hours",
                     "predicted": predicted, "published": [low, high], "ratio": None,
                     "holds": low / tolerance <= predicted <= high * tolerance, "source": entry["source"]})
    for entry in spec["measurement"]:
        card = kb.card(entry["gpu"])
        if card is None:
            continue
        predicted = rate(card, entry["count"], entry["method"], entry["recipe"], entry["strategy"],
                         entry["model_size_b"], entry["seq_len"], stack=entry["stack"], model=entry.get("model"),
                         micro_batch=entry["micro_batch"], checkpointing=entry.get("checkpointing"))
        published = entry["tokens_per_second"]
        # predicted time over published time: above 1, the model is slower than the run
        ratio = published / predicted
        rows.append({"kind": "measurement", "id": entry["id"], "stack": entry["stack"], "unit": "tokens/s per GPU",
                     "predicted": predicted, "published": [published, published], "ratio": ratio,
                     "holds": 1 / tolerance <= ratio <= tolerance, "source": entry["source"]})
    for entry in spec.get("moe", []):
        card = kb.card(entry["gpu"])
        if card is None:
            continue
        model = kb.model(entry["model"]) if "model" in entry else None
        size = entry.get("size_b") or (model.params_b if model else None)
        dense = kb.model(entry["dense"])
        assert size and dense is not None, "load() checks the models a calibration row names"
        mixture = rate(card, entry["count"], "lora", "lora-16bit", "sharded", size, entry["seq_len"],
                       stack=entry["stack"], model=entry.get("model"), active_b=entry.get("active_b"))
        plain = rate(card, entry["count"], "lora", "lora-16bit", "sharded", dense.params_b, entry["seq_len"],
                     stack=entry["stack"], model=entry["dense"])
        predicted = plain / mixture
        low, high = entry["published"]
        rows.append({"kind": "moe", "id": entry["id"], "stack": entry["stack"], "unit": "time, MoE ÷ dense",
                     "predicted": predicted, "published": [low, high], "ratio": None,
                     "holds": low / tolerance <= predicted <= high * tolerance, "source": entry["source"]})
    for entry in spec["ratio"]:
        faster, slowest = kb.card(entry["faster"]), kb.card(entry["slower"])
        if faster is None or slowest is None:
            continue
        count = entry.get("faster_count", 1)
        strategy = "sharded" if count > 1 else "single"
        stack = entry.get("stack", default_stack)
        predicted = (rate(faster, count, "full", "mixed-adamw", strategy, 7.0, 2048, stack=stack,
                          micro_batch=entry.get("micro_batch", 1)) * count
                     / rate(slowest, 1, "full", "mixed-adamw", "single", 7.0, 2048, stack=stack,
                            micro_batch=entry.get("micro_batch", 1)))
        low, high = entry["published"]
        rows.append({"kind": "ratio", "id": entry["id"], "stack": stack, "unit": "ratio", "predicted": predicted,
                     "published": [low, high], "ratio": None,
                     "holds": low / tolerance <= predicted <= high * tolerance, "source": entry["source"]})
    return rows


def calibration_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per stack, over the published measurements: how many, the geometric
    mean of predicted over published time, and the spread (the geometric
    standard deviation)."""
    summary = {}
    for stack in sorted({row["stack"] for row in rows if row["kind"] == "measurement"}):
        logs = [math.log(row["ratio"]) for row in rows if row["kind"] == "measurement" and row["stack"] == stack]
        mean = sum(logs) / len(logs)
        spread = math.sqrt(sum((x - mean) ** 2 for x in logs) / len(logs))
        summary[stack] = {"count": len(logs), "geometric_mean": math.exp(mean), "spread": math.exp(spread),
                          "within": sum(1 for x in logs if abs(x) <= math.log(1.5)) / len(logs)}
    return summary


# What a configuration fact carries besides its own fields: its card's fields
# (that the rules read), the configuration a step's first trial would replace
# or the fastest tried before a trial (previous), and the configuration a
# trial of more cards started from (base).
CARRIED = frozenset({"card", "previous", "base"})


def bare(values: Mapping[str, Any]) -> dict[str, Any]:
    """A configuration's own fields: without what it carries, or the next
    count a trial names."""
    return {key: value for key, value in values.items() if key not in CARRIED and key != "next_count"}


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
                      sharded: bool, micro_batch: int = 1) -> dict[str, Any]:
        """One configuration: ``count`` cards of ``card`` running ``recipe_id``,
        whole weights on every device or sharded (ZeRO-3/FSDP), at a
        micro-batch of ``micro_batch`` sequences per device."""
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
                        strategy=strategy, seq_len=seq_len(kb, profile), batch=micro_batch,
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
        def on(stack: str) -> dict[str, float]:
            return throughput(kb, card, count, devices, sharded, stack=stack, method=profile["method"],
                              shape=shape_of(kb, profile["model_size_b"], profile.get("model_shape")),
                              total_b=profile["model_size_b"], active_b=req["active_b"],
                              seq=profile["tokens_per_example"], micro_batch=micro_batch,
                              checkpointing=recipe["checkpointing"], time_factor=recipe["time_factor"],
                              base_bits=recipe["base_bits"])

        # A recipe only one framework runs has that framework's stack, and no other.
        stack = str(recipe.get("stack") or stack_of(kb, profile))
        speed, other = on(stack), (None if recipe.get("stack") else on(other_stack(kb, stack)))
        per_token = speed["flops_per_token"]
        taken = run_hours(kb, req["tokens"], speed)
        # An optimizer step fused into the backward pass has no gradients to
        # accumulate (torchtune's single-device recipe): one micro-batch a step.
        steps = 1 if recipe.get("optimizer_in_backward") else accumulation(kb, micro_batch, devices)
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
            "stack": stack,
            "other_stack_hours": None if other is None else run_hours(kb, req["tokens"], other),
            "micro_batch": micro_batch,
            "gradient_accumulation_steps": steps,
            "global_batch": micro_batch * devices * steps,
            "sharded": sharded,
            "batch_settled": True,
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

    def batched(self, card: Mapping[str, Any], step: str, recipe_id: str, count: int, sharded: bool,
                config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The configuration at the fastest micro-batch that fits (timing.toml
        [batch]; a micro-batch of 1 when none larger fits or is faster)."""
        best = dict(config) if config is not None else self.configuration(card, step, recipe_id, count, sharded)
        if not best["fits"]:
            return best
        for size in micro_batches(self.kb, int(best["devices"]))[1:]:
            config = self.configuration(card, step, recipe_id, count, sharded, size)
            if not config["fits"] or config["hours"] >= best["hours"]:
                break  # memory only grows with the micro-batch, and the time per token falls, then rises
            best = config
        return best

    def settled(self, card: Mapping[str, Any], config: dict[str, Any]) -> dict[str, Any]:
        """``config`` marked with whether a larger micro-batch would fit and be
        faster (the rule `larger-micro-batch` raises it when so)."""
        faster = self.batched(card, config["step"], config["recipe"], int(config["count"]), bool(config["sharded"]),
                              config)
        config["batch_settled"] = faster["micro_batch"] == config["micro_batch"]
        return config

    def larger_batch(self, card: Mapping[str, Any], candidate: Mapping[str, Any]) -> dict[str, Any]:
        """The candidate at the fastest micro-batch that fits, the same cards and recipe."""
        found = self.batched(card, LARGER_BATCH, candidate["recipe"], int(candidate["count"]),
                             bool(candidate["sharded"]))
        keep = {key: candidate[key] for key in ("next_step", "sped_up", "min_count", "min_count_hours",
                                                "min_count_cost", "can_scale", "possible")}
        return {**found, **keep, "step": LARGER_BATCH, "batch_settled": True}

    def counts(self, card: Mapping[str, Any], smallest: int, largest: int | None = None) -> list[int]:
        """The card counts of ranking.toml from ``smallest`` up (to ``largest``);
        more than one card only with a fast interconnect."""
        top = largest if largest is not None else self.kb.ranking["counts"][-1]
        return [c for c in self.kb.ranking["counts"]
                if smallest <= c <= top and (c == 1 or card["fast_interconnect"])]

    def count_after(self, count: int) -> int | None:
        """The count of ranking.toml after ``count``; None after the last."""
        return next((c for c in self.kb.ranking["counts"] if c > count), None)

    def ladder_recipes(self) -> list[str]:
        """The recipes of the method's ladder, in its order, each once."""
        return list(dict.fromkeys(entry["recipe"] for entry in self.kb.recipes["ladder"][self.profile["method"]]))

    def faster_recipes(self, base: Mapping[str, Any]) -> list[str]:
        """The recipes of the ladder faster than ``base``'s (a lower time_factor), in the ladder's order."""
        recipes = self.kb.recipes["recipe"]
        return [r for r in self.ladder_recipes() if recipes[r]["time_factor"] < base["time_factor"]]

    def step(self, card: Mapping[str, Any], step: str) -> dict[str, Any]:
        """The configuration a ladder step that keeps to one card proposes on ``card``."""
        recipe = ladder_step(self.kb, self.profile["method"], step)["recipe"]
        return self.settled(card, self.configuration(card, step, recipe, 1, sharded=False))

    def trial(self, card: Mapping[str, Any], step: str, count: int,
              previous: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Ladder step ``step`` tried on ``count`` cards: its configuration
        (sharded over more than one device), with the next count of
        ranking.toml (None after the last) and, for the first count a step
        tries, the configuration it would replace (``previous``). The rules
        over trials decide whether to try the next count."""
        recipe = ladder_step(self.kb, self.profile["method"], step)["recipe"]
        config = self.configuration(card, step, recipe, count, sharded=count * int(card["devices"]) > 1)
        return {**config, "next_count": self.count_after(count),
                "previous": dict(previous) if previous is not None else None}

    def first_trial(self, card: Mapping[str, Any], step: str,
                    previous: Mapping[str, Any] | None) -> dict[str, Any]:
        """The first count a step that spreads over devices tries: one card for
        a step that takes the fewest (recipes.toml spread "fewest") or a card of
        several devices, else two cards, whose weights are then sharded. On a
        card with a fast link, when even the most cards of ranking.toml cannot
        hold it, the most: sharded, the need per device only falls as cards
        are added, so no count between can, and `no-count-fits` settles it
        without a trial of every count."""
        entry = ladder_step(self.kb, self.profile["method"], step)
        smallest = 1 if entry["spread"] == "fewest" or int(card["devices"]) > 1 else 2
        base = previous if previous is not None else self.configuration(card, step, entry["recipe"], 1, sharded=False)
        most = int(self.kb.ranking["counts"][-1])
        if card["fast_interconnect"] and most > smallest:
            at_most = self.trial(card, step, most, base)
            if not at_most["fits"]:
                return at_most
        return self.trial(card, step, smallest, base)

    def tried(self, card: Mapping[str, Any], trial: Mapping[str, Any]) -> dict[str, Any]:
        """A trial as the step's candidate: settled at its micro-batch when it fits."""
        config = bare(trial)
        return self.settled(card, config) if config["fits"] else config

    def impossible(self, trial: Mapping[str, Any]) -> dict[str, Any]:
        """The configuration a step replaced, marked as a step that cannot be taken."""
        return {**bare(trial["previous"]), "step": trial["step"], "next_step": trial["next_step"], "possible": False, "fits": False,
                "can_scale": False}

    def speed_trial(self, card: Mapping[str, Any], base: Mapping[str, Any], count: int) -> dict[str, Any]:
        """``base``, a configuration that fits only with a slow recipe (an
        8-bit base, CPU offload), tried on ``count`` cards with a faster
        recipe of the ladder: the first that fits there, whole weights first
        (the fastest faster one, sharded and not fitting, when none does).
        It carries the base's count, hours and cost (``min_count*``), the next
        count within one node, and the base; the rules over trials decide
        whether it pays."""
        faster = self.faster_recipes(base)
        config = next((c for recipe in faster for sharded in (False, True)
                       for c in (self.batched(card, SPEED_UP, recipe, count, sharded),) if c["fits"]), None)
        if config is None:
            config = self.configuration(card, SPEED_UP, faster[0], count, sharded=True)
        later = self.counts(card, count + 1, int(card["per_node"]))    # within one node
        return {**config, "next_step": None, "min_count": base["count"], "min_count_hours": base["hours"],
                "min_count_cost": base["total_cost"], "next_count": later[0] if later else None, "base": bare(base)}

    def first_speed_trial(self, card: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
        """The first count tried for a faster recipe: the next of ranking.toml
        within one node. With no such count, or no faster recipe on the
        ladder, the base itself, marked sped up (nothing to try)."""
        counts = self.counts(card, int(base["count"]) + 1, int(card["per_node"]))
        if not counts or not self.faster_recipes(base):
            return {**bare(base), "sped_up": True}
        return self.speed_trial(card, base, counts[0])

    def next_speed_trial(self, card: Mapping[str, Any], trial: Mapping[str, Any]) -> dict[str, Any]:
        return self.speed_trial(card, trial["base"], int(trial["next_count"]))

    @staticmethod
    def sped_up(trial: Mapping[str, Any], pays: bool) -> dict[str, Any]:
        """The card's candidate after trying faster recipes: the trial that
        pays (``pays``), or the base it was tried against; marked sped up, so
        that the deadline rules may follow."""
        return {**(bare(trial) if pays else trial["base"]), "sped_up": True}

    def scale_trial(self, card: Mapping[str, Any], base: Mapping[str, Any], count: int,
                    fastest: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """More cards of a fitting configuration (``base``), tried for the
        deadline on ``count`` cards: on more cards a recipe higher on the
        ladder may fit again, so the count's configuration is the first of the
        ladder's recipes, up to the base's own, that fits, whole weights
        first (the base's recipe, sharded and not fitting, when none does).
        The trial carries the next count of ranking.toml, the base and the
        fastest fitting trial before it; the rules over trials decide."""
        recipes = self.ladder_recipes()
        tried = recipes[:recipes.index(base["recipe"]) + 1] if base["recipe"] in recipes else [base["recipe"]]
        config = next((c for recipe in tried for sharded in (False, True)
                       for c in (self.batched(card, SCALE_OUT, recipe, count, sharded),) if c["fits"]), None)
        if config is None:
            config = self.configuration(card, SCALE_OUT, base["recipe"], count, sharded=True)
        return {**config, "next_count": self.count_after(count), "previous": dict(fastest) if fastest else None,
                "base": bare(base)}

    def first_scale_trial(self, card: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
        """The first count tried for the deadline: the count of ranking.toml after the base's."""
        count = self.count_after(int(base["count"]))
        assert count is not None, "scale-out-for-the-deadline fires below the last count only (candidate.can_scale)"
        return self.scale_trial(card, base, count)

    def next_scale_trial(self, card: Mapping[str, Any], trial: Mapping[str, Any]) -> dict[str, Any]:
        """The next count for the deadline, carrying the fastest fitting trial so far."""
        return self.scale_trial(card, trial["base"], int(trial["next_count"]), self.fastest(trial))

    @staticmethod
    def fastest(trial: Mapping[str, Any]) -> dict[str, Any] | None:
        """The fastest fitting configuration among ``trial`` and those tried before it."""
        own = bare(trial)
        earlier = trial["previous"]
        if not trial["fits"]:
            return dict(earlier) if earlier else None
        return own if earlier is None or own["hours"] < earlier["hours"] else dict(earlier)

    def scaled(self, trial: Mapping[str, Any], meets: bool) -> dict[str, Any]:
        """The card's candidate after scaling out: the trial that meets the
        deadline, or (``meets`` false) the fastest that fits, or the base
        when no count fits; marked so that no rule scales it again."""
        base = trial["base"]
        chosen = self.fastest(trial) if not meets else self.fastest({**trial, "previous": None})
        best = dict(chosen or base)
        best.update(step=SCALE_OUT, next_step=None, can_scale=False, sped_up=True, min_count=base["count"],
                    min_count_hours=base["hours"], min_count_cost=base["total_cost"])
        return best


def score(kb: KnowledgeBase, profile: Mapping[str, Any], option: Mapping[str, Any], factors: Sequence[float]) -> float:
    """Lower is better: total cost (USD) and hours weighed by the budget (H35,
    H39), times the factors of the preference rules that fired on the option."""
    weights = kb.ranking["budget_weights"][profile["budget"]]
    value = option["total_cost"] ** weights["cost"] * option["hours"] ** weights["time"]
    for factor in factors:
        value *= factor
    return value

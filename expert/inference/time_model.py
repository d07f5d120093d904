"""The time model: how long a configuration trains. Tokens x FLOPs per token
over what the cards sustain (``timing.toml``: the stack's utilization, the
card's memory bandwidth, the links between devices and nodes, the
micro-batch); and the shape, sequence and stack a run is timed for. Every
number comes from the knowledge base; nothing here knows a card.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..knowledge import Card, KnowledgeBase
from .estimate import GB, GIB, device_memory_gib, estimate, shape_for, shard_counts, usable_gib


def seq_len(kb: KnowledgeBase, profile: Mapping[str, Any]) -> int:
    """The sequence length memory is sized for: the person's when given
    (profile ``seq_len``); else the examples' (tokens per example,
    rules/profile.toml's default when not given), shorter than 1,024 too
    (256-token examples hold 256-token activations), never beyond the
    model's context. The launch files set the same maximum length."""
    if profile.get("seq_len"):
        return int(profile["seq_len"])
    seq = int(profile["tokens_per_example"])
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


def sustained_share(kb: KnowledgeBase, card: Mapping[str, Any]) -> float:
    """The share of its datasheet peak a card's class sustains under a
    training load (timing.toml [card_class], fitted to the published runs
    each class names); 1 for a card no class names. One's own GPU is the
    card it is timed as (``speed_of``: the card the person named)."""
    timed_as = card["speed_of"] or card["id"]
    return next((float(spec["sustained"]) for spec in kb.timing["card_class"].values()
                 if timed_as in spec["cards"]), 1.0)


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


class Relinked(Mapping[str, Any]):
    """A card's fields with NVLink between its cards (timing.toml [links]
    compare_nvlink_gbs): what the hours of a configuration sharded over PCIe
    are compared with. Every other field is read through to the card."""

    def __init__(self, kb: KnowledgeBase, card: Mapping[str, Any]) -> None:
        self.card = card
        self.link = {"interconnect": "nvlink", "link_gbs": float(kb.timing["links"]["compare_nvlink_gbs"])}

    def __getitem__(self, key: str) -> Any:
        return self.link[key] if key in self.link else self.card[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.card)

    def __len__(self) -> int:
        return len(self.card)


def over_pcie(card: Mapping[str, Any], count: int, devices: int, sharded: bool) -> bool:
    """Whether a configuration shards its weights over devices of one node
    that have no fast link between them (PCIe, through the host)."""
    return sharded and devices > 1 and nodes(card, count) == 1 and not card["fast_interconnect"]


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


@dataclass(frozen=True)
class OptimizerStep:
    """The optimizer step of a configuration (timing.toml [optimizer_step]):
    the trainable parameters one device steps (its shard), or, when the
    states wait in host memory, those its node's CPU steps; the bytes each
    moves; and how many micro-steps one optimizer step spans."""

    params_b: float
    bytes_per_parameter: float
    on_host: bool
    micro_steps: int
    # False where the recipe's time_factor already holds the step (recipes.toml step_in_time_factor):
    # ZeRO-Offload's measured slowdown includes its CPU steps, which are not counted again
    timed: bool = True


def optimizer_step(kb: KnowledgeBase, *, trainable_b: float, precision: str, optimizer: str, strategy: str,
                   devices: int, offload: bool, micro_steps: int, spanned: int = 1,
                   in_time_factor: bool = False) -> OptimizerStep:
    """What one optimizer step moves: every trainable parameter's weight,
    gradient and moments, by the precision and optimizer (timing.toml
    [optimizer_step] bytes), on each device for its shard of the optimizer
    state (estimate.shard_counts: all of it replicated, 1/n sharded); with
    the states offloaded, on the CPU of each of the ``spanned`` nodes for
    its share. ``in_time_factor``: the recipe's time_factor holds the step (recipes.toml
    step_in_time_factor: ZeRO-Offload's measured slowdown), which then takes no time of its own."""
    per_parameter = float(kb.timing["optimizer_step"]["bytes"][precision][optimizer])
    if offload:
        return OptimizerStep(trainable_b / max(spanned, 1), per_parameter, True, max(micro_steps, 1),
                             not in_time_factor)
    shards = shard_counts(strategy, devices)[2]
    return OptimizerStep(trainable_b / shards, per_parameter, False, max(micro_steps, 1), not in_time_factor)


def recipe_step(kb: KnowledgeBase, recipe: Mapping[str, Any], *, trainable_b: float, strategy: str,
                card: Mapping[str, Any], count: int, devices: int, micro_batch: int,
                sequences_per_step: int | None = None) -> OptimizerStep:
    """The optimizer step of a configuration, as the answers, the estimate and the calibration time
    it: ``recipe``'s precision, optimizer, offload (of its states or of its parameters) and
    step_in_time_factor (recipes.toml keys; an estimate passes its Setup's), ``trainable_b`` over
    ``devices`` sharded as ``strategy`` says, on ``count`` cards of ``card`` (their nodes' CPUs
    when offloaded). One step spans one micro-step when the recipe steps in the backward pass
    (optimizer_in_backward), else the micro-steps of ``sequences_per_step`` sequences, else of
    timing.toml [batch] global_sequences (:func:`accumulation`); ``micro_steps`` of the step says how many."""
    if recipe.get("optimizer_in_backward"):
        steps = 1
    elif sequences_per_step:
        steps = max(1, sequences_per_step // (micro_batch * max(devices, 1)))
    else:
        steps = accumulation(kb, micro_batch, devices)
    return optimizer_step(kb, trainable_b=trainable_b, precision=str(recipe["precision"]),
                          optimizer=str(recipe["optimizer"]), strategy=strategy, devices=devices,
                          offload=bool(recipe["offload"] or recipe.get("offload_params")), micro_steps=steps,
                          spanned=nodes(card, count), in_time_factor=bool(recipe.get("step_in_time_factor")))


def optimizer_seconds(kb: KnowledgeBase, card: Mapping[str, Any], stack: str, step: OptimizerStep) -> float:
    """Seconds one optimizer step takes: its bytes at the stack's share of
    the device's memory bandwidth, or, on the host, its parameters at CPU
    Adam's rate (timing.toml [optimizer_step]); none where the recipe's time_factor holds it."""
    if not step.timed:
        return 0.0
    if step.on_host:
        return step.params_b * 1e9 / float(kb.timing["optimizer_step"]["cpu_params_per_s"])
    bandwidth = (float(card["memory_bandwidth_gbs"]) / max(int(card["devices"]), 1)
                 * float(kb.timing["stack"][stack]["optimizer_bandwidth_share"]))
    return step.params_b * 1e9 * step.bytes_per_parameter / (bandwidth * 1e9)


def throughput(kb: KnowledgeBase, card: Mapping[str, Any], count: int, devices: int, sharded: bool, *, stack: str,
               method: str, shape: Mapping[str, Any], total_b: float, active_b: float, seq: float,
               micro_batch: int, checkpointing: bool, time_factor: float, base_bits: int,
               host_s: float = 0.0, optimizer: OptimizerStep | None = None) -> dict[str, float]:
    """Tokens per second ``count`` cards train (timing.toml): one micro-step
    of every device is its fixed overhead (per step and per layer, more
    with sharded weights), the FLOPs of its tokens at the stack's
    utilization (less the padding of unpacked batches), the
    de-quantization of a 4-bit base, and the communication the compute does
    not hide; ``host_s``, the seconds a micro-step waits for paged optimizer
    states to cross the host link (:func:`host_traffic`); and its share of
    the ``optimizer`` step (:func:`optimizer_seconds` over the micro-steps
    one step spans). A mixture of
    experts computes by its active parameters at the stack's MoE
    efficiency; sharded weights are gathered whole."""
    spec = kb.timing["stack"][stack]
    per_token = flops_per_token(kb, shape, active_b, method, checkpointing, seq)
    # A mixture of experts computes its active parameters' FLOPs at a share of the dense speed: less
    # with its weights sharded over the devices, each expert gathered whole whatever is active.
    moe = spec["moe_efficiency"] if sharded and devices > 1 else spec["moe_efficiency_unsharded"]
    efficiency = float(moe) if active_b < total_b * 0.99 else 1.0
    card_devices = max(int(card["devices"]), 1)
    peak = float(card["bf16_tflops"]) * 1e12 / card_devices
    utilization = (float(spec["utilization"][method]) * bandwidth_share(kb, card)
                   * kb.timing["vendor_share"].get(card["vendor"], 1.0) * sustained_share(kb, card))
    tokens = micro_batch * seq
    padding = 1 + float(spec["padding_waste"]) * (1 - 1 / micro_batch)
    compute = tokens * per_token * padding / (peak * utilization * efficiency) * time_factor
    # The fixed time of a micro-step: per step, per layer, and per layer the hooks of sharded weights add.
    layers = int(shape["layers"])
    fixed = float(spec["overhead_per_step_s"]) + float(spec["overhead_per_layer_s"]) * layers
    if sharded and devices > 1:
        fixed += float(spec["sharded_overhead_per_layer_s"]) * layers
    reference = float(kb.timing["quantized"]["reference_bandwidth_gbs"])
    dequantize = (float(spec["dequantize_s_per_b"]) * total_b * reference
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
    stepping = optimizer_seconds(kb, card, stack, optimizer) / optimizer.micro_steps if optimizer else 0.0
    step = compute + fixed + dequantize + exposed + host_s + stepping
    return {"tokens_per_second": tokens / step * devices, "flops_per_token": per_token, "step_s": step,
            "exposed_s": exposed, "optimizer_s": stepping}


def host_link(kb: KnowledgeBase, card_id: str) -> dict[str, Any]:
    """The link between a card and its host (timing.toml [host_link]): PCIe
    generation and lanes from its datasheet, the default for a card the
    table does not name, and the GB/s it carries each way."""
    spec = kb.timing["host_link"]
    link = spec["card"].get(card_id, spec["default"])
    gbs = float(spec["lane_gbs"][str(link["pcie"])]) * int(link["lanes"])
    return {"pcie": int(link["pcie"]), "lanes": int(link["lanes"]), "gbs": gbs, "named": card_id in spec["card"]}


def host_traffic(kb: KnowledgeBase, card: Mapping[str, Any], states_gb: float, need_gb: float) -> dict[str, Any]:
    """Paged optimizer states (bitsandbytes' unified memory) that do not fit
    beside what the device already holds (``need_gb``, the estimate without
    them) go out to host memory and come back at every optimizer step: the
    GB that cross the card's host link per step (out and in), and the
    seconds it takes, both directions at once at timing.toml [host_link]
    share of the link's rate."""
    # the device's memory as its driver reports it, in GB as the link's rate is (the margin kept free)
    usable_gb = usable_gib(kb, device_memory_gib(float(card["vram_gb"]), float(card["memory_mib"]),
                                                 max(int(card["devices"]), 1))) * GIB / GB
    room = max(0.0, usable_gb - need_gb)
    paged = max(0.0, states_gb - room)
    link = host_link(kb, str(card["id"]))
    seconds = paged / (link["gbs"] * float(kb.timing["host_link"]["share"]))
    return {"gb": 2 * paged, "seconds": seconds, "states_gb": states_gb, "resident_gb": states_gb - paged, **link}


def parameter_traffic(kb: KnowledgeBase, card: Mapping[str, Any], total_b: float, bits: int,
                      devices: int) -> dict[str, Any]:
    """Parameters offloaded to host memory (FSDP cpu_offload, ZeRO-3
    offload_param) cross each device's host link once per gathering
    (timing.toml [sharding] gathers: forward and backward): every device
    brings its shard in, at [host_link] share of the link's rate, before the
    all-gather between devices. The GB per micro-step each way and the
    seconds it takes."""
    shard_gb = total_b * bits / 8 / max(devices, 1)
    moved = float(kb.timing["sharding"]["gathers"]) * shard_gb
    link = host_link(kb, str(card["id"]))
    return {"gb": moved, "seconds": moved / (link["gbs"] * float(kb.timing["host_link"]["share"])), **link}


def run_hours(kb: KnowledgeBase, run_tokens: float, rate: Mapping[str, float]) -> float:
    return run_tokens / rate["tokens_per_second"] / 3600


def run_time(kb: KnowledgeBase, setup: Any, card: Card, examples: float, tokens_per_example: float,
             epochs: float, stack: str | None = None, sequences_per_step: int | None = None) -> dict[str, Any]:
    """How long ``setup`` (an estimator Setup) trains on ``card``: the JSON
    ``time`` of ``expert estimate``, on ``stack`` and on the other one. The
    recipe's time_factor is that of the recipe with the same method, base
    bits and offload (1 when none). The optimizer steps every
    ``sequences_per_step`` sequences (all devices together), else every
    timing.toml [batch] global_sequences (every micro-step when it steps in
    the backward pass)."""
    stack = stack or str(kb.fields["stack"].default)
    recipe = next((r for r in kb.recipes["recipe"].values() if r["method"] == setup.method
                   and r["base_bits"] == setup.base_bits and r["offload"] == setup.offload), None)
    count = max(1, math.ceil(setup.gpus / card.devices))
    run_tokens = examples * tokens_per_example * epochs
    shape = shape_of(kb, setup.model_size_b, setup.shape)
    fact = card.fact()
    memory = estimate(kb, setup)
    traffic = None
    if setup.optimizer.startswith("paged") and not setup.offload:  # paged states that do not fit cross the host link
        traffic = host_traffic(kb, fact, memory.cpu_gb / max(setup.gpus, 1), memory.per_gpu_gb)
    as_recipe = {"precision": setup.precision, "optimizer": setup.optimizer, "offload": setup.offload,
                 "offload_params": setup.offload_params, "optimizer_in_backward": setup.optimizer_in_backward,
                 "step_in_time_factor": bool(recipe and recipe.get("step_in_time_factor"))}
    stepping = recipe_step(kb, as_recipe, trainable_b=memory.trainable_b, strategy=setup.strategy, card=fact,
                           count=count, devices=setup.gpus, micro_batch=setup.batch,
                           sequences_per_step=sequences_per_step)
    host_s = traffic["seconds"] / stepping.micro_steps if traffic else 0.0
    if setup.offload_params:
        host_s += parameter_traffic(kb, fact, setup.model_size_b, setup.base_bits if setup.method != "full" else 16,
                                    setup.gpus)["seconds"]

    def on(which: str) -> dict[str, float]:
        return throughput(kb, fact, count, setup.gpus, setup.strategy in ("zero3", "fsdp"), stack=which,
                          method=setup.method, shape=shape, total_b=setup.model_size_b,
                          active_b=float(shape.get("active_b") or setup.model_size_b), seq=tokens_per_example,
                          micro_batch=setup.batch, checkpointing=setup.checkpointing,
                          time_factor=recipe["time_factor"] if recipe else 1.0, base_bits=setup.base_bits,
                          host_s=host_s, optimizer=stepping)

    rate, other = on(stack), on(other_stack(kb, stack))
    taken = run_hours(kb, run_tokens, rate)
    return {"gpu": None if card.id == "own" else card.id, "count": count, "tokens": int(run_tokens),
            "flops_per_token": round(rate["flops_per_token"]), "tokens_per_second": round(rate["tokens_per_second"], 1),
            "hours": round(taken, 3), "speed_assumed": card.speed_assumed, "stack": stack,
            "other_stack": {"stack": other_stack(kb, stack), "hours": round(run_hours(kb, run_tokens, other), 3)},
            "host_traffic": host_traffic_json(traffic),
            "optimizer_step": optimizer_step_json(kb, fact, stack, stepping, rate, taken,
                                                  run_tokens / (tokens_per_example * setup.batch
                                                                * max(setup.gpus, 1) * stepping.micro_steps))}


def optimizer_step_json(kb: KnowledgeBase, card: Mapping[str, Any], stack: str, step: OptimizerStep,
                        rate: Mapping[str, float], taken: float, steps: float) -> dict[str, Any]:
    """The JSON ``time.optimizer_step``: where the step runs (gpu or cpu),
    the trainable parameters each device (or each node's CPU) steps, the
    bytes it moves per parameter, the share of the device's memory
    bandwidth it sustains (None on the CPU), the seconds of one step, the
    micro-steps one step spans, how many steps the run takes, and the
    hours they take together (their share of ``taken``)."""
    return {"on": "cpu" if step.on_host else "gpu", "params_b": round(step.params_b, 4),
            "bytes_per_parameter": step.bytes_per_parameter,
            "bandwidth_share": None if step.on_host else float(kb.timing["stack"][stack]["optimizer_bandwidth_share"]),
            "seconds_per_step": round(optimizer_seconds(kb, card, stack, step), 4),
            "micro_steps": step.micro_steps, "steps": math.ceil(steps),
            "hours": round(taken * rate["optimizer_s"] / rate["step_s"], 4)}


def host_traffic_json(traffic: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The JSON ``time.host_traffic``: paged optimizer states crossing the
    host link per optimizer step, or None when no state is paged."""
    if not traffic:
        return None
    return {"gb_per_step": round(traffic["gb"], 1), "seconds_per_step": round(traffic["seconds"], 2),
            "pcie": traffic["pcie"], "lanes": traffic["lanes"], "link_gbs": round(traffic["gbs"], 1),
            "link_assumed": not traffic["named"]}


def other_stack(kb: KnowledgeBase, stack: str) -> str:
    """The stack the answer compares with: the next one of profile.toml's choices."""
    choices = list(kb.fields["stack"].choices)
    return choices[(choices.index(stack) + 1) % len(choices)]


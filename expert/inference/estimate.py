"""A second opinion from first principles: the GPU memory a training run
needs, component by component. Pure arithmetic over the constants of
``rules/estimator.toml`` (each cites its source); no inference engine.

weights, gradients and optimizer state follow the ZeRO paper's accounting
(Rajbhandari et al. 2020), sharded across GPUs as ZeRO-1/2/3 and FSDP do;
activations follow Korthikanti et al. 2022, with or without activation
checkpointing; LoRA adds its adapters (and their optimizer state) to a frozen
base at 16, 8 or 4 bits (NF4 with double quantization, as in QLoRA).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..knowledge import KnowledgeBase

# Memory is counted in bytes and shown in GiB (2**30 bytes), the unit cards
# are sold and their drivers report in (a card sold as "24 GB" holds 24 GiB; see
# docs/estimator.md, "Units"). The *_gb figures (10**9 bytes) are kept beside
# them for the JSON contract and for what crosses a link, whose speeds are
# given in GB/s.
GB = 1e9
GIB = float(2**30)
PRECISIONS = ("mixed", "bf16", "fp16")
STRATEGIES = ("single", "ddp", "zero1", "zero2", "zero3", "fsdp")
TARGETS = ("all", "qv")
COMPONENTS = ("weights", "gradients", "optimizer", "activations", "overhead")


@dataclass(frozen=True)
class Setup:
    """What is being trained, and how."""

    model_size_b: float
    method: str = "lora"
    precision: str = "mixed"          # mixed (bf16 with fp32 master), bf16 (pure) or fp16 (with fp32 master)
    optimizer: str = "adamw"
    base_bits: int = 16               # frozen weights of LoRA/QLoRA: 16, 8 or 4 (NF4)
    lora_rank: int = 16
    lora_targets: str = "all"         # every linear layer, or q and v only
    seq_len: int = 1024
    batch: int = 1                    # micro-batch per GPU
    checkpointing: bool = True
    gpus: int = 1
    strategy: str = "single"
    offload: bool = False             # optimizer state and gradients in CPU memory
    # The weights' shards in CPU memory too (FSDP cpu_offload, ZeRO-3
    # offload_param): each layer is brought to the GPU when it is used, so
    # the GPU holds only the layers gathered at once; the gradients and
    # optimizer states go with them.
    offload_params: bool = False
    # The optimizer steps each parameter as soon as its gradient is ready and
    # frees it (torchtune's optimizer_in_bwd): no full set of gradients is kept.
    optimizer_in_backward: bool = False
    # The software stack (timing.toml [stack]): a tuned one computes the loss
    # in chunks (estimator.toml [loss]).
    stack: str = "typical"
    # The model's own architecture (rules/models.toml or a config.json); without
    # one, the typical shape of estimator.toml nearest in size.
    shape: Mapping[str, Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Estimate:
    """The memory a setup needs, per GPU and in all, by component: in GiB
    (2**30 bytes, what is compared with a card and shown) and in GB (10**9
    bytes, the JSON's older keys)."""

    setup: Setup
    shape: str
    params_b: float
    trainable_b: float
    breakdown: dict[str, float]       # GB per GPU, by component
    per_gpu_gb: float
    total_gb: float                   # all GPUs together
    cpu_gb: float                     # offloaded to CPU memory
    breakdown_gib: dict[str, float]   # the same, in GiB
    per_gpu_gib: float
    total_gib: float
    cpu_gib: float
    # How long it trains (time_model.run_time): gpu, count, tokens, flops_per_token,
    # tokens_per_second, hours, speed_assumed; None when not asked.
    time: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["time"] is None:
            del data["time"]
        data["setup"] = asdict(self.setup)
        for key in ("params_b", "trainable_b", "per_gpu_gb", "total_gb", "cpu_gb", "per_gpu_gib", "total_gib",
                    "cpu_gib"):
            data[key] = round(data[key], 3)
        for key in ("breakdown", "breakdown_gib"):
            data[key] = {k: round(v, 3) for k, v in data[key].items()}
        return data


def typical(kb: KnowledgeBase, model_size_b: float, method: str, shape: Mapping[str, Any] | None = None,
            **changes: Any) -> Setup:
    """The typical setup of ``rules/estimator.toml`` for a method; with the
    model's architecture, sequences no longer than its context."""
    spec = kb.estimator["typical"]
    seq_len = spec["seq_len"]
    if shape and shape.get("context"):
        seq_len = min(seq_len, int(shape["context"]))
    setup = Setup(model_size_b, method, spec["precision"], spec["optimizer"], spec["base_bits"][method],
                  spec["lora_rank"], "all", seq_len, spec["batch"], spec["checkpointing"], shape=shape)
    return replace(setup, **changes)


def shape_for(kb: KnowledgeBase, size_b: float) -> dict[str, Any]:
    return kb.nearest_shape(size_b)


def adapter_params(shape: Mapping[str, Any], rank: int, targets: str) -> float:
    """LoRA's parameters on the attention (q and v, or all four projections)
    and, with "all", on the MLP: on a mixture of experts, every expert's."""
    h, ffn = shape["hidden"], shape["ffn"]
    head_dim = shape.get("head_dim") or h / shape["heads"]
    q, kv = shape["heads"] * head_dim, shape["kv_heads"] * head_dim
    attention = {"q": h + q, "k": h + kv, "v": h + kv, "o": q + h}
    layers = shape["layers"]
    if targets == "qv":
        return rank * (attention["q"] + attention["v"]) * layers
    dense_mlp = 3 * (h + ffn) if shape.get("gated", True) else 2 * (h + ffn)
    experts = shape.get("experts")
    if not experts:
        return rank * (sum(attention.values()) + dense_mlp) * layers
    moe_layers = shape.get("moe_layers") or layers
    expert_ffn = shape["expert_ffn"]
    expert = 3 * (h + expert_ffn) if shape.get("gated", True) else 2 * (h + expert_ffn)
    every_expert = (experts + (shape.get("shared_experts") or 0)) * expert
    return rank * (sum(attention.values()) * layers + dense_mlp * (layers - moe_layers) + every_expert * moe_layers)


def embedding_params(shape: Mapping[str, Any]) -> float:
    """Parameters of the input embeddings and the output head (one matrix when tied)."""
    return float(shape["vocab"]) * float(shape["hidden"]) * (1 if shape.get("tied") else 2)


def activation_bytes(constants: Mapping[str, Any], setup: Setup, shape: Mapping[str, Any],
                     streamed: bool) -> float:
    """Bytes of one GPU's activations at the setup's tokens: the layers'
    saved inputs (all of each layer without checkpointing), the layer
    recomputed in full, and the logits (estimator.toml [activations],
    [loss]); ``streamed``: the weights stream through the GPU (sharded or
    offloaded parameters), which checkpointing pays a little more for."""
    sharding = constants["sharding"]
    act = constants["activations"]
    tokens = setup.seq_len * setup.batch
    # Keys and values are as wide as the key/value heads (grouped-query attention).
    head_dim = shape.get("head_dim") or shape["hidden"] / shape["heads"]
    kv_width = shape["kv_heads"] * head_dim / shape["hidden"]
    full_layer = act["per_layer"] - act["kv_per_layer"] * (1 - kv_width)
    per_layer = act["checkpointed_per_layer"] if setup.checkpointing else full_layer
    if setup.checkpointing and streamed:   # measured on sharded runs (estimator.toml [sharding])
        per_layer += sharding["checkpointed_extra"]
    activations = tokens * shape["hidden"] * per_layer * shape["layers"]
    if setup.checkpointing:  # one layer at a time is recomputed in full
        activations += tokens * shape["hidden"] * full_layer
    # (a stack the loss table does not name computes the whole sequence's logits)
    logits = constants["loss"]["logits_bytes"].get(setup.stack, act["logits_bytes"])
    activations += tokens * shape["vocab"] * float(logits)
    return activations


def shard_counts(strategy: str, gpus: int) -> tuple[int, int, int]:
    """Over how many devices a strategy spreads the weights, the gradients
    and the optimizer state (ZeRO-1 the states, ZeRO-2 the gradients too,
    ZeRO-3 and FSDP everything); one device keeps all of them."""
    n = gpus
    return {"single": (1, 1, 1), "ddp": (1, 1, 1), "zero1": (1, 1, n), "zero2": (1, n, n),
            "zero3": (n, n, n), "fsdp": (n, n, n)}[strategy if n > 1 else "single"]


def estimate(kb: KnowledgeBase, setup: Setup) -> Estimate:
    constants = kb.estimator
    size = constants["bytes"]
    shape = setup.shape or shape_for(kb, setup.model_size_b)
    params = setup.model_size_b * 1e9
    state_bytes = constants["optimizer"][setup.precision][setup.optimizer]
    if setup.method == "full":
        trainable = params
        weights = params * size["bf16"]
    else:
        trainable = adapter_params(shape, setup.lora_rank, setup.lora_targets)
        base = {16: size["bf16"], 8: size["int8"], 4: size["nf4"]}[setup.base_bits]
        # A quantized base keeps its embeddings and output head in 16 bits
        # (estimator.toml [quantized]).
        kept = min(params, embedding_params(shape)) if setup.base_bits < 16 else 0.0
        weights = ((params - kept) * base + kept * constants["quantized"]["embeddings_bits"] / 8
                   + trainable * size["bf16"])
    gradients = trainable * size["bf16"]
    if setup.optimizer_in_backward and setup.method == "full":
        # one parameter's gradient at a time: the largest, the embedding matrix
        gradients = min(trainable, shape["vocab"] * shape["hidden"]) * size["bf16"]
    optimizer = trainable * state_bytes
    paged = trainable * constants["paged"]["host_bytes"] if setup.optimizer.startswith("paged") else 0.0

    n = setup.gpus
    sharding = constants["sharding"]
    shards = shard_counts(setup.strategy, n)
    # ZeRO-3/FSDP gather each layer whole before using it and prefetch the
    # next; with the parameters offloaded every layer comes from CPU memory
    # the same way, even on one GPU.
    streamed = shards[0] > 1 or setup.offload_params
    gathered = weights / shape["layers"] * sharding["gathered_layers"] if streamed else 0.0
    if streamed and setup.strategy == "fsdp":
        # FSDP's root unit (embeddings and head, 16 bits) stays whole from forward to backward: what the
        # fitted terms do not already hold of it (estimator.toml [sharding] root_unit_covered_mib)
        root = embedding_params(shape) * constants["quantized"]["embeddings_bits"] / 8
        gathered += max(0.0, root - sharding["root_unit_covered_mib"] * 2**20)
    weights, gradients, optimizer = weights / shards[0], gradients / shards[1], optimizer / shards[2]
    cpu = paged
    if setup.offload_params:  # the shards wait in CPU memory; the GPU keeps the gathered layers only
        cpu += weights * n
        weights = 0.0
    if setup.offload or setup.offload_params:  # every GPU's gradients and optimizer state go to CPU memory
        cpu += (gradients + optimizer) * n
        gradients = optimizer = 0.0
    weights += gathered

    activations = activation_bytes(constants, setup, shape, streamed)

    # The caching allocator keeps blocks freed by the layers gathered and
    # released, and by the activations, that later requests of another size
    # cannot reuse (estimator.toml [sharding]): counted where the weights
    # stream through the GPU, as a share of what comes and goes; and what
    # comes and goes is reserved at no less than the blocks loading the model
    # left cached, which it reuses.
    fragmented = 0.0
    if streamed:
        moving = activations + gathered
        four_bit = setup.method != "full" and setup.base_bits == 4      # else 16-bit (or 8-bit, loaded in 16)
        floor = sharding["working_floor_mib" if four_bit else "working_floor_16bit_mib"]
        fragmented = max(sharding["fragmentation"] * moving, floor * 2**20 - moving)
    in_bytes = {"weights": weights, "gradients": gradients, "optimizer": optimizer, "activations": activations,
                "overhead": constants["overhead"]["per_gpu_mib"] * 2**20 + fragmented}
    per_gpu = sum(in_bytes.values())
    return Estimate(setup, shape["name"], params / 1e9, trainable / 1e9,
                    {k: v / GB for k, v in in_bytes.items()}, per_gpu / GB, per_gpu * n / GB, cpu / GB,
                    {k: v / GIB for k, v in in_bytes.items()}, per_gpu / GIB, per_gpu * n / GIB, cpu / GIB)


def guide_holds_with(kb: KnowledgeBase, model_size_b: float, method: str, guide_gib: float,
                     shape: Mapping[str, Any] | None = None) -> str | None:
    """The first setup of ``rules/estimator.toml`` under which one GPU needs no
    more than the guide's figure, or None."""
    for spec in kb.estimator["setup"]:
        if method not in spec["methods"]:
            continue
        changes = {k: spec[k] for k in ("optimizer", "precision", "offload", "base_bits", "optimizer_in_backward")
                   if k in spec}
        if estimate(kb, typical(kb, model_size_b, method, shape, **changes)).per_gpu_gib <= guide_gib:
            return str(spec["id"])
    return None


def fitting_cards(kb: KnowledgeBase, result: Estimate) -> list[str]:
    """Catalog cards each of whose devices holds the per-GPU figure, by the
    test advise() applies (:func:`holds`)."""
    return [card.id for card in kb.catalog
            if holds(kb, result.per_gpu_gib, device_memory_gib(card.vram_gb, card.memory_mib, card.devices))]


def round_up(value: float, digits: int = 1) -> float:
    scale = 10**digits
    return math.ceil(value * scale - 1e-9) / scale


def holds(kb: KnowledgeBase, need_gib: float, memory_gib: float) -> bool:
    """Whether a device of ``memory_gib`` (as its driver reports it) holds a
    need of ``need_gib`` per device, rounded up to a tenth as it is shown,
    with the margin of recipes.toml [fit] kept free: the one fit test of
    advise(), ``expert estimate`` and the options they list."""
    return round_up(need_gib) <= usable_gib(kb, memory_gib)


def usable_gib(kb: KnowledgeBase, memory_gib: float) -> float:
    """What may be used of a device of ``memory_gib`` (as its driver reports
    it): the margin of recipes.toml [fit] kept free."""
    return memory_gib * (1 - kb.recipes["margin"])


def device_memory_gib(vram_gb: float, memory_mib: float, devices: int) -> float:
    """One device's memory in GiB, as its driver reports it (a card's
    ``memory_mib``, rules/catalog.toml); a card without that reading (a user
    catalog's, an own card given by its size) is taken at the size it is sold
    with: ``vram_gb`` GiB, which the driver reports a little under (90-100 %,
    docs/knowledge-base.md, "The card's real memory")."""
    total = memory_mib / 1024 if memory_mib else vram_gb
    return total / devices

"""Generic arithmetic the configuration rules call: the memory one
configuration needs per device, whether it fits, how long it takes (from the
card's FLOPs: :mod:`.time_model`) and what it costs (from its hourly price),
and the pure evaluation the ranking weighs. Every number comes from the
knowledge base (``recipes.toml``, ``estimator.toml``, ``timing.toml``,
``ranking.toml``, the catalog); nothing here knows a card, a size or a
threshold, and nothing here decides which configuration to try: the rules of
``rules.toml`` do, step by step. What the run needs and the cards it is
weighed on are in :mod:`.requirement`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..knowledge import LARGER_BATCH, SCALE_OUT, SPEED_UP, KnowledgeBase
from ..knowledge.records import PRECISION_UP
from .estimate import Estimate, Setup, device_memory_gib, estimate, holds, round_up, typical
from .time_model import (
    Relinked,
    host_traffic,
    link_gbs,
    micro_batches,
    nodes,
    other_stack,
    over_pcie,
    parameter_traffic,
    recipe_step,
    run_hours,
    seq_len,
    shape_of,
    stack_of,
    throughput,
)


def recipe_setup(kb: KnowledgeBase, profile: Mapping[str, Any], recipe: Mapping[str, Any], devices: int,
                 strategy: str, micro_batch: int, stack: str, seq: int | None = None) -> Setup:
    """What the estimator sizes for a recipe of recipes.toml on ``devices``
    devices: the model of the profile, the recipe's precision, optimizer,
    base bits, checkpointing and offload, sequences of ``seq`` tokens (by
    default the profile's: seq_len)."""
    setup = typical(kb, profile["model_size_b"], profile["method"], profile.get("model_shape"),
                    precision=recipe["precision"], optimizer=recipe["optimizer"], base_bits=recipe["base_bits"],
                    checkpointing=checkpointing(profile, recipe), offload=recipe["offload"], gpus=devices,
                    strategy=strategy, seq_len=seq or seq_len(kb, profile), batch=micro_batch,
                    optimizer_in_backward=bool(recipe.get("optimizer_in_backward")), stack=stack,
                    offload_params=bool(recipe.get("offload_params")))
    return replace(setup, lora_rank=int(profile["lora_rank"])) if profile.get("lora_rank") else setup


def checkpointing(profile: Mapping[str, Any], recipe: Mapping[str, Any]) -> bool:
    """Activation checkpointing: the person's when given (profile ``checkpointing``), else the recipe's."""
    given = profile.get("checkpointing")
    return bool(recipe["checkpointing"] if given is None else given)


def fixed_batch(profile: Mapping[str, Any]) -> int | None:
    """The micro-batch the person fixed (profile ``micro_batch``), or None: the rules choose it."""
    return int(profile["micro_batch"]) if profile.get("micro_batch") else None


def option_estimate(kb: KnowledgeBase, profile: Mapping[str, Any], option: Mapping[str, Any]) -> Estimate:
    """The estimator's memory of a sized configuration (an option of the
    run), part by part: the very setup :meth:`Sizer.configuration` sized it
    with (its recipe, devices, strategy, micro-batch and stack)."""
    recipe = kb.recipes["recipe"][option["recipe"]]
    return estimate(kb, recipe_setup(kb, profile, recipe, int(option["devices"]), str(option["strategy"]),
                                     int(option["micro_batch"]), str(option["stack"])))


# What a configuration carries besides its own fields: its card's fields, the
# configurations a trial is weighed against, and a trial's kind (the stage that settles it).
CARRIED = frozenset({"card", "previous", "base", "trial_kind"})


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


class Reads(Mapping[str, Any]):
    """A fact's values as a helper sees them, noting which fields it reads
    (in ``read``: a set of the caller's, or one of its own)."""

    def __init__(self, values: Mapping[str, Any], read: set[str] | None = None) -> None:
        self.plain = values        # the values, read without noting (not Mapping.values)
        self.read: set[str] = set() if read is None else read

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return self.plain[key]

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)   # (as Mapping.get notes it, through __getitem__, without its try)
        return self.plain.get(key, default)

    def note(self, names: Iterable[str]) -> None:
        """Note fields read on this fact's behalf (a configuration sized before)."""
        self.read.update(names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.plain)

    def __len__(self) -> int:
        return len(self.plain)


def plain(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """A fact's values without noting reads (``values`` itself unless it is a Reads)."""
    return values.plain if isinstance(values, Reads) else values


def note(values: Mapping[str, Any], names: Iterable[str]) -> None:
    """Note ``names`` as read of ``values`` where it notes its reads (a plain mapping notes nothing)."""
    if isinstance(values, Reads):
        values.note(names)


class Sizer:
    """Sizes configurations of one consultation: its profile, requirement and
    basis. ``sized``: the configurations already sized in the consultation
    (by card, recipe, count, sharding and micro-batch; the step only names
    them), each with the fields it read, so that a rule that sizes one again
    reads the same fields without the arithmetic (a third of them repeat)."""

    def __init__(self, kb: KnowledgeBase, profile: Mapping[str, Any], req: Mapping[str, Any], basis: str,
                 sized: dict[tuple[Any, ...], tuple[dict[str, Any], tuple[set[str], ...]]] | None = None) -> None:
        self.kb, self.profile, self.req, self.basis = kb, profile, req, basis
        self.strategies = kb.ranking["strategy"]
        self.sized = sized

    def strategy(self, devices: int, sharded: bool, recipe: Mapping[str, Any]) -> str:
        """How ``devices`` devices share the work: one alone, each whole
        (replicated), or sharded, with the recipe's own strategy where it
        names one (recipes.toml sharded_as)."""
        if devices == 1:
            return str(self.strategies["single"])
        if sharded:
            return str(recipe.get("sharded_as") or self.strategies["sharded"])
        return str(self.strategies["replicated"])

    def configuration(self, card: Mapping[str, Any], step: str, recipe_id: str, count: int,
                      sharded: bool, micro_batch: int = 1, seq: int | None = None) -> dict[str, Any]:
        """One configuration: ``count`` cards of ``card`` running ``recipe_id``,
        whole weights on every device or sharded (ZeRO-3/FSDP), at a
        micro-batch of ``micro_batch`` sequences per device, its memory sized
        for sequences of ``seq`` tokens (by default the profile's: seq_len). A
        micro-batch the person fixed stands for any other."""
        micro_batch = fixed_batch(self.profile) or micro_batch
        if self.sized is None:
            return self._configuration(card, step, recipe_id, count, sharded, micro_batch, seq)
        key = (card["id"], recipe_id, count, sharded, micro_batch, seq)
        if key in self.sized:
            config, reads = self.sized[key]
            config = {**config, "step": step, "next_step": ladder_after(self.kb, self.profile["method"], step)}
        else:
            noted = Reads(plain(card)), Reads(plain(self.profile)), Reads(plain(self.req))
            sizer = Sizer(self.kb, noted[1], noted[2], self.basis)
            config = sizer._configuration(noted[0], step, recipe_id, count, sharded, micro_batch, seq)
            reads = tuple(n.read for n in noted)
            self.sized[key] = dict(config), reads
        for values, names in zip((card, self.profile, self.req), reads, strict=True):
            note(values, names)    # the fields it read, read for the caller (the trace and WHY NOT say them)
        return config

    def _configuration(self, card: Mapping[str, Any], step: str, recipe_id: str, count: int,
                       sharded: bool, micro_batch: int, seq: int | None) -> dict[str, Any]:
        """One configuration, in four parts: the recipe as it runs on the card,
        the memory it needs per device, the time it trains, what it costs."""
        kb, profile = self.kb, self.profile
        recipe_id, recipe = self.recipe(card, recipe_id)
        devices = count * int(card["devices"])
        strategy = self.strategy(devices, sharded, recipe)
        # A recipe that needs bf16 or one device cannot run here at all.
        runs = bool((card["bf16"] or not recipe.get("needs_bf16")) and (devices == 1 or not recipe.get("single_device")))
        # A recipe only one framework runs has that framework's stack, and no other.
        stack = str(recipe.get("stack") or stack_of(kb, profile))
        memory = self.memory(card, recipe, devices, strategy, sharded, micro_batch, seq, stack)
        fits = memory["fits"] and runs
        where = "own" if card["id"] == "own" else "cloud"
        timing = self.timing(card, recipe, count, devices, sharded, micro_batch, stack, memory["result"])
        money = self.money(card, count, where, timing["hours"])
        return {
            "gpu": card["id"],
            "vendor": card["vendor"],
            "cost": card["cost"],
            "segment": card["segment"],
            "where": where,
            "step": step,
            "next_step": ladder_after(kb, profile["method"], step),
            "possible": runs,
            "recipe": recipe_id,
            "precision": recipe["precision"],
            "strategy": strategy,
            "count": count,
            "card_devices": int(card["devices"]),
            "devices": devices,
            "vram_gb": float(card["vram_gb"]),
            "device_vram_gb": memory["device_gb"],
            # each device's memory as its driver reports it, and what the recipe needs of it, in GiB
            "device_memory_gib": memory["memory_gib"],
            "total_vram_gb": count * float(card["vram_gb"]),
            "per_device_gib": memory["need"],
            "per_device_gb": memory["need_gb"],     # the same need in GB (10**9 bytes): the JSON's older key
            "fits": fits,
            "headroom": 1 - memory["need"] / memory["memory_gib"],
            "host_ram_gib": memory["host_ram_gib"],
            "host_ram_gb": memory["host_ram_gb"],
            "hours": timing["hours"],
            "stack": stack,
            "other_stack_hours": timing["other_stack_hours"],
            "micro_batch": micro_batch,
            "gradient_accumulation_steps": timing["steps"],
            "global_batch": micro_batch * devices * timing["steps"],
            "sharded": sharded,
            "batch_settled": True,
            "min_count": count,
            "min_count_hours": timing["hours"],
            "min_count_cost": money["total_cost"],
            "time_factor": timing["time_factor"],
            **timing["traffic"],
            "sped_up": False,
            # whether mixed precision on more cards of one node is weighed, or there is nothing to weigh: a
            # recipe that is not lean (recipes.toml), one's own cards, no fast link, a whole node already
            "precision_weighed": not (recipe.get("lean") and where == "cloud" and card["fast_interconnect"]
                                      and count < int(card["per_node"])),
            "can_scale": bool(fits and where == "cloud" and card["fast_interconnect"]
                              and count < kb.ranking["counts"][-1]),
            "nodes": nodes(card, count),
            # across nodes: the network's GB/s per GPU the hours assume (timing.toml [links]), and the share
            # of a micro-step spent waiting for weights and gradients to cross the links
            "network_gbs": link_gbs(kb, card, nodes(card, count)) if nodes(card, count) > 1 else None,
            "communication_share": timing["communication_share"],
            # the share of the hours the optimizer steps take (timing.toml [optimizer_step])
            "optimizer_share": timing["optimizer_share"],
            "nvlink_hours": timing["nvlink_hours"],
            "flops_per_token": timing["flops_per_token"],
            "tokens_per_second": self.req["tokens"] / (timing["hours"] * 3600),
            "speed_assumed": bool(card["speed_assumed"]),
            "price_assumed": bool(card["price_assumed"]),
            **money,
        }

    def recipe(self, card: Mapping[str, Any], recipe_id: str) -> tuple[str, dict[str, Any]]:
        """The recipe as it runs on ``card``: a card without bf16 runs the recipe's fp16 twin."""
        recipe = self.kb.recipes["recipe"][recipe_id]
        if not card["bf16"] and recipe.get("fp16"):
            recipe_id = recipe["fp16"]
            recipe = self.kb.recipes["recipe"][recipe_id]
        return recipe_id, recipe

    def memory(self, card: Mapping[str, Any], recipe: Mapping[str, Any], devices: int, strategy: str,
               sharded: bool, micro_batch: int, seq: int | None, stack: str) -> dict[str, Any]:
        """What the recipe needs on every device (the estimate's, or the
        guide's figure too for the strict guide reading), and whether it fits
        in the device's memory as its driver reports it (in GiB), with the
        margin left free."""
        kb, profile, req = self.kb, self.profile, self.req
        setup = recipe_setup(kb, profile, recipe, devices, strategy, micro_batch, stack, seq)
        result = estimate(kb, setup)
        device_gb = float(card["vram_gb"]) / int(card["devices"])
        memory_gib = device_memory_gib(float(card["vram_gb"]), float(card["memory_mib"]), int(card["devices"]))
        # The guide's figure is for the whole run: every device holds all of it
        # unless the weights are sharded (used only by the strict guide reading).
        # It is in the unit cards are sold in (a card of 24 GB holds 24 GiB).
        guide_share = req["vram_gb"] / (devices if sharded else 1)
        estimate_gib, estimate_gb = round_up(result.per_gpu_gib), round_up(result.per_gpu_gb)
        if self.basis == "guide":  # the guide's figure must fit, and the recipe must be able to start
            need, need_gb = max(round_up(guide_share), estimate_gib), max(round_up(guide_share), estimate_gb)
            fits = guide_share <= device_gb and holds(kb, result.per_gpu_gib, memory_gib)
        else:  # what the recipe needs on every device, with the margin left free
            need, need_gb, fits = estimate_gib, estimate_gb, holds(kb, result.per_gpu_gib, memory_gib)
        if recipe.get("offload_params"):   # the weights wait in host RAM: the host must hold them
            fits = fits and result.cpu_gib / devices <= float(kb.recipes["offload_params"]["host_ram_per_device_gib"])
        return {"result": result, "device_gb": device_gb, "memory_gib": memory_gib, "need": need,
                "need_gb": need_gb, "fits": fits,
                "host_ram_gb": round_up(result.cpu_gb) if result.cpu_gb > 0 else None,
                "host_ram_gib": round_up(result.cpu_gib) if result.cpu_gib > 0 else None}

    def timing(self, card: Mapping[str, Any], recipe: Mapping[str, Any], count: int, devices: int, sharded: bool,
               micro_batch: int, stack: str, result: Any) -> dict[str, Any]:
        """How long it trains (from the card's FLOPs, :mod:`.time_model`), on
        its stack and on the other, and the host traffic of paged states."""
        kb, profile, req = self.kb, self.profile, self.req
        # The optimizer step: each device's shard of the trainable parameters, once per optimizer step
        # (one micro-batch a step where it is fused into the backward pass: torchtune's single-device recipe).
        stepping = recipe_step(kb, recipe, trainable_b=result.trainable_b, strategy=result.setup.strategy, card=card,
                               count=count, devices=devices, micro_batch=micro_batch)
        # Paged optimizer states that do not fit beside the rest cross the host link at every optimizer step.
        paged = recipe["optimizer"].startswith("paged") and not recipe["offload"] and result.cpu_gb > 0
        traffic = host_traffic(kb, card, result.cpu_gb / devices, result.per_gpu_gb) if paged else None
        host_s = traffic["seconds"] / stepping.micro_steps if traffic else 0.0
        if recipe.get("offload_params"):   # every micro-step brings each device's shard in over its host link
            host_s += parameter_traffic(kb, card, profile["model_size_b"], int(recipe["base_bits"]), devices)["seconds"]

        def on(stack: str, waits: float = host_s, linked: Mapping[str, Any] = card) -> dict[str, float]:
            return throughput(kb, linked, count, devices, sharded, stack=stack, method=profile["method"],
                              shape=shape_of(kb, profile["model_size_b"], profile.get("model_shape")),
                              total_b=profile["model_size_b"], active_b=req["active_b"],
                              seq=profile["tokens_per_example"], micro_batch=micro_batch,
                              checkpointing=checkpointing(profile, recipe), time_factor=recipe["time_factor"],
                              base_bits=recipe["base_bits"], host_s=waits, optimizer=stepping)

        speed, other = on(stack), (None if recipe.get("stack") else on(other_stack(kb, stack)))
        # The time the paging adds counts as the recipe being slower (a time factor above its own), so
        # that a configuration keeping the states on the GPU is tried on more cards (faster-recipe-on-more-cards).
        time_factor = float(recipe["time_factor"])
        if host_s > 0:
            time_factor *= on(stack, 0.0)["tokens_per_second"] / speed["tokens_per_second"]
        # Sharded over PCIe: the hours the same cards would take with NVLink between them (the trade-off
        # rules.toml shard-over-pcie states), None otherwise.
        nvlink = on(stack, linked=Relinked(kb, card)) if over_pcie(card, count, devices, sharded) else None
        return {"steps": stepping.micro_steps, "hours": run_hours(kb, req["tokens"], speed),
                "nvlink_hours": None if nvlink is None else run_hours(kb, req["tokens"], nvlink),
                "other_stack_hours": None if other is None else run_hours(kb, req["tokens"], other),
                "time_factor": time_factor, "flops_per_token": speed["flops_per_token"],
                "communication_share": speed["exposed_s"] / speed["step_s"],
                "optimizer_share": speed["optimizer_s"] / speed["step_s"],
                # GB of paged optimizer states that cross the host link per optimizer step (out and back in),
                # the seconds that takes, and the link's GB/s each way (0 when nothing is paged)
                "traffic": {"host_traffic_gb": round_up(traffic["gb"]) if traffic else 0.0,
                            "host_traffic_s": round(traffic["seconds"], 2) if traffic else 0.0,
                            "host_link_gbs": round(traffic["gbs"], 1) if traffic else 0.0}}

    def money(self, card: Mapping[str, Any], count: int, where: str, taken: float) -> dict[str, Any]:
        """What ``count`` cards cost for ``taken`` hours of training: spot when
        the run tolerates interruptions and the price basis lists a spot price
        for the card, on demand otherwise; a rented card bills its setup too
        (ranking.toml [billing]), one's own bills nothing."""
        kb = self.kb
        spot_market = bool(card["spot_market"]) or where == "own"
        pricing = None if where == "own" else ("spot" if self.profile["interruptible"] and spot_market else "on-demand")
        on_demand, spot = count * float(card["price_on_demand"]), count * float(card["price_spot"])
        per_hour = {None: 0.0, "spot": spot, "on-demand": on_demand}[pricing]
        billed = taken + kb.ranking["setup_hours"] if where == "cloud" else 0.0
        return {
            "pricing": pricing,
            "price_age_days": None if pricing is None else card["spot_age_days" if pricing == "spot" else "price_age_days"],
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
        if not best["fits"] or fixed_batch(self.profile):     # (a micro-batch the person fixed is not raised)
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
        keep = {key: candidate[key] for key in ("next_step", "sped_up", "precision_weighed", "min_count", "min_count_hours",
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
        return {**(bare(trial) if pays else trial["base"]), "sped_up": True, "precision_weighed": True}

    def precision_trial(self, card: Mapping[str, Any], base: Mapping[str, Any], count: int) -> dict[str, Any]:
        """``base``, a configuration that fits only with a leaner recipe (pure
        bf16, 8-bit states), tried on ``count`` cards of one node with the
        method's first recipe (mixed precision and AdamW, recipes.toml's
        ladder): whole weights first, then sharded. It carries the base's
        count, hours and cost (``min_count*``), the next count within one
        node, and the base; the rules over trials decide."""
        recipe = self.ladder_recipes()[0]
        for sharded in (False, True):
            config = self.batched(card, PRECISION_UP, recipe, count, sharded)
            if config["fits"]:
                break   # (sharded and not fitting when neither fits: batched() leaves it at a micro-batch of 1)
        later = self.counts(card, count + 1, int(card["per_node"]))    # within one node
        return {**config, "next_step": None, "min_count": base["count"], "min_count_hours": base["hours"],
                "min_count_cost": base["total_cost"], "next_count": later[0] if later else None, "base": bare(base)}

    def first_precision_trial(self, card: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
        """The first count tried for mixed precision: the next of ranking.toml
        within one node; with none, the base itself, marked weighed."""
        counts = self.counts(card, int(base["count"]) + 1, int(card["per_node"]))
        if not counts:
            return {**bare(base), "precision_weighed": True}
        return self.precision_trial(card, base, counts[0])

    def next_precision_trial(self, card: Mapping[str, Any], trial: Mapping[str, Any]) -> dict[str, Any]:
        return self.precision_trial(card, trial["base"], int(trial["next_count"]))

    @staticmethod
    def precision_weighed(trial: Mapping[str, Any], found: bool) -> dict[str, Any]:
        """The card's candidate after weighing mixed precision: the trial that
        holds it (``found``), or the leaner base it was tried against."""
        return {**(bare(trial) if found else trial["base"]), "precision_weighed": True}

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
        best.update(step=SCALE_OUT, next_step=None, can_scale=False, sped_up=True, precision_weighed=True,
                    min_count=base["count"],
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

"""The answer to a consultation: the :class:`~expert.explanation.result.Result`
built from the engine's record of what fired (:func:`build_result`), each
recommendation's sentence and its JSON parts (recipe, cost, time). What runs
the consultation is :mod:`expert.application`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..i18n import Localizer
from ..inference.estimate import COMPONENTS, GB, GIB
from ..inference.run import Firing, Run, effective
from ..inference.sizing import checkpointing, option_estimate
from ..input import profile as profile_module
from ..knowledge import KnowledgeBase
from .result import Memory, Note, Recommendation, Rejection, Result, Setup, Trace, TraceStep
from .wording import Writer, host_memory_need, price_provenance, sentence

RECIPE_KEYS = ("precision", "optimizer", "base_bits", "checkpointing", "offload")


def recipe_of(kb: KnowledgeBase, option: Mapping[str, Any], profile: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON ``recipe`` of an option: its strategy and its recipe's settings (recipes.toml), with the
    checkpointing the person fixed (``profile``), if any."""
    recipe = kb.recipes["recipe"][option["recipe"]]
    offloaded = {"offload_params": True} if recipe.get("offload_params") else {}   # present only when true
    return {"id": option["recipe"], "strategy": option["strategy"], **{key: recipe[key] for key in RECIPE_KEYS},
            **offloaded,
            "checkpointing": checkpointing(profile or {}, recipe),
            "micro_batch": int(option["micro_batch"]),
            "gradient_accumulation_steps": int(option["gradient_accumulation_steps"]),
            "global_batch": int(option["global_batch"]),
            # the optimizer step fused into the backward pass, and the framework
            # that implements the recipe (None: any of them)
            "optimizer_in_backward": bool(recipe.get("optimizer_in_backward", False)),
            "framework": recipe.get("framework")}


def significant(value: float, digits: int = 4) -> float:
    """``value`` to a few significant digits: a 2-minute run is not 0.0 hours."""
    return float(f"{value:.{digits}g}")


def cost_of(option: Mapping[str, Any], card: Any = None) -> dict[str, Any]:
    """The JSON ``cost`` of an option: USD per hour and in all for the pricing
    used, and both totals (nothing for a card the person owns); and where the
    price is from: the provider, the date it was read and its source
    (rules/prices; null for a price you gave or a catalog's own)."""
    provider, date = price_provenance(card, option["pricing"])
    spot = bool(card is not None and option["pricing"] == "spot" and card.spot_provider)
    return {"provider": provider or None, "price_date": date or None,
            "price_source": (card.spot_source if spot else card.price_source) if provider else None,
            "currency": "USD", "per_hour": round(option["per_hour"], 2), "total": round(option["total_cost"], 2),
            "pricing": option["pricing"], "billed_hours": significant(option["billed_hours"]), "on_demand_total": round(option["on_demand_cost"], 2),
            "spot_total": None if option["spot_cost"] is None else round(option["spot_cost"], 2),
            "price_assumed": option["price_assumed"]}


def time_of(kb: KnowledgeBase, profile: Mapping[str, Any], req: Mapping[str, Any],
            option: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON ``time`` of an option: the tokens, the FLOPs each costs, how
    fast they go, on which software stack, the hours on the other one, and
    the share of the hours its optimizer steps take."""
    from ..inference.time_model import other_stack

    stack = option["stack"]
    other = None if option["other_stack_hours"] is None else {  # a recipe only one framework runs: no other stack
        "stack": other_stack(kb, stack), "hours": significant(option["other_stack_hours"])}
    return {"tokens": int(req["tokens"]), "flops_per_token": round(option["flops_per_token"]),
            "tokens_per_second": significant(option["tokens_per_second"]), "hours": significant(option["hours"]),
            "speed_assumed": option["speed_assumed"], "stack": stack, "other_stack": other,
            "host_traffic": host_traffic_of(kb, option), "optimizer_share": round(option["optimizer_share"], 4)}


def host_traffic_of(kb: KnowledgeBase, option: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON ``time.host_traffic`` of an option: the paged optimizer
    states that cross the card's host link per optimizer step (GB, out and
    back in), the seconds that takes, and the link; None when none does."""
    from ..inference.time_model import host_link

    if not option.get("host_traffic_gb"):
        return None
    link = host_link(kb, option["gpu"])
    return {"gb_per_step": option["host_traffic_gb"], "seconds_per_step": option["host_traffic_s"],
            "pcie": link["pcie"], "lanes": link["lanes"], "link_gbs": round(link["gbs"], 1),
            "link_assumed": not link["named"]}


def setup_and_memory(kb: KnowledgeBase, profile: Mapping[str, Any], option: Mapping[str, Any]) -> tuple[Setup, Memory]:
    """An option's recipe as run and each device's memory, part by part: the
    estimator's figures for the very setup the option was sized with
    (:func:`expert.inference.sizing.option_estimate`)."""
    sized = option_estimate(kb, profile, option)
    setup, parts = sized.setup, sized.breakdown
    as_run = Setup(setup.method, setup.strategy, setup.gpus, setup.precision, setup.optimizer, setup.base_bits,
                   None if setup.method == "full" else setup.lora_rank, setup.seq_len, setup.batch,
                   setup.checkpointing, setup.offload, setup.stack,
                   [name for name in profile_module.SETTINGS if profile.get(name) is not None
                    and not (name == "lora_rank" and setup.method == "full")])
    gb = {name: round(parts[name], 3) for name in COMPONENTS}
    memory = Memory(gb["weights"], gb["gradients"], gb["optimizer"], gb["activations"], gb["overhead"],
                    round(sized.per_gpu_gb, 3), float(option["per_device_gb"]),
                    round(float(option["device_vram_gb"]), 3),
                    {name: round(sized.breakdown_gib[name], 3) for name in COMPONENTS}, round(sized.per_gpu_gib, 3),
                    float(option["per_device_gib"]), round(float(option["device_memory_gib"]), 3))
    return as_run, memory


def _rounded(value: Any) -> Any:
    kind = type(value)
    if kind is float:
        return round(value, 3)
    if kind is dict:
        return {k: (round(v, 3) if type(v) is float else _rounded(v) if type(v) in (dict, list, tuple) else v)
                for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_rounded(v) for v in value]
    return value

def recommendation(kb: KnowledgeBase, run: Run, w: Writer, rank: int, gpu: str, fired: list[Firing],
                   rules: list[str]) -> Recommendation:
    """One recommended option, from its fields and the rules that fired on its card."""
    option = run.options[gpu]
    deadline = run.profile["deadline_h"]
    meets = None if deadline is None else option["elapsed_hours"] <= deadline
    as_run, memory = setup_and_memory(kb, run.profile, option)
    return Recommendation(
        rank=rank, gpu=gpu, name=w.name(gpu), source=w.origin(gpu), count=option["count"],
        vram_gb=option["vram_gb"], total_vram_gb=option["total_vram_gb"], strategy=option["strategy"],
        where=option["where"], pricing=option["pricing"], hours=significant(option["hours"]),
        cost=cost_of(option, run.cards.get(gpu)), cost_class=option["cost"],
        time=time_of(kb, run.profile, run.req or {}, option), meets_deadline=meets,
        recipe=recipe_of(kb, option, run.profile),
        devices=option["devices"], per_device_gb=option["per_device_gb"], host_ram_gb=option["host_ram_gb"],
        per_device_gib=option["per_device_gib"], host_ram_gib=option["host_ram_gib"],
        device_memory_gib=round(float(option["device_memory_gib"]), 3),
        rules=rules, text=option_text(kb, run, w, option, meets),
        reasons=[{"rule": f.rule.id,
                  "effect": "for" if f.rule.kind == "prefer" and (f.rule.factor or 0) < 1 else "against",
                  "text": w.message(f.rule, f.env)} for f in fired if f.rule.kind in ("reject", "demote", "prefer")],
        setup=as_run, memory=memory)


def option_text(kb: KnowledgeBase, run: Run, w: Writer, option: Mapping[str, Any], meets: bool | None) -> str:
    """The sentence of a recommended option: its cards, recipe, memory, time
    and money, then what it needs besides (nodes, host memory) and whether it
    misses the deadline."""
    tr, _ = w.tr, w.tr.gettext
    gpu, own = option["gpu"], option["gpu"] == "own"
    params = {
        "label": w.option_label(option), "need": tr.gib(option["per_device_gib"]),
        "device": tr.gib(option["device_memory_gib"]), "devices": option["devices"], "setup": w.setup(option),
        "strategy": w.label("strategy", option["strategy"]),
        "hours": tr.hours(option["hours"]),
        "money": w.money(option),
    }
    if run.basis == "guide" and option["devices"] == 1 and not own \
            and f"{tr.number(option['device_vram_gb'])} GB" not in w.name(gpu):   # a name with its size says it
        params["label"] = "%s (%s)" % (params["label"], params["device"])
    if run.basis == "guide":
        text = _("%(label)s holds %(need)s per device, the guide's figure or what its recipe needs if more (the "
                 "strict guide reading), in about %(hours)s; %(money)s.") % params
    elif own and option["devices"] > 1:
        text = _("%(label)s with %(setup)s, %(strategy)s over %(devices)s devices: about %(need)s of each "
                 "one's %(device)s, about %(hours)s of training, nothing to rent.") % params
    elif own:
        text = _("%(label)s with %(setup)s: about %(need)s of its %(device)s, about %(hours)s of training, "
                 "nothing to rent.") % params
    elif option["devices"] == 1:
        text = _("%(label)s with %(setup)s: about %(need)s of its %(device)s, about %(hours)s of training; "
                 "%(money)s.") % params
    else:
        text = _("%(label)s with %(setup)s, %(strategy)s over %(devices)s devices of %(device)s: about "
                 "%(need)s each, about %(hours)s of training; %(money)s.") % params
    if run.basis != "guide":
        text += " " + w.batch_and_stack(option)
    if option["nodes"] > 1:
        text += " " + _("It spans %(nodes)s nodes of %(per_node)s cards.") % {
            "nodes": option["nodes"], "per_node": run.cards[gpu].per_node}
    text += host_memory_text(kb, w, option)
    if meets is False:
        text += " " + _("It misses your deadline of %(deadline)s: an option only if you can wait.") % {
            "deadline": tr.hours(run.profile["deadline_h"])}
    return sentence(text)


def host_memory_text(kb: KnowledgeBase, w: Writer, option: Mapping[str, Any]) -> str:
    """What an option needs of host memory: offloaded states, or paged ones
    and the traffic they make across the card's host link ("" for none)."""
    tr, _ = w.tr, w.tr.gettext
    text = host_memory_need(kb, tr, option["recipe"], option["host_ram_gib"])
    offloads = kb.recipes["recipe"][option["recipe"]]
    if not text or offloads["offload"] or offloads.get("offload_params"):
        return text
    traffic = host_traffic_of(kb, option)
    if not traffic:
        return text + " " + _("On this card they all fit beside the weights: none crosses its host link at a step.")
    return text + " " + _("Not all of them fit beside the weights: %(paged)s go out to host memory and back at "
                          "every optimizer step, %(traffic)s across the card's host link (PCIe %(pcie)s.0 "
                          "x%(lanes)s, %(gbs)s GB/s each way), about %(seconds)s s a step, counted in the "
                          "hours.") % {
        # the traffic is counted in GB, as the link's GB/s are; shown in GiB as all memory is
        "paged": tr.gib(round(traffic["gb_per_step"] / 2 * GB / GIB, 1)),
        "traffic": tr.gib(round(traffic["gb_per_step"] * GB / GIB, 1)),
        "pcie": traffic["pcie"], "lanes": traffic["lanes"],
        "gbs": tr.number(traffic["link_gbs"], 0), "seconds": tr.number(traffic["seconds_per_step"], 1)}


def build_result(kb: KnowledgeBase, run: Run, tr: Localizer, assumed: list[str]) -> Result:
    """The Result of a run: its recommendations in the ranking's order, the
    cards ruled out, the advice and warnings that stand, the requirement and
    the trace, each sentence from the rule that fired or the words below."""
    w = Writer(kb, run, tr)
    firings = run.sorted_firings()
    by_gpu: dict[str, list[Firing]] = {}
    for firing in firings:
        if firing.gpu is not None:
            by_gpu.setdefault(firing.gpu, []).append(firing)
    derive_rules = {f.rule.kind == "derive" and f.rule.then: f.rule.id for f in firings}
    req = run.req or {}

    recommendations = []
    for rank, gpu in enumerate(run.ranking, 1):
        fired = by_gpu.get(gpu, [])
        rules = [r for r in (derive_rules.get("requirement"), derive_rules.get("own-card") if gpu == "own" else None)
                 if r]
        recommendations.append(recommendation(kb, run, w, rank, gpu, fired,
                                              list(dict.fromkeys(rules + [f.rule.id for f in fired]))))

    rejected = []
    together: dict[str, tuple[Firing, list[str]]] = {}    # a rule that names its cards together: them, once
    for gpu in sorted((gpu for gpu in run.options if gpu not in run.ranking), key=run.order):
        fired = [f for f in by_gpu.get(gpu, []) if f.rule.kind == "reject"]
        for f in fired:
            if f.rule.together:
                together.setdefault(f.rule.id, (f, []))[1].append(gpu)
        # where the rejection names the last setup tried, the one that came closest, right after it
        texts = [text for f in fired if not f.rule.together
                 for text in (w.message(f.rule, f.env), w.closest(gpu, by_gpu[gpu]) if f.rule.names_closest
                              else None) if text]
        rejected.append(Rejection(gpu, w.listed_name(gpu), w.origin(gpu), [f.rule.id for f in fired],
                                  " ".join(texts)))
    named_together = [Note(rule_id, [rule_id], w.together(first.rule, first.env, gpus))
                      for rule_id, (first, gpus) in together.items()]

    notes: dict[str, list[Note]] = {"advice": [], "warning": []}
    standing = {(rule.id, gpu) for rule, gpu in effective(run.conclusions)}
    for firing in firings:
        if firing.rule.kind in notes and (firing.rule.id, firing.gpu) in standing:
            notes[firing.rule.kind].append(Note(firing.rule.id, [firing.rule.id], w.message(firing.rule, firing.env)))

    requirement_firing = next((f for f in firings if f.rule.then == "requirement"), None)
    requirement = {
        **_rounded(req),
        "method": run.profile["method"],
        "source": run.basis,
        "rules": [requirement_firing.rule.id] if requirement_firing else [],
        "text": w.message(requirement_firing.rule, requirement_firing.env) if requirement_firing else "",
    }
    trace = Trace(lambda: [TraceStep(f.rule.id, f.rule.kind, w.cites(f.rule), list(f.rule.heuristics),
                                     _rounded(f.matched), _rounded(f.derived), w.message(f.rule, f.env))
                           for f in firings])
    return Result(tr.lang, dict(run.profile), assumed, requirement, recommendations, notes["advice"],
                  notes["warning"], rejected, trace, kb, named_together)

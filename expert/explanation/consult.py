"""One consultation: the answers validated into the profile fact, the rules
run over it (:func:`consult`), and the :class:`~expert.explanation.result.Result`
built from the engine's record of what fired (:func:`build_result`): what
``advise()`` returns, and what WHY NOT and WHAT IF run again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Literal

from ..errors import InputError, nearest
from ..i18n import Localizer
from ..inference import engine
from ..inference.estimate import COMPONENTS
from ..inference.run import Firing, Run, effective
from ..inference.sizing import checkpointing, option_estimate
from ..input import profile as profile_module
from ..knowledge import KnowledgeBase
from ..knowledge.prices import for_profile
from .result import Memory, Note, Recommendation, Rejection, Result, Setup, Trace, TraceStep
from .wording import Writer, price_provenance, sentence

# How an answer is sized (advise(basis=...)).
BASES = ("checked", "guide", "estimate")
Basis = Literal["checked", "guide", "estimate"]
RECIPE_KEYS = ("precision", "optimizer", "base_bits", "checkpointing", "offload")


def check_basis(basis: Any, tr: Localizer) -> str:
    if basis not in BASES:
        close = nearest(basis, BASES)
        raise InputError("basis", tr.gettext("basis: '%(value)s' is not accepted; choose %(accepted)s.") % {
            "value": str(basis)[:40], "accepted": tr.list(BASES, style="or")} + tr.did_you_mean(close), close)
    return str(basis)


def consult(kb: KnowledgeBase, given: dict[str, Any], tr: Localizer,
            basis: str = "checked", model_config: Any = None,
            only: Collection[str] | None = None) -> tuple[Run, Result]:
    """Validate ``given``, run the engine, and build the result (with the run's
    record). ``only``: the ids of the catalog cards to consider (all by default).
    ``given`` may hold the settings the person fixed, already read
    (:func:`expert.input.settings.read`); the rules choose the others."""
    basis = check_basis(basis, tr)
    profile, assumed = profile_module.build(kb, given, tr, model_config)
    kb = for_profile(kb, profile)      # the provider's prices (rules/prices)
    run = engine.infer(kb, profile, basis, only)
    return run, build_result(kb, run, tr, assumed)


def recipe_of(kb: KnowledgeBase, option: Mapping[str, Any], profile: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON ``recipe`` of an option: its strategy and its recipe's settings (recipes.toml), with the
    checkpointing the person fixed (``profile``), if any."""
    recipe = kb.recipes["recipe"][option["recipe"]]
    return {"id": option["recipe"], "strategy": option["strategy"], **{key: recipe[key] for key in RECIPE_KEYS},
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
    fast they go, on which software stack, and the hours on the other one."""
    from ..inference.time_model import other_stack

    stack = option["stack"]
    other = None if option["other_stack_hours"] is None else {  # a recipe only one framework runs: no other stack
        "stack": other_stack(kb, stack), "hours": significant(option["other_stack_hours"])}
    return {"tokens": int(req["tokens"]), "flops_per_token": round(option["flops_per_token"]),
            "tokens_per_second": significant(option["tokens_per_second"]), "hours": significant(option["hours"]),
            "speed_assumed": option["speed_assumed"], "stack": stack, "other_stack": other,
            "host_traffic": host_traffic_of(kb, option)}


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
                    round(float(option["device_vram_gb"]), 3))
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

def build_result(kb: KnowledgeBase, run: Run, tr: Localizer, assumed: list[str]) -> Result:
    w = Writer(kb, run, tr)
    _ = tr.gettext
    firings = run.sorted_firings()
    by_gpu: dict[str, list[Firing]] = {}
    for firing in firings:
        if firing.gpu is not None:
            by_gpu.setdefault(firing.gpu, []).append(firing)
    derive_rules = {f.rule.kind == "derive" and f.rule.then: f.rule.id for f in firings}
    req = run.req or {}
    deadline = run.profile["deadline_h"]

    recommendations = []
    for rank, gpu in enumerate(run.ranking, 1):
        option = run.options[gpu]
        own = gpu == "own"
        fired = by_gpu.get(gpu, [])
        rules = [r for r in (derive_rules.get("requirement"), derive_rules.get("own-card") if own else None) if r]
        rules = list(dict.fromkeys(rules + [f.rule.id for f in fired]))
        meets = None if deadline is None else option["elapsed_hours"] <= deadline
        params = {
            "label": w.option_label(option), "need": tr.gb(option["per_device_gb"]),
            "device": tr.gb(option["device_vram_gb"]), "devices": option["devices"], "setup": w.setup(option),
            "strategy": w.label("strategy", option["strategy"]),
            "hours": tr.hours(option["hours"], like=option.get("billed_hours")),
            "money": w.money(option),
        }
        if run.basis == "guide" and option["devices"] == 1 and not own and params["device"] not in w.name(gpu):
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
        if option["host_ram_gb"] and kb.recipes["recipe"][option["recipe"]]["offload"]:
            text += " " + _("Offloading needs about %(host)s of CPU memory (host RAM) and trains more slowly.") % {
                "host": tr.gb(option["host_ram_gb"])}
        elif option["host_ram_gb"]:  # paged optimizer states
            text += " " + _("Its paged optimizer states need up to %(host)s of CPU memory (host RAM) when the GPU "
                            "runs short.") % {"host": tr.gb(option["host_ram_gb"])}
            traffic = host_traffic_of(kb, option)
            if traffic:
                text += " " + _("Not all of them fit beside the weights: %(paged)s go out to host memory and back at "
                                "every optimizer step, %(traffic)s across the card's host link (PCIe %(pcie)s.0 "
                                "x%(lanes)s, %(gbs)s GB/s each way), about %(seconds)s s a step, counted in the "
                                "hours.") % {
                    "paged": tr.gb(round(traffic["gb_per_step"] / 2, 1)), "traffic": tr.gb(traffic["gb_per_step"]),
                    "pcie": traffic["pcie"], "lanes": traffic["lanes"],
                    "gbs": tr.number(traffic["link_gbs"], 0), "seconds": tr.number(traffic["seconds_per_step"], 1)}
            else:
                text += " " + _("On this card they all fit beside the weights: none crosses its host link at a "
                                "step.")
        if meets is False:
            text += " " + _("It misses your deadline of %(deadline)s: an option only if you can wait.") % {
                "deadline": tr.hours(deadline)}
        text = sentence(text)
        recommendations.append(Recommendation(
            rank, gpu, w.name(gpu), w.origin(gpu), option["count"], option["vram_gb"], option["total_vram_gb"],
            option["strategy"], option["where"], option["pricing"], significant(option["hours"]),
            cost_of(option, run.cards.get(gpu)), option["cost"], time_of(kb, run.profile, req, option), meets,
            recipe_of(kb, option, run.profile), option["devices"], option["per_device_gb"],
            option["host_ram_gb"], rules, text,
            [{"rule": f.rule.id, "effect": "for" if f.rule.kind == "prefer" and (f.rule.factor or 0) < 1 else "against",
              "text": w.message(f.rule, f.env)} for f in fired if f.rule.kind in ("reject", "demote", "prefer")],
            *setup_and_memory(kb, run.profile, option)))

    rejected = []
    for gpu in run.options:
        if gpu in run.ranking:
            continue
        fired = [f for f in by_gpu.get(gpu, []) if f.rule.kind == "reject"]
        rejected.append(Rejection(gpu, w.name(gpu), w.origin(gpu), [f.rule.id for f in fired],
                                  " ".join(w.message(f.rule, f.env) for f in fired)))
    rejected.sort(key=lambda r: run.order(r.gpu))

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
                  notes["warning"], rejected, trace, kb)

"""The answer to a consultation: what ``advise()`` returns.

Everything a person reads is built here from the engine's record of what
fired, in one language; ``to_dict()`` is the JSON contract of PRODUCT.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import InputError, nearest
from ..escape import json_text, one_line, quoted
from ..i18n import Localizer
from ..inference.engine import Firing, Run, effective
from ..interfaces.schema import DETAILS, SCHEMA_VERSION
from ..knowledge import PROFILE_FIELDS, KnowledgeBase, RuleDef, find_cards, load
from ..knowledge.conditions import COMPARED
from .templating import check_format, environment

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_HOUR_FIELDS = ({"hours", "ref_hours", "deadline_h", "min_count_hours", "elapsed_hours", "own_qlora_hours"}
                | {f"{which}_hours" for which in COMPARED})
_MONEY_FIELDS = {"per_hour", "total_cost", "on_demand_cost", "spot_cost", "price_on_demand", "price_spot",
                 "min_count_cost", "cheapest_total_cost"} | {f"{which}_{name}" for which in COMPARED for name in ("per_hour", "total_cost")}
_LABELLED = {"basis": "basis", "source": "basis", "strategy": "strategy", "where": "where", "pricing": "pricing", "cost": "cost",
             "vendor": "vendor", "guide_holds_with": "setup", "recipe": "recipe", "step": "step",
             "next_step": "step"}
RECIPE_KEYS = ("precision", "optimizer", "base_bits", "checkpointing", "offload")
# The summary form: the pick and the next two options, without what only the
# full form needs (the rules, the reasons, the arithmetic behind the cost; the
# recipe by its id, rules/recipes.toml).
SUMMARY_OPTIONS = 3
# Text and markdown show the recommendation and three alternatives (and one's own card).
SHOWN = 4
SUMMARY_LEFT_OUT = ("rules", "reasons", "source", "total_vram_gb", "cost_class", "time", "name", "where", "pricing")
# Of the cost, the summary keeps what a person reads; of the profile, what is known.
SUMMARY_COST = ("currency", "per_hour", "total", "pricing")


def check_detail(detail: Any, lang: str) -> None:
    if detail not in DETAILS:
        tr = Localizer(lang)
        close = nearest(detail, DETAILS)
        raise InputError("detail", tr.gettext("detail: '%(value)s' is not accepted; choose %(accepted)s.") % {
            "value": quoted(detail),
            "accepted": tr.list(DETAILS, style="or")} + tr.did_you_mean(close), close)


def recipe_of(kb: KnowledgeBase, option: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON ``recipe`` of an option: its strategy and its recipe's settings (recipes.toml)."""
    recipe = kb.recipes["recipe"][option["recipe"]]
    return {"id": option["recipe"], "strategy": option["strategy"], **{key: recipe[key] for key in RECIPE_KEYS},
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


def cost_of(option: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON ``cost`` of an option: USD per hour and in all for the pricing
    used, and both totals (nothing for a card the person owns)."""
    return {"currency": "USD", "per_hour": round(option["per_hour"], 2), "total": round(option["total_cost"], 2),
            "pricing": option["pricing"], "billed_hours": significant(option["billed_hours"]), "on_demand_total": round(option["on_demand_cost"], 2),
            "spot_total": None if option["spot_cost"] is None else round(option["spot_cost"], 2),
            "price_assumed": option["price_assumed"]}


def time_of(kb: KnowledgeBase, profile: Mapping[str, Any], req: Mapping[str, Any],
            option: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON ``time`` of an option: the tokens, the FLOPs each costs, how
    fast they go, on which software stack, and the hours on the other one."""
    from ..inference.sizing import other_stack

    stack = option["stack"]
    other = None if option["other_stack_hours"] is None else {  # a recipe only one framework runs: no other stack
        "stack": other_stack(kb, stack), "hours": significant(option["other_stack_hours"])}
    return {"tokens": int(req["tokens"]), "flops_per_token": round(option["flops_per_token"]),
            "tokens_per_second": significant(option["tokens_per_second"]), "hours": significant(option["hours"]),
            "speed_assumed": option["speed_assumed"], "stack": stack, "other_stack": other}


@dataclass(frozen=True)
class Recommendation:
    """One recommended configuration: which card, how many, how long, and why."""

    rank: int
    gpu: str
    name: str
    source: str             # "guide", "own", or the user catalog's file name
    count: int
    vram_gb: float
    total_vram_gb: float
    strategy: str
    where: str
    pricing: str | None
    hours: float
    cost: dict[str, Any]    # currency, per_hour, total, pricing, on_demand_total, spot_total, price_assumed
    cost_class: str         # the guide's relative cost: low ... high, or own
    time: dict[str, Any]    # tokens, flops_per_token, tokens_per_second, hours, speed_assumed
    meets_deadline: bool | None
    recipe: dict[str, Any]  # strategy, precision, optimizer, base_bits, checkpointing, offload
    devices: int            # physical devices in all (a dual-die card counts two)
    per_device_gb: float    # what each device needs with this recipe and strategy
    host_ram_gb: float | None   # CPU memory the offloaded state needs; None without offload
    rules: list[str]
    text: str
    reasons: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Note:
    """A piece of advice or a warning, with the rules that gave it."""

    id: str
    rules: list[str]
    text: str


@dataclass(frozen=True)
class Rejection:
    """A card ruled out, with the rules that ruled it out."""

    gpu: str
    name: str
    source: str
    rules: list[str]
    text: str


@dataclass(frozen=True)
class TraceStep:
    """One rule that fired: what it matched, what it concluded, and where the guide says so."""

    rule: str
    kind: str
    cites: dict[str, str]
    heuristics: list[str]
    matched: list[dict[str, Any]]
    derived: list[dict[str, Any]]
    text: str


@dataclass(frozen=True)
class Result:
    """The answer to a consultation, in one language (``to_dict()`` is the JSON contract)."""

    lang: str
    profile: dict[str, Any]
    assumed: list[str]
    requirement: dict[str, Any]
    recommendations: list[Recommendation]
    advice: list[Note]
    warnings: list[Note]
    rejected: list[Rejection]
    trace: list[TraceStep]
    kb: KnowledgeBase | None = field(repr=False, compare=False, default=None)   # for rendering labels

    def to_dict(self, detail: str = "full") -> dict[str, Any]:
        """The JSON contract. ``detail="full"``: everything, with the trace;
        ``"summary"``: the pick, the next alternatives, advice and warnings, a few
        KB for a model's context (``expert schema --what output``)."""
        check_detail(detail, self.lang)
        if detail == "summary":
            return self._summary()
        return {
            "schema_version": SCHEMA_VERSION,
            "detail": "full",
            "lang": self.lang,
            "profile": dict(self.profile),
            "assumed": list(self.assumed),
            "requirement": dict(self.requirement),
            "recommendations": [asdict(r) for r in self.recommendations],
            "advice": [asdict(n) for n in self.advice],
            "warnings": [asdict(n) for n in self.warnings],
            "rejected": [asdict(r) for r in self.rejected],
            "trace": [asdict(t) for t in self.trace],
        }

    def shown(self) -> list[Recommendation]:
        """The recommendations text and markdown show: the first four, and the
        person's own card wherever it ranks (it misses the deadline, say)."""
        first = self.recommendations[:SHOWN]
        own = [r for r in self.recommendations[SHOWN:] if r.gpu == "own"]
        return first + own

    def _summary(self) -> dict[str, Any]:
        recommendations = []
        for rec in self.recommendations[:SUMMARY_OPTIONS]:
            data = asdict(rec)
            for key in SUMMARY_LEFT_OUT:
                data.pop(key, None)
            data["recipe_id"] = data.pop("recipe")["id"]
            data["cost"] = {key: data["cost"][key] for key in SUMMARY_COST}
            for key in ("host_ram_gb", "meets_deadline"):
                if data[key] is None:
                    del data[key]
            if data["devices"] == data["count"]:
                del data["devices"]
            recommendations.append(data)
        return _fitted({
            "schema_version": SCHEMA_VERSION,
            "detail": "summary",
            "lang": self.lang,
            # every field of the profile; of what was derived from them, what is known
            "profile": {k: v for k, v in self.profile.items()
                        if k in PROFILE_FIELDS or (v is not None and k != "model_shape")},
            "assumed": list(self.assumed),
            "requirement": {"vram_gb": self.requirement["vram_gb"], "text": self.requirement["text"]},
            "recommendations": recommendations,
            "more_recommendations": max(0, len(self.recommendations) - SUMMARY_OPTIONS),
            "advice": [{"id": n.id, "text": n.text} for n in self.advice if self._in_summary(n)],
            "warnings": [{"id": n.id, "text": n.text} for n in self.warnings if self._in_summary(n)],
        })

    def _in_summary(self, note: Note) -> bool:
        """A note is in the summary form unless its rule says it is not (rules.toml ``summary``)."""
        kb = self.kb or load()
        return all(rule.in_summary for rule in kb.rules if rule.id in note.rules)

    def render(self, fmt: str = "text", width: int = 80, detail: str = "full") -> str:
        """The result as ``text`` (terminal), ``markdown`` (chat) or ``json``;
        ``detail="summary"`` leaves out the trace (json), and the reasons, the
        cards not recommended and the assumptions (markdown, text): a short form for chat."""
        check_format(fmt, self.lang)
        check_detail(detail, self.lang)
        if fmt == "json":
            return json_text(self.to_dict(detail))
        from .chart import time_and_cost

        tr = Localizer(self.lang)
        kb = self.kb or load()    # a Result built by hand may come without its knowledge base
        assumed = [f"{tr.gettext(kb.fields[name].label)}: {profile_value(kb, tr, name, self.profile[name])}"
                   for name in self.assumed]
        template = environment(self.lang).get_template(f"advise.{'md' if fmt == 'markdown' else 'txt'}.j2")
        return template.render(r=self, width=width, assumed=assumed, summary=detail == "summary",
                               chart=time_and_cost(self, kb, tr, width))


def sentence(text: str) -> str:
    """A message that may start with a placeholder ("your GPU …") starts with a capital."""
    return text[:1].upper() + text[1:]


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


def _translated(tr: Localizer, labels: Mapping[str, str], code: Any) -> str:
    """The translated label of ``code``, or the code itself (on one safe line) when it has none."""
    return tr.gettext(labels[code]) if code in labels else one_line(code)


def format_value(kb: KnowledgeBase, tr: Localizer, namespace: str, name: str, value: Any) -> str:
    """A fact field's value as a person reads it, in ``tr``'s language."""
    _ = tr.gettext
    if value is None:
        return "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if namespace == "profile" and name in kb.fields and kb.fields[name].choices:
        return _translated(tr, kb.fields[name].choice_labels, value)
    if name in _LABELLED and isinstance(value, str):
        return _translated(tr, kb.labels.get(_LABELLED[name], {}), value)
    if name.endswith("_gb"):
        return tr.gb(value)
    if name in _HOUR_FIELDS:
        return tr.hours(value)
    if name in _MONEY_FIELDS:
        return tr.money(value)
    if name in ("model_size_b", "model_active_b"):
        return tr.billions(value)
    if name == "headroom":
        return tr.number(value * 100, 0) + " %"
    if isinstance(value, (int, float)):
        return tr.number(value, 3)
    if isinstance(value, (list, tuple)):
        return tr.list([one_line(v) for v in value])
    return one_line(value)


def profile_value(kb: KnowledgeBase, tr: Localizer, name: str, value: Any) -> str:
    """A profile field's value; a missing one reads as the field's "none" label."""
    if value is None:
        return tr.gettext(kb.fields[name].none_label or "none")
    return format_value(kb, tr, "profile", name, value)


class _Writer:
    """Turns the engine's record into localized text."""

    def __init__(self, kb: KnowledgeBase, run: Run, tr: Localizer) -> None:
        self.kb, self.run, self.tr = kb, run, tr
        self._ = tr.gettext

    def label(self, table: str, code: Any) -> str:
        return "" if code is None else _translated(self.tr, self.kb.labels.get(table, {}), code)

    def name(self, gpu: str) -> str:
        """The card's name as every text shows it; a user catalog's name
        (and file name) on one line, without control or format characters."""
        if gpu == "own":
            return self.label("where", "own")
        card = self.run.cards[gpu]
        name = one_line(card.name)
        if card.origin == "guide":
            return name
        return f"{name} ({self.origin(gpu).removesuffix('.toml')})"   # the catalog it came from, by its name

    def origin(self, gpu: str) -> str:
        return "own" if gpu == "own" else one_line(self.run.cards[gpu].origin)

    def option_label(self, option: Mapping[str, Any]) -> str:
        if option["where"] == "own":
            named = self.run.profile.get("own_gpu")
            found = find_cards(self.kb, named) if named else []
            if found:      # the card the person named (with its memory, unless its name says it)
                card, vram = one_line(found[0][1]), self.tr.gb(option["total_vram_gb"])
                if vram.replace("\u00a0", " ") in card or self.tr.gb(found[0][2]) in card:
                    return self._("your %(card)s") % {"card": card}
                return self._("your %(card)s (%(vram)s)") % {"card": card, "vram": vram}
            return self._("your GPU (%(vram)s)") % {"vram": self.tr.gb(option["total_vram_gb"])}
        return "%s × %s" % (option["count"], self.name(option["gpu"]))

    def money(self, option: Mapping[str, Any]) -> str:
        """What renting the option costs, in words: the pricing used first."""
        tr, _ = self.tr, self._
        if option["where"] == "own":
            return _("nothing to rent")
        params = {"on_demand": tr.money(option["on_demand_cost"]),
                  "spot": None if option["spot_cost"] is None else tr.money(option["spot_cost"]),
                  "per_hour": tr.money(option["per_hour"]), "billed": tr.hours(option["billed_hours"], like=option["hours"])}
        if params["spot"] is None:  # the price basis lists no spot price for it
            text = _("≈ %(on_demand)s on demand (%(per_hour)s an hour, %(billed)s with the setup; no spot price "
                     "listed)") % params
        elif option["pricing"] == "spot":
            text = _("≈ %(spot)s on spot (%(per_hour)s an hour, %(billed)s with the setup; ≈ %(on_demand)s on "
                     "demand)") % params
        else:
            text = _("≈ %(on_demand)s on demand (%(per_hour)s an hour, %(billed)s with the setup; ≈ %(spot)s on "
                     "spot)") % params
        if option["price_assumed"]:
            text += " " + _("(price assumed from its cost class)")
        return text

    def setup(self, option: Mapping[str, Any]) -> str:
        """The recipe, in words."""
        return self.label("recipe", option["recipe"])

    def summary(self, option: Mapping[str, Any]) -> str:
        """One configuration in a phrase: cards, recipe, strategy, memory per
        device against what each device has, and whether it fits."""
        tr, _ = self.tr, self._
        params = {"label": self.option_label(option), "setup": self.setup(option),
                  "strategy": self.label("strategy", option["strategy"]), "need": tr.gb(option["per_device_gb"]),
                  "device": tr.gb(option["device_vram_gb"]), "devices": option["devices"]}
        if not option["possible"]:
            text = _("%(label)s with %(setup)s needs about %(need)s of its %(device)s, and it cannot be spread over "
                     "more cards") % params
        elif option["devices"] == 1:
            text = _("%(label)s with %(setup)s, about %(need)s of its %(device)s") % params
        else:
            text = _("%(label)s with %(setup)s, %(strategy)s over %(devices)s devices, about %(need)s of each "
                     "one's %(device)s") % params
        if option.get("micro_batch", 1) > 1:
            text += _(", micro-batch %(micro)s") % {"micro": option["micro_batch"]}
        if option["host_ram_gb"]:
            host = {"host": tr.gb(option["host_ram_gb"])}
            text += (_(", plus %(host)s of host RAM in all") if option["devices"] > 1 else
                     _(", plus %(host)s of host RAM")) % host
        # within the card, but not within what may be used of it
        margin = (_("%(margin)s of each device is kept free") % {
            "margin": tr.number(self.kb.recipes["margin"] * 100, 0) + " %"}
            if not option["fits"] and option["per_device_gb"] <= option["device_vram_gb"] else "")
        if not option["possible"]:
            return text + (f" ({margin})" if margin else "")
        if option["fits"]:
            return text + " — " + _("fits")
        return text + " — " + (_("does not fit: %(why)s") % {"why": margin} if margin else _("does not fit"))

    def batch_and_stack(self, option: Mapping[str, Any]) -> str:
        """The micro-batch an option runs and the stack its hours assume, with
        the hours on the other stack."""
        tr, _ = self.tr, self._
        other = option["other_stack_hours"]
        params = {"micro": option["micro_batch"], "steps": option["gradient_accumulation_steps"],
                  "global": option["global_batch"], "other": None if other is None else tr.hours(other)}
        batch = (_("Micro-batch %(micro)s per device, without gradient accumulation") if params["steps"] == 1 else
                 _("Micro-batch %(micro)s × %(steps)s accumulation steps")) % params
        if other is None:  # the recipe runs on one framework only, and the hours are on its stack
            framework = self.kb.recipes["recipe"][option["recipe"]].get("framework", "")
            stack = _("hours with %(framework)s, the one framework that runs this recipe (a tuned stack)") % {
                "framework": framework}
        elif option["stack"] == "tuned":
            stack = _("hours on a tuned stack (packed, compiled), about %(other)s on a typical one") % params
        else:
            stack = _("hours on a typical stack (Hugging Face Trainer + PEFT), about %(other)s on a tuned one") % params
        return _("%(batch)s; %(stack)s.") % {"batch": batch, "stack": stack}

    def value(self, namespace: str, name: str, value: Any) -> str:
        return format_value(self.kb, self.tr, namespace, name, value)

    def profile_value(self, name: str, value: Any) -> str:
        return profile_value(self.kb, self.tr, name, value)

    def context(self, env: dict[str, Any]) -> _Context:
        return _Context(self, env)

    def message(self, rule: RuleDef, env: dict[str, Any]) -> str:
        context = self.context(env)
        hours = [context.raw(key) for key in _PLACEHOLDER.findall(rule.message)
                 if key.partition("_")[2] in _HOUR_FIELDS]
        context.like = max((h for h in hours if isinstance(h, (int, float))), default=None)  # one unit of time
        return sentence(self._(rule.message) % context)

    def cites(self, rule: RuleDef) -> dict[str, str]:
        number = list(self.kb.sections).index(rule.section) + 1
        # (the JSON's cites are the same in every language: explain's text adds the translated title)
        return {"section": rule.section, "number": f"S{number}", "heading": self.kb.sections[rule.section].heading}


class _Context(Mapping[str, str]):
    """A rule message's placeholders, formatted only when the message uses them."""

    def __init__(self, writer: _Writer, env: dict[str, Any]) -> None:
        self.writer, self.env = writer, env
        self.like: float | None = None     # the longest duration in the message: all of them in its unit

    def raw(self, key: str) -> Any:
        namespace, _, name = key.partition("_")
        return (self.env.get(namespace) or {}).get(name)

    def __getitem__(self, key: str) -> str:
        namespace, _, name = key.partition("_")
        values = self.env.get("option" if namespace == "card" and name == "name" else namespace)
        if values is None:
            raise KeyError(key)
        if namespace == "pick" and name.endswith("_label") and name[:-6] in COMPARED:
            which = name[:-6]
            if values.get(f"{which}_gpu") is None:
                return "—"
            return self.writer.option_label({"where": "cloud", "gpu": values[f"{which}_gpu"],
                                             "count": values[f"{which}_count"]})
        if name == "label" and namespace in ("standing", "other", "weight", "rival", "place"):
            return self.writer.option_label(values)
        if namespace in ("option", "pick", "candidate", "proposal", "trial"):
            if name == "label":
                return self.writer.option_label(values)
            if name == "setup":
                return self.writer.setup(values)
            if name == "summary":
                return self.writer.summary(values)
        if name == "name" and namespace in ("option", "pick", "card", "candidate", "proposal", "trial", "standing", "other",
                                            "weight", "rival", "place"):
            return self.writer.name(values["gpu"])
        if name not in values:
            raise KeyError(key)
        if name in _HOUR_FIELDS and isinstance(values[name], (int, float)) and not isinstance(values[name], bool):
            return self.writer.tr.hours(values[name], like=self.like)
        return self.writer.value(namespace, name, values[name])

    def __iter__(self) -> Iterator[str]:
        return (f"{ns}_{name}" for ns, values in self.env.items() for name in values)

    def __len__(self) -> int:
        return sum(len(values) for values in self.env.values())


def build_result(kb: KnowledgeBase, run: Run, tr: Localizer, assumed: list[str]) -> Result:
    w = _Writer(kb, run, tr)
    _ = tr.gettext
    firings = run.sorted_firings()
    by_gpu: dict[str, list[Firing]] = {}
    for firing in firings:
        if firing.gpu is not None:
            by_gpu.setdefault(firing.gpu, []).append(firing)
    derive_rules = {f.rule.kind == "derive" and f.rule.derive: f.rule.id for f in firings}
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
        if option["devices"] == 1 and not own and params["device"] not in w.name(gpu):
            params["label"] = "%s (%s)" % (params["label"], params["device"])
        if run.basis == "guide":
            text = _("%(label)s holds the guide's %(need)s per device (the strict guide reading), in about "
                     "%(hours)s; %(money)s.") % params
        elif own:
            text = _("%(label)s with %(setup)s: about %(need)s of its %(device)s, about %(hours)s of training, "
                     "nothing to rent.") % params
        elif option["devices"] == 1:
            text = _("%(label)s with %(setup)s: about %(need)s needed, about %(hours)s of training; "
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
        if meets is False:
            text += " " + _("It misses your deadline of %(deadline)s: an option only if you can wait.") % {
                "deadline": tr.hours(deadline)}
        text = sentence(text)
        recommendations.append(Recommendation(
            rank, gpu, w.name(gpu), w.origin(gpu), option["count"], option["vram_gb"], option["total_vram_gb"],
            option["strategy"], option["where"], option["pricing"], significant(option["hours"]),
            cost_of(option), option["cost"], time_of(kb, run.profile, req, option), meets,
            recipe_of(kb, option), option["devices"], option["per_device_gb"],
            option["host_ram_gb"], rules, text,
            [{"rule": f.rule.id, "effect": "for" if f.rule.kind == "prefer" and (f.rule.factor or 0) < 1 else "against",
              "text": w.message(f.rule, f.env)} for f in fired if f.rule.kind in ("reject", "demote", "prefer")]))

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

    requirement_firing = next((f for f in firings if f.rule.derive == "requirement"), None)
    requirement = {
        **_rounded(req),
        "method": run.profile["method"],
        "source": run.basis,
        "rules": [requirement_firing.rule.id] if requirement_firing else [],
        "text": w.message(requirement_firing.rule, requirement_firing.env) if requirement_firing else "",
    }
    trace = [TraceStep(f.rule.id, f.rule.kind, w.cites(f.rule), list(f.rule.heuristics), _rounded(f.matched),
                       _rounded(f.derived), w.message(f.rule, f.env)) for f in firings]
    return Result(tr.lang, dict(run.profile), assumed, requirement, recommendations, notes["advice"],
                  notes["warning"], rejected, trace, kb)


# The most bytes of JSON a summary takes (non-ASCII escaped, the larger way
# it is sent): a chat's share. Beyond it, advice is left out from the end,
# then the options after the pick (counted in more_advice and
# more_recommendations); warnings and the pick stay.
SUMMARY_BYTES = 4000


def _fitted(data: dict[str, Any]) -> dict[str, Any]:
    import json

    def size() -> int:
        return len(json.dumps(data))

    left_out = 0
    while size() > SUMMARY_BYTES and data["advice"]:
        data["advice"].pop()
        left_out += 1
    if left_out:
        data["more_advice"] = left_out
    while size() > SUMMARY_BYTES and len(data["recommendations"]) > 1:
        data["recommendations"].pop()
        data["more_recommendations"] += 1
    return data

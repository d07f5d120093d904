"""The words of a result: the engine's record of what fired turned into
localized text (:class:`Writer`), each fact's value as a person reads it
(:func:`format_value`), a rule's message with its placeholders filled.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..escape import one_line
from ..i18n import Localizer
from ..inference.estimate import usable_gib
from ..inference.run import Firing, Run
from ..knowledge import KnowledgeBase, RuleDef, find_cards
from ..knowledge.catalog import shipped_card
from ..knowledge.conditions import COMPARED
from ..knowledge.records import EXTRA_PLACEHOLDERS, RANKED

_HOUR_FIELDS = ({"hours", "ref_hours", "deadline_h", "min_count_hours", "elapsed_hours", "own_qlora_hours", "other_stack_hours",
                 "cheap_qlora_hours", "nvlink_hours", "by_hours"}
                | {f"{which}_hours" for which in COMPARED})
_MONEY_FIELDS = {"per_hour", "total_cost", "on_demand_cost", "spot_cost", "price_on_demand", "price_spot",
                 "min_count_cost", "cheapest_total_cost", "cheap_qlora_cost", "by_total_cost"} | {f"{which}_{name}" for which in COMPARED for name in ("per_hour", "total_cost")}
_LABELLED = {"basis": "basis", "source": "basis", "strategy": "strategy", "where": "where", "pricing": "pricing", "cost": "cost",
             "vendor": "vendor", "guide_holds_with": "setup", "recipe": "recipe", "step": "step",
             "next_step": "step", "own_fit_recipe": "recipe", "own_fit_strategy": "strategy"}

def sentence(text: str) -> str:
    """A message that may start with a placeholder ("your GPU …") starts with a capital; a model's Hub id
    ("openai/gpt-oss-20b …") keeps its own case."""
    if "/" in text.split(" ", 1)[0]:
        return text
    return text[:1].upper() + text[1:]

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
    if name.endswith(("_gib", "_gb")):   # the *_gb fields shown are sizes as cards are sold: GiB
        return tr.gib(value)
    if name in _HOUR_FIELDS:
        return tr.hours(value)
    if name in _MONEY_FIELDS:
        return tr.money(value)
    if name in ("model_size_b", "model_active_b"):
        return tr.billions(value)
    if name in ("headroom", "communication_share", "optimizer_share"):
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

class Writer:
    """Turns the engine's record into localized text."""

    def __init__(self, kb: KnowledgeBase, run: Run, tr: Localizer) -> None:
        self.kb, self.run, self.tr = kb, run, tr
        self._ = tr.gettext

    def label(self, table: str, code: Any) -> str:
        return "" if code is None else _translated(self.tr, self.kb.labels.get(table, {}), code)

    def name(self, gpu: str) -> str:
        """The card's name as every text shows it: its short name (the
        catalogs' `short`, one shape for every card), or a user catalog's
        card's name where it gives none, and then the file's name; on one
        line, without control or format characters.
        The cards that ship with the package (the guide's and today's market,
        rules/catalogs) go by their names alone: which file holds a card is
        the package's business, not the reader's."""
        if gpu == "own":
            return self.label("where", "own")
        card = self.run.cards[gpu]
        name = one_line(card.shown_name)    # its short name, one shape for every card (rules/catalog.toml)
        if card.origin == "guide" or shipped_card(card.source, self.kb.root):
            return name
        return f"{name} ({self.origin(gpu).removesuffix('.toml')})"   # the catalog it came from, by its name

    def listed_name(self, gpu: str) -> str:
        """A card as a list of cards names it ("Not recommended", WHY NOT): :meth:`name`, and one's
        own card by its name and how many where the person named it or has several, as the options
        table names it ("your 2 × <card>"), not "your own GPU"."""
        profile = self.run.profile
        if gpu == "own" and (profile.get("own_gpu") or int(profile.get("own_gpu_count") or 1) > 1):
            return own_short_label(self.kb, self.tr, profile)
        return self.name(gpu)

    def origin(self, gpu: str) -> str:
        """Where a card came from: "own", "guide", a shipped catalog by the
        name --catalog takes ("current", not its file), or a user's file."""
        if gpu == "own":
            return "own"
        card = self.run.cards[gpu]
        if card.origin != "guide" and shipped_card(card.source, self.kb.root):
            return one_line(card.origin).removesuffix(".toml")
        return one_line(card.origin)

    def option_label(self, option: Mapping[str, Any]) -> str:
        if option["where"] == "own":     # (a ranking names it by its fields: the run's own option has them all)
            own = self.run.options.get("own", option)
            label = own_label(self.kb, self.tr, self.run.profile, own["device_memory_gib"])
            # a step that spreads tries more of one's own cards than one has (the rules after it say so):
            # "2 × your <card>", not one's one card beside "over 2 devices"
            count = int(option.get("count") or 1)
            return self._("%(count)s × %(card)s") % {"count": count, "card": label} if count > 1 else label
        return "%s × %s" % (option["count"], self.name(option["gpu"]))

    def money(self, option: Mapping[str, Any]) -> str:
        """What renting the option costs, in words: the pricing used first."""
        tr, _ = self.tr, self._
        if option["where"] == "own":
            return _("nothing to rent")
        params = {"on_demand": tr.money(option["on_demand_cost"]),
                  "spot": None if option["spot_cost"] is None else tr.money(option["spot_cost"]),
                  "per_hour": tr.money(option["per_hour"]), "billed": tr.hours(option["billed_hours"])}
        # whose rate it is and when it was read (rules/prices), before the rate
        provider, date = price_provenance(self.run.cards.get(option["gpu"]), option["pricing"])
        if provider:
            params["per_hour"] = _("%(provider)s, %(date)s: %(price)s") % {
                "provider": provider, "date": date, "price": params["per_hour"]}
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

    def closest(self, gpu: str, firings: Iterable[Firing]) -> str | None:
        """Of a card that fits none of the setups tried, the one that came
        closest (the least memory for what each device has), when it is not
        the last, the card's option: ``firings``' configurations of it, as the
        rules derived them; a sentence, or None."""
        final = self.run.options.get(gpu)
        if final is None or final["fits"]:
            return None
        # the setups that ran out of memory; one's own cards as many as one has (a step may have tried more)
        tried = [v for f in firings if f.gpu == gpu and f.rule.kind == "configure"
                 for v in (d["values"] for d in f.derived) if "per_device_gib" in v and v["possible"]
                 and not v["fits"] and (v["where"] != "own" or v["count"] == final["count"])]

        def share(values: Mapping[str, Any]) -> float:
            return float(values["per_device_gib"]) / float(values["device_memory_gib"])

        closest = min(tried, key=share, default=None)
        if closest is None or share(closest) >= share(final):
            return None
        return self._("The closest setup tried: %(summary)s.") % {"summary": self.summary(closest)}

    def summary(self, option: Mapping[str, Any]) -> str:
        """One configuration in a phrase: cards, recipe, strategy, memory per
        device against what each device has, and whether it fits."""
        tr, _ = self.tr, self._
        params = {"label": self.option_label(option), "setup": self.setup(option),
                  "strategy": self.label("strategy", option["strategy"]), "need": tr.gib(option["per_device_gib"]),
                  "device": tr.gib(option["device_memory_gib"]), "devices": option["devices"]}
        if not option["possible"]:
            text = _("%(label)s with %(setup)s needs about %(need)s of its %(device)s") % params
        elif option["devices"] == 1:
            text = _("%(label)s with %(setup)s, about %(need)s of its %(device)s") % params
        else:
            text = _("%(label)s with %(setup)s, %(strategy)s over %(devices)s devices, about %(need)s of each "
                     "one's %(device)s") % params
        if option.get("micro_batch", 1) > 1:
            text += _(", micro-batch %(micro)s") % {"micro": option["micro_batch"]}
        if option["host_ram_gib"]:
            host = {"host": tr.gib(option["host_ram_gib"])}
            text += (_(", plus %(host)s of host RAM in all") if option["devices"] > 1 else
                     _(", plus %(host)s of host RAM")) % host
        # within the card, but not within what may be used of it: say how much may be
        # ("about 8 GiB of its 8 GiB" alone reads as if it fitted)
        margin = (_("only %(usable)s of each device may be used, %(margin)s is kept free") % {
            "usable": tr.gib(usable_gib(self.kb, option["device_memory_gib"])),
            "margin": tr.number(self.kb.recipes["margin"] * 100, 0) + " %"}
            if not option["fits"] and option["per_device_gib"] <= option["device_memory_gib"] else "")
        if not option["possible"]:
            # after its host RAM, which is part of what it needs
            text += _(", and it cannot be spread over more cards")
            return text + (f" ({margin})" if margin else "")
        if option["fits"]:
            return text + " — " + _("fits")
        return text + " — " + (_("does not fit: %(why)s") % {"why": margin} if margin else _("does not fit"))

    def batch_and_stack(self, option: Mapping[str, Any]) -> str:
        """The micro-batch an option runs and the stack its hours assume, with
        the hours on the other stack."""
        return batch_and_stack(self.kb, self.tr, self.run.profile.get("method"), option["micro_batch"],
                               option["gradient_accumulation_steps"], option["stack"], option["other_stack_hours"],
                               option["recipe"])

    def value(self, namespace: str, name: str, value: Any) -> str:
        return format_value(self.kb, self.tr, namespace, name, value)

    def profile_value(self, name: str, value: Any) -> str:
        return profile_value(self.kb, self.tr, name, value)

    def context(self, env: dict[str, Any]) -> Context:
        return Context(self, env)

    def message(self, rule: RuleDef, env: dict[str, Any]) -> str:
        return sentence(self._(rule.message) % self.context(env))

    def together(self, rule: RuleDef, env: dict[str, Any], gpus: list[str]) -> str:
        """The message of a rule that names its cards together (rules.toml
        ``together``), once for all the cards ``gpus`` it fired on: its card's
        name is their names, listed (``env``, the first firing's, gives the rest)."""
        return sentence(self._(rule.message) % _Named(self.context(env), self.tr.list([self.name(g) for g in gpus])))

    def cites(self, rule: RuleDef) -> dict[str, str]:
        number = list(self.kb.sections).index(rule.section) + 1
        # (the JSON's cites are the same in every language: explain's text adds the translated title)
        return {"section": rule.section, "number": f"S{number}", "heading": self.kb.sections[rule.section].heading}


class Context(Mapping[str, str]):
    """A rule message's placeholders, formatted only when the message uses them."""

    def __init__(self, writer: Writer, env: dict[str, Any]) -> None:
        self.writer, self.env = writer, env

    def __getitem__(self, key: str) -> str:
        namespace, _, name = key.partition("_")
        if namespace == "how":      # how a setting is given on this way in (labels.toml [how_*])
            return self.writer.kb.how(self.writer.tr, name)
        values = self.env.get("option" if namespace == "card" and name == "name" else namespace)
        if values is None:
            raise KeyError(key)
        if namespace == "pick" and name.endswith("_label") and name[:-6] in COMPARED:
            which = name[:-6]
            if values.get(f"{which}_gpu") is None:
                return "—"
            return self.writer.option_label({"where": "cloud", "gpu": values[f"{which}_gpu"],
                                             "count": values[f"{which}_count"]})
        if namespace == "ranking" and name.endswith("_label") and name[:-6] in RANKED:
            which = name[:-6]
            if values.get(f"{which}_gpu") is None:
                return "—"
            return self.writer.option_label({name: values[f"{which}_{name}"]
                                             for name in ("where", "gpu", "count", "total_vram_gb")})
        if namespace == "beaten" and name == "by_label":     # the option that beats this one
            beater = self.writer.run.options.get(values["by_gpu"]) or {
                "where": "cloud", "gpu": values["by_gpu"], "count": values["by_count"]}
            return self.writer.option_label(beater)
        # The placeholders records.EXTRA_PLACEHOLDERS lets a message name besides the fact's fields
        # (card_name is the option's card).
        if name in EXTRA_PLACEHOLDERS.get(namespace, ()) or (namespace == "card" and name == "name"):
            if name == "label":
                return self.writer.option_label(values)
            if name == "setup":
                return self.writer.setup(values)
            if name == "summary":
                return self.writer.summary(values)
            if name == "name":
                return self.writer.name(values["gpu"])
        if name not in values:
            raise KeyError(key)
        if name in _HOUR_FIELDS and isinstance(values[name], (int, float)) and not isinstance(values[name], bool):
            return self.writer.tr.hours(values[name])
        return self.writer.value(namespace, name, values[name])

    def __iter__(self) -> Iterator[str]:
        return (f"{ns}_{name}" for ns, values in self.env.items() for name in values)

    def __len__(self) -> int:
        return sum(len(values) for values in self.env.values())


class _Named(Mapping[str, str]):
    """A message's placeholders where the card's name is several cards' names."""

    def __init__(self, context: Context, names: str) -> None:
        self.context, self.names = context, names

    def __getitem__(self, key: str) -> str:
        return self.names if key == "card_name" else self.context[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.context)

    def __len__(self) -> int:
        return len(self.context)


def owned_name(kb: KnowledgeBase, name: str, card_id: str = "") -> str:
    """A card one may own as the answers name it: a catalog's card (of id
    ``card_id``) by its short name, the name every answer gives it; a card
    of rules/owned.toml without the brand words of its `ignore` ("NVIDIA
    GeForce RTX 3090" is "RTX 3090"), the shape of the catalogs' short names."""
    card = kb.known_card(card_id) if card_id else None
    if card is not None:
        return one_line(card.shown_name)
    words = one_line(name).split(" ")
    while len(words) > 1 and words[0].lower() in kb.owned_ignore:
        words.pop(0)
    return " ".join(words)


def own_label(kb: KnowledgeBase, tr: Localizer, profile: Mapping[str, Any], device_gib: float) -> str:
    """One's own card (or cards) as the answer names it: the card named
    (:func:`owned_name`), with each device's memory as its driver reports it
    (``device_gib``, the figure the options table shows: a card sold with
    24 GB whose driver reports 22.5 GiB is "(22.5 GiB)") unless its name
    says the size it is sold with ("... 48 GB"), or "your GPU (24 GiB)"."""
    _ = tr.gettext
    named = profile.get("own_gpu")
    found = find_cards(kb, named) if named else []
    count = int(profile.get("own_gpu_count") or 1)
    device = tr.gib(device_gib)
    if found:      # the card the person named (with its memory, unless its name says it)
        card = owned_name(kb, found[0][1], found[0][0])
        sized = any(f"{tr.number(size)} GB" in card for size in (float(profile.get("vram_gb") or 0), found[0][2]))
        if count > 1:       # "your 2 × …": Spanish says "tus", not "tu"
            values = {"count": count, "card": card, "vram": device}
            return (_("your %(count)s × %(card)s") if sized else _("your %(count)s × %(card)s (%(vram)s each)")) % values
        if sized:
            return _("your %(card)s") % {"card": card}
        return _("your %(card)s (%(vram)s)") % {"card": card, "vram": device}
    if count > 1:
        return _("your %(count)s GPUs (%(vram)s each)") % {"count": count, "vram": device}
    return _("your GPU (%(vram)s)") % {"vram": device}


def own_short_label(kb: KnowledgeBase, tr: Localizer, profile: Mapping[str, Any], name: str | None = None) -> str:
    """One's own card (or cards) in the few characters of a table's or a
    chart's row (:func:`owned_name`, or ``name`` where the caller has a shorter one): "your 2 × RTX 3090",
    "your RTX 5090", "your 2 GPUs", "your GPU"."""
    _ = tr.gettext
    named = profile.get("own_gpu")
    found = find_cards(kb, named) if named else []
    count = int(profile.get("own_gpu_count") or 1)
    if found:
        card = name or owned_name(kb, found[0][1], found[0][0])
        return (_("your %(count)s × %(card)s") % {"count": count, "card": card} if count > 1
                else _("your %(card)s") % {"card": card})
    return _("your %(count)s GPUs") % {"count": count} if count > 1 else _("your GPU")


def batch_and_stack(kb: KnowledgeBase, tr: Localizer, method: Any, micro: int, steps: int, stack: str,
                    other: float | None, recipe: str) -> str:
    """The micro-batch a configuration runs and the stack its hours assume,
    with the hours on the other stack: "Micro-batch 4 per device, 8 gradient accumulation steps.
    The time assumes a typical stack (...); about 1.1 hr on a tuned one."."""
    _ = tr.gettext
    params = {"micro": micro, "steps": steps, "other": None if other is None else tr.hours(other)}
    batch = (_("Micro-batch %(micro)s per device, without gradient accumulation") if steps == 1 else
             _("Micro-batch %(micro)s per device, %(steps)s gradient accumulation steps")) % params
    if other is None:  # the recipe runs on one framework only, and the hours are on its stack
        framework = kb.recipes["recipe"][recipe].get("framework", "")
        words = _("The time assumes %(framework)s, the one framework that runs this recipe (a tuned stack)") % {
            "framework": framework}
    elif stack == "tuned":
        words = _("The time assumes a tuned stack (packed, compiled); about %(other)s on a typical one") % params
    elif method == "full":     # no adapters: no PEFT
        words = _("The time assumes a typical stack (Hugging Face Trainer); about %(other)s on a tuned one") % params
    else:
        words = _("The time assumes a typical stack (Hugging Face Trainer + PEFT); about %(other)s on a tuned one") % params
    return _("%(batch)s. %(stack)s.") % {"batch": batch, "stack": words}


def recipe_in_words(kb: KnowledgeBase, tr: Localizer, method: Any, rec: Any) -> str:
    """A recommendation's recipe in a sentence, from its data: the setup,
    the strategy over its devices, the micro-batch and the stack its hours
    assume (the one-screen answer's line under the pick)."""
    recipe = rec.recipe
    setup = _translated(tr, kb.labels.get("recipe", {}), recipe["id"])
    if rec.devices > 1:
        setup = tr.gettext("%(setup)s, %(strategy)s over %(devices)s devices") % {
            "setup": setup, "strategy": _translated(tr, kb.labels.get("strategy", {}), recipe["strategy"]),
            "devices": rec.devices}
    other = rec.time["other_stack"]
    return tr.gettext("With %(setup)s.") % {"setup": setup} + " " + batch_and_stack(kb, tr, method, recipe["micro_batch"],
                                                    recipe["gradient_accumulation_steps"], rec.time["stack"],
                                                    None if other is None else other["hours"], recipe["id"]) \
        + host_memory_need(kb, tr, recipe["id"], rec.host_ram_gib)


def host_memory_need(kb: KnowledgeBase, tr: Localizer, recipe: str, host_gib: float) -> str:
    """The host memory a recipe needs besides the cards' (" Offloading needs about 37 GiB of CPU memory
    (host RAM) ...", "" for none): said wherever the pick is, the one-screen answer too, since a machine
    without that much RAM cannot run it."""
    if not host_gib:
        return ""
    offloads = kb.recipes["recipe"][recipe]
    if offloads["offload"] or offloads.get("offload_params"):
        return " " + tr.gettext("Offloading needs about %(host)s of CPU memory (host RAM) and trains more "
                                "slowly.") % {"host": tr.gib(host_gib)}
    return " " + tr.gettext("Its paged optimizer states need up to %(host)s of CPU memory (host RAM) when the "
                            "GPU runs short.") % {"host": tr.gib(host_gib)}


def total_in_words(tr: Localizer, cost: Mapping[str, Any], pricing_labels: Mapping[str, str] | None = None) -> str:
    """A recommendation's ``cost`` in a word or two: nothing to rent, or the
    total (with its pricing, given the labels)."""
    if cost["pricing"] is None:
        return tr.gettext("nothing to rent")
    total = "≈ " + tr.money(cost["total"])
    return f"{total} {tr.gettext(pricing_labels[cost['pricing']])}" if pricing_labels else total


def price_provenance(card: Any, pricing: str | None) -> tuple[str, str]:
    """The provider and date of the price an option pays (rules/prices), or
    ("", "") for a price the card brings itself or a card one owns."""
    if card is None or pricing is None:
        return "", ""
    if pricing == "spot" and card.spot_provider:
        return card.spot_provider, card.spot_date
    return card.price_provider, card.price_date


# The settings a person may fix (advise's seq_len, batch, lora_rank, checkpointing), by the name the result's
# setup gives them.
SETTINGS = ("seq_len", "micro_batch", "lora_rank", "checkpointing")


def memory_sentence(tr: Localizer, memory: Any, setup: Any) -> str:
    """What each device of an option holds, part by part, and the settings it
    was sized for: which the person gave, and that the rules chose the rest."""
    _ = tr.gettext
    labels = {"weights": _("weights"), "gradients": _("gradients"), "optimizer": _("optimizer state"),
              "activations": _("activations"), "overhead": _("framework overhead")}
    parts = tr.list([f"{labels[name]} {tr.gib(gib)}" for name, gib in memory.parts().items()])
    return _("Per device: %(parts)s; sized for %(sized)s.") % {"parts": parts, "sized": sized_for(tr, setup)}


def sized_for(tr: Localizer, setup: Any) -> str:
    """The settings an option was sized for, each marked as the person's value or the rules' choice
    ("4,096-token sequences (your value), a micro-batch of 2 (chosen by the rules) ...")."""
    _ = tr.gettext
    shown = {
        "seq_len": _("%(tokens)s-token sequences") % {"tokens": tr.number(setup.seq_len, 0)},
        "micro_batch": _("a micro-batch of %(count)s") % {"count": tr.number(setup.micro_batch, 0)},
        "lora_rank": (_("LoRA rank %(rank)s") % {"rank": setup.lora_rank}) if setup.lora_rank else "",
        "checkpointing": _("activation checkpointing") if setup.checkpointing else
        _("no activation checkpointing"),
    }
    settings = [name for name in SETTINGS if shown[name]]
    if not setup.given:
        return _("%(settings)s, all chosen by the rules") % {"settings": tr.list([shown[n] for n in settings])}
    return tr.list([shown[n] + " (" + (_("your value") if n in setup.given else _("chosen by the rules")) + ")"
                    for n in settings])

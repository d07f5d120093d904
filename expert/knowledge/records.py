"""The knowledge base as typed records, and the vocabulary the files are
checked against (rule kinds, helpers, methods, vendors, costs ...).

Nothing here reads a file; :mod:`expert.knowledge.load` fills these records.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..i18n import WAY_IN
from .conditions import COMPARED, DERIVED_PROFILE_FIELDS, FIELDS, PROFILE_TYPES, Condition, Key

# --- the vocabulary: declared here once (the profile's fields in rules/profile.toml,
# written into conditions.FIELDS by scripts/update_types.py)
# The profile's fields, in order.
PROFILE_FIELDS = tuple(name for name in FIELDS["profile"] if name not in DERIVED_PROFILE_FIELDS)
# The only profile fields that may be missing (no deadline, no own GPU).
OPTIONAL_FIELDS = ("deadline_h", "vram_gb")
# The types a profile field may have.
FIELD_TYPES = tuple(PROFILE_TYPES)
# Fine-tuning methods: each has a ladder (recipes.toml), figures in
# requirements.toml and timing.toml, and a typical base precision (estimator.toml).
METHODS = ("full", "lora", "qlora")
# The codes of a card.
VENDORS = ("nvidia", "amd")
COSTS = ("low", "medium", "medium-high", "high")
SEGMENTS = ("consumer", "datacenter")
# Rule kinds.
KINDS = ("derive", "configure", "reject", "demote", "prefer", "advice", "warning")
# The kinds whose rules take an action (`then`): they declare facts. The others
# conclude a verdict on an option (reject, demote, prefer) or a note (advice,
# warning), which the engine records.
ACTING = ("derive", "configure")
# The actions a rule may name as its `then`, and the facts each declares: the
# functions of expert/inference/actions.py, which also declare the facts each
# reads (tests/test_actions.py holds the two lists to the same names). A
# derive rule's message may name what its action declares.
ACTIONS: dict[str, tuple[str, ...]] = {
    "requirement": ("req",),
    "own-card": ("card",),
    "first-step": ("candidate", "trial"),
    "next-step": ("candidate", "trial"),
    "next-count-to-fit": ("trial",),
    "step-settled": ("candidate",),
    "step-impossible": ("candidate",),
    "shard-over-pcie": ("candidate",),
    "larger-micro-batch": ("candidate",),
    "first-speed-trial": ("candidate", "trial"),
    "next-speed-trial": ("trial",),
    "faster-recipe-found": ("candidate",),
    "slower-recipe-stands": ("candidate",),
    "first-precision-trial": ("candidate", "trial"),
    "leaner-recipe-kept": ("candidate",),
    "next-precision-trial": ("trial",),
    "mixed-precision-found": ("candidate",),
    "leaner-recipe-stands": ("candidate",),
    "first-scale-trial": ("trial",),
    "next-scale-trial": ("trial",),
    "deadline-met": ("candidate",),
    "fastest-tried-stands": ("candidate",),
    "option": ("option",),
    "standing": ("standing",),
    "market": ("market",),
    "beaten": ("beaten",),
    "rank": ("weight",),
    "order": ("ranking",),
    "pick": ("pick",),
    "no-pick": ("pick",),
}
# The actions of the rules that collect: such a rule fires once, after every
# fact of the kind it collects is declared, and reads all those its `when`
# holds for (each in turn, as `standing` or `weight`), in the order its `by`
# keys give (rules.toml) -- a sweep, not a join of every pair.
COLLECTS = {"market": "standing", "beaten": "standing", "order": "weight"}
# The kinds of trial (a configuration tried on one count of cards): each is
# settled by the rules of the one stage that names it (rules.toml [[stage]] trials).
TRIAL_KINDS = ("cards", "speed", "precision", "deadline")
# The configuration steps that are not on a ladder: more cards for a deadline,
SCALE_OUT = "scale-out"
# a faster recipe on more cards, when the one that fits is slow,
SPEED_UP = "speed-up"
# one that keeps the cards: a larger micro-batch where memory allows,
LARGER_BATCH = "larger-micro-batch"
# one for a production run or a high budget: mixed precision (an fp32 master
# copy and full AdamW states) sharded over more cards of one node, when what
# fits is a leaner recipe,
PRECISION_UP = "precision-up"
# and, for an experiment on a budget that is not high, the leaner recipe kept.
PRECISION_KEPT = "precision-kept"
# The steps of the rules that settle how many cards a step takes (a step that
# spreads over devices proposes a trial at its fewest cards), that scale out
# for a deadline, speed up a slow recipe or weigh mixed precision, one count
# at a time: each names the configuration it proposes (rules.toml `step`).
MORE_CARDS = "more-cards"
FEWEST_CARDS = "fewest-cards"
NO_COUNT_FITS = "no-count-fits"
NO_FAST_LINK = "no-fast-link"
OWN_CARDS_ONLY = "own-cards-only"
OVER_PCIE = "over-pcie"
DEADLINE_NEXT = "next-count-for-deadline"
DEADLINE_MET = "deadline-met"
DEADLINE_MISSED = "deadline-missed"
SPEED_NEXT = "next-count-for-speed"
SPEED_FOUND = "speed-found"
SPEED_NONE = "speed-none"
SCALE_TRIAL_STEPS = (DEADLINE_NEXT, DEADLINE_MET, DEADLINE_MISSED)
PRECISION_NEXT = "next-count-for-precision"
PRECISION_FOUND = "precision-found"
PRECISION_NONE = "precision-none"
SPEED_TRIAL_STEPS = (SPEED_NEXT, SPEED_FOUND, SPEED_NONE, PRECISION_NEXT, PRECISION_FOUND, PRECISION_NONE)
TRIAL_STEPS = (MORE_CARDS, FEWEST_CARDS, NO_COUNT_FITS, NO_FAST_LINK, OWN_CARDS_ONLY, OVER_PCIE, *SCALE_TRIAL_STEPS,
               *SPEED_TRIAL_STEPS)
OFF_LADDER = (LARGER_BATCH, SPEED_UP, PRECISION_UP, PRECISION_KEPT, SCALE_OUT, *TRIAL_STEPS)
SPREADS = ("card", "shard", "fewest")
# The facts a stage may see (rules.toml [[stage]] sees).
NAMESPACES = ("profile", "req", "card", "candidate", "trial", "option", "standing", "market", "beaten", "weight",
              "ranking", "pick")
# Placeholders a message may use besides the fact fields.
EXTRA_PLACEHOLDERS = {ns: {"label", "name", "setup", "summary"} for ns in ("option", "candidate", "proposal", "pick",
                                                                       "trial")}
EXTRA_PLACEHOLDERS.update({ns: {"label", "name"} for ns in ("standing", "weight")})
# The ranking names its first two options: ranking_first_label, ranking_second_label.
RANKED = ("first", "second")
EXTRA_PLACEHOLDERS["ranking"] = {f"{which}_label" for which in RANKED}
EXTRA_PLACEHOLDERS["pick"] |= {f"{which}_label" for which in COMPARED}
# The option that beats another on money and time names itself: beaten_by_label.
EXTRA_PLACEHOLDERS["beaten"] = {"by_label"}
# \Z, not $: "id\n" is not an id.
ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*\Z")
# The heuristics of the guide: H1 to H39.
H_RE = re.compile(r"^H([1-9]|[1-3][0-9])\Z")
PLACEHOLDER_RE = re.compile(r"%\((\w+)\)s")
_NOT_NAME = re.compile(r"[^a-z0-9]+")


def name_key(name: str) -> str:
    """A model name as the table is searched: without its organisation
    ("meta-llama/"), case, spaces, dashes, underscores and dots."""
    return _NOT_NAME.sub("", name.rsplit("/", 1)[-1].casefold())


@dataclass(frozen=True)
class Section:
    """A section of the guide that rules cite."""

    key: str
    heading: str
    heuristics: tuple[str, ...]
    title: str = ""      # the heading in English (translated like a message); "" for the heading itself

    def cited(self, number: str, gettext: Any) -> dict[str, str]:
        """How an answer cites it: its number, its title in the answer's
        language and, when that is not the guide's own words, the heading
        once beside it (``line``)."""
        title = gettext(self.title) if self.title else self.heading
        cites = {"section": self.key, "number": number, "heading": self.heading, "title": title}
        return {**cites, "line": cite_line(cites)}


def cite_line(cites: dict[str, str]) -> str:
    """A section as an answer cites it: "S1 “title” («heading»)", or "S1 «heading»" in the guide's language."""
    if cites["title"] == cites["heading"]:
        return f"{cites['number']} «{cites['heading']}»"
    return f"{cites['number']} “{cites['title']}” («{cites['heading']}»)"


@dataclass(frozen=True)
class ProfileField:
    """One answer of the profile: its type, label, default and accepted values."""

    name: str
    type: str
    label: str
    default: Any = None
    choices: tuple[str, ...] = ()
    choice_labels: dict[str, str] = field(default_factory=dict)
    min: float | None = None
    min_exclusive: float | None = None
    max: float | None = None
    none_label: str | None = None
    cards: bool = False    # also takes the name of a card (rules/owned.toml, the catalog): its VRAM


@dataclass(frozen=True, kw_only=True)
class Card:
    """A GPU of the catalog (or the user's own card), as the rules see it."""

    id: str
    name: str
    vendor: str
    vram_gb: float
    devices: int
    cost: str
    segment: str
    fast_interconnect: bool
    bf16_tflops: float           # dense bf16/fp16 tensor TFLOPS of the whole card (all its devices)
    memory_bandwidth_gbs: float
    interconnect: str            # nvlink, infinity-fabric, infiniband or pcie
    link_gbs: float              # GPU-to-GPU bandwidth within a node, per GPU
    per_node: int                # cards in one node (server)
    hardware_source: str
    price_on_demand: float       # USD per card-hour
    price_spot: float
    price_source: str
    ideal_methods: tuple[str, ...]
    ideal_min_b: float
    ideal_max_b: float
    heuristics: tuple[str, ...]
    source: str
    origin: str = "guide"    # "guide", or the file name of the user catalog it came from
    speed_assumed: bool = False  # a user card without bf16_tflops: timing.toml's default
    price_assumed: bool = False  # a user card without prices: its cost class's (ranking.toml)
    bf16: bool = True            # has bf16 tensor cores; without them training runs in fp16 (V100, T4)
    priced: bool = True          # has an hourly price: the price basis's, a user catalog's or --price
    spot_market: bool = True     # the price basis lists a spot (interruptible) price for it
    chip: str = ""               # the GPU die: cards of one chip differ only in memory (expert check)
    # Where the prices come from (rules/prices): the provider and date of the
    # on-demand price and of the spot one ("" for a price the card brings
    # itself, --price or a user catalog's); price_basis names the providers the
    # prices are from, or, for a card with no price, the bases searched.
    price_provider: str = ""
    price_date: str = ""
    spot_provider: str = ""
    spot_date: str = ""
    spot_source: str = ""
    price_basis: str = ""
    # How many days before the newest price of the price bases its on-demand and spot prices were read
    # (prices.priced): 0 where it has none from them (a price one gives, one's own card).
    price_age_days: int = 0
    spot_age_days: int = 0
    # The memory the card's driver reports (nvidia-smi's or rocm-smi's total),
    # in MiB, for all its devices: what a run may fill, smaller than vram_gb
    # (ECC, reserved memory); 0 where it is not known (a card of one's own).
    memory_mib: float = 0.0
    # The card whose speed times this one (timing.toml [card_class] names
    # cards by it): "" for a card of its own figures (the catalog's, owned.toml's);
    # one's own GPU named by the person is timed as the card named.
    speed_of: str = ""
    memory_source: str = ""
    # The name every answer shows (catalog.py SHORT_MAX): one shape for every
    # card, the maker's name and brand left out (rules/catalog.toml says how);
    # "" for a user card without one, which goes by its name.
    short: str = ""
    # The names people write for it besides its id, name and short name
    # (its number alone, nvidia-smi's name): what one's own card is read by (owned.find_cards).
    aliases: tuple[str, ...] = ()

    @cached_property
    def _fact(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS["card"]}

    def fact(self) -> dict[str, Any]:
        """The card's fields as the conditions see them (one shared, read-only dict)."""
        return self._fact

    @property
    def shown_name(self) -> str:
        """The name every text shows: its short name, or its name where it has none (a user's card)."""
        return self.short or self.name

    @property
    def names(self) -> tuple[str, ...]:
        """The names it is read by, as one's own card (owned.Reader): its id, name, short name and aliases."""
        return (self.id, self.name, *((self.short,) if self.short else ()), *self.aliases)


@dataclass(frozen=True)
class ModelDef:
    """One model of ``rules/models.toml``: its published sizes and architecture."""

    id: str
    name: str
    family: str
    aliases: tuple[str, ...]
    params_b: float
    active_b: float                  # the total for a dense model
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    context: int
    tied: bool
    gated: bool
    experts: int | None
    experts_per_token: int | None
    expert_ffn: int | None
    shared_experts: int
    moe_layers: int | None
    mla: dict[str, int] | None
    other_b: float
    config: str
    params_source: str
    line: int = 0

    @property
    def moe(self) -> bool:
        return bool(self.experts)

    def shape(self) -> dict[str, Any]:
        """The architecture as the estimator reads it."""
        return {"name": self.name, "size_b": self.params_b, "active_b": self.active_b, "hidden": self.hidden,
                "layers": self.layers, "heads": self.heads, "kv_heads": self.kv_heads, "head_dim": self.head_dim,
                "ffn": self.ffn, "vocab": self.vocab, "context": self.context, "tied": self.tied,
                "gated": self.gated, "experts": self.experts, "experts_per_token": self.experts_per_token,
                "expert_ffn": self.expert_ffn, "shared_experts": self.shared_experts,
                "moe_layers": self.moe_layers, "mla": dict(self.mla) if self.mla else None,
                "other_b": self.other_b}

    def to_dict(self) -> dict[str, Any]:
        data = {"id": self.id, "name": self.name, "family": self.family, "aliases": list(self.aliases),
                "params_b": self.params_b, "active_b": self.active_b, **self.shape(),
                "config": self.config, "params_source": self.params_source}
        del data["size_b"]
        return data


@dataclass(frozen=True)
class StageDef:
    """One stage of ``rules/rules.toml``: its rules fire before those of any later stage."""

    id: str
    rank: int                    # its place in the list, from 0
    sees: tuple[str, ...]        # the facts its rules may see
    trials: str | None = None    # the kind of trial its rules settle (TRIAL_KINDS)
    line: int = 0


@dataclass(frozen=True)
class RuleDef:
    """One rule of ``rules/rules.toml``, validated, with its compiled condition."""

    id: str
    kind: str
    section: str
    heuristics: tuple[str, ...]
    gaps: tuple[str, ...]
    condition: Condition
    message: str
    factor: float | None
    then: str | None             # derive and configure rules: the action it takes (inference/actions.py)
    index: int
    file: str
    line: int
    opposes: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    step: str | None = None      # configure rules: the ladder step (or scale-out) they take
    proposes: bool = False       # configure rules: the first step of every ladder (no candidate yet)
    in_summary: bool = True      # its note is in the summary form (rules.toml `summary = false`: full form only)
    by: tuple[Key, ...] = ()     # a rule that collects: the keys it sorts what it collects by
    stage: str = ""              # the [[stage]] it runs in
    rank: int = 0                # its stage's place in the stage list: stages fire in that order
    scope: tuple[str, ...] = ()  # the facts it may see: its stage's
    trials: str | None = None    # a rule of a stage that settles trials: their kind
    in_brief: bool = False       # its note is in the default, one-screen answer (rules.toml `brief`; warnings by default)
    together: bool = False       # a reject rule whose cards an answer names once, in one line (rules.toml `together`)
    # a reject rule whose message names the card's last setup tried: the one that came closest follows it
    # (rules.toml `names_closest`)
    names_closest: bool = False

    @cached_property
    def placeholders(self) -> frozenset[tuple[str, str]]:
        """The (namespace, field) pairs its message names."""
        return frozenset(tuple(name.partition("_")[::2]) for name in PLACEHOLDER_RE.findall(self.message))


@dataclass(frozen=True)
class OwnedCard:
    """A card people own (rules/owned.toml), named by the person instead of a VRAM figure."""

    id: str
    name: str
    vram_gb: float
    aliases: tuple[str, ...]
    source: str
    line: int = 0
    bf16_tflops: float = 0.0            # its speed, as the catalog's cards give it
    memory_bandwidth_gbs: float = 0.0
    hardware_source: str = ""
    bf16: bool = True                   # false: no bf16 tensor cores (V100, T4), fp16 recipes

    @property
    def names(self) -> tuple[str, ...]:
        """The names it is read by (owned.Reader): its id, name and aliases."""
        return (self.id, self.name, *self.aliases)


@dataclass(frozen=True)
class UnsupportedDevice:
    """A device people name as their own that no recipe here runs on (rules/owned.toml [[unsupported]])."""

    id: str
    name: str
    aliases: tuple[str, ...]
    reason: str          # why, in English (translated like a rule's message)
    source: str
    line: int = 0

    @property
    def names(self) -> tuple[str, ...]:
        """The names it is read by (owned.Reader): its id, name and aliases."""
        return (self.id, self.name, *self.aliases)


@dataclass(frozen=True)
class QuestionDef:
    """One question of the interactive plan and when it is asked."""

    field: str
    condition: Condition
    text: str
    hint: str | None
    why: str
    line: int
    which_text: str | None = None    # asked after "yes" to a question that takes a card's name
    which_hint: str | None = None


@dataclass(frozen=True)
class KnowledgeBase:
    """Everything in ``rules/``, validated: the knowledge the engine reasons with."""

    root: Path
    sections: dict[str, Section]
    fields: dict[str, ProfileField]
    catalog: tuple[Card, ...]
    requirements: dict[str, Any]
    timing: dict[str, Any]
    ranking: dict[str, Any]
    labels: dict[str, dict[str, str]]
    rules: tuple[RuleDef, ...]
    changes: tuple[tuple[str, Any], ...] = ()
    questions: tuple[QuestionDef, ...] = ()
    estimator: dict[str, Any] = field(default_factory=dict)
    recipes: dict[str, Any] = field(default_factory=dict)   # {"recipe": {id: {...}}, "ladder": {...}, "margin": x}
    models: tuple[ModelDef, ...] = ()
    model_names: dict[str, Any] = field(default_factory=dict)    # models.toml [names]
    model_config: dict[str, Any] = field(default_factory=dict)   # models.toml [config]

    def model(self, model_id: str) -> ModelDef | None:
        return self._models_by_id.get(model_id)

    def how(self, tr: Any, setting: str, **values: Any) -> str:
        """How ``setting`` is given on the way in that asked (expert.i18n.WAY_IN): the command line's flag,
        the library's keyword, the tool's argument or the page's field (labels.toml [how_*]), in ``tr``'s
        language, its own placeholders (``%(example)s``) filled from ``values``. Read where the text is
        written, so an answer or a refusal is worded for the way in that asked it."""
        text: str = tr.gettext(self.labels[f"how_{WAY_IN.get()}"][setting])
        return text % values if values else text

    @cached_property
    def _models_by_id(self) -> dict[str, ModelDef]:
        return {model.id: model for model in self.models}

    def nearest_shape(self, size_b: float) -> dict[str, Any]:
        """The estimator's typical architecture nearest in size to ``size_b``
        (on a log scale), found once per size: a consultation asks it of every
        configuration it sizes."""
        nearest = self._nearest_shapes
        if size_b not in nearest:
            if len(nearest) >= 256:     # (sizes come from people: keep a bounded few)
                nearest.clear()
            nearest[size_b] = min(self.estimator["shape"], key=lambda s: abs(math.log(s["size_b"] / size_b)))
        return nearest[size_b]

    @cached_property
    def _nearest_shapes(self) -> dict[float, dict[str, Any]]:
        return {}
    owned: tuple[OwnedCard, ...] = ()
    owned_ignore: frozenset[str] = frozenset()
    owned_forms: frozenset[str] = frozenset()   # form factors: they count where a card is named with one
    owned_examples: tuple[str, ...] = ()    # card names messages give as examples
    unsupported: tuple[UnsupportedDevice, ...] = ()   # devices named that no recipe runs on (Apple silicon)
    prices: tuple[Any, ...] = ()   # the price bases of rules/prices (prices.Basis), in file-name order
    stages: tuple[StageDef, ...] = ()   # rules.toml [[stage]], in firing order
    # Every card of the shipped catalogs (the guide's and the market's), weighed or not: one's own card is
    # read by its name among them too, with their figures (owned.find_cards), whatever catalog is weighed.
    shipped: tuple[Card, ...] = ()

    def card(self, gpu: str) -> Card | None:
        return next((card for card in self.catalog if card.id == gpu), None)

    def known_cards(self) -> tuple[Card, ...]:
        """The cards weighed (the catalog's), then the shipped cards that are not (the market's under
        ``--catalog guide``): those one's own card may be, by its name, with their figures."""
        weighed = {card.id for card in self.catalog}
        return (*self.catalog, *(card for card in self.shipped if card.id not in weighed))

    def known_card(self, gpu: str) -> Card | None:
        """The card of id ``gpu`` among :meth:`known_cards`: the weighed one first."""
        return next((card for card in self.known_cards() if card.id == gpu), None)

    def rule(self, rule_id: str) -> RuleDef:
        return self._rules_by_id[rule_id]

    @cached_property
    def _rules_by_id(self) -> dict[str, RuleDef]:
        return {rule.id: rule for rule in self.rules}

    def messages(self) -> list[str]:
        """Every translatable string of the knowledge base, in file order."""
        return list(dict.fromkeys(message for _, message in self.keyed_messages()))

    def keyed_messages(self) -> list[tuple[str, str]]:
        """Every translatable string of the knowledge base with the id of
        where it is written, in file order: ``rules.toml rule ID``,
        ``profile.toml field NAME label`` ... (docs/explanations.md, "Where a
        sentence is written")."""
        found = [(f"rules.toml rule {rule.id}", rule.message) for rule in self.rules]
        for name, spec in self.fields.items():
            found.append((f"profile.toml field {name} label", spec.label))
            if spec.none_label:
                found.append((f"profile.toml field {name} none_label", spec.none_label))
            found += [(f"profile.toml field {name} choice {value}", label)
                      for value, label in spec.choice_labels.items()]
        for table, labels in self.labels.items():
            found += [(f"labels.toml {table} {key}", label) for key, label in labels.items()]
        for question in self.questions:
            where = f"questions.toml question {question.field}"
            found += [(f"{where} {key}", text) for key, text in (
                ("text", question.text), ("why", question.why), ("hint", question.hint),
                ("which_text", question.which_text), ("which_hint", question.which_hint)) if text]
        found += [(f"owned.toml unsupported {device.id} reason", device.reason) for device in self.unsupported]
        found += [(f"sections.toml {key} title", section.title) for key, section in self.sections.items()
                  if section.title]
        return found

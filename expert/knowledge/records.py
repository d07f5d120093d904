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
# Rule kinds, and the helpers a derive rule names.
KINDS = ("derive", "configure", "reject", "demote", "prefer", "advice", "warning")
HELPERS = ("requirement", "own-card", "option", "standing", "market", "beaten", "rank", "order", "pick", "no-pick")
# The helpers of the rules that collect: such a rule fires once, after every
# fact of the kind it collects is declared, and reads all those its `when`
# holds for (each in turn, as `standing` or `weight`), in the order its `by`
# keys give (rules.toml) -- a sweep, not a join of every pair.
COLLECTS = {"market": "standing", "beaten": "standing", "order": "weight"}
# The configuration step that is not on a ladder: more cards for a deadline.
SCALE_OUT = "scale-out"
# The other: a faster recipe on more cards, when the one that fits is slow.
SPEED_UP = "speed-up"
# And one that keeps the cards: a larger micro-batch where memory allows.
LARGER_BATCH = "larger-micro-batch"
# And one for a production run or a high budget: mixed precision (an fp32
# master copy and full AdamW states) sharded over more cards of one node,
# when what fits is a leaner recipe.
PRECISION_UP = "precision-up"
# ... and, for an experiment on a budget that is not high, the leaner recipe kept.
PRECISION_KEPT = "precision-kept"
# The steps that settle how many cards a ladder step takes (a step that
# spreads over devices proposes a trial at its fewest cards): a trial that
# does not fit is tried again on the next count of ranking.toml; the first
# that fits, or the last, becomes the step's candidate; several cards without
# a fast link leave the step impossible.
MORE_CARDS = "more-cards"
FEWEST_CARDS = "fewest-cards"
NO_COUNT_FITS = "no-count-fits"
NO_FAST_LINK = "no-fast-link"
# Scaling out for a deadline tries counts the same way: a trial that misses
# the deadline is tried again on the next count; the first that meets it, or
# the fastest of all when none does, becomes the card's candidate.
DEADLINE_NEXT = "next-count-for-deadline"
DEADLINE_MET = "deadline-met"
DEADLINE_MISSED = "deadline-missed"
# Speeding up a slow recipe tries counts too, within one node: a trial whose
# faster recipe is not both quicker and no dearer is tried again on the next
# count; the first that is becomes the card's candidate, else the slow one stands.
SPEED_NEXT = "next-count-for-speed"
SPEED_FOUND = "speed-found"
SPEED_NONE = "speed-none"
SCALE_TRIAL_STEPS = (DEADLINE_NEXT, DEADLINE_MET, DEADLINE_MISSED)
# Weighing mixed precision tries counts within one node the same way: the
# first that holds it becomes the card's candidate, else the leaner one stands.
PRECISION_NEXT = "next-count-for-precision"
PRECISION_FOUND = "precision-found"
PRECISION_NONE = "precision-none"
SPEED_TRIAL_STEPS = (SPEED_NEXT, SPEED_FOUND, SPEED_NONE, PRECISION_NEXT, PRECISION_FOUND, PRECISION_NONE)
TRIAL_STEPS = (MORE_CARDS, FEWEST_CARDS, NO_COUNT_FITS, NO_FAST_LINK, *SCALE_TRIAL_STEPS, *SPEED_TRIAL_STEPS)
OFF_LADDER = (LARGER_BATCH, SPEED_UP, PRECISION_UP, PRECISION_KEPT, SCALE_OUT, *TRIAL_STEPS)
SPREADS = ("card", "shard", "fewest")

# The stages rules run in (the helpers, proposing and configuring, and the
# other kinds) and the facts a rule of each can see (and so name in `when`
# and `message`). The engine's stage tables use these names.
SCOPES: dict[str, tuple[str, ...]] = {
    "requirement": ("profile",),
    "own-card": ("profile",),
    "propose": ("profile", "req", "card"),
    "configure": ("profile", "req", "candidate", "card"),
    "trial": ("profile", "req", "trial", "card"),
    "option": ("profile", "req", "candidate", "card"),
    # Weighing the options no reject verdict ruled out: each that stands; one
    # sweep over them finds the cheapest rented one (low budget), another
    # those another beats on money and time (each `standing` in turn).
    "standing": ("profile", "option"),
    "market": ("profile", "standing"),
    "beaten": ("profile", "standing"),
    # Ranking: once the verdicts are on it, each standing option's `weight`;
    # one ordering rule sorts the weights (each `weight` in turn) into the
    # `ranking`; its first is the pick.
    "rank": ("profile", "standing"),
    "order": ("profile", "weight"),
    "pick": ("profile", "req", "ranking", "option"),
    "no-pick": ("profile", "req"),
    "reject": ("profile", "req", "option", "card"),
    "demote": ("profile", "req", "option", "card", "market", "beaten"),
    "prefer": ("profile", "req", "option", "card"),
    "advice": ("profile", "req", "pick"),
    "warning": ("profile", "req", "pick"),
}
# The fact each helper declares: a derive rule's message may also name it.
DERIVES = {"requirement": "req", "pick": "pick", "no-pick": "pick", "option": "option", "market": "market",
           "standing": "standing", "beaten": "beaten", "rank": "weight", "order": "ranking"}
# Placeholders a message may use besides the fact fields.
EXTRA_PLACEHOLDERS = {ns: {"label", "name", "setup", "summary"} for ns in ("option", "candidate", "proposal", "pick",
                                                                       "trial")}
EXTRA_PLACEHOLDERS.update({ns: {"label", "name"} for ns in ("standing", "weight")})
# The ranking names its first two options: ranking_first_label, ranking_second_label.
RANKED = ("first", "second")
EXTRA_PLACEHOLDERS["ranking"] = {f"{which}_label" for which in RANKED}
EXTRA_PLACEHOLDERS["pick"] |= {f"{which}_label" for which in COMPARED}
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
    # The memory the card's driver reports (nvidia-smi's or rocm-smi's total),
    # in MiB, for all its devices: what a run may fill, smaller than vram_gb
    # (ECC, reserved memory); 0 where it is not known (a card of one's own).
    memory_mib: float = 0.0
    memory_source: str = ""

    @cached_property
    def _fact(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS["card"]}

    def fact(self) -> dict[str, Any]:
        """The card's fields as the conditions see them (one shared, read-only dict)."""
        return self._fact


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
    derive: str | None
    index: int
    file: str
    line: int
    opposes: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    step: str | None = None      # configure rules: the ladder step (or scale-out) they take
    proposes: bool = False       # configure rules: the first step of every ladder (no candidate yet)
    in_summary: bool = True      # its note is in the summary form (rules.toml `summary = false`: full form only)
    by: tuple[Key, ...] = ()     # a rule that collects: the keys it sorts what it collects by

    @property
    def scope(self) -> tuple[str, ...]:
        return SCOPES[scope_key(self.kind, self.derive, self.proposes, self.step)]

    @cached_property
    def placeholders(self) -> frozenset[tuple[str, str]]:
        """The (namespace, field) pairs its message names."""
        return frozenset(tuple(name.partition("_")[::2]) for name in PLACEHOLDER_RE.findall(self.message))


def scope_key(kind: str, derive: str | None, proposes: bool, step: str | None = None) -> str:
    if kind == "derive":
        return str(derive)
    if kind == "configure":
        if step in TRIAL_STEPS:
            return "trial"
        return "propose" if proposes else "configure"
    return kind


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


@dataclass(frozen=True)
class UnsupportedDevice:
    """A device people name as their own that no recipe here runs on (rules/owned.toml [[unsupported]])."""

    id: str
    name: str
    aliases: tuple[str, ...]
    reason: str          # why, in English (translated like a rule's message)
    source: str
    line: int = 0


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
    owned_examples: tuple[str, ...] = ()    # card names messages give as examples
    unsupported: tuple[UnsupportedDevice, ...] = ()   # devices named that no recipe runs on (Apple silicon)
    prices: tuple[Any, ...] = ()   # the price bases of rules/prices (prices.Basis), in file-name order

    def card(self, gpu: str) -> Card | None:
        return next((card for card in self.catalog if card.id == gpu), None)

    def rule(self, rule_id: str) -> RuleDef:
        return self._rules_by_id[rule_id]

    @cached_property
    def _rules_by_id(self) -> dict[str, RuleDef]:
        return {rule.id: rule for rule in self.rules}

    def messages(self) -> list[str]:
        """Every translatable string of the knowledge base, in file order."""
        found = [rule.message for rule in self.rules]
        for spec in self.fields.values():
            found.append(spec.label)
            if spec.none_label:
                found.append(spec.none_label)
            found += spec.choice_labels.values()
        for table in self.labels.values():
            found += table.values()
        for question in self.questions:
            found += [question.text, question.why] + ([question.hint] if question.hint else [])
            found += [text for text in (question.which_text, question.which_hint) if text]
        found += [device.reason for device in self.unsupported]
        found += [section.title for section in self.sections.values() if section.title]
        return list(dict.fromkeys(found))

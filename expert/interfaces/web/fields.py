"""The form's fields as the template draws them: label (the knowledge
base's own label of the field, translated), hint, choices (a field's
choices with their labels), suggestions (the model table's names, the cards
people own), the value as typed and the error beside it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from ...application import BASES
from ...i18n import Localizer
from .form import PROFILE_KEYS, SETTING_KEYS


@dataclass(frozen=True)
class Field:
    key: str
    label: str
    kind: str                                 # text, choice
    value: str
    hint: str
    choices: tuple[tuple[str, str], ...]      # (value, label); the first is "" (not given)
    suggestions: str | None                   # the id of a <datalist>
    error: str | None


def _hints(kb: Any, tr: Localizer) -> dict[str, str]:
    _ = tr.gettext
    example = f"{kb.catalog[-1].id}=2.4" if kb.catalog else "CARD=2.4"
    return {
        "model-size": _("Billions of parameters, or the model's name: 8, 70B, Llama-3.1-8B, Mixtral 8x7B."),
        "deadline": _("Time available for training: 8, 8h, 2 days, a week."),
        "vram": _("A GPU you already have: its VRAM (24, 24 GB) or its name (RTX 3090, 2x RTX 3090); no for none."),
        "dataset": _("Training examples: 10000, 10k, 50 thousand."),
        "tokens-per-example": _("Tokens in one training example (default 1,024): 512, 4k."),
        "epochs": _("Passes over the dataset (default 1): 1, 3, 0.5."),
        "seq-len": _("Tokens per sequence memory is sized for; empty: the typical length, or the examples' when "
                     "longer."),
        "batch": _("Sequences per device per step; empty: the fastest that fits."),
        "lora-rank": _("The adapters' rank; empty: the typical rank."),
        "price": _("What you pay per card-hour: a card's id, =, USD; several separated by commas "
                   "(%(example)s).") % {"example": example},
    }


def fields(kb: Any, tr: Localizer, values: dict[str, str], errors: dict[str, str]) -> list[Field]:
    """Every field of the form, in order: the profile's, then the catalog, the basis and prices."""
    _ = tr.gettext
    hints = _hints(kb, tr)
    unset = _("— not given (default: %(default)s) —")
    drawn = []
    for key, name, kind in PROFILE_KEYS:
        spec = kb.fields[name]
        choices: tuple[tuple[str, str], ...] = ()
        if kind == "choice":
            default = _(spec.choice_labels.get(spec.default, str(spec.default)))
            choices = (("", unset % {"default": default}),
                       *((value, _(spec.choice_labels.get(value, value))) for value in spec.choices))
        elif kind == "yesno":
            choices = (("", unset % {"default": _("yes") if spec.default else _("no")}), ("yes", _("yes")),
                       ("no", _("no")))
        suggestions = {"model-size": "models", "vram": "cards"}.get(key)
        drawn.append(Field(key, _(spec.label), "text" if kind == "text" else "choice", values.get(key, ""),
                           hints.get(key, ""), choices, suggestions, errors.get(key)))
    for key, name, kind in SETTING_KEYS:      # what the rules would choose, fixed
        choices = (("", unset % {"default": _("the rules choose")}), ("yes", _("yes")), ("no", _("no"))) \
            if kind == "yesno" else ()
        drawn.append(Field(key, _(kb.labels["arguments"][name]), "text" if kind == "text" else "choice",
                           values.get(key, ""), hints.get(key, ""), choices, None, errors.get(key)))
    from ...knowledge.bases import shipped_catalogs

    catalogs = (("", _("— the guide's cards only —")), *((name, name) for name in sorted(shipped_catalogs())))
    drawn.append(Field("catalog", _("catalog of cards"), "choice", values.get("catalog", ""),
                       _("current: today's cards beside the guide's."), catalogs, None, errors.get("catalog")))
    bases = (("", unset % {"default": "checked"}), *((basis, basis) for basis in BASES))
    drawn.append(Field("basis", _("sizing basis"), "choice", values.get("basis", ""),
                       _("checked: every option by what its recipe needs; guide: the guide's figures at their "
                         "word; estimate: the first-principles estimate as the requirement."), bases, None,
                       errors.get("basis")))
    drawn.append(Field("price", _("your prices"), "text", values.get("price", ""), hints["price"], (), None,
                       errors.get("price")))
    return drawn


@cache
def suggestions() -> dict[str, list[str]]:
    """The model table's names and the names of cards people own, for the <datalist>s."""
    from ..api import knowledge_base

    kb = knowledge_base()
    return {"models": sorted({model.name for model in kb.models}),
            "cards": sorted({card.name for card in kb.owned} | {card.name for card in kb.catalog})}

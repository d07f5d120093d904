"""The arguments of the library's entry points (``advise()``, ``explain()``,
``estimate()``) checked before any reader takes them: bounds on size and
depth, the folder and catalog paths, the other names of the profile fields,
one field given under two names, the prices a person pays.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from .. import escape
from ..errors import InputError, nearest
from ..i18n import Localizer
from ..knowledge import PROFILE_FIELDS, KnowledgeBase
from ..knowledge.bases import knowledge_base
from ..knowledge.vocabulary import vocabulary
from . import profile as profile_module
from .profile_types import FIELD_TYPES
from .values import argument

Function = TypeVar("Function", bound=Callable[..., Any])


def check_paths(rules_dir: Any, catalog: Any, tr: Localizer) -> None:
    """``rules_dir`` a folder path, ``catalog`` a path, a shipped catalog's
    name or a list of them: InputError otherwise."""
    if rules_dir is not None and not isinstance(rules_dir, (str, Path)):
        raise InputError("rules_dir", tr.gettext("rules_dir: a folder path is accepted."))
    items = [catalog] if isinstance(catalog, (str, Path)) or catalog is None else catalog
    if not isinstance(items, (list, tuple)) or not all(isinstance(c, (str, Path)) for c in items if c is not None):
        raise InputError("catalog", tr.gettext("catalog: a file path or a list of file paths is accepted"))
    if any(isinstance(c, str) and not c.strip() for c in items):     # read as a path, "" is the folder "."
        from ..knowledge.bases import shipped_catalogs

        raise InputError("catalog", tr.gettext("catalog: an empty name is not a catalog; give a shipped catalog's "
                                               "name (%(names)s) or a file named *.toml.")
                         % {"names": ", ".join(sorted(shipped_catalogs()))})


# The arguments advise() declares besides the profile fields (for the error that lists them).
ADVISE_ARGUMENTS = ("lang", "rules_dir", "catalog", "basis", "prices", "model", "model_config", "seq_len", "batch",
                    "lora_rank", "checkpointing")


def profile_parameters(function: Function) -> Function:
    """``function`` (an entry point that takes the profile as
    ``**profile: Unpack[ProfileArguments]``, the one declaration) shown, to
    ``help()``, ``inspect.signature()`` and the tools that read them, with a
    keyword parameter per profile field, in rules/profile.toml's order, before
    its own keyword parameters; ``**profile`` stays last, for the fields'
    other names (``vram=24``)."""
    signature = inspect.signature(function)
    kinds = inspect.Parameter
    own = list(signature.parameters.values())
    types: Mapping[str, Any] = FIELD_TYPES
    fields = [kinds(name, kinds.KEYWORD_ONLY, default=None, annotation=types[name] | None) for name in PROFILE_FIELDS]
    before = [p for p in own if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    after = [p for p in own if p not in before]
    function.__signature__ = signature.replace(parameters=[*before, *fields, *after])  # type: ignore[attr-defined]
    return function


def profile_arguments(profile: Mapping[str, Any], tr: Localizer, others: Sequence[str] = ()) -> dict[str, Any]:
    """The profile fields of an entry point's ``**profile`` (each field, None
    where not given), those given under another name taken as theirs: a name
    that is neither is an InputError listing the fields, then ``others`` (the
    entry point's own parameters)."""
    given = {name: profile.get(name) for name in PROFILE_FIELDS}
    return with_aliases(given, {k: v for k, v in profile.items() if k not in PROFILE_FIELDS}, tr, others)


def field_alias(name: str, declared: Sequence[str], kb: KnowledgeBase | None = None) -> str:
    """The declared argument ``name`` stands for (``rules/vocabulary.toml``
    ``[aliases.arguments]``: "vram" for vram_gb), or ``name`` itself."""
    return argument(name, declared, vocabulary(kb or knowledge_base()))


def with_aliases(given: dict[str, Any], aliases: Mapping[str, Any], tr: Localizer,
                 others: Sequence[str] = (), fields: Sequence[str] = PROFILE_FIELDS) -> dict[str, Any]:
    """``given`` (the values of ``fields``, the profile's unless said) with the
    values given under another name; a name that is none of theirs is an
    InputError naming it, listing the accepted ones (``fields``, then ``others``)."""
    given = dict(given)
    for name, value in aliases.items():
        field = field_alias(name, fields)
        if field not in fields:
            raise InputError(profile_module.shown(str(name))[:40], tr.gettext("%(argument)s: not an accepted argument; accepted: "
                                                        "%(accepted)s.") % {
                "argument": profile_module.shown(str(name)), "accepted": ", ".join((*fields, *others))})
        if value is None:
            continue
        if profile_module.is_given(given.get(field)):
            raise InputError(field, tr.gettext("%(argument)s: given twice, as %(field)s and as %(alias)s; give "
                                               "one.") % {"argument": field, "field": field,
                                                          "alias": profile_module.shown(str(name))})
        given[field] = value
    return given


# What no reader takes, refused before any reads it (issue 26): an integer of
# more than MAX_BITS bits (about 300 digits; a float cannot hold it and Python
# will not turn one of over 4,300 digits into text), and data nested deeper
# or holding more items than any argument needs.
MAX_BITS = 1000
MAX_DEPTH = 4
MAX_ITEMS = 1000


def check_bounds(arguments: Mapping[str, Any], tr: Localizer) -> None:
    """Refuse, naming the argument, a value no reader could take (see MAX_BITS);
    every other value goes on to its reader."""
    def refuse(name: str, message: str, **params: Any) -> InputError:
        return InputError(name, message % {"field": argument_label(knowledge_base(), tr, name), **params})

    for name, value in arguments.items():
        seen = 0
        todo = [(value, 0)]
        while todo:
            item, depth = todo.pop()
            seen += 1
            if isinstance(item, int) and not isinstance(item, bool) and item.bit_length() > MAX_BITS:
                raise refuse(name, tr.gettext("%(field)s: a whole number of about %(digits)s digits is not "
                                              "accepted."), digits=tr.number(escape.digits(item), 0))
            if isinstance(item, (str, bytes, int, float, Path)) or item is None:
                continue
            if depth >= MAX_DEPTH or seen > MAX_ITEMS:
                raise refuse(name, tr.gettext("%(field)s: too much data; a value, or a short list or mapping of "
                                              "values, is accepted."))
            if isinstance(item, Mapping):
                todo += [(part, depth + 1) for pair in list(item.items())[:MAX_ITEMS] for part in pair]
            elif isinstance(item, (list, tuple, set, frozenset)):
                todo += [(part, depth + 1) for part in list(item)[:MAX_ITEMS]]


def model_argument(model_size_b: Any, model: Any, tr: Localizer) -> Any:
    """``model`` and ``model_size_b`` are one field under two names: at most one is given."""
    if model is None:
        return model_size_b
    if profile_module.is_given(model_size_b):
        raise InputError("model", tr.gettext("model: give model or model_size_b, not both."))
    return model


# --price: at most this many cards, each from 0 to this many USD per card-hour.
MAX_PRICES = 100
MAX_PRICE = 1000.0


def argument_label(kb: KnowledgeBase, tr: Localizer, name: str) -> str:
    """How an error names an argument: a profile field by its label, another
    by labels.toml [arguments], else by its name."""
    label = kb.fields[name].label if name in kb.fields else kb.labels.get("arguments", {}).get(name)
    return tr.gettext(label) if label else name


def with_prices(kb: KnowledgeBase, prices: Mapping[str, Any] | None, tr: Localizer) -> KnowledgeBase:
    """``kb`` with the hourly prices the person pays (USD per card-hour, on
    demand and on spot alike) instead of the catalog's indicative ones."""
    if not prices:
        return kb
    _ = tr.gettext
    if not isinstance(prices, Mapping) or len(prices) > MAX_PRICES:
        raise InputError("prices", _("%(label)s: give at most %(max)s pairs of card id and USD per hour.")
                         % {"label": argument_label(kb, tr, "prices"), "max": MAX_PRICES})
    cards = {card.id: card for card in kb.catalog}
    changed = {}
    for gpu, value in prices.items():
        if gpu not in cards:
            close = nearest(gpu, cards)
            raise InputError("prices", _("%(label)s: '%(gpu)s' is not a card of the catalog; give a card's "
                                         "catalog id.") % {"label": argument_label(kb, tr, "prices"),
                                                      "gpu": profile_module.shown(str(gpu))}
                             + tr.did_you_mean(close), close)
        number = profile_module.price(value)
        if number is None or not 0 <= number <= MAX_PRICE:
            raise InputError("prices", _("%(label)s: the price of %(gpu)s must be a number of USD per card-hour "
                                         "from 0 to %(max)s, not '%(value)s'.")
                             % {"label": argument_label(kb, tr, "prices"), "gpu": gpu, "max": tr.number(MAX_PRICE, 0), "value": profile_module.shown(str(value))})
        # the person's price: no provider's (rules/prices), whichever provider is chosen
        changed[gpu] = replace(cards[gpu], price_on_demand=number, price_spot=number, price_source="given",
                               price_assumed=False, priced=True, spot_market=True, price_provider="",
                               price_date="", spot_provider="", spot_date="", spot_source="", price_basis="")
    return replace(kb, catalog=tuple(changed.get(card.id, card) for card in kb.catalog))

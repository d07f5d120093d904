"""The page's form reader: a query string (the CLI's long option names as
keys: ``model-size=70&method=lora&deadline=8&lang=es``) into the keyword
arguments of the library's ``advise()`` and ``explain()``.

It reads only the shape: which keys, how many, how long. The values are
read by the library's one value reader (``expert/input/values.py``), which
raises :class:`expert.InputError` naming the field in the page's language;
:func:`key_of` maps that field back to the form's key, so the message goes
beside its field. An unknown key, a key given twice, a catalog that is not
a shipped one are refused here, with the same kind of message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import nearest
from ...escape import quoted
from ...i18n import Localizer

# The profile's fields, in the form's order: (key, the library's argument, kind).
# key: the long option of `expert advise`; kind: text, choice (a select of
# the field's choices) or yesno (a select of yes and no).
PROFILE_KEYS: tuple[tuple[str, str, str], ...] = (
    ("model-size", "model_size_b", "text"),
    ("method", "method", "choice"),
    ("budget", "budget", "choice"),
    ("deadline", "deadline_h", "text"),
    ("vram", "vram_gb", "text"),
    ("rocm-ok", "rocm_ok", "yesno"),
    ("interruptible", "interruptible", "yesno"),
    ("purpose", "purpose", "choice"),
    ("dataset", "dataset_examples", "text"),
    ("tokens-per-example", "tokens_per_example", "text"),
    ("epochs", "epochs", "text"),
    ("stack", "stack", "choice"),
    ("provider", "provider", "choice"),
)
# The settings a person may fix instead of the rules (expert/input/settings.py), under `expert advise`'s
# names: (key, the library's argument, kind).
SETTING_KEYS: tuple[tuple[str, str, str], ...] = (
    ("seq-len", "seq_len", "text"),
    ("batch", "batch", "text"),
    ("lora-rank", "lora_rank", "text"),
    ("checkpointing", "checkpointing", "yesno"),
)
# The consultation's other options of `expert advise`: a shipped catalog by
# name (never a path: the page opens no file a visitor names), the basis and
# prices (CARD=USD, several separated by commas).
OPTION_KEYS = ("catalog", "basis", "price")
# The other long names of the CLI's options.
ALIASES = {"model": "model-size", "own-gpu": "vram"}
# Keys that are not the profile, by where they are read: the language;
# explain's --why-not and --what-if (FIELD=VALUE, repeatable); the API's
# --detail; the option a launch .zip is made of.
PAGE_KEYS = ("lang", "why-not", "what-if")
ADVISE_KEYS = ("lang", "detail")
EXPLAIN_KEYS = ("lang", "why-not", "what-if", "detail")
LAUNCH_KEYS = ("lang", "option")
REPEATABLE = ("what-if", "price")

FIELD_KEYS = {argument: key for key, argument, _ in PROFILE_KEYS + SETTING_KEYS} | {"prices": "price", "catalog": "catalog",
                                                                      "basis": "basis", "why_not": "why-not",
                                                                      "what_if": "what-if", "model": "model-size",
                                                                      "model_config": "model-size",
                                                                      "lang": "lang", "detail": "detail"}
MAX_QUERY = 2000     # characters of a query string
MAX_VALUE = 200      # characters of one value (the library refuses more than 100 of a profile field)
MAX_PAIRS = 40       # keys in a query string
FORM_ERROR = "form"  # an error that belongs to the whole form (an unknown key)


@dataclass
class Form:
    """A query string read: the values as typed (by key, for the form to show
    again), the library's arguments, and the errors by key."""

    lang: str
    values: dict[str, str] = field(default_factory=dict)
    what_if: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def asked(self) -> bool:
        """Whether anything of a consultation was given (else the page shows the form alone)."""
        return (any(key in self.values for key, _, _ in PROFILE_KEYS + SETTING_KEYS)
                or any(key in self.values for key in OPTION_KEYS))

    def arguments(self) -> dict[str, Any]:
        """advise()'s keyword arguments: the profile as typed (the library reads it), and the options."""
        args: dict[str, Any] = {argument: self.values[key] for key, argument, _ in PROFILE_KEYS + SETTING_KEYS
                                if key in self.values}
        if "catalog" in self.values:
            args["catalog"] = [self.values["catalog"]]
        if "basis" in self.values:
            args["basis"] = self.values["basis"]
        if "price" in self.values:
            args["prices"] = prices(self.values["price"], Localizer(self.lang))
        return {**args, "lang": self.lang}

    def query(self, **changes: str | None) -> list[tuple[str, str]]:
        """The query string of this form (as pairs), with ``changes`` (None drops a key)."""
        values = {**self.values, **changes}
        pairs = [(key, value) for key, value in values.items() if value is not None and key != "what-if"]
        if "what-if" not in changes:
            pairs += [("what-if", change) for change in self.what_if]
        return pairs


def given(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs of a query string without those left empty (a form's field not filled in): the shorter
    address the page is shared by."""
    return [(key, value) for key, value in pairs if value.strip()]


def key_of(field_name: str | None) -> str:
    """The form's key of a field an InputError names."""
    if not field_name:
        return FORM_ERROR
    return FIELD_KEYS.get(field_name, FORM_ERROR)


def read(pairs: Iterable[tuple[str, str]], lang: str, catalogs: Iterable[str],
         others: tuple[str, ...] = PAGE_KEYS) -> Form:
    """The pairs of a query string, read into a :class:`Form` (errors by key, never raised); ``others``: the
    keys besides the profile's this reader takes."""
    tr = Localizer(lang)
    _ = tr.gettext
    form = Form(lang)
    known = [key for key, _arg, _kind in PROFILE_KEYS + SETTING_KEYS] + list(OPTION_KEYS)
    accepted = known + list(others)
    seen: dict[str, str] = {}
    for count, (name, value) in enumerate(pairs):
        if count >= MAX_PAIRS:
            form.errors.setdefault(FORM_ERROR, _("The address holds more than %(most)s fields; give each field "
                                                 "once.") % {"most": MAX_PAIRS})
            break
        key = ALIASES.get(name, name)
        if key not in accepted:
            form.errors.setdefault(FORM_ERROR, _("%(key)s: not a field of this page; the fields are %(accepted)s.")
                                   % {"key": quoted(name), "accepted": ", ".join(accepted)})
            continue
        value = value.strip()
        if len(value) > MAX_VALUE:
            form.errors.setdefault(key, _("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
                "field": key, "value": quoted(value),
                "accepted": _("at most %(most)s characters") % {"most": MAX_VALUE}})
            continue
        if key == "what-if":
            if value:
                form.what_if.append(value)
            continue
        if key in seen:
            shown = key if seen[key] == name else f"{key} ({quoted(seen[key])}, {quoted(name)})"
            form.errors.setdefault(key, _("%(option)s is given twice; give it once.") % {"option": shown})
            continue
        seen[key] = name
        if value == "":         # a field of the form left empty: not given
            continue
        if key == "price" and "price" in form.values:
            value = form.values["price"] + ", " + value
        form.values[key] = value
    names = list(catalogs)
    if "catalog" in form.values and form.values["catalog"] not in names:
        form.errors["catalog"] = _("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
            "field": "catalog", "value": quoted(form.values["catalog"]),
            "accepted": _("choose %(accepted)s") % {"accepted": tr.list(names, style="or")}}
    if "price" in form.values and "price" not in form.errors:
        try:
            prices(form.values["price"], tr)
        except ValueError as error:
            form.errors["price"] = str(error)
    return form


def prices(text: str, tr: Localizer) -> dict[str, str]:
    """``"CARD=USD, CARD=USD"`` (catalog ids) as advise()'s ``prices`` (the library reads the cards and the numbers)."""
    from ...errors import InputError

    found: dict[str, str] = {}
    for pair in (part.strip() for part in text.replace(";", ",").split(",")):
        if not pair:
            continue
        card, sep, value = pair.partition("=")
        if not sep or not card.strip():
            raise InputError("prices", tr.gettext("price: '%(pair)s' is not CARD=USD: a catalog id, an equals sign "
                                                  "and the price per card-hour.") % {"pair": quoted(pair)})
        if card.strip().lower() in found:
            raise InputError("prices", tr.gettext("price: %(card)s is given twice; give one price a card.")
                             % {"card": quoted(card.strip())})
        found[card.strip().lower()] = value.strip()
    return found


def what_if(changes: Iterable[str], tr: Localizer) -> dict[str, str]:
    """``what-if`` values (FIELD=VALUE, FIELD a key of the form) as explain()'s ``what_if``."""
    from ...errors import InputError

    fields = {key: argument for key, argument, _ in PROFILE_KEYS}
    fields.update({alias: fields[target] for alias, target in ALIASES.items()})
    found: dict[str, str] = {}
    for change in changes:
        name, sep, value = change.partition("=")
        name = name.strip()
        argument = fields.get(name, name)
        if not sep or not name:
            raise InputError("what_if", tr.gettext("what-if: '%(pair)s' is not FIELD=VALUE, such as method=qlora "
                                                   "or deadline=8.") % {"pair": quoted(change)})
        if name not in fields:          # the page's keys, not the library's names
            close = nearest(name, [key for key, _, _ in PROFILE_KEYS])
            raise InputError("what_if", tr.gettext("what-if: '%(field)s' is not a field of this page; the fields "
                                                   "are %(accepted)s.") % {
                "field": quoted(name), "accepted": ", ".join(key for key, _, _ in PROFILE_KEYS)}
                             + tr.did_you_mean(close), close)
        if argument in found:
            raise InputError("what_if", tr.gettext("what-if: %(field)s is given twice; give it once.")
                             % {"field": quoted(name)})
        found[argument] = value.strip()
    return found


def with_change(form: Form, changes: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The query of ``form`` with a WHY NOT's smallest change (library fields to values) given as a WHAT IF."""
    keys = {argument: key for key, argument, _ in PROFILE_KEYS}
    shown = [f"{keys.get(name, name)}={_value(value)}" for name, value in changes.items()]
    return [*[(k, v) for k, v in form.query(**{"why-not": None}) if k != "what-if"],
            *[("what-if", change) for change in shown]]


def applied(form: Form, changes: Mapping[str, str]) -> dict[str, str]:
    """The form's values once WHAT IF's changes (library fields to values as typed) are applied."""
    keys = {argument: key for key, argument, _ in PROFILE_KEYS}
    values = dict(form.values)
    for name, value in changes.items():
        values[keys.get(name, name)] = value
    return values


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)

"""The application: a consultation run from one place. :func:`consult`
validates the answers into the profile fact, runs the engine and has the
answer worded (:func:`expert.explanation.answer.build_result`);
:func:`explain` does that and has HOW, WHY NOT and WHAT IF worded from the
engine's record; :class:`Reruns` runs the consultation again for WHY NOT's
search and WHAT IF, as they ask. The input layer reads, the inference
decides, the explanation words: nothing below this module runs a
consultation.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Literal

from .errors import InputError, nearest
from .explanation.answer import build_result
from .explanation.explain import MAX_WHY_NOT, Explainer, Explanation
from .explanation.result import Result
from .explanation.wording import Writer
from .i18n import Lang, Localizer, resolve_lang
from .inference import engine
from .inference.run import Run
from .input import profile as profile_module
from .input import settings
from .input.arguments import (
    ADVISE_ARGUMENTS,
    check_bounds,
    check_paths,
    field_alias,
    model_argument,
    profile_arguments,
    profile_parameters,
    with_prices,
)
from .input.profile import MAX_TEXT, SETTINGS, shown
from .input.profile_types import ProfileArguments, Unpack
from .knowledge import PROFILE_FIELDS, KnowledgeBase, find_cards  # the fields: declared once, in rules/profile.toml
from .knowledge.bases import Catalogs, knowledge_base
from .knowledge.prices import for_profile
from .knowledge.vocabulary import vocabulary

# How an answer is sized (advise(basis=...)).
BASES = ("checked", "guide", "estimate")
Basis = Literal["checked", "guide", "estimate"]
# The whole consultations WHY NOT may run, besides the first, for all the
# cards of one explanation (a change that works is nearly always found in the
# first or second; a card ranked lower cannot be tried alone, and finding no
# change for it would otherwise cost one for every change and pair).
MAX_CONSULTATIONS = 12


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


def run_rules(kb: KnowledgeBase, profile: dict[str, Any]) -> Run:
    """The rules run over a profile already built, with its provider's prices,
    and no answer worded: what a provisional consultation reads (the
    questions' ``ask_if``, :mod:`expert.interfaces.provisional`)."""
    return engine.infer(for_profile(kb, profile), profile)


class Reruns:
    """The consultation run again with other answers, as WHY NOT's search and
    WHAT IF ask (:class:`expert.explanation.how.Reasoning` is handed one):
    the whole consultation, or the rules over one card alone."""

    def __init__(self, kb: KnowledgeBase, tr: Localizer, basis: str, model_config: Any) -> None:
        self.kb, self.tr, self.basis, self.model_config = kb, tr, basis, model_config

    def whole(self, given: dict[str, Any], only: Collection[str] | None = None,
              keep_model: bool = True) -> tuple[Run, Result]:
        """The whole consultation with ``given`` (``only``: the catalog cards to
        consider; ``keep_model``: with the model's config.json, if one was given)."""
        return consult(self.kb, given, self.tr, self.basis, self.model_config if keep_model else None, only=only)

    def alone(self, given: dict[str, Any], gpu: str) -> Run:
        """The rules over one catalog card, with ``given``: a rule that rules a
        card out or configures it sees only that card's facts, the answers and
        the requirement (its stage's ``sees``)."""
        profile, _ = profile_module.build(self.kb, given, self.tr, self.model_config)
        return engine.infer(for_profile(self.kb, profile), profile, self.basis, only=(gpu,))


@profile_parameters
def explain(
    *,
    why_not: str | None = None,
    what_if: Mapping[str, Any] | None = None,
    lang: Lang | None = None,
    rules_dir: str | Path | None = None,
    catalog: Catalogs = None,
    basis: Basis = "checked",
    prices: Mapping[str, Any] | None = None,
    model: Any = None,
    model_config: Any = None,
    seq_len: int | str | None = None,
    batch: int | str | None = None,
    lora_rank: int | str | None = None,
    checkpointing: bool | str | None = None,
    detail: str = "full",
    **profile: Unpack[ProfileArguments],
) -> Explanation:
    """Answer a consultation and explain it: HOW for every recommendation, WHY
    NOT for every card ruled out (or for ``why_not``), and WHAT IF the answers
    in ``what_if`` (field → value) changed. ``detail``: ``"full"`` or
    ``"summary"`` (the compact form for chats, at most SUMMARY_BYTES of JSON,
    in ``to_dict()`` and ``render()``).

    The profile fields are advise()'s, declared once
    (:class:`expert.input.profile_types.ProfileArguments`); ``model``, ``model_config``,
    ``prices`` and the settings (``seq_len``, ``batch``, ``lora_rank``,
    ``checkpointing``) are as in advise(). Raises :class:`InputError` on a bad value,
    an unknown field (in the arguments or in ``what_if``), or an unknown card
    in ``why_not``.
    """
    tr = Localizer(resolve_lang(lang))
    check_bounds({**{name: value for name, value in locals().items() if name not in ("tr", "profile")}, **profile},
                 tr)
    check_paths(rules_dir, catalog, tr)
    if why_not is not None and not isinstance(why_not, str):
        raise InputError("why_not", tr.gettext("why_not: a card's id is accepted."))
    if what_if is not None and not (isinstance(what_if, Mapping) and all(isinstance(k, str) for k in what_if)):
        raise InputError("what_if", tr.gettext("what_if: a mapping of profile fields to values is accepted."))
    from .input.values import read_choice

    detail = read_choice(detail, {"full": "full", "summary": "summary", **_detail_words()}) or detail
    if detail not in ("full", "summary"):
        raise InputError("detail", tr.gettext("detail: '%(value)s' is not accepted; choose %(accepted)s.") % {
            "value": str(detail)[:40], "accepted": tr.list(("full", "summary"), style="or")})
    fields = profile_arguments(profile, tr, ("why_not", "what_if", "detail") + ADVISE_ARGUMENTS)
    kb = with_prices(knowledge_base(rules_dir, catalog), prices, tr)
    fields.update(settings.given(kb, tr, {"seq_len": seq_len, "batch": batch, "lora_rank": lora_rank,
                                          "checkpointing": checkpointing}))
    if what_if:
        changes: dict[str, Any] = {}
        named: dict[str, str] = {}      # the name each change was given under
        for name, value in what_if.items():
            field = field_alias(str(name), PROFILE_FIELDS)
            if field not in PROFILE_FIELDS:
                close = nearest(str(name), PROFILE_FIELDS)
                raise InputError(shown(str(name))[:40], tr.gettext("what_if: unknown field '%(field)s'; accepted: "
                                                                   "%(accepted)s.")
                                 % {"field": shown(str(name)), "accepted": ", ".join(PROFILE_FIELDS)}
                                 + tr.did_you_mean(close), close)
            if field in changes:        # one field under two names: refused, not one of them kept
                raise InputError(field, tr.gettext("%(argument)s: given twice, as %(field)s and as %(alias)s; give "
                                                   "one.") % {"argument": field, "field": shown(named[field]),
                                                              "alias": shown(str(name))})
            changes[field], named[field] = value, str(name)
        what_if = changes
    given = {name: fields.get(name) for name in (*PROFILE_FIELDS, *SETTINGS)}
    given["model_size_b"] = model_argument(given["model_size_b"], model, tr)
    run, result = consult(kb, given, tr, basis, model_config)
    writer = Writer(kb, run, tr)
    explainer = Explainer(kb, run, result, writer, given, Reruns(kb, tr, basis, model_config), MAX_CONSULTATIONS)
    if why_not is not None and why_not not in run.options:
        # a card as people name it (its name, any case or spacing), as vram_gb and estimate's gpu read it
        cards = ([card for card, _, _ in find_cards(kb, why_not) if card in run.options]
                 if isinstance(why_not, str) and len(why_not) <= MAX_TEXT else [])
        if len(cards) != 1:
            close = nearest(why_not, run.options, keys={gpu: (card.name,) if (card := kb.card(gpu)) else ()
                                                        for gpu in run.options})
            raise InputError("why_not", tr.gettext("why-not: '%(gpu)s' is not a card of this consultation; choose "
                                                   "one of the %(count)s cards it weighed (its options and the "
                                                   "cards not recommended), by catalog id.") % {
                "gpu": shown(why_not), "count": len(run.options)}
                             + tr.did_you_mean(close), close)
        why_not = cards[0]
    rejected = [r.gpu for r in result.rejected]
    targets = [why_not] if why_not is not None else rejected[:MAX_WHY_NOT]
    # past the first, a card whose one reason is said of several cards together (no provider rents it: its
    # own text is empty) is named in that line already, with what would rank it
    more = [] if why_not is not None else [r.gpu for r in result.rejected[MAX_WHY_NOT:]
                                           if r.text or not result.rejected_together]
    entries = [explainer.why_not(gpu) for gpu in targets]
    # listing every card ruled out, a rule that names its cards together is said once, before them
    together = [] if why_not is not None else result.rejected_together
    listed = {entry.gpu: explainer.listed(entry, {note.id for note in together}) for entry in entries if together}
    return Explanation(
        result,
        [explainer.how(rec.gpu) for rec in result.recommendations],
        entries,
        explainer.what_if(what_if) if what_if else None,
        why_not,
        explainer.answers(given=True),
        explainer.answers(given=False),
        detail,
        tuple(what_if or ()),
        [{"gpu": gpu, "name": writer.name(gpu)} for gpu in more],
        together,
        listed,
    )


def _detail_words() -> dict[str, str]:
    """The other words for a detail (rules/vocabulary.toml [aliases.values.detail])."""
    aliases = vocabulary(knowledge_base()).value_aliases.get("detail", {})
    return {word: value for value, words in aliases.items() for word in words}

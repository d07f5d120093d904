"""The library: what a chatbot or a script imports. No click in here."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeGuard

from ..application import BASES as BASES  # re-exported: the library's names
from ..application import Basis as Basis
from ..application import consult as consult
from ..errors import InputError
from ..explanation.result import Result
from ..i18n import Lang as Lang  # the library's signatures name it: re-exported
from ..i18n import Localizer, resolve_lang
from ..inference.estimate import Estimate
from ..input import profile as profile_module
from ..input import profile_types, settings
from ..input.arguments import (
    ADVISE_ARGUMENTS,
    argument_label,
    check_bounds,
    check_paths,
    model_argument,
    profile_arguments,
    profile_parameters,
    with_aliases,
    with_prices,
)
from ..input.local_gpus import LocalCards as LocalCards  # local_gpus() returns it: re-exported
from ..input.local_gpus import detect as detect_local_gpus
from ..input.profile_types import ProfileArguments, Unpack
from ..knowledge.bases import Catalogs as Catalogs
from ..knowledge.bases import file_digest, shipped_catalogs
from ..knowledge.bases import knowledge_base as knowledge_base

Detail = Literal["full", "summary"]
Precision = Literal["mixed", "bf16", "fp16"]  # estimate.PRECISIONS (a test holds them equal)
Strategy = Literal["single", "ddp", "zero1", "zero2", "zero3", "fsdp"]  # estimate.STRATEGIES (likewise)


# Catalogs the embedding application registered, by id: saved consultation
# state names a catalog by this id, never by its path.
_REGISTERED: dict[str, tuple[Path, str]] = {}
_REGISTERED_LOCK = threading.Lock()
CATALOG_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def register_catalog(path: str | Path, name: str | None = None) -> str:
    """Register a catalog file of the embedding application and return its id:
    ``name`` (kebab-case, at most 40 characters) or, without one, ``sha256-``
    and the first 16 hex digits of the file's content. Saved consultation
    state names catalogs by this id; only ids registered in this process are
    accepted back (``Consultation.from_dict``). The file is validated first
    (:class:`KnowledgeBaseError` if it is not a sound catalog)."""
    tr = Localizer(resolve_lang(None))
    if not isinstance(path, (str, Path)):
        raise InputError("catalog", tr.gettext("catalog: a file path or a list of file paths is accepted"))
    if name is not None and not (isinstance(name, str) and len(name) <= 40 and CATALOG_ID.match(name)):
        raise InputError("catalog", tr.gettext("catalog: a registered name is kebab-case, at most 40 characters"))
    if name in shipped_catalogs():
        raise InputError("catalog", tr.gettext("catalog: '%(id)s' is the name of a shipped catalog; choose another.")
                         % {"id": name})
    file = Path(path)
    knowledge_base(None, [file])  # validated, and cached for the consultations that use it
    digest = file_digest(file)
    if digest is None:      # replaced since it was validated
        raise InputError("catalog", tr.gettext("catalog: '%(id)s' changed or disappeared since it was registered.")
                         % {"id": profile_module.shown(str(file))})
    catalog_id = name or f"sha256-{digest[:16]}"
    with _REGISTERED_LOCK:
        _REGISTERED[catalog_id] = (file, digest)
    return catalog_id


def is_registered(catalog: Any) -> TypeGuard[str]:
    """A catalog id a consultation's saved state may name: one registered in
    this process, or the name of a shipped catalog ("current")."""
    return isinstance(catalog, str) and (catalog in _REGISTERED or catalog in shipped_catalogs())


def registered_catalog(catalog_id: str, tr: Localizer) -> Path:
    """The file of a registered catalog id (it must not have changed since),
    or of a shipped catalog's name."""
    shipped = shipped_catalogs()
    if isinstance(catalog_id, str) and catalog_id in shipped and catalog_id not in _REGISTERED:
        return shipped[catalog_id]
    entry = _REGISTERED.get(catalog_id) if isinstance(catalog_id, str) else None
    if entry is None:
        raise InputError("catalog", tr.gettext(
            "catalog: '%(id)s' is not a registered catalog; the application registers catalogs with "
            "register_catalog().") % {"id": profile_module.shown(catalog_id)})
    path, digest = entry
    if file_digest(path) != digest:
        raise InputError("catalog", tr.gettext("catalog: '%(id)s' changed or disappeared since it was registered.")
                         % {"id": catalog_id})
    return path


@profile_parameters
def advise(
    *,
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
    **profile: Unpack[ProfileArguments],
) -> Result:
    """Recommend GPUs for fine-tuning a model, with the reasons.

    The profile fields are keyword arguments, declared once
    (:class:`expert.input.profile_types.ProfileArguments`, generated from
    ``rules/profile.toml``). Every field is optional (see
    ``rules/profile.toml`` for defaults) and may be given as a number or as text a person would type (``"70B"``,
    ``"Llama-3-8B"``, ``"2 days"``, ``"yes"``). ``lang`` is ``"en"`` or
    ``"es"``; without it ``EXPERT_LANG``, then ``LC_ALL``/``LANG`` decide.
    ``catalog`` adds the cards of user catalog files (TOML ``[[gpu]]`` tables)
    to the guide's, or replaces guide cards with the same id. ``basis`` says
    how the answer is sized: ``"checked"`` (the default: every configuration
    by what its recipe needs on every device, the guide's figure stated and
    cross-checked), ``"estimate"`` (the same, stating the first-principles
    estimate as the requirement) or ``"guide"`` (the guide's figure alone: the
    strict, optimistic reading). ``prices`` maps catalog ids to the USD per
    card-hour you pay (``{"<card id>": 2.4}``), instead of the catalog's
    indicative prices.

    ``model`` is another name for ``model_size_b`` (give one): a size or a
    model's name as a person writes it (``"Mixtral 8x7B"``,
    ``"meta-llama/Llama-3.1-70B-Instruct"``), resolved through the model
    table of ``rules/models.toml``. ``model_config`` is the path of a local
    Hugging Face ``config.json`` whose architecture is counted instead. The
    profile records the model as named and its resolved sizes
    (``model_size_b`` in all, ``model_active_b`` per token).

    ``seq_len`` (tokens per sequence memory is sized for), ``batch`` (the
    micro-batch per device), ``lora_rank`` and ``checkpointing`` (activation
    checkpointing, yes or no) fix what the rules would otherwise choose, under
    the names ``estimate()`` gives them; each option's ``setup.given`` says
    which were given.

    Other names of the fields are accepted as declared in
    ``rules/vocabulary.toml`` ``[aliases.arguments]`` (``vram`` and ``gpu``
    for ``vram_gb``, ``model_size`` for ``model_size_b`` ...); any other name
    is an :class:`InputError` naming it and listing the accepted ones.

    Raises :class:`expert.InputError` (a ``ValueError``) naming the field, in
    the chosen language, when a value is not accepted;
    :class:`expert.KnowledgeBaseError` when ``rules_dir`` or a catalog is not
    sound (nothing runs on half a knowledge base).
    """
    arguments = locals()
    tr = Localizer(resolve_lang(lang))
    check_bounds({**{k: v for k, v in arguments.items() if k != "profile"}, **profile}, tr)
    check_paths(rules_dir, catalog, tr)
    given = profile_arguments(profile, tr, ADVISE_ARGUMENTS)
    given["model_size_b"] = model_argument(given["model_size_b"], model, tr)   # (given under an alias too)
    kb = with_prices(knowledge_base(rules_dir, catalog), prices, tr)
    given.update(settings.given(kb, tr, {"seq_len": seq_len, "batch": batch, "lora_rank": lora_rank,
                                         "checkpointing": checkpointing}))
    return consult(kb, given, tr, basis, model_config)[1]


def local_gpus(lang: Lang | None = None, catalog: Catalogs = None) -> LocalCards:
    """The GPUs of this machine, for ``--own-gpu auto``: read from ``nvidia-smi``
    or ``rocm-smi`` (whichever is on PATH; a timeout, a bounded output) and
    matched to the knowledge base's cards. ``.answer`` is the own-GPU field's
    value (``"2x <card id>"``, or a VRAM figure for a card it does not know),
    ``.note`` says what was found in ``lang``. Raises :class:`InputError`
    naming ``vram_gb`` when no GPU is found or a tool's output cannot be
    read. A server must not call it for its visitors: it reads its own cards."""
    tr = Localizer(resolve_lang(lang))
    check_paths(None, catalog, tr)
    return detect_local_gpus(knowledge_base(None, catalog), tr)


def estimate(
    model_size_b: profile_types.ModelSizeB | None = None,
    method: profile_types.Method | None = None,
    *,
    gpus: int | str | None = None,
    strategy: Strategy | None = None,
    offload: bool | None = None,
    offload_params: bool | None = None,
    checkpointing: bool | None = None,
    seq_len: int | str | None = None,
    batch: int | str | None = None,
    optimizer: str | None = None,
    precision: Precision | None = None,
    base_bits: Literal[16, 8, 4] | None = None,
    lora_rank: int | str | None = None,
    gpu: str | None = None,
    dataset_examples: profile_types.DatasetExamples | None = None,
    tokens_per_example: profile_types.TokensPerExample | None = None,
    epochs: profile_types.Epochs | None = None,
    stack: profile_types.Stack | None = None,
    lang: Lang | None = None,
    rules_dir: str | Path | None = None,
    **aliases: Any,
) -> Estimate:
    """The first-principles memory estimate of a run (what ``expert estimate``
    shows): weights, gradients, optimizer state, activations and overhead,
    per GPU and in all; and ``time``, how long it trains on ``gpu`` (a
    catalog id or a card people own; without it, at the reference card's
    speed). ``.to_dict()`` is its JSON. Raises :class:`InputError` naming the
    field on a bad value."""
    from ..inference import estimate as estimator
    from ..inference.estimate_input import from_input

    tr = Localizer(resolve_lang(lang))
    check_bounds({**{k: v for k, v in locals().items() if k != "aliases"}, **aliases}, tr)
    check_paths(rules_dir, None, tr)
    kb = knowledge_base(rules_dir)
    raw = {"model_size_b": model_size_b, "method": method, "gpus": gpus, "strategy": strategy, "offload": offload,
           "offload_params": offload_params, "checkpointing": checkpointing, "seq_len": seq_len, "batch": batch, "optimizer": optimizer,
           "precision": precision, "base_bits": base_bits, "lora_rank": lora_rank, "gpu": gpu,
           "dataset_examples": dataset_examples, "tokens_per_example": tokens_per_example, "epochs": epochs,
           "stack": stack}
    # another name of an argument ("model", "examples"): one table, as advise() reads it
    raw = with_aliases(raw, aliases, tr, ("lang", "rules_dir"), fields=tuple(raw))
    for name, value in raw.items():
        if isinstance(value, str) and len(value) > profile_module.MAX_TEXT:
            raise InputError(name, tr.gettext("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
                "field": argument_label(kb, tr, name), "value": profile_module.shown(value),
                "accepted": tr.gettext("at most %(most)s characters") % {"most": profile_module.MAX_TEXT}})
    for name in ("offload", "offload_params", "checkpointing"):      # yes or no, as the profile's yes-or-no fields read it
        read = profile_module.yes_or_no(raw[name])
        if raw[name] is not None and read is None:
            raise InputError(name, tr.gettext("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
                "field": argument_label(kb, tr, name), "value": profile_module.shown(raw[name]),
                "accepted": tr.gettext("answer yes or no")})
        raw[name] = read
    from ..inference.requirement import estimate_time

    setup, run = from_input(kb, tr, **raw)
    return replace(estimator.estimate(kb, setup), time=estimate_time(kb, setup, run))



"""The library: what a chatbot or a script imports. No click in here."""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeGuard

from .. import escape, paths
from .. import knowledge as kb_module
from ..errors import InputError, nearest
from ..explanation.result import Result, build_result
from ..i18n import Lang as Lang  # the library's signatures name it: re-exported
from ..i18n import Localizer, resolve_lang
from ..inference import engine
from ..inference.estimate import Estimate
from ..input import profile as profile_module
from ..input import profile_types
from ..knowledge import PROFILE_FIELDS, KnowledgeBase

Basis = Literal["checked", "guide", "estimate"]
Detail = Literal["full", "summary"]
Precision = Literal["mixed", "bf16", "fp16"]  # estimate.PRECISIONS (a test holds them equal)
Strategy = Literal["single", "ddp", "zero1", "zero2", "zero3", "fsdp"]  # estimate.STRATEGIES (likewise)

# Loaded knowledge bases, most recently used last; a few dozen at most, so that
# catalogs edited again and again (each edit is a new key) cannot fill memory.
_KB: OrderedDict[tuple[Any, ...], KnowledgeBase] = OrderedDict()
_KB_LOCK = threading.Lock()
KB_CACHE_SIZE = 32
Catalogs = str | Path | Sequence[str | Path] | None


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
    digest = _digest(file)
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
    if _digest(path) != digest:
        raise InputError("catalog", tr.gettext("catalog: '%(id)s' changed or disappeared since it was registered.")
                         % {"id": catalog_id})
    return path


def _digest(path: Path) -> str | None:
    """The SHA-256 of a catalog file, read as the loader reads it (a regular
    file of at most 2 MB, opened non-blocking, with a bounded read); None if
    it is not such a file now."""
    try:
        return hashlib.sha256(kb_module.read_regular(path, kb_module.MAX_BYTES)).hexdigest()
    except kb_module.Unreadable:
        return None


def shipped_catalogs() -> dict[str, Path]:
    """The catalogs that ship with the package, by name (``rules/catalogs/NAME.toml``)."""
    return {path.stem: path for path in sorted((paths.RULES / "catalogs").glob("*.toml"))}


def check_paths(rules_dir: Any, catalog: Any, tr: Localizer) -> None:
    """``rules_dir`` a folder path, ``catalog`` a path, a shipped catalog's
    name or a list of them: InputError otherwise."""
    if rules_dir is not None and not isinstance(rules_dir, (str, Path)):
        raise InputError("rules_dir", tr.gettext("rules_dir: a folder path is accepted."))
    items = [catalog] if isinstance(catalog, (str, Path)) or catalog is None else catalog
    if not isinstance(items, (list, tuple)) or not all(isinstance(c, (str, Path)) for c in items if c is not None):
        raise InputError("catalog", tr.gettext("catalog: a file path or a list of file paths is accepted"))


def _catalog_paths(catalog: Catalogs) -> tuple[Path, ...]:
    if catalog is None:
        return ()
    items = [catalog] if isinstance(catalog, (str, Path)) else catalog
    if not isinstance(items, (list, tuple)) or not all(isinstance(c, (str, Path)) for c in items):
        raise InputError("catalog", "catalog: a file path or a list of file paths is accepted")
    # A shipped catalog may be named ("current"); anything else is a path.
    shipped = shipped_catalogs()
    return tuple(shipped[c] if isinstance(c, str) and c in shipped else Path(c) for c in items)


def _stamp(path: Path) -> tuple[str, int, int]:
    try:
        stat = path.stat()
        return (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL in the path; the loader reports it
        return (str(path), 0, 0)


def knowledge_base(rules_dir: str | Path | None = None, catalog: Catalogs = None) -> KnowledgeBase:
    """The knowledge base in ``rules_dir`` (the shipped one by default), with the
    cards of the user catalogs in ``catalog`` (a path or a list of paths) added.

    Loaded once and reused while the files are unchanged; the shipped one is
    also kept between processes in the user's cache folder (:mod:`expert.knowledge.cache`).
    """
    catalogs = _catalog_paths(catalog)
    root = Path(rules_dir) if rules_dir is not None else paths.RULES
    # Every file of the rules directory is stamped, so an edited rules/ is
    # read again by a long-running process (a server, a notebook).
    base_key = (str(root.resolve()), *(_stamp(path) for path in sorted(root.rglob("*.toml"))))
    key = base_key + tuple(_stamp(path) for path in catalogs)
    with _KB_LOCK:
        if key not in _KB:
            # The shipped knowledge base may come from the user's cache folder (expert.knowledge.cache).
            base = _KB.get(base_key) or (kb_module.load_shipped() if rules_dir is None else kb_module.load(rules_dir))
            _remember(base_key, base)
            _remember(key, kb_module.with_catalogs(base, catalogs) if catalogs else base)
        _KB.move_to_end(key)
        return _KB[key]


def _remember(key: tuple[Any, ...], kb: KnowledgeBase) -> None:
    _KB[key] = kb
    _KB.move_to_end(key)
    while len(_KB) > KB_CACHE_SIZE:
        _KB.popitem(last=False)


def advise(
    # profile fields: generated by scripts/update_types.py from rules/profile.toml
    model_size_b: profile_types.ModelSizeB | None = None,
    method: profile_types.Method | None = None,
    budget: profile_types.Budget | None = None,
    rocm_ok: profile_types.RocmOk | None = None,
    deadline_h: profile_types.DeadlineH | None = None,
    vram_gb: profile_types.VramGb | None = None,
    dataset_examples: profile_types.DatasetExamples | None = None,
    tokens_per_example: profile_types.TokensPerExample | None = None,
    epochs: profile_types.Epochs | None = None,
    purpose: profile_types.Purpose | None = None,
    interruptible: profile_types.Interruptible | None = None,
    stack: profile_types.Stack | None = None,
    # end of the profile fields
    *,
    lang: Lang | None = None,
    rules_dir: str | Path | None = None,
    catalog: Catalogs = None,
    basis: Basis = "checked",
    prices: Mapping[str, Any] | None = None,
    model: Any = None,
    model_config: Any = None,
    **aliases: Any,
) -> Result:
    """Recommend GPUs for fine-tuning a model, with the reasons.

    Every field is optional (see ``rules/profile.toml`` for defaults) and may
    be given as a number or as text a person would type (``"70B"``,
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

    Other names of the fields are accepted as declared in
    ``rules/vocabulary.toml`` ``[aliases.arguments]`` (``vram`` and ``gpu``
    for ``vram_gb``, ``model_size`` for ``model_size_b`` ...); any other name
    is an :class:`InputError` naming it and listing the accepted ones.

    Raises :class:`expert.InputError` (a ``ValueError``) naming the field, in
    the chosen language, when a value is not accepted;
    :class:`expert.KnowledgeBaseError` when ``rules_dir`` or a catalog is not
    sound (nothing runs on half a knowledge base).
    """
    arguments = locals()     # the parameters before `lang` are PROFILE_FIELDS (tests check the signature)
    given = {name: arguments[name] for name in PROFILE_FIELDS}
    tr = Localizer(resolve_lang(lang))
    check_bounds({**{k: v for k, v in arguments.items() if k != "aliases"}, **aliases}, tr)
    check_paths(rules_dir, catalog, tr)
    given = with_aliases(given, aliases, tr, ADVISE_ARGUMENTS)
    given["model_size_b"] = model_argument(model_size_b, model, tr)
    kb = with_prices(knowledge_base(rules_dir, catalog), prices, tr)
    return consult(kb, given, tr, basis, model_config)[1]


# The arguments advise() declares besides the profile fields (for the error that lists them).
ADVISE_ARGUMENTS = ("lang", "rules_dir", "catalog", "basis", "prices", "model", "model_config")


def field_alias(name: str, declared: Sequence[str], kb: KnowledgeBase | None = None) -> str:
    """The declared argument ``name`` stands for (``rules/vocabulary.toml``
    ``[aliases.arguments]``: "vram" for vram_gb), or ``name`` itself."""
    from ..input.values import argument
    from ..knowledge.vocabulary import vocabulary

    return argument(name, declared, vocabulary(kb or knowledge_base()))


def with_aliases(given: dict[str, Any], aliases: Mapping[str, Any], tr: Localizer,
                 others: Sequence[str] = ()) -> dict[str, Any]:
    """``given`` (the profile fields) with the values given under another name;
    a name that is no field's is an InputError naming it, listing the accepted ones."""
    given = dict(given)
    for name, value in aliases.items():
        field = field_alias(name, PROFILE_FIELDS)
        if field not in PROFILE_FIELDS:
            raise InputError(str(name)[:40], tr.gettext("%(argument)s: not an accepted argument; accepted: "
                                                        "%(accepted)s.") % {
                "argument": profile_module.shown(str(name)), "accepted": ", ".join((*PROFILE_FIELDS, *others))})
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
            raise InputError("prices", _("%(label)s: '%(gpu)s' is not a card of the catalog (`expert catalogs` lists "
                                         "them).") % {"label": argument_label(kb, tr, "prices"),
                                                      "gpu": profile_module.shown(str(gpu))}
                             + tr.did_you_mean(close), close)
        number = profile_module.price(value)
        if number is None or not 0 <= number <= MAX_PRICE:
            raise InputError("prices", _("%(label)s: the price of %(gpu)s must be a number of USD per card-hour "
                                         "from 0 to %(max)s, not '%(value)s'.")
                             % {"label": argument_label(kb, tr, "prices"), "gpu": gpu, "max": tr.number(MAX_PRICE, 0), "value": profile_module.shown(str(value))})
        changed[gpu] = replace(cards[gpu], price_on_demand=number, price_spot=number, price_source="given",
                               price_assumed=False, priced=True, spot_market=True)
    return replace(kb, catalog=tuple(changed.get(card.id, card) for card in kb.catalog))


def estimate(
    model_size_b: profile_types.ModelSizeB | None = None,
    method: profile_types.Method | None = None,
    *,
    gpus: int | str | None = None,
    strategy: Strategy | None = None,
    offload: bool | None = None,
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
) -> Estimate:
    """The first-principles memory estimate of a run (what ``expert estimate``
    shows): weights, gradients, optimizer state, activations and overhead,
    per GPU and in all; and ``time``, how long it trains on ``gpu`` (a
    catalog id or a card people own; without it, at the reference card's
    speed). ``.to_dict()`` is its JSON. Raises :class:`InputError` naming the
    field on a bad value."""
    from ..inference import estimate as estimator

    tr = Localizer(resolve_lang(lang))
    check_bounds(locals(), tr)
    check_paths(rules_dir, None, tr)
    kb = knowledge_base(rules_dir)
    raw = {"model_size_b": model_size_b, "method": method, "gpus": gpus, "strategy": strategy, "offload": offload,
           "checkpointing": checkpointing, "seq_len": seq_len, "batch": batch, "optimizer": optimizer,
           "precision": precision, "base_bits": base_bits, "lora_rank": lora_rank, "gpu": gpu,
           "dataset_examples": dataset_examples, "tokens_per_example": tokens_per_example, "epochs": epochs,
           "stack": stack}
    for name, value in raw.items():
        if isinstance(value, str) and len(value) > profile_module.MAX_TEXT:
            raise InputError(name, tr.gettext("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
                "field": argument_label(kb, tr, name), "value": profile_module.shown(value),
                "accepted": tr.gettext("at most %(most)s characters") % {"most": profile_module.MAX_TEXT}})
    for name in ("offload", "checkpointing"):
        if raw[name] is not None and not isinstance(raw[name], bool):
            raise InputError(name, tr.gettext("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
                "field": argument_label(kb, tr, name), "value": profile_module.shown(raw[name]), "accepted": "true, false"})
    from ..inference.sizing import named_card, own_card, run_time

    setup, run = estimator.from_input(kb, tr, **raw)
    card = named_card(kb, run["gpu"]) or own_card(kb, {})
    time = run_time(kb, setup, card, run["dataset_examples"], run["tokens_per_example"], run["epochs"], run["stack"])
    return replace(estimator.estimate(kb, setup), time=time)


BASES = ("checked", "guide", "estimate")


def check_basis(basis: Any, tr: Localizer) -> str:
    if basis not in BASES:
        close = nearest(basis, BASES)
        raise InputError("basis", tr.gettext("basis: '%(value)s' is not accepted; choose %(accepted)s.") % {
            "value": str(basis)[:40], "accepted": tr.list(BASES, style="or")} + tr.did_you_mean(close), close)
    return str(basis)


def consult(kb: KnowledgeBase, given: dict[str, Any], tr: Localizer,
            basis: str = "checked", model_config: Any = None) -> tuple[engine.Run, Result]:
    """Validate ``given``, run the engine, and build the result (with the run's record)."""
    basis = check_basis(basis, tr)
    profile, assumed = profile_module.build(kb, given, tr, model_config)
    run = engine.infer(kb, profile, basis)
    return run, build_result(kb, run, tr, assumed)

"""The library: what a chatbot or a script imports. No click in here."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Sequence, Union

from . import engine, kb as kb_module, profile as profile_module
from .i18n import Localizer, resolve_lang
from .errors import InputError
from .kb import PROFILE_FIELDS, KnowledgeBase
from .result import Result, build_result

_KB: dict[tuple[Any, ...], KnowledgeBase] = {}
_KB_LOCK = threading.Lock()
Catalogs = Union[str, Path, Sequence[Union[str, Path]], None]


def _catalog_paths(catalog: Catalogs) -> tuple[Path, ...]:
    if catalog is None:
        return ()
    if isinstance(catalog, (str, Path)):
        return (Path(catalog),)
    return tuple(Path(c) for c in catalog)


def _stamp(path: Path) -> tuple[str, int, int]:
    try:
        stat = path.stat()
        return (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    except OSError:
        return (str(path), 0, 0)


def knowledge_base(rules_dir: str | Path | None = None, catalog: Catalogs = None) -> KnowledgeBase:
    """The knowledge base in ``rules_dir`` (the shipped one by default), with the
    cards of the user catalogs in ``catalog`` (a path or a list of paths) added.

    Loaded once and reused while the files are unchanged.
    """
    catalogs = _catalog_paths(catalog)
    base_key = (str(Path(rules_dir).resolve()) if rules_dir is not None else "",)
    key = base_key + tuple(_stamp(path) for path in catalogs)
    with _KB_LOCK:
        if key not in _KB:
            if base_key not in _KB:
                _KB[base_key] = kb_module.load(rules_dir)
            _KB[key] = kb_module.with_catalogs(_KB[base_key], catalogs) if catalogs else _KB[base_key]
        return _KB[key]


def advise(
    model_size_b: Any = None,
    method: Any = None,
    budget: Any = None,
    rocm_ok: Any = None,
    deadline_h: Any = None,
    vram_gb: Any = None,
    dataset_examples: Any = None,
    purpose: Any = None,
    interruptible: Any = None,
    *,
    lang: str | None = None,
    rules_dir: str | Path | None = None,
    catalog: Catalogs = None,
    basis: str = "checked",
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
    strict, optimistic reading).

    Raises :class:`expert.InputError` (a ``ValueError``) naming the field, in
    the chosen language, when a value is not accepted;
    :class:`expert.KnowledgeBaseError` when ``rules_dir`` or a catalog is not
    sound (nothing runs on half a knowledge base).
    """
    arguments = locals()     # the parameters before `lang` are PROFILE_FIELDS (tests check the signature)
    given = {name: arguments[name] for name in PROFILE_FIELDS}
    tr = Localizer(resolve_lang(lang))
    kb = knowledge_base(rules_dir, catalog)
    return consult(kb, given, tr, basis)[1]


BASES = ("checked", "guide", "estimate")


def check_basis(basis: Any, tr: Localizer) -> str:
    if basis not in BASES:
        raise InputError("basis", tr.gettext("basis: '%(value)s' is not accepted; choose %(accepted)s.") % {
            "value": str(basis)[:40], "accepted": tr.list(BASES, style="or")})
    return str(basis)


def consult(kb: KnowledgeBase, given: dict[str, Any], tr: Localizer,
            basis: str = "checked") -> tuple[engine.Run, Result]:
    """Validate ``given``, run the engine, and build the result (with the run's record)."""
    basis = check_basis(basis, tr)
    profile, assumed = profile_module.build(kb, given, tr)
    run = engine.infer(kb, profile, basis)
    return run, build_result(kb, run, tr, assumed)

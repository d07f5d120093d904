"""The settings a person may fix instead of leaving them to the rules: the
sequence length memory is sized for, the micro-batch per device, the LoRA
rank and activation checkpointing (``seq_len``, ``batch``, ``lora_rank``,
``checkpointing``, the names ``expert estimate`` gives them). One reader for
every entry point: ``advise()``, ``explain()``, ``expert advise``, MCP, the
page and ``expert estimate``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from ..i18n import Localizer
from ..knowledge import KnowledgeBase
from ..knowledge.vocabulary import fold, vocabulary
from . import profile as profile_module
from .arguments import argument_label
from .values import GROUPED, count_pattern, multiplier

# The settings, and the bounds of the whole numbers among them: a micro-batch or
# a LoRA rank beyond 4,096 and a sequence beyond about a million tokens (the
# profile's tokens_per_example bound) are typos, not runs.
NAMES = ("seq_len", "batch", "lora_rank", "checkpointing")
BOUNDS = {"seq_len": (1, 1_048_576), "batch": (1, 4096), "lora_rank": (1, 4096)}
# How the profile (profile.SETTINGS) and the result's setup (``Setup.given``) name them.
AS_RUN = {"seq_len": "seq_len", "batch": "micro_batch", "lora_rank": "lora_rank", "checkpointing": "checkpointing"}


def given(kb: KnowledgeBase, tr: Localizer, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of ``raw`` read, by the profile's names (what consult()'s ``given`` carries)."""
    return {AS_RUN[name]: value for name, value in read(kb, tr, raw).items()}


def refuse(kb: KnowledgeBase, tr: Localizer, name: str, value: Any, accepted: str) -> InputError:
    return InputError(name, tr.gettext("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
        "field": argument_label(kb, tr, name), "value": profile_module.shown(value), "accepted": accepted})


def whole(kb: KnowledgeBase, tr: Localizer, name: str, value: Any, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high`` (``16``, ``"2048"``, ``"2,048"``), or an InputError naming ``name``."""
    accepted = tr.gettext("a whole number from %(low)s to %(high)s") % {"low": low, "high": tr.number(high, 0)}
    if isinstance(value, bool) or (isinstance(value, str) and len(value) > profile_module.MAX_TEXT):
        raise refuse(kb, tr, name, value, accepted)
    text = str(value).strip()
    if GROUPED.fullmatch(text):
        text = text.replace(",", "").replace(".", "")
    scale = 1.0
    if name == "seq_len":
        # a count of tokens, read by the pattern and multipliers that read tokens_per_example ("4k" is 4,096,
        # "2 thousand" 2,000, "4 mil" 4,000; rules/vocabulary.toml): one reader of a count
        vocab = vocabulary(kb)
        counted = count_pattern(vocab).match(fold(text))
        if counted is not None and counted.group(2):
            text, scale = counted.group(1), multiplier("tokens_per_example", counted.group(2), vocab)
    try:
        number = float(text.replace(",", ".")) * scale
    except ValueError:
        raise refuse(kb, tr, name, value, accepted) from None
    if not (math.isfinite(number) and number == int(number) and low <= number <= high):
        raise refuse(kb, tr, name, value, accepted)
    return int(number)


def read(kb: KnowledgeBase, tr: Localizer, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The settings given in ``raw`` (absent or None: left to the rules), read: whole numbers within
    :data:`BOUNDS`, checkpointing yes or no; by their names in ``raw`` (seq_len, batch, lora_rank,
    checkpointing)."""
    found: dict[str, Any] = {}
    for name in NAMES:
        value = raw.get(name)
        if not profile_module.is_given(value):
            continue
        if name == "checkpointing":
            read_as = profile_module.yes_or_no(value)
            if read_as is None:
                raise refuse(kb, tr, name, value, tr.gettext("answer yes or no"))
            found[name] = read_as
        else:
            found[name] = whole(kb, tr, name, value, *BOUNDS[name])
    return found

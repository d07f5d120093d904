"""The estimate's input: the values a person types (or a program passes) for
``expert estimate`` read into a :class:`~expert.inference.estimate.Setup`,
and the run it trains (card, examples, tokens per example, epochs); each bad
value an InputError naming the field, in the person's language.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import InputError, nearest
from ..input import profile as profile_module
from ..input import settings
from ..input.values import read_choice
from ..knowledge import KnowledgeBase
from .estimate import PRECISIONS, STRATEGIES, Setup, typical
from .requirement import named_card
from .time_model import seq_len as sequence_length


class _Reader:
    """The estimate's values read one field at a time; each bad value an
    InputError naming the field, in the user's language."""

    def __init__(self, kb: KnowledgeBase, tr: Any, raw: dict[str, Any]) -> None:
        self.kb, self.tr, self.raw = kb, tr, raw

    def refuse(self, field: str, value: Any, accepted: str, among: Any = ()) -> InputError:
        """The field's error; ``among``: the accepted values, of which the nearest are suggested."""
        tr = self.tr
        label = self.kb.labels.get("arguments", {}).get(field)
        close = nearest(value, among)
        return InputError(field, tr.gettext("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
            "field": tr.gettext(label) if label else field, "value": profile_module.shown(value),
            "accepted": accepted} + tr.did_you_mean(close), close)

    def choice(self, field: str, value: Any, choices: tuple[str, ...]) -> str:
        # the one reader of choices: case, and a hyphen for an underscore, aside
        found = read_choice(str(value), {choice: choice for choice in choices})
        if found is None:
            raise self.refuse(field, value, self.tr.gettext("choose %(accepted)s") % {
                "accepted": self.tr.list(choices, style="or")}, choices)
        return found

    def field(self, name: str) -> Any:
        """A profile field, read as advise reads it (its default when not given)."""
        value = self.raw.get(name)
        return profile_module.parse_field(self.kb, name, value if profile_module.is_given(value)
                                          else self.kb.fields[name].default, self.tr)

    def changes(self) -> dict[str, Any]:
        """What the person changed of the typical setup: each value given, read."""
        raw, kb, tr = self.raw, self.kb, self.tr
        changes: dict[str, Any] = {}
        if raw.get("precision") is not None:
            changes["precision"] = self.choice("precision", raw["precision"], PRECISIONS)
        if raw.get("optimizer") is not None:
            changes["optimizer"] = self.choice("optimizer", raw["optimizer"], tuple(kb.estimator["optimizer"]["mixed"]))
        method = self.field("method")
        if raw.get("base_bits") is not None:
            changes["base_bits"] = int(self.choice("base_bits", raw["base_bits"], ("16", "8", "4")))
            # a frozen base is LoRA's: full fine-tuning trains the weights (4 or 8 bits were ignored; 16 is what
            # an option's setup carries back), and QLoRA's is 4-bit (a 16-bit one was estimated under the
            # heading "QLoRA (4-bit)")
            if method == "full" and changes["base_bits"] != 16:
                raise self.refuse("base_bits", raw["base_bits"], tr.gettext(
                    "full fine-tuning trains the weights themselves; a frozen base goes with LoRA or QLoRA"))
            if method == "qlora" and changes["base_bits"] != 4:
                raise self.refuse("base_bits", raw["base_bits"], tr.gettext(
                    "QLoRA's frozen base is 4-bit; for a 16- or 8-bit base choose the method LoRA"))
        if method == "full" and profile_module.is_given(raw.get("lora_rank")):
            raise self.refuse("lora_rank", raw["lora_rank"], tr.gettext(
                "full fine-tuning adds no adapters; a LoRA rank goes with LoRA or QLoRA"))
        for name, (low, high) in settings.BOUNDS.items():
            if profile_module.is_given(raw.get(name)):     # empty is not given, as advise reads the settings
                changes[name] = settings.whole(kb, tr, name, raw[name], low, high)
        if raw.get("gpus") is not None:
            changes["gpus"] = settings.whole(kb, tr, "gpus", raw["gpus"], 1, 4096)
        for name in ("checkpointing", "offload", "offload_params"):
            if raw.get(name) is not None:
                changes[name] = bool(raw[name])
        gpus = changes.get("gpus", 1)
        strategy = raw.get("strategy")
        changes["strategy"] = self.choice("strategy", strategy, STRATEGIES) if strategy is not None else (
            "single" if gpus == 1 else "zero3")
        if changes["strategy"] == "single" and gpus > 1:
            raise self.refuse("strategy", "single", tr.gettext("with several GPUs choose %(accepted)s") % {
                "accepted": tr.list(STRATEGIES[1:], style="or")})
        changes["stack"] = self.field("stack")
        return changes


def from_input(kb: KnowledgeBase, tr: Any, **raw: Any) -> tuple[Setup, dict[str, Any]]:
    """A Setup from values typed by a person (or passed by a program), and the
    run it trains (card, examples, tokens per example, epochs) for its time;
    each bad value raises InputError naming the field, in the user's language."""
    reader = _Reader(kb, tr, raw)
    method = reader.field("method")
    given = raw.get("model_size_b")
    if not profile_module.is_given(given) and raw.get("model_config") is None:
        given = kb.fields["model_size_b"].default
    resolved = profile_module.resolve_size(kb, given, tr, raw.get("model_config"))
    setup = replace(typical(kb, resolved.total_b, method, resolved.shape), **reader.changes())
    tokens_given = profile_module.is_given(raw.get("tokens_per_example"))
    if tokens_given and not profile_module.is_given(raw.get("seq_len")):
        # memory is sized for examples this long, shorter ones too, never beyond the model's context:
        # as advise sizes it (time_model.seq_len)
        setup = replace(setup, seq_len=sequence_length(kb, {"tokens_per_example": reader.field("tokens_per_example"),
                                                            "model_shape": resolved.shape}))
    gpu = raw.get("gpu")
    if gpu is not None and named_card(kb, str(gpu).strip().lower()) is None:
        raise reader.refuse("gpu", gpu, tr.gettext("choose a card of the catalog or one you own (`expert catalogs` "
                                                   "lists them)"),
                            [card.id for card in kb.catalog] + [card.id for card in kb.owned])
    run = {"gpu": str(gpu).strip().lower() if gpu is not None else None,
           "dataset_examples": reader.field("dataset_examples"),
           "tokens_per_example": reader.field("tokens_per_example") if tokens_given else setup.seq_len,
           "epochs": reader.field("epochs"), "stack": reader.field("stack")}
    return setup, run

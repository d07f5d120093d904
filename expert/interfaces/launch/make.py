"""Launch files: the training setup of one recommendation, written out.

:func:`launch` reads one recommendation of a :class:`~expert.explanation.result.Result`
(its ``recipe`` dict, devices, memory and time) and the profile, and writes
the files that run that recipe: a TRL ``SFTTrainer`` script with its
``accelerate`` config (and DeepSpeed JSON) for the typical stack, or a
torchtune command for the tuned stack and the recipes only torchtune runs;
a README in the answer's language and a pinned ``requirements.txt``.

Nothing here chooses: each value is the answer's own or the translation of a
recipe value through ``rules/launch.toml``; a value without a translation is
refused (:class:`~expert.errors.InputError`), never approximated. Values are
written by serializers (``repr`` for Python, ``yaml.safe_dump``, ``json``,
``shlex.quote``), so a hostile model name stays a string in every file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...escape import quoted
from ...i18n import Localizer
from ...inference.time_model import seq_len
from ...knowledge.bases import knowledge_base
from .plan import (
    CONTROL,
    FRAMEWORKS,
    HF_REPO,
    MAX_MODEL,
    RECIPE_KEYS,
    STACKS,
    LaunchFiles,
    Plan,
    refuse,
    table,
)

# --- What the answer says, checked -----------------------------------------------


def _entry(doc: Mapping[str, Any], section: str, value: Any, field_name: str, tr: Localizer) -> dict[str, Any]:
    entries = doc[section]
    key = str(value)
    if isinstance(value, bool) or key not in entries:
        raise refuse(tr, field_name, value, list(entries))
    return dict(entries[key])


def _count(recipe: Mapping[str, Any], key: str, default: int, tr: Localizer) -> int:
    value = recipe.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1_000_000:
        raise refuse(tr, f"recipe.{key}", value, tr.gettext("a whole number from 1 to 1,000,000"))
    return value


def check_model(model: Any, tr: Localizer) -> str | None:
    """A model path or Hugging Face repo id given for the files: any printable
    text up to MAX_MODEL characters (it is quoted wherever it is written)."""
    if model is None:
        return None
    if not isinstance(model, str) or not model.strip() or len(model) > MAX_MODEL or CONTROL.search(model):
        raise InputError("launch_model", tr.gettext(
            "%(how_launch_model_refused)s give a model's local path or Hugging Face id, on one line, at most "
            "%(most)s characters.") % {"how_launch_model_refused": knowledge_base().how(tr, "launch_model_refused"),
                                       "most": MAX_MODEL})
    return model


def _model_repo(kb: Any, profile: Mapping[str, Any]) -> str | None:
    """The Hugging Face repo of a model of the table (its config.json's address)."""
    model_id = profile.get("model_id")
    definition = kb.model(model_id) if kb is not None and model_id else None
    match = HF_REPO.match(getattr(definition, "config", "") or "")
    return match.group(1) if match else None


def plan(result: Any, option: Any = 1, model: Any = None, others: bool = True) -> Plan:
    """The recommendation ranked ``option`` of ``result``, translated; InputError
    (in the answer's language) for anything the launch files cannot express."""
    from ...explanation.result import Result

    if not isinstance(result, Result):
        raise InputError("result", "result: give the Result that advise() returned")
    tr = Localizer(result.lang)
    doc = table()
    defaults = doc["defaults"]
    ranks = [rec.rank for rec in result.recommendations]
    if isinstance(option, bool) or not isinstance(option, int) or option not in ranks:
        if not ranks:
            raise InputError("launch_option", tr.gettext(
                "launch: the answer recommends nothing, so there is nothing to write."))
        raise InputError("launch_option", tr.gettext(
            "%(how_launch_option_refused)s '%(value)s' is not a rank of the answer; choose from %(first)s to "
            "%(last)s.") % {"how_launch_option_refused": knowledge_base().how(tr, "launch_option_refused"),
                            "value": quoted(str(option), 20), "first": min(ranks), "last": max(ranks)})
    rec = next(rec for rec in result.recommendations if rec.rank == option)
    recipe = dict(rec.recipe)
    for key in recipe:
        if key not in RECIPE_KEYS:
            raise refuse(tr, "recipe", key, list(RECIPE_KEYS))
    profile = result.profile
    stack = profile.get("stack", defaults["stack"])
    if stack not in STACKS:
        raise refuse(tr, "stack", stack, list(STACKS))
    method = profile.get("method")
    if method not in ("full", "lora", "qlora"):
        raise refuse(tr, "method", method, ["full", "lora", "qlora"])
    in_backward = recipe.get("optimizer_in_backward", False)
    if not isinstance(in_backward, bool):
        raise refuse(tr, "recipe.optimizer_in_backward", in_backward, ["true", "false"])
    framework = _framework(recipe, stack)
    if framework not in FRAMEWORKS:
        raise refuse(tr, "recipe.framework", framework, list(FRAMEWORKS))
    if in_backward and framework != "torchtune":
        raise refuse(tr, "recipe.optimizer_in_backward", in_backward, tr.gettext(
            "only with torchtune (its optimizer_in_bwd); TRL has no optimizer step inside the backward pass"))
    for key in ("checkpointing", "offload"):
        if not isinstance(recipe.get(key), bool):
            raise refuse(tr, f"recipe.{key}", recipe.get(key), ["true", "false"])
    offload_params = recipe.get("offload_params", False)
    if not isinstance(offload_params, bool):
        raise refuse(tr, "recipe.offload_params", offload_params, ["true", "false"])
    optimizer = _entry(doc, "optimizer", recipe.get("optimizer"), "recipe.optimizer", tr)
    precision = _entry(doc, "precision", recipe.get("precision"), "recipe.precision", tr)
    if framework == "torchtune" and method in ("lora", "qlora") and precision.get("torchtune_adapters"):
        # the adapters in torchtune's dtype (rules/launch.toml [precision.mixed] torchtune_adapters)
        precision = {**precision, "torchtune": precision["torchtune_adapters"]}
    quantization = _entry(doc, "base_bits", recipe.get("base_bits"), "recipe.base_bits", tr)
    strategy = _entry(doc, "strategy", recipe.get("strategy"), "recipe.strategy", tr)
    strategy["name"] = recipe["strategy"]
    micro = _count(recipe, "micro_batch", defaults["micro_batch"], tr)
    accumulation = _count(recipe, "gradient_accumulation_steps", defaults["gradient_accumulation_steps"], tr)
    devices = rec.devices
    global_batch = _count(recipe, "global_batch", micro * accumulation * devices, tr)
    if global_batch != micro * accumulation * devices:
        raise InputError("recipe.global_batch", tr.gettext(
            "recipe.global_batch: %(global)s is not micro-batch %(micro)s × accumulation %(steps)s × "
            "%(devices)s devices; the launch files keep the effective batch, so they are not written.")
            % {"global": global_batch, "micro": micro, "steps": accumulation, "devices": devices})
    if strategy["backend"] == "none" and devices != 1:
        raise refuse(tr, "recipe.strategy", recipe["strategy"], tr.gettext("one device for 'single'"))
    given = check_model(model, tr)
    kb = getattr(result, "kb", None)
    repo = _model_repo(kb, profile)
    model_name = given or repo
    label = profile.get("model_label") or profile.get("model_name") or tr.gettext("a %(size)sB model") % {
        "size": tr.number(profile.get("model_size_b") or 0, 1)}
    setup = getattr(rec, "setup", None)     # the rank the option was sized with (the person's, if given)
    lora_rank = (int(setup.lora_rank) if setup is not None and setup.lora_rank
                 else int(kb.estimator["typical"]["lora_rank"]) if kb is not None else 16)
    tune_models = {}
    for model_id in doc.get("torchtune", {}).get("models", {}):
        definition = kb.model(model_id) if kb is not None else None
        if definition is not None:
            tune_models[model_id] = (definition.name, float(definition.params_b))
    # Only a torchtune refusal names them: the other options whose files TRL writes.
    trl_options = tuple(other.rank for other in result.recommendations if others and framework == "torchtune"
                        and other.rank != rec.rank and _framework(other.recipe, stack) == "trl"
                        and _writes(result, other.rank))
    return Plan(
        rank=rec.rank, method=method, framework=framework, stack=stack, recipe=recipe, optimizer=optimizer,
        precision=precision, base_bits=int(recipe["base_bits"]), quantization=quantization, strategy=strategy,
        devices=devices, micro_batch=micro, accumulation=accumulation, global_batch=global_batch,
        checkpointing=recipe["checkpointing"], offload=recipe["offload"], in_backward=in_backward,
        model=model_name, model_id=profile.get("model_id"), model_repo=repo, model_label=str(label),
        tokens_per_example=_max_length(setup, kb, profile),
        epochs=float(profile.get("epochs") or 1), per_device_gib=rec.per_device_gib,
        # each device's memory as its driver reports it: one card of several devices, or one of one's own cards
        memory_gib=rec.device_memory_gib, host_ram_gib=rec.host_ram_gib,
        hours=rec.hours, text=rec.text, lora_rank=lora_rank,
        size_b=float(profile.get("model_size_b") or 0), tune_models=tune_models, trl_options=trl_options,
        hours_stack=str((getattr(rec, "time", None) or {}).get("stack") or stack), offload_params=offload_params)


def _max_length(setup: Any, kb: Any, profile: Mapping[str, Any]) -> int:
    """The longest sequence the files let through: the one the option's
    memory was sized for (its setup's; the profile's when it has none)."""
    if setup is not None and getattr(setup, "seq_len", None):
        return int(setup.seq_len)
    return seq_len(kb, profile) if kb is not None else int(profile.get("tokens_per_example") or 1024)


def _writes(result: Any, option: int) -> bool:
    """Whether the files of the option ranked ``option`` are written (not refused)."""
    from . import files as launch_files

    try:
        launch_files.build(plan(result, option, others=False), table(), Localizer(result.lang))
    except InputError:
        return False
    return True


def _framework(recipe: Mapping[str, Any], stack: str) -> Any:
    """The framework the files are written for: the recipe's own, or (null: any
    framework runs it) torchtune on the tuned stack or for an optimizer step in
    the backward pass, TRL otherwise."""
    return recipe.get("framework") or ("torchtune" if stack == "tuned" or recipe.get("optimizer_in_backward") is True
                                       else "trl")


def launch(result: Any, option: Any = 1, *, model: Any = None, directory: str | Path | None = None,
           overwrite: bool = False) -> LaunchFiles:
    """The launch files of the recommendation ranked ``option`` (default the
    pick) of ``result`` (what :func:`expert.advise` returned), in the answer's
    language; written into ``directory`` when one is given (an existing,
    non-empty directory only with ``overwrite=True``).

    ``model`` is the local path or Hugging Face id the files load; without
    it, a model of the table is loaded by its Hugging Face id, and a model
    given by size must be passed to the script (``--model``). Raises
    :class:`InputError` naming the field when a recipe value cannot be
    written for the target libraries (rules/launch.toml)."""
    from . import files as launch_files

    the_plan = plan(result, option, model)
    files = launch_files.build(the_plan, table(), Localizer(result.lang))
    if directory is not None:
        files.write(directory, overwrite, result.lang)
    return files

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

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import InputError, KnowledgeBaseError
from ..escape import quoted
from ..i18n import Localizer

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

LAUNCH_TOML = paths.RULES / "launch.toml"
# Keys a recommendation's recipe dict may carry (issues 20 and 21 add the
# last five); any other key is refused, not ignored.
RECIPE_KEYS = ("id", "strategy", "precision", "optimizer", "base_bits", "checkpointing", "offload",
               "micro_batch", "gradient_accumulation_steps", "global_batch", "optimizer_in_backward", "framework")
FRAMEWORKS = ("trl", "torchtune")
STACKS = ("typical", "tuned")
MAX_MODEL = 300
HF_REPO = re.compile(r"^https://huggingface\.co/([A-Za-z0-9][\w.-]*/[\w.-]+)/")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
DS_JSON = "ds_config.json"
ACCELERATE_YAML = "accelerate.yaml"


@dataclass(frozen=True)
class LaunchFiles:
    """The files of one recommendation, by name (relative to the directory)."""

    option: int
    framework: str          # "trl" or "torchtune"
    stack: str              # "typical" or "tuned"
    command: str            # the launch command, for a shell (values quoted)
    files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"option": self.option, "framework": self.framework, "stack": self.stack, "command": self.command,
                "files": [{"name": name, "content": text} for name, text in self.files.items()]}

    def write(self, directory: str | Path, overwrite: bool = False, lang: str = "en") -> list[Path]:
        """Write the files into ``directory`` (made if missing). A directory
        that exists and is not empty is refused unless ``overwrite``."""
        tr = Localizer(lang)
        target = Path(directory)
        if target.exists() and not target.is_dir():
            raise InputError("launch", tr.gettext("launch: '%(path)s' exists and is not a directory.")
                             % {"path": quoted(str(target), 200)})
        if target.is_dir() and any(target.iterdir()) and not overwrite:
            raise InputError("launch", tr.gettext(
                "launch: the directory '%(path)s' is not empty; choose an empty one, or overwrite its files "
                "with --force (overwrite=True).") % {"path": quoted(str(target), 200)})
        try:
            target.mkdir(parents=True, exist_ok=True)
            written = []
            for name, text in self.files.items():
                path = target / name
                path.write_text(text, encoding="utf-8")
                if name.endswith(".sh"):
                    path.chmod(0o755)
                written.append(path)
        except OSError as error:
            raise InputError("launch", tr.gettext("launch: cannot write into '%(path)s': %(reason)s.")
                             % {"path": quoted(str(target), 200), "reason": quoted(error.strerror or str(error), 80)}) \
                from None
        return written


@lru_cache(maxsize=4)
def table(path: Path = LAUNCH_TOML) -> dict[str, Any]:
    """rules/launch.toml, with its shape checked (KnowledgeBaseError otherwise)."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise KnowledgeBaseError([(str(path), 0, "cannot be read: %(error)s", {"error": str(error)[:200]})]) from None
    problems = []
    for section, keys in (("versions", ("torch", "transformers", "peft", "trl", "accelerate", "datasets",
                                        "bitsandbytes", "deepspeed", "torchtune", "torchao")),
                          ("deepspeed", ("master_bytes",)),
                          ("defaults", ("micro_batch", "gradient_accumulation_steps", "stack", "learning_rate_full",
                                        "learning_rate_lora", "lora_alpha_per_rank", "lora_dropout",
                                        "target_modules", "max_grad_norm"))):
        for key in keys:
            if key not in doc.get(section, {}):
                problems.append((str(path), 0, "[%(section)s] needs %(key)s", {"section": section, "key": key}))
    for section, needed in (("optimizer", ("trl", "torchtune", "deepspeed")),
                            ("precision", ("trl_flag", "full_dtype", "base_dtype", "compute_dtype", "accelerate",
                                           "deepspeed", "torchtune")),
                            ("base_bits", ("quantization",)),
                            ("strategy", ("backend", "stage", "offload_stage"))):
        entries = doc.get(section)
        if not isinstance(entries, dict) or not entries:
            problems.append((str(path), 0, "[%(section)s] needs entries", {"section": section, "key": ""}))
            continue
        for name, entry in entries.items():
            missing = [key for key in needed if not isinstance(entry, dict) or key not in entry]
            if missing:
                problems.append((str(path), 0, "[%(section)s] needs %(key)s",
                                 {"section": f"{section}.{name}", "key": ", ".join(missing)}))
    if problems:
        raise KnowledgeBaseError(problems)
    return doc


# --- What the answer says, checked -----------------------------------------------

@dataclass(frozen=True)
class Plan:
    """One recommendation with every recipe value translated for the target libraries."""

    rank: int
    method: str
    framework: str
    stack: str
    recipe: dict[str, Any]
    optimizer: dict[str, Any]
    precision: dict[str, Any]
    base_bits: int
    quantization: dict[str, Any]
    strategy: dict[str, Any]
    devices: int
    micro_batch: int
    accumulation: int
    global_batch: int
    checkpointing: bool
    offload: bool
    in_backward: bool
    model: str | None       # what the files load: the given path or id, else the table's Hugging Face id
    model_id: str | None    # models.toml id of the profile's model
    model_repo: str | None  # its Hugging Face id (models.toml config address)
    model_label: str
    tokens_per_example: int
    epochs: float
    per_device_gb: float
    vram_gb: float
    host_ram_gb: float | None
    hours: float
    text: str
    lora_rank: int
    size_b: float = 0.0     # the profile's model size, billions of parameters
    # models of rules/launch.toml [torchtune.models]: id -> (name, billions of parameters), from models.toml
    tune_models: dict[str, tuple[str, float]] = field(default_factory=dict)
    # ranks of the answer's other options that the typical stack (TRL) writes
    trl_options: tuple[int, ...] = ()
    # the stack the answer's hours are on: the profile's, or the tuned one for a
    # recipe only torchtune runs (rules/recipes.toml, `stack`)
    hours_stack: str = "typical"


def refuse(tr: Localizer, field_name: str, value: Any, accepted: Any) -> InputError:
    accepted_text = tr.list([str(a) for a in accepted], style="or") if isinstance(accepted, (list, tuple)) else accepted
    return InputError(field_name, tr.gettext(
        "%(field)s: '%(value)s' cannot be written as launch files; accepted: %(accepted)s.")
        % {"field": field_name, "value": quoted(str(value), 60), "accepted": accepted_text})


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
            "launch model: give a model's local path or Hugging Face id, on one line, at most %(most)s "
            "characters.") % {"most": MAX_MODEL})
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
    from ..explanation.result import Result

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
            "launch option: '%(value)s' is not a rank of the answer; choose from %(first)s to %(last)s.")
            % {"value": quoted(str(option), 20), "first": min(ranks), "last": max(ranks)})
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
    optimizer = _entry(doc, "optimizer", recipe.get("optimizer"), "recipe.optimizer", tr)
    precision = _entry(doc, "precision", recipe.get("precision"), "recipe.precision", tr)
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
    lora_rank = int(kb.estimator["typical"]["lora_rank"]) if kb is not None else 16
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
        model=model_name, model_id=profile.get("model_id"), model_repo=repo, model_label=str(label), tokens_per_example=int(profile.get("tokens_per_example") or 1024),
        epochs=float(profile.get("epochs") or 1), per_device_gb=rec.per_device_gb, vram_gb=rec.vram_gb,
        host_ram_gb=rec.host_ram_gb, hours=rec.hours, text=rec.text, lora_rank=lora_rank,
        size_b=float(profile.get("model_size_b") or 0), tune_models=tune_models, trl_options=trl_options,
        hours_stack=str((getattr(rec, "time", None) or {}).get("stack") or stack))


def _writes(result: Any, option: int) -> bool:
    """Whether the files of the option ranked ``option`` are written (not refused)."""
    from . import launch_files

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
    from . import launch_files

    the_plan = plan(result, option, model)
    files = launch_files.build(the_plan, table(), Localizer(result.lang))
    if directory is not None:
        files.write(directory, overwrite, result.lang)
    return files

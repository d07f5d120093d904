"""The text of the launch files of one :class:`~expert.interfaces.launch.plan.Plan`.

Every value is written by a serializer for its language: Python literals by
``repr`` (through the template's ``py`` filter), YAML by ``yaml.safe_dump``,
JSON by ``json.dumps``, shell words by ``shlex.quote``; the README's
Markdown through the ``md`` filter and code spans that cannot be closed by
the text they hold.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

from ...errors import InputError
from ...escape import quoted
from ...i18n import Localizer, for_tools
from ...knowledge.bases import knowledge_base
from .plan import ACCELERATE_YAML, DS_JSON, TORCHTUNE_SH, TRAIN_PY, LaunchFiles, Plan, refuse

LORA_MODULES_TORCHTUNE = ["q_proj", "k_proj", "v_proj", "output_proj"]   # every attention projection


def build(plan: Plan, doc: Mapping[str, Any], tr: Localizer) -> LaunchFiles:
    if plan.method == "full" and plan.base_bits != 16:
        raise refuse(tr, "recipe.base_bits", plan.base_bits, ["16"])
    if plan.framework == "torchtune":
        files, command = _torchtune(plan, doc, tr)
    else:
        files, command = _trl(plan, doc, tr)
    files["requirements.txt"] = _requirements(plan, doc)
    files["README.md"] = _readme(plan, doc, tr, command, files)
    ordered = {name: files[name] for name in ("README.md", *sorted(n for n in files if n != "README.md"))}
    return LaunchFiles(plan.rank, plan.framework, plan.stack, command, ordered)


# --- The typical stack: TRL + accelerate (+ DeepSpeed) ----------------------------

def uses_deepspeed(plan: Plan) -> bool:
    return (plan.strategy["backend"] == "deepspeed" or plan.offload) and not uses_fsdp(plan)


def uses_fsdp(plan: Plan) -> bool:
    """accelerate's FSDP: the recipe's strategy (launch.toml [strategy.fsdp]), or its weights kept in CPU memory."""
    return plan.strategy["backend"] == "fsdp" or plan.offload_params


def _learning_rate(plan: Plan, doc: Mapping[str, Any]) -> float:
    defaults = doc["defaults"]
    return float(defaults["learning_rate_full"] if plan.method == "full" else defaults["learning_rate_lora"])


def model_kwargs(plan: Plan) -> dict[str, Any]:
    """Keyword arguments of from_pretrained, as (name -> Python source) pairs."""
    precision = plan.precision
    dtype = precision["full_dtype"] if plan.method == "full" else precision["base_dtype"]
    return {"dtype": f"torch.{dtype}"}


def quantization_kwargs(plan: Plan) -> dict[str, Any] | None:
    """BitsAndBytesConfig's keyword arguments (values as Python source), or None for a 16-bit base."""
    kind = plan.quantization["quantization"]
    if kind == "none":
        return None
    if kind == "int8":
        return {"load_in_8bit": "True"}
    compute = f"torch.{plan.precision['compute_dtype']}"
    kwargs = {"load_in_4bit": "True", "bnb_4bit_quant_type": repr("nf4"),
              "bnb_4bit_use_double_quant": repr(bool(plan.quantization.get("double_quant", False))),
              "bnb_4bit_compute_dtype": compute}
    if plan.strategy["stage"] == 3 or plan.offload_params:   # sharded: FSDP and ZeRO-3 flatten float tensors only
        kwargs["bnb_4bit_quant_storage"] = compute
    return kwargs


def lora_kwargs(plan: Plan, doc: Mapping[str, Any]) -> dict[str, Any] | None:
    if plan.method == "full":
        return None
    defaults = doc["defaults"]
    return {"r": plan.lora_rank, "lora_alpha": plan.lora_rank * int(defaults["lora_alpha_per_rank"]),
            "lora_dropout": float(defaults["lora_dropout"]), "target_modules": defaults["target_modules"],
            "task_type": "CAUSAL_LM"}


def sft_kwargs(plan: Plan, doc: Mapping[str, Any]) -> dict[str, Any]:
    flag = plan.precision["trl_flag"]
    return {"per_device_train_batch_size": plan.micro_batch, "gradient_accumulation_steps": plan.accumulation,
            "gradient_checkpointing": plan.checkpointing, "optim": plan.optimizer["trl"],
            "bf16": flag == "bf16", "fp16": flag == "fp16", "learning_rate": _learning_rate(plan, doc),
            "max_grad_norm": float(doc["defaults"]["max_grad_norm"]), "num_train_epochs": plan.epochs,
            "max_length": plan.tokens_per_example, "logging_steps": 1, "save_strategy": "no", "report_to": "none"}


def zero_stage(plan: Plan) -> int | None:
    """The ZeRO stage DeepSpeed runs the plan with: the strategy's offload stage when it offloads."""
    stage = plan.strategy["offload_stage"] if plan.offload else plan.strategy["stage"]
    return int(stage) if stage else None


def deepspeed_config(plan: Plan, doc: Mapping[str, Any], tr: Localizer) -> dict[str, Any]:
    section = plan.precision["deepspeed"]
    if not section:
        master = float(doc["deepspeed"]["master_bytes"])
        raise InputError("recipe.precision", tr.gettext(
            "recipe.precision: 'bf16' (pure bf16, no fp32 master copy) cannot be written as launch files for "
            "DeepSpeed ZeRO, which keeps an fp32 master copy of the trained weights: %(bytes)s bytes a parameter "
            "more, about %(extra)s per device over the answer's %(need)s of %(vram)s, so the files would not run "
            "what the answer sized; accepted: mixed or fp16 with DeepSpeed.")
            % {"bytes": tr.number(master, 0), "extra": tr.gib(master * plan.size_b * 1e9 / 2**30 / plan.devices),
               "need": tr.gib(plan.per_device_gib), "vram": tr.gib(plan.memory_gib)})
    stage = zero_stage(plan)
    if not stage:
        raise refuse(tr, "recipe.strategy", plan.strategy["name"], tr.gettext("a ZeRO stage to offload with"))
    zero: dict[str, Any] = {"stage": stage, "overlap_comm": True, "contiguous_gradients": True}
    config: dict[str, Any] = {section: {"enabled": True}}
    if section == "fp16":
        config["fp16"].update({"loss_scale": 0, "initial_scale_power": 16})
    if plan.offload:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
        optimizer = plan.optimizer["deepspeed"]
        if not optimizer:
            raise refuse(tr, "recipe.optimizer", plan.recipe["optimizer"], tr.gettext(
                "adamw when the optimizer is offloaded (DeepSpeed runs its own CPU Adam)"))
        config["optimizer"] = {"type": optimizer, "params": {"lr": _learning_rate(plan, doc), "betas": [0.9, 0.999],
                                                             "eps": 1e-8, "weight_decay": 0.0}}
    if stage == 3:
        zero["stage3_gather_16bit_weights_on_model_save"] = True
    config["zero_optimization"] = zero
    config.update({"train_micro_batch_size_per_gpu": plan.micro_batch,
                   "gradient_accumulation_steps": plan.accumulation,
                   "train_batch_size": plan.global_batch,
                   "gradient_clipping": float(doc["defaults"]["max_grad_norm"]),
                   "steps_per_print": 10, "wall_clock_breakdown": False})
    return config


def accelerate_config(plan: Plan, doc: Mapping[str, Any]) -> dict[str, Any]:
    """accelerate's config (config_args.py ClusterConfig), as a dict for yaml.safe_dump."""
    backend = plan.strategy["backend"]
    distributed = ("FSDP" if uses_fsdp(plan) else "DEEPSPEED" if uses_deepspeed(plan)
                   else {"none": "NO", "multi_gpu": "MULTI_GPU"}[backend])
    config: dict[str, Any] = {"compute_environment": "LOCAL_MACHINE", "debug": False,
                              "distributed_type": distributed, "machine_rank": 0,
                              "main_training_function": "main", "mixed_precision": plan.precision["accelerate"],
                              "num_machines": 1, "num_processes": plan.devices, "rdzv_backend": "static",
                              "same_network": True, "use_cpu": False}
    if distributed == "FSDP":
        # PEFT's FSDP + QLoRA with CPU offload (peft examples/sft/configs/fsdp_config_qlora.yaml), with
        # train.py's precision: the settings and why each, rules/launch.toml [fsdp].
        config["fsdp_config"] = dict(sorted({**doc["fsdp"]["config"],
                                             "fsdp_offload_params": plan.offload_params}.items()))
    elif distributed == "DEEPSPEED":
        # With a deepspeed_config_file the precision is the JSON's alone: accelerate launch refuses a
        # mixed_precision beside it ("the following accelerate config variables will be ignored",
        # accelerate/utils/dataclasses.py DeepSpeedPlugin._deepspeed_config_checks).
        del config["mixed_precision"]
        config["deepspeed_config"] = {"deepspeed_config_file": DS_JSON, "zero3_init_flag": zero_stage(plan) == 3}
    return config


def _yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=False, default_flow_style=False)


def commented(text: str, key: str, lines: list[str]) -> str:
    """``text`` (YAML) with ``lines`` as a comment above its top-level ``key``."""
    comment = "".join(f"# {line}\n" for line in lines)
    return "".join(comment + line if line.startswith(f"{key}:") else line for line in text.splitlines(keepends=True))


def _python_call(kwargs: Mapping[str, Any], raw: bool = False, indent: int = 8) -> str:
    pad = " " * indent
    return "\n".join(f"{pad}{name}={value if raw else repr(value)}," for name, value in kwargs.items())


def _trl(plan: Plan, doc: Mapping[str, Any], tr: Localizer) -> tuple[dict[str, str], str]:
    from ...explanation.templating import environment

    files: dict[str, str] = {}
    deepspeed = uses_deepspeed(plan)
    if deepspeed:
        files[DS_JSON] = json.dumps(deepspeed_config(plan, doc, tr), indent=2, ensure_ascii=True) + "\n"
    elif plan.strategy["backend"] == "deepspeed" and not uses_fsdp(plan):
        raise refuse(tr, "recipe.strategy", plan.strategy["name"], "")
    files[ACCELERATE_YAML] = _yaml(accelerate_config(plan, doc))
    if uses_fsdp(plan):
        files[ACCELERATE_YAML] = commented(files[ACCELERATE_YAML], "mixed_precision", doc["fsdp"]["precision_note"])
    quantization = quantization_kwargs(plan)
    lora = lora_kwargs(plan, doc)
    template = environment("en").get_template("launch_train.py.j2")
    files[TRAIN_PY] = template.render(
        plan=plan, model=plan.model, deepspeed=deepspeed, ds_json=DS_JSON, py=repr,
        zero3=deepspeed and zero_stage(plan) == 3,
        fsdp_save=doc["fsdp"]["save_state_dict_type"] if uses_fsdp(plan) else "",
        model_kwargs=_python_call(model_kwargs(plan), raw=True),
        quantization=_python_call(quantization, raw=True) if quantization else "",
        lora=_python_call(lora) if lora else "",
        sft=_python_call(sft_kwargs(plan, doc)))
    words = ["accelerate", "launch", "--config_file", ACCELERATE_YAML, TRAIN_PY, "--dataset", "train.jsonl"]
    if plan.model is None:
        words += ["--model", "path/to/model"]
    return files, shlex.join(words)


# --- The tuned stack: torchtune ---------------------------------------------------

def torchtune_overrides(plan: Plan, doc: Mapping[str, Any], tr: Localizer, model_dir: str) -> dict[str, Any]:
    """The config keys the command overrides, with their values (torchtune's shipped config supplies the rest)."""
    defaults = doc["defaults"]
    overrides: dict[str, Any] = {
        "output_dir": "./output",
        "checkpointer.checkpoint_dir": model_dir,
        "tokenizer.path": f"{model_dir}/original/tokenizer.model",
        "tokenizer.max_seq_len": plan.tokens_per_example,
        "batch_size": plan.micro_batch,
        "gradient_accumulation_steps": plan.accumulation,
        "epochs": int(plan.epochs),
        "optimizer._component_": plan.optimizer["torchtune"],
        "optimizer.lr": float(defaults["learning_rate_full"] if plan.method == "full"
                              else defaults["learning_rate_lora"]),
        "dtype": plan.precision["torchtune"],
        "enable_activation_checkpointing": plan.checkpointing,
        "enable_activation_offloading": False,
    }
    if plan.method == "full":
        overrides["optimizer_in_bwd"] = plan.in_backward
        if plan.devices > 1:
            overrides["fsdp_cpu_offload"] = False
    else:
        overrides.update({"model.lora_rank": plan.lora_rank,
                          "model.lora_alpha": plan.lora_rank * int(defaults["lora_alpha_per_rank"]),
                          "model.lora_dropout": float(defaults["lora_dropout"]),
                          "model.lora_attn_modules": list(LORA_MODULES_TORCHTUNE),
                          "model.apply_lora_to_mlp": True, "model.apply_lora_to_output": False})
    return overrides


MAX_SUGGESTED = 3


def no_torchtune_config(plan: Plan, tune: Mapping[str, Any], where: str, recipe_name: str,
                        tr: Localizer) -> InputError:
    """The refusal when torchtune ships no config of the recipe for the answer's
    model: the models it has one for (the nearest in size first, at most three),
    which to name when the answer gave a size close to one of them, and the
    answer's options that TRL writes instead."""
    having = sorted((abs(plan.tune_models[model_id][1] - plan.size_b), plan.tune_models[model_id][0])
                    for model_id, entry in tune.get("models", {}).items()
                    if (entry.get(plan.method) or {}).get(where) and model_id in plan.tune_models)
    names = [name for _, name in having[:MAX_SUGGESTED]]
    within = float(tune.get("same_size_within", 0.1)) * max(plan.size_b, 0.001)
    values = {"recipe": recipe_name, "model": quoted(plan.model_label, 60), "size": tr.billions(plan.size_b),
              "models": tr.list(names, style="or")}
    tools = for_tools()     # (a tool's model is the path the files load: the model asked about is model_size_b)
    if not names and tools:
        text = tr.gettext("model_size_b: torchtune ships no config of %(recipe)s (the recipe of this option) for "
                          "any model expert knows, so the files are not written.") % values
    elif not names:
        text = tr.gettext("model: torchtune ships no config of %(recipe)s (the recipe of this option) for any model "
                          "expert knows, so the files are not written.") % values
    elif plan.model_id is None and having[0][0] <= within and tools:
        text = tr.gettext("model_size_b: this option runs torchtune's %(recipe)s, whose configs are written per "
                          "model, and the answer names only a size (%(size)s). If your model is %(models)s, call "
                          "again with its name (model_size_b: %(first)s): torchtune ships a config of it for that "
                          "one.") % {**values, "first": names[0]}
    elif plan.model_id is None and having[0][0] <= within:
        text = tr.gettext("model: this option runs torchtune's %(recipe)s, whose configs are written per model, and "
                          "the answer names only a size (%(size)s). If your model is %(models)s, ask again with its "
                          "name (%(how_model_named)s): torchtune ships a config of it for that one.") % {
            **values, "how_model_named": knowledge_base().how(tr, "model_named", first=names[0])}
    else:
        if plan.model_id is None:
            values["model"] = tr.gettext("a model of %(size)s") % values
        text = (tr.gettext("model_size_b: torchtune ships no config of %(recipe)s (the recipe of this option) for "
                           "%(model)s, only for %(models)s, so the files are not written.") if tools else tr.gettext(
                "model: torchtune ships no config of %(recipe)s (the recipe of this option) for %(model)s, "
                "only for %(models)s, so the files are not written.")) % {**values, "models": tr.list(names)}
    if plan.trl_options:
        ranks = tr.list([str(rank) for rank in plan.trl_options])
        text += " " + (tr.ngettext(
            "Option %(ranks)s of this answer runs without torchtune: call launch again with option: %(first)s.",
            "Options %(ranks)s of this answer run without torchtune: call launch again with one of them in "
            "option (such as option: %(first)s).", len(plan.trl_options)) if tools else tr.ngettext(
            "Option %(ranks)s of this answer runs without torchtune: write its files with %(how_launch_option)s.",
            "Options %(ranks)s of this answer run without torchtune: write their files with %(how_launch_option)s.",
            len(plan.trl_options))) % {"ranks": ranks, "first": plan.trl_options[0],
                                       "how_launch_option": knowledge_base().how(tr, "launch_option")}
    return InputError("model_size_b" if tools else "model", text)


def _override_word(key: str, value: Any) -> str:
    """One ``key=value`` override as torchtune's command line (OmegaConf's dotlist) reads it."""
    if isinstance(value, bool):
        text = "True" if value else "False"
    elif isinstance(value, list):
        text = "[" + ",".join(str(v) for v in value) + "]"
    else:
        text = str(value)
    return f"{key}={text}"


def _torchtune(plan: Plan, doc: Mapping[str, Any], tr: Localizer) -> tuple[dict[str, str], str]:
    tune = doc.get("torchtune", {})
    if not plan.precision["torchtune"]:
        raise refuse(tr, "recipe.precision", plan.recipe["precision"], tr.gettext(
            "bf16 with torchtune (it trains in bf16 or fp32, without an fp32 master copy)"))
    if plan.offload:
        raise refuse(tr, "recipe.offload", True, tr.gettext("false with torchtune"))
    if plan.offload_params:   # not written: the files would not offload what the answer sized offloaded
        raise refuse(tr, "recipe.offload_params", True, tr.gettext("false with torchtune"))
    where = {"single": "single", "zero3": "distributed", "fsdp": "distributed"}.get(plan.strategy["name"])
    if where is None or (where == "single" and plan.devices != 1):
        raise refuse(tr, "recipe.strategy", plan.strategy["name"], tr.gettext(
            "single (one device), or zero3 or fsdp (torchtune's FSDP) with torchtune"))
    if plan.base_bits == 8:
        raise refuse(tr, "recipe.base_bits", 8, tr.gettext("16 or 4 with torchtune (it has no 8-bit base)"))
    if plan.in_backward and (plan.accumulation != 1 or where != "single" or plan.method != "full"):
        raise refuse(tr, "recipe.optimizer_in_backward", True, tr.gettext(
            "only for full fine-tuning on one device with gradient accumulation 1 (torchtune's optimizer_in_bwd)"))
    if plan.epochs != int(plan.epochs) or plan.epochs < 1:
        raise InputError("epochs", tr.gettext("epochs: torchtune runs whole epochs, not %(value)s.")
                         % {"value": tr.number(plan.epochs, 2)})
    profile_model = plan.model_id
    models = tune.get("models", {})
    config = (models.get(profile_model or "", {}).get(plan.method) or {}).get(where, "")
    recipe_name = tune["recipes"][plan.method][where]
    if not config:
        raise no_torchtune_config(plan, tune, where, recipe_name, tr)
    local = plan.model is not None and plan.model != plan.model_repo
    model_dir = plan.model if local and plan.model is not None else "./model"
    overrides = torchtune_overrides(plan, doc, tr, model_dir)
    run = ["tune", "run"]
    if where == "distributed":
        run += ["--nproc_per_node", str(plan.devices)]
    run += [recipe_name, "--config", config] + [_override_word(k, v) for k, v in overrides.items()]
    lines = ["#!/bin/sh", "# torchtune run written by expert: see README.md.", "set -eu"]
    if not local and plan.model_repo:
        lines.append(shlex.join(["tune", "download", plan.model_repo, "--output-dir", model_dir,
                                 "--ignore-patterns", "original/consolidated*"]))
    lines.append(shlex.join(run))
    return {TORCHTUNE_SH: "\n".join(lines) + "\n"}, shlex.join(["sh", TORCHTUNE_SH])


# --- requirements.txt and README.md ---------------------------------------------

def packages(plan: Plan) -> list[str]:
    eight_bit = plan.optimizer["trl"] != "adamw_torch" or plan.base_bits < 16
    if plan.framework == "torchtune":
        names = ["torch", "torchtune", "torchao"] + (["bitsandbytes"] if eight_bit else [])
    else:
        names = ["torch", "transformers", "datasets", "accelerate", "trl"]
        names += ["peft"] if plan.method != "full" else []
        names += ["bitsandbytes"] if eight_bit else []
        names += ["deepspeed"] if uses_deepspeed(plan) else []
    return names


def _requirements(plan: Plan, doc: Mapping[str, Any]) -> str:
    versions = doc["versions"]
    lines = [f"# Written by expert for option {plan.rank}: the versions the files were written for, "
             "and that its opt-in CPU test ran (docs/launch.md).",
             *(f"{name}=={versions[name]}" for name in packages(plan))]
    return "\n".join(lines) + "\n"


def _readme(plan: Plan, doc: Mapping[str, Any], tr: Localizer, command: str, files: Mapping[str, str]) -> str:
    from ...explanation.templating import environment

    versions = doc["versions"]
    template = environment(tr.lang).get_template("launch_readme.md.j2")
    return template.render(
        plan=plan, tr=tr, command=command, files=sorted(set(files) | {"README.md"}),
        versions=[(name, versions[name]) for name in packages(plan)], date=versions["date"],
        code=code_span, per_device=tr.gib(plan.per_device_gib), vram=tr.gib(plan.memory_gib),
        host_ram=tr.gib(plan.host_ram_gib) if plan.offload and plan.host_ram_gib else None,
        paged_ram=tr.gib(plan.host_ram_gib) if plan.host_ram_gib and not plan.offload else None, hours=tr.hours(plan.hours),
        deepspeed=plan.framework == "trl" and uses_deepspeed(plan))


def code_span(value: Any) -> str:
    """``value`` as a Markdown code span: a backtick run longer than any inside it."""
    text = " ".join(str(value).split())
    longest = max((len(run) for run in _runs(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _runs(text: str) -> list[str]:
    runs, current = [], ""
    for char in text:
        if char == "`":
            current += char
        elif current:
            runs.append(current)
            current = ""
    if current:
        runs.append(current)
    return runs

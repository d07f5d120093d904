"""Load and validate a knowledge base: the TOML files of ``rules/``.

Each file is first checked against its schema (:data:`SCHEMAS`, by
:func:`_shape`), then by its own validator, which builds the records of
:mod:`.model`. Nothing in this package knows a GPU, a threshold or a piece
of advice; it knows the *shape* of the knowledge and refuses, with the file
and line of each problem, a knowledge base that does not have it. A
knowledge base is loaded whole or not at all.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import KnowledgeBaseError
from .catalog import INTERCONNECTS, catalog_cards
from .conditions import FIELDS, TRUE, ConditionError, compile_condition
from .owned import owned_cards, unsupported_devices
from .records import (
    COSTS,
    DERIVES,
    EXTRA_PLACEHOLDERS,
    FIELD_TYPES,
    H_RE,
    HELPERS,
    ID_RE,
    KINDS,
    METHODS,
    OFF_LADDER,
    OPTIONAL_FIELDS,
    PLACEHOLDER_RE,
    PROFILE_FIELDS,
    SCOPES,
    SPREADS,
    VENDORS,
    KnowledgeBase,
    ModelDef,
    ProfileField,
    QuestionDef,
    RuleDef,
    Section,
    name_key,
    scope_key,
)
from .source import LazyLine, Problems, is_number, line_at, read_toml, shown

G_RE = re.compile(r"^G[1-9]\Z")
# What each strategy of ranking.toml may be: the estimator knows these, and
# they place the weights as the configuration rules expect.
STRATEGY_KINDS = {"single": ("single",), "replicated": ("ddp", "zero1", "zero2"), "sharded": ("zero3", "fsdp")}


# --- the shape of every file -------------------------------------------------
# A schema is a type (str, int, float = any number, bool), ANY, a list
# [schema], a table {key: schema} whose keys ending in "?" are optional, or an
# open table {"*": schema}. Each file is checked against its schema before
# anything reads it, so a value of the wrong type is a message, not a crash.

ANY = object()
SCHEMAS: dict[str, Any] = {
    "sections": {"section": {"*": {"heading": str, "title?": str, "heuristics?": [str]}}},
    "profile": {"field": {"*": {"type": str, "label": str, "default?": ANY, "choices?": [str],
                                "choice_labels?": {"*": str}, "min?": float, "min_exclusive?": float, "max?": float,
                                "none_label?": str, "cards?": bool}}},
    "catalog": {"gpu": [{"*": ANY}]},
    "requirements": {"class_band": float, "table": {"*": [[float]]}, "qlora": {"of": str, "factor": float},
                     "floor_bytes_per_param": {"*": float}},
    "timing": {"passes": {"forward": float, "backward": float, "backward_frozen": float, "recompute": float},
               "attention_per_pass": float,
               "stack": {"*": {"utilization": {"*": float}, "overhead_per_layer_s": float, "padding_waste": float,
                               "moe_efficiency": float, "overlap": float}},
               "quantized": {"seconds_per_b": float, "reference_bandwidth_gbs": float},
               "batch": {"global_sequences": int, "most_micro_batch": int},
               "bandwidth": {"reference_flops_per_byte": float, "exponent": float}, "vendor_share": {"*": float},
               "sharding": {"gathers": float},
               "links": {"share": {"*": float}, "between_nodes_gbs": {"*": float}},
               "unknown_card": {"bf16_tflops": float},
               "own": {"as_fast_as": str},
               "calibration": {"tolerance": float, "limits": {"stack_mean": float},
                               "anchor": [{"id": str, "method": str, "model_size_b": float, "dataset_examples": int,
                                           "gpu": str, "count": int, "recipe": str, "strategy": str,
                                           "hours": [float], "source": str}],
                               "measurement": [{"id": str, "stack": str, "gpu": str, "count": int, "method": str,
                                                "recipe": str, "strategy": str, "model_size_b": float,
                                                "model?": str, "seq_len": int, "micro_batch": int,
                                                "checkpointing?": bool,
                                                "tokens_per_second": float, "source": str}],
                               "moe": [{"id": str, "stack": str, "gpu": str, "count": int, "model?": str,
                                        "size_b?": float, "active_b?": float, "dense": str, "seq_len": int,
                                        "published": [float], "source": str}],
                               "ratio": [{"id": str, "faster": str, "faster_count?": int, "slower": str,
                                          "stack?": str, "micro_batch?": int,
                                          "published": [float], "source": str}]}},
    "ranking": {"counts": [int], "strategy": {"single": str, "replicated": str, "sharded": str},
                "class_price": {"*": float}, "billing": {"setup_hours": float},
                "budget_weights": {"*": {"cost": float, "time": float}}},
    "labels": {"*": {"*": str}},
    "recipes": {"fit": {"margin": float},
                "recipe": [{"id": str, "method": str, "precision": str, "optimizer": str, "base_bits": int,
                            "checkpointing": bool, "offload": bool, "optimizer_in_backward?": bool,
                            "framework?": str, "stack?": str, "needs_bf16?": bool, "single_device?": bool, "fp16?": str, "time_factor": float,
                            "source": str}],
                "ladder": {"*": [{"step": str, "recipe": str, "spread": str}]}},
    "rules": {"rule": [{"id": str, "kind": str, "derive?": str, "step?": str, "section": str, "heuristics": [str],
                        "gaps?": [str], "when?": str, "message": str, "factor?": float, "opposes?": [str],
                        "overrides?": [str], "summary?": bool}]},
    "explain": {"change": [{"field": str, "value": ANY}]},
    "questions": {"question": [{"field": str, "ask_if?": str, "text": str, "hint?": str, "why": str,
                                "which_text?": str, "which_hint?": str}]},
    "owned": {"ignore?": [str], "examples": [str], "card": [{"*": ANY}], "unsupported?": [{"*": ANY}]},
    "models": {
        "names": {"suffixes": [str], "prefixes": [str], "suggestions": int},
        "model": [{"id": str, "name": str, "family": str, "aliases?": [str], "params_b": float, "active_b?": float,
                   "layers": int, "hidden": int, "heads": int, "kv_heads": int, "head_dim?": int, "ffn": int,
                   "vocab": int, "context": int, "tied?": bool, "gated?": bool, "experts?": int,
                   "experts_per_token?": int, "expert_ffn?": int, "shared_experts?": int, "moe_layers?": int,
                   "mla?": dict.fromkeys(("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"), int),
                   "other_b?": float, "config": str, "params_source": str}],
        "config": {"max_bytes": int, "nested": [str], "ungated_types": [str], "shared_expert_types": [str],
                   "keys": {"*": [str]}},
    },
    "estimator": {
        "bytes": {"fp32": float, "bf16": float, "int8": float, "nf4": float},
        "optimizer": {"mixed": {"*": float}, "bf16": {"*": float}, "fp16": {"*": float}},
        "paged": {"host_bytes": float},
        "quantized": {"embeddings_bits": int},
        "activations": {"per_layer": float, "checkpointed_per_layer": float, "logits_bytes": float,
                        "kv_per_layer": float},
        "overhead": {"per_gpu_gb": float},
        "sharding": {"gathered_layers": float},
        "typical": {"seq_len": int, "batch": int, "checkpointing": bool, "lora_rank": int, "optimizer": str,
                    "precision": str, "base_bits": dict.fromkeys(METHODS, int)},
        "setup": [{"id": str, "optimizer?": str, "precision?": str, "offload?": bool, "base_bits?": int,
                   "optimizer_in_backward?": bool,
                   "methods": [str]}],
        "shape": [{"size_b": float, "name": str, "hidden": int, "layers": int, "heads": int, "kv_heads": int,
                   "ffn": int, "vocab": int, "tied?": bool}],
    },
}


def _shape(value: Any, schema: Any, where: str, path: Path, text: str, problems: Problems) -> bool:
    """Check ``value`` against ``schema``; report each mismatch at ``where``."""
    if schema is ANY:
        return True
    line: Any = LazyLine(text, where)
    if isinstance(schema, list):
        if not isinstance(value, list):
            problems.add(str(path), line, "'%(key)s' must be a list", key=where)
            return False
        # A list, not a generator: every item is checked, so every problem is reported.
        return all([_shape(item, schema[0], f"{where}[{n + 1}]", path, text, problems)  # noqa: C419
                    for n, item in enumerate(value)])
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            problems.add(str(path), line, "'%(key)s' must be a table", key=where or path.stem)
            return False
        ok = True
        if "*" in schema:
            for name, item in value.items():
                ok &= _shape(item, schema["*"], f"{where}.{name}" if where else name, path, text, problems)
            return ok
        known = {k.rstrip("?") for k in schema}
        for name in value:
            if name not in known:
                dotted = f"{where}.{name}" if where else name
                problems.add(str(path), line_at(text, dotted), "unknown key '%(key)s' (known: %(known)s)",
                             key=dotted, known=", ".join(sorted(known)))
                ok = False
        for name, item_schema in schema.items():
            bare = name.rstrip("?")
            full = f"{where}.{bare}" if where else bare
            if bare not in value:
                if not name.endswith("?"):
                    problems.add(str(path), line, "'%(key)s' is missing", key=full)
                    ok = False
                continue
            ok &= _shape(value[bare], item_schema, full, path, text, problems)
        return ok
    if schema is float:
        # an int of any length is finite (math.isfinite cannot take one past 1e308)
        good = ((isinstance(value, int) and not isinstance(value, bool))
                or (isinstance(value, float) and math.isfinite(value)))
    elif schema is int:
        good = isinstance(value, int) and not isinstance(value, bool)
    else:
        good = isinstance(value, schema)
    if not good:
        if schema is str:
            problems.add(str(path), line, "'%(key)s' must be text", key=where)
        elif schema is int:
            problems.add(str(path), line, "'%(key)s' must be a whole number", key=where)
        elif schema is float:
            problems.add(str(path), line, "'%(key)s' must be a number", key=where)
        else:
            problems.add(str(path), line, "'%(key)s' must be true or false", key=where)
    return good


def load(root: Path | str | None = None) -> KnowledgeBase:
    """Load the knowledge base in ``root`` (the shipped one by default)."""
    base = Path(root) if root is not None else paths.RULES
    problems = Problems()
    data = {name: read_toml(base / f"{name}.toml", problems) for name in
            ("sections", "profile", "catalog", "requirements", "timing", "ranking", "labels", "rules", "explain",
             "questions", "estimator", "recipes", "models", "owned")}
    if problems.items:
        raise KnowledgeBaseError(problems.items)
    for name, (doc, text) in data.items():
        _shape(doc, SCHEMAS[name], "", base / f"{name}.toml", text, problems)
    if problems.items:
        raise KnowledgeBaseError(problems.items)

    sections = _sections(base / "sections.toml", *data["sections"], problems)
    fields = _fields(base / "profile.toml", *data["profile"], problems)
    requirements = _requirements(base / "requirements.toml", *data["requirements"], problems)
    timing = _timing(base / "timing.toml", *data["timing"], problems)
    ranking = _ranking(base / "ranking.toml", *data["ranking"], problems)
    catalog = catalog_cards(base / "catalog.toml", *data["catalog"], problems, class_prices=ranking["class_price"])
    if timing["own"]["as_fast_as"] not in {card.id for card in catalog}:
        problems.add(str(base / "timing.toml"), line_at(data["timing"][1], "own.as_fast_as"),
                     "[own] as_fast_as must be a card id of catalog.toml")
    labels = _labels(base / "labels.toml", *data["labels"], problems)
    estimator_doc = data["estimator"][0]
    recipes = _recipes(base / "recipes.toml", *data["recipes"], estimator_doc, tuple(timing["stack"]), problems)
    rules = _rules(base / "rules.toml", *data["rules"], sections, recipes, problems)
    if not problems.items:
        _consistency(base, {name: text for name, (_, text) in data.items()}, fields, requirements, timing, ranking,
                     problems)
    changes = _changes(base / "explain.toml", *data["explain"], fields, problems)
    questions = _questions(base / "questions.toml", *data["questions"], fields, problems)
    owned_ignore, owned_examples, owned = owned_cards(base / "owned.toml", *data["owned"], catalog, problems)
    unsupported = unsupported_devices(base / "owned.toml", *data["owned"], owned_ignore, problems)
    if problems.items:
        raise KnowledgeBaseError(problems.items)
    estimator = _estimator(base / "estimator.toml", *data["estimator"], problems)
    models = _models(base / "models.toml", *data["models"], problems)
    _calibration_models(base / "timing.toml", data["timing"][1], timing["calibration"], models, problems)
    if problems.items:
        raise KnowledgeBaseError(problems.items)
    models_doc = data["models"][0]
    return KnowledgeBase(base, sections, fields, catalog, requirements, timing, ranking, labels, rules, changes,
                         questions, estimator, recipes, models=models, model_names=models_doc["names"],
                         model_config=models_doc["config"], owned=owned, owned_ignore=owned_ignore,
                         owned_examples=owned_examples, unsupported=unsupported)


def _calibration_models(path: Path, text: str, calibration: dict[str, Any], models: tuple[ModelDef, ...],
                        problems: Problems) -> None:
    """The models timing.toml's [calibration] rows are measured on are models of models.toml,
    and a mixture's row gives its total size or its model."""
    known = {model.id for model in models}
    for kind in ("measurement", "moe"):
        for n, entry in enumerate(calibration.get(kind, [])):
            where = f"calibration.{kind}[{n + 1}]"
            for key in ("model", "dense"):
                if key in entry and entry[key] not in known:
                    problems.add(str(path), line_at(text, f"{where}.{key}"), "calibration '%(id)s': '%(model)s' is "
                                 "not a model of models.toml", id=entry["id"], model=shown(entry[key]))
            if kind == "moe" and "size_b" not in entry and "model" not in entry:
                problems.add(str(path), line_at(text, where), "calibration '%(id)s': a mixture of experts needs "
                             "size_b or model", id=entry["id"])


_MOE_KEYS = ("experts", "experts_per_token", "expert_ffn")


def _models(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> tuple[ModelDef, ...]:
    """The model table, checked beyond its types: positive sizes, whole MoE
    descriptions, and names that resolve to one model only."""
    models: list[ModelDef] = []
    keys: dict[str, str] = {}
    for index, entry in enumerate(doc["model"]):
        where = f"model[{index + 1}]"

        def bad(at: str, template: str, where: str = where, model: str = entry["id"], **params: Any) -> None:
            problems.add(str(path), line_at(text, f"{where}.{at}"), template, id=model, **params)

        before = len(problems.items)
        if not ID_RE.match(entry["id"].replace(".", "-")) or entry["id"] in keys.values():
            bad("id", "model '%(id)s': the id must be unique kebab-case (dots allowed)")
        numbers = [k for k in ("params_b", "active_b", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn",
                               "vocab", "context", "experts", "experts_per_token", "expert_ffn", "moe_layers")
                   if k in entry]
        for key in numbers:
            if not entry[key] > 0:
                bad(key, "model '%(id)s': '%(key)s' must be a positive number", key=key)
        if entry.get("other_b", 0) < 0 or entry.get("shared_experts", 0) < 0:
            bad("other_b" if entry.get("other_b", 0) < 0 else "shared_experts",
                "model '%(id)s': '%(key)s' must not be negative", key="other_b")
        moe = [k for k in _MOE_KEYS if k in entry]
        if moe and (len(moe) != len(_MOE_KEYS) or "active_b" not in entry):
            bad(moe[0], "model '%(id)s': a mixture of experts needs %(keys)s", keys=", ".join(_MOE_KEYS + ("active_b",)))
        elif not moe and any(k in entry for k in ("active_b", "shared_experts", "moe_layers")):
            bad("active_b", "model '%(id)s': active_b, shared_experts and moe_layers are for a mixture of experts")
        elif moe and not (entry["experts_per_token"] <= entry["experts"] and entry["active_b"] <= entry["params_b"]
                          and entry.get("moe_layers", entry["layers"]) <= entry["layers"]):
            bad("experts_per_token", "model '%(id)s': experts per token, active parameters and MoE layers cannot "
                "exceed the experts, the total and the layers")
        heads, kv_heads = entry["heads"], entry["kv_heads"]
        if min(heads, kv_heads) > 0 and (kv_heads > heads or heads % kv_heads):
            bad("kv_heads", "model '%(id)s': kv_heads must divide heads")
        for name in [entry["id"], entry["name"], *entry.get("aliases", [])]:
            key = name_key(name)
            if key in keys and keys[key] != entry["id"]:
                bad("name", "model '%(id)s': the name '%(name)s' is already model '%(other)s'", name=name,
                    other=keys[key])
            keys.setdefault(key, entry["id"])
        if len(problems.items) != before:
            continue
        models.append(ModelDef(
            entry["id"], entry["name"], entry["family"], tuple(entry.get("aliases", ())), float(entry["params_b"]),
            float(entry.get("active_b", entry["params_b"])), entry["layers"], entry["hidden"], heads,
            kv_heads, entry.get("head_dim", entry["hidden"] // heads), entry["ffn"], entry["vocab"],
            entry["context"], entry.get("tied", False), entry.get("gated", True), entry.get("experts"),
            entry.get("experts_per_token"), entry.get("expert_ffn"), entry.get("shared_experts", 0),
            entry.get("moe_layers", entry["layers"]) if moe else None, entry.get("mla"),
            float(entry.get("other_b", 0.0)), entry["config"], entry["params_source"], line_at(text, where)))
    if not models:
        problems.add(str(path), line_at(text, "model"), "no [[model]] tables")
    if doc["config"]["max_bytes"] < 1 or doc["names"]["suggestions"] < 1:
        problems.add(str(path), line_at(text, "config.max_bytes"), "max_bytes and suggestions must be positive")
    return tuple(models)


def _estimator(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, Any]:
    """The estimator's constants, checked beyond their types."""
    optimizers = set(doc["optimizer"]["mixed"])
    if optimizers != set(doc["optimizer"]["bf16"]) or optimizers != set(doc["optimizer"]["fp16"]) or not optimizers:
        problems.add(str(path), line_at(text, "optimizer.bf16" if optimizers else "optimizer.mixed"),
                     "[optimizer.mixed], [optimizer.bf16] and [optimizer.fp16] must name the same optimizers")
    typical = doc["typical"]
    if typical["optimizer"] not in optimizers or typical["precision"] not in ("mixed", "bf16"):
        problems.add(str(path), line_at(text, "typical.optimizer" if typical["optimizer"] not in optimizers
                                      else "typical.precision"),
                     "[typical] names an unknown optimizer or precision")
    for index, setup in enumerate(doc["setup"]):
        if setup.get("optimizer", typical["optimizer"]) not in optimizers or setup.get("base_bits", 4) not in (4, 8, 16):
            problems.add(str(path), line_at(text, f"setup[{index + 1}]"),
                         "setup '%(id)s' names an unknown optimizer or base precision", id=setup["id"])
    if not doc["shape"]:
        problems.add(str(path), line_at(text, "shape"), "no [[shape]] tables")
    for index, shape in enumerate(doc["shape"]):
        for key in ("size_b", "hidden", "layers", "heads", "kv_heads", "ffn", "vocab"):
            if not (is_number(shape[key]) and shape[key] > 0):
                problems.add(str(path), line_at(text, f"shape[{index + 1}].{key}"),
                             "[[shape]] %(index)s: '%(key)s' must be a positive number", index=index + 1, key=key)
    # Sizes, byte counts and allowances: the estimate multiplies and divides by them.
    constants = [(f"bytes.{k}", v) for k, v in doc["bytes"].items()]
    constants += [(f"optimizer.{p}.{k}", v) for p in ("mixed", "bf16", "fp16") for k, v in doc["optimizer"][p].items()]
    constants += [("paged.host_bytes", doc["paged"]["host_bytes"])]
    constants += [(f"activations.{k}", v) for k, v in doc["activations"].items()]
    constants += [("overhead.per_gpu_gb", doc["overhead"]["per_gpu_gb"]),
                  ("sharding.gathered_layers", doc["sharding"]["gathered_layers"])]
    constants += [(f"typical.{k}", typical[k]) for k in ("seq_len", "batch", "lora_rank")]
    for key, value in constants:
        if not (is_number(value) and value >= 0) or (key.startswith("typical.") and value < 1):
            problems.add(str(path), line_at(text, key), "'%(key)s' must not be negative (typical sizes at least 1)",
                         key=key)
    return doc


_QUESTION_KEYS = ("field", "ask_if", "text", "hint", "why", "which_text", "which_hint")


def _questions(path: Path, doc: dict[str, Any], text: str, fields: dict[str, ProfileField],
               problems: Problems) -> tuple[QuestionDef, ...]:
    questions: list[QuestionDef] = []
    for index, entry in enumerate(doc.get("question", [])):
        line = line_at(text, f"question[{index + 1}]")
        for key in entry:
            if key not in _QUESTION_KEYS:
                problems.add(str(path), line_at(text, f"question[{index + 1}].{key}"),
                             "unknown key '%(key)s' (known: %(known)s)", key=key, known=", ".join(_QUESTION_KEYS))
        name = entry.get("field")
        if name not in fields or name in [q.field for q in questions]:
            problems.add(str(path), line_at(text, f"question[{index + 1}].field"),
                         "question %(index)s: field '%(name)s' is unknown or asked twice", index=index + 1, name=name)
            continue
        if not isinstance(entry.get("text"), str) or not isinstance(entry.get("why"), str):
            problems.add(str(path), line, "question '%(name)s' needs a text and a why", name=name)
            continue
        condition = TRUE
        if "ask_if" in entry:
            try:
                condition = compile_condition(str(entry["ask_if"]), {ns: FIELDS[ns] for ns in ("profile", "req", "pick")})
            except ConditionError as error:
                problems.add(str(path), line_at(text, f"question[{index + 1}].ask_if"), "%(error)s", error=str(error))
                continue
        if ("which_text" in entry or "which_hint" in entry) and not fields[name].cards:
            problems.add(str(path), line, "question '%(name)s': which_text and which_hint are for a field that "
                                          "takes a card's name (cards = true)", name=name)
        questions.append(QuestionDef(name, condition, entry["text"], entry.get("hint"), entry["why"], line,
                                     entry.get("which_text"), entry.get("which_hint")))
    missing = [name for name in fields if name not in [q.field for q in questions]]
    if missing:
        problems.add(str(path), 0, "no question for %(fields)s", fields=", ".join(missing))
    return tuple(questions)


def _changes(path: Path, doc: dict[str, Any], text: str, fields: dict[str, ProfileField],
             problems: Problems) -> tuple[tuple[str, Any], ...]:
    changes = []
    for index, entry in enumerate(doc.get("change", [])):
        name, value = entry.get("field"), entry.get("value")
        spec = fields.get(name) if isinstance(name, str) else None
        if spec is None:
            problems.add(str(path), line_at(text, f"change[{index + 1}].field"),
                         "unknown field '%(name)s' (known: %(known)s)", name=name, known=", ".join(fields))
            continue
        ok = (value == "none" or (value == "needed" and name == "deadline_h")
              or (spec.type == "bool" and isinstance(value, bool)) or value in spec.choices)
        if not ok:
            problems.add(str(path), line_at(text, f"change[{index + 1}].value"),
                         "change of '%(name)s': value %(value)s is not accepted", name=name, value=repr(value))
            continue
        changes.append((name, value))
    return tuple(changes)


def _sections(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, Section]:
    sections = {}
    for key, table in doc.get("section", {}).items():
        heading = table.get("heading") if isinstance(table, dict) else None
        if not isinstance(heading, str) or not heading:
            problems.add(str(path), line_at(text, f"section.{key}.heading"), "section '%(key)s' needs a heading", key=key)
            continue
        sections[key] = Section(key, heading, tuple(table.get("heuristics", ())), str(table.get("title") or ""))
    if not sections:
        problems.add(str(path), line_at(text, "section"), "no [section.KEY] tables")
    return sections


def _fields(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, ProfileField]:
    fields = {}
    tables = doc.get("field", {})
    for name in PROFILE_FIELDS:
        if name not in tables:
            problems.add(str(path), line_at(text, "field"), "field '%(name)s' is missing", name=name)
    for name, spec in tables.items():
        line = line_at(text, f"field.{name}")
        if name not in PROFILE_FIELDS:
            problems.add(str(path), line, "unknown field '%(name)s' (known: %(known)s)", name=name,
                         known=", ".join(PROFILE_FIELDS))
            continue
        kind = spec.get("type")
        if kind not in FIELD_TYPES:
            problems.add(str(path), line_at(text, f"field.{name}.type"),
                         "field '%(name)s': type must be one of %(known)s", name=name, known=", ".join(FIELD_TYPES))
            continue
        choices = tuple(spec.get("choices", ()))
        labels = dict(spec.get("choice_labels", {}))
        if kind == "choice" and (not choices or set(labels) != set(choices)):
            problems.add(str(path), line_at(text, f"field.{name}.choice_labels" if choices else f"field.{name}.choices"),
                         "field '%(name)s': every choice needs a label", name=name)
        for bound in ("min", "min_exclusive", "max"):
            if bound in spec and not is_number(spec[bound]):
                problems.add(str(path), line_at(text, f"field.{name}.{bound}"),
                             "field '%(name)s': %(bound)s must be a number", name=name, bound=bound)
        default = spec.get("default")
        if default is not None and not _valid_default(kind, default, choices, spec):
            problems.add(str(path), line_at(text, f"field.{name}.default"),
                         "field '%(name)s': the default %(value)s is not a valid value", name=name, value=repr(default))
        fields[name] = ProfileField(name, kind, str(spec.get("label", name)), spec.get("default"), choices, labels,
                                    spec.get("min"), spec.get("min_exclusive"), spec.get("max"),
                                    spec.get("none_label"), bool(spec.get("cards", False)))
        if spec.get("cards") and kind != "number":
            problems.add(str(path), line_at(text, f"field.{name}.cards"),
                         "field '%(name)s': only a number field may take a card's name (its VRAM)", name=name)
    return fields


def _valid_default(kind: str, value: Any, choices: tuple[str, ...], spec: dict[str, Any]) -> bool:
    if kind == "choice":
        return value in choices
    if kind == "bool":
        return isinstance(value, bool)
    if not is_number(value) or (kind == "integer" and value != int(value)):
        return False
    return not ((spec.get("min") is not None and value < spec["min"])
                or (spec.get("min_exclusive") is not None and value <= spec["min_exclusive"])
                or (spec.get("max") is not None and value > spec["max"]))


def _consistency(base: Path, texts: dict[str, str], fields: dict[str, ProfileField], requirements: dict[str, Any],
                 timing: dict[str, Any], ranking: dict[str, Any], problems: Problems) -> None:
    """Every method and budget the profile accepts has its figures in the other files.

    ``texts`` holds the text of each file by name ("requirements"), for the lines.
    """
    def file(name: str) -> str:
        return str(base / f"{name}.toml")

    methods = fields["method"].choices if "method" in fields else ()
    for method in methods:
        if method not in requirements["table"] and method != "qlora":
            problems.add(file("requirements"), line_at(texts["requirements"], "table"), "table '%(method)s' is missing",
                         method=method)
        tables = [("floor_bytes_per_param", requirements["floor"], "requirements")] + [
            (f"stack.{stack}.utilization", spec["utilization"], "timing") for stack, spec in timing["stack"].items()]
        for key, table, name in tables:
            if method not in table:
                problems.add(file(name), line_at(texts[name], key), "[%(key)s] needs a number for '%(method)s'", key=key,
                             method=method)
    for stack in fields["stack"].choices if "stack" in fields else ():
        if stack not in timing["stack"]:
            problems.add(file("timing"), line_at(texts["timing"], "stack"), "[stack.%(stack)s] is missing",
                         stack=stack)
    for budget in fields["budget"].choices if "budget" in fields else ():
        if budget not in ranking["budget_weights"]:
            problems.add(file("ranking"), line_at(texts["ranking"], "budget_weights"),
                         "[budget_weights] '%(budget)s' needs numbers cost and time", budget=budget)
    profile = texts["profile"]
    for name in ("method", "budget", "purpose"):
        if name in fields and fields[name].type != "choice":
            problems.add(file("profile"), line_at(profile, f"field.{name}.type"),
                         "field '%(name)s': type must be one of %(known)s", name=name, known="choice")
    for name, spec in fields.items():
        if name not in OPTIONAL_FIELDS and spec.default is None:
            problems.add(file("profile"), line_at(profile, f"field.{name}"), "field '%(name)s' needs a default", name=name)
    for name in ("rocm_ok", "interruptible"):
        if name in fields and fields[name].type != "bool":
            problems.add(file("profile"), line_at(profile, f"field.{name}.type"),
                         "field '%(name)s': type must be one of %(known)s", name=name, known="bool")


def _per_method(path: Path, doc: dict[str, Any], text: str, key: str, problems: Problems,
                methods: Iterable[str] = METHODS) -> dict[str, float]:
    table = doc.get(key)
    if not isinstance(table, dict):
        problems.add(str(path), line_at(text, key), "[%(key)s] is missing", key=key)
        return {}
    for method in methods:
        if not is_number(table.get(method)) or table[method] < 0:
            problems.add(str(path), line_at(text, f"{key}.{method}"), "[%(key)s] needs a number for '%(method)s'",
                         key=key, method=method)
    return {m: float(v) for m, v in table.items() if is_number(v)}


def _requirements(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, Any]:
    tables = {}
    for method, points in doc.get("table", {}).items():
        ok = (isinstance(points, list) and points
              and all(isinstance(p, list) and len(p) == 2 and all(is_number(x) and x > 0 for x in p) for p in points)
              and all(a[0] < b[0] and a[1] <= b[1] for a, b in itertools.pairwise(points)))
        if not ok:
            problems.add(str(path), line_at(text, f"table.{method}"),
                         "table '%(method)s' must list [size, GB] pairs, both growing", method=method)
        else:
            tables[method] = [(float(s), float(g)) for s, g in points]
    qlora = doc.get("qlora", {})
    if qlora.get("of") not in tables or not (is_number(qlora.get("factor")) and 0 < qlora["factor"] <= 1):
        problems.add(str(path), line_at(text, "qlora.of" if qlora.get("of") not in tables else "qlora.factor"),
                     "[qlora] needs 'of' (a table) and a 'factor' between 0 and 1")
    for method in METHODS:
        if method not in tables and method != "qlora":
            problems.add(str(path), line_at(text, "table"), "table '%(method)s' is missing", method=method)
    band = doc.get("class_band")
    if not (is_number(band) and 0 <= band < 1):
        problems.add(str(path), line_at(text, "class_band"), "class_band must be a number from 0 to 1")
    return {
        "table": tables,
        "class_band": band,
        "qlora": qlora,
        "floor": _per_method(path, doc, text, "floor_bytes_per_param", problems),
    }


def _timing(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, Any]:
    def positive(value: Any, key: str, most: float = float("inf")) -> None:
        if not (is_number(value) and 0 < value <= most):
            problems.add(str(path), line_at(text, key), "'%(key)s' must be a number above 0 and at most %(max)s",
                         key=key, max=most)

    for key, value in doc["passes"].items():
        if not (is_number(value) and 0 <= value <= 10):
            problems.add(str(path), line_at(text, f"passes.{key}"), "'%(key)s' must be a number from 0 to 10",
                         key="passes." + key)
    positive(doc["attention_per_pass"], "attention_per_pass", 100)
    for stack, spec in doc["stack"].items():
        utilization = _per_method(path, spec, text, "utilization", problems)
        for method, value in utilization.items():
            positive(value, f"stack.{stack}.utilization.{method}", 1)
        positive(spec["overhead_per_layer_s"], f"stack.{stack}.overhead_per_layer_s", 1)
        positive(spec["moe_efficiency"], f"stack.{stack}.moe_efficiency", 1)
        for key in ("padding_waste", "overlap"):
            name = f"stack.{stack}.{key}"
            if not (is_number(spec[key]) and 0 <= spec[key] <= 1):
                problems.add(str(path), line_at(text, name), "'%(key)s' must be a number from 0 to 1", key=name)
    positive(doc["quantized"]["seconds_per_b"], "quantized.seconds_per_b", 10)
    positive(doc["quantized"]["reference_bandwidth_gbs"], "quantized.reference_bandwidth_gbs", 1_000_000)
    positive(doc["batch"]["global_sequences"], "batch.global_sequences", 1_000_000)
    positive(doc["batch"]["most_micro_batch"], "batch.most_micro_batch", 4096)
    positive(doc["sharding"]["gathers"], "sharding.gathers", 10)
    for link, value in doc["links"]["share"].items():
        if link not in INTERCONNECTS:
            problems.add(str(path), line_at(text, "links.share"), "[links] '%(key)s' is not a link; known: "
                         "%(known)s", key=link, known=", ".join(INTERCONNECTS))
        positive(value, f"links.share.{link}", 1)
    for link in INTERCONNECTS:
        if link not in doc["links"]["share"] and not problems.items:
            problems.add(str(path), line_at(text, "links.share"), "[links] share needs the link '%(key)s'", key=link)
    if "default" not in doc["links"]["between_nodes_gbs"]:
        problems.add(str(path), line_at(text, "links.between_nodes_gbs"), "[links] between_nodes_gbs needs 'default'")
    for key, value in doc["links"]["between_nodes_gbs"].items():
        positive(value, f"links.between_nodes_gbs.{key}", 100_000)
    positive(doc["bandwidth"]["reference_flops_per_byte"], "bandwidth.reference_flops_per_byte", 100_000)
    positive(doc["bandwidth"]["exponent"], "bandwidth.exponent", 5)
    shares = _per_method(path, doc, text, "vendor_share", problems, VENDORS)
    for vendor, value in shares.items():
        positive(value, f"vendor_share.{vendor}", 1)
    positive(doc["unknown_card"]["bf16_tflops"], "unknown_card.bf16_tflops", 100_000)
    positive(doc["calibration"]["tolerance"], "calibration.tolerance", 10)
    return {"passes": doc["passes"], "attention_per_pass": doc["attention_per_pass"], "stack": doc["stack"],
            "quantized": doc["quantized"], "batch": doc["batch"], "sharding": doc["sharding"], "links": doc["links"],
            "bandwidth": doc["bandwidth"], "vendor_share": shares, "unknown_card": doc["unknown_card"],
            "own": doc["own"], "calibration": doc["calibration"]}


def _ranking(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, Any]:
    counts = doc.get("counts")
    if not (isinstance(counts, list) and counts and counts[0] == 1
            and all(isinstance(c, int) and c > 0 for c in counts) and counts == sorted(set(counts))):
        problems.add(str(path), line_at(text, "counts"), "counts must be growing whole numbers starting at 1")
    strategy = doc.get("strategy", {})
    for key in ("single", "replicated", "sharded"):
        if not isinstance(strategy.get(key), str):
            problems.add(str(path), line_at(text, f"strategy.{key}"), "[strategy] needs '%(key)s'", key=key)
        elif strategy[key] not in STRATEGY_KINDS[key]:
            problems.add(str(path), line_at(text, f"strategy.{key}"), "[strategy] '%(key)s' must be one of %(known)s",
                         key=key, known=", ".join(STRATEGY_KINDS[key]))
    prices = _per_method(path, doc, text, "class_price", problems, COSTS)
    weights = doc.get("budget_weights", {})
    for budget in ("low", "medium", "high"):
        entry = weights.get(budget, {})
        if not all(is_number(entry.get(k)) and entry[k] >= 0 for k in ("cost", "time")):
            problems.add(str(path), line_at(text, f"budget_weights.{budget}"),
                         "[budget_weights] '%(budget)s' needs numbers cost and time", budget=budget)
    setup = doc["billing"]["setup_hours"]
    if not (is_number(setup) and 0 <= setup <= 24):
        problems.add(str(path), line_at(text, "billing.setup_hours"), "'%(key)s' must be a number from 0 to 24",
                     key="billing.setup_hours")
    return {"counts": counts, "strategy": strategy, "class_price": prices, "setup_hours": setup,
            "budget_weights": weights}


def _labels(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, dict[str, str]]:
    for table in ("basis", "strategy", "where", "pricing", "cost", "vendor"):
        if not isinstance(doc.get(table), dict):
            problems.add(str(path), line_at(text, table), "[%(table)s] is missing", table=table)
    return {name: {k: str(v) for k, v in table.items()} for name, table in doc.items() if isinstance(table, dict)}


_RULE_KEYS = ("id", "kind", "derive", "step", "section", "heuristics", "gaps", "when", "message", "factor",
              "opposes", "overrides", "summary")


def _rules(path: Path, doc: dict[str, Any], text: str, sections: dict[str, Section], recipes: dict[str, Any],
           problems: Problems) -> tuple[RuleDef, ...]:
    rules: list[RuleDef] = []
    seen: set[str] = set()
    ladders = recipes.get("ladder", {})
    steps = {entry["step"] for ladder in ladders.values() for entry in ladder} | set(OFF_LADDER)
    first_steps = {ladder[0]["step"] for ladder in ladders.values() if ladder}
    for index, entry in enumerate(doc.get("rule", [])):
        line = line_at(text, f"rule[{index + 1}]")
        rule_id = entry.get("id")
        where = rule_id if isinstance(rule_id, str) else f"#{index + 1}"

        def bad(at: str, template: str, index: int = index, where: str = where, **params: Any) -> None:
            problems.add(str(path), line_at(text, f"rule[{index + 1}].{at}"), template, rule=where, **params)

        for key in entry:
            if key not in _RULE_KEYS:
                bad(key, "unknown key '%(key)s' (known: %(known)s)", key=key, known=", ".join(_RULE_KEYS))
        if not isinstance(rule_id, str) or not ID_RE.match(rule_id):
            bad("id", "id must be kebab-case")
        elif rule_id in seen:
            bad("id", "duplicate id")
        seen.add(str(rule_id))
        kind = entry.get("kind")
        if kind not in KINDS:
            bad("kind", "kind must be one of %(known)s", known=", ".join(KINDS))
            continue
        derive = entry.get("derive")
        if (kind == "derive") != (derive is not None) or (derive is not None and derive not in HELPERS):
            bad("derive", "a derive rule names one helper of %(known)s; other kinds name none", known=", ".join(HELPERS))
            continue
        step = entry.get("step")
        if (kind == "configure") != (step is not None) or (step is not None and step not in steps):
            bad("step", "a configure rule names one step of %(known)s (recipes.toml); other kinds name none",
                known=", ".join(sorted(steps)))
            continue
        proposes = step in first_steps
        factor = entry.get("factor")
        if (kind == "prefer") != (factor is not None) or (factor is not None and not (is_number(factor) and factor >= 0)):
            bad("factor", "a prefer rule needs a factor >= 0; other kinds have none")
            factor = None
        section = entry.get("section")
        if section not in sections:
            bad("section", "cites unknown section '%(section)s' (known: %(known)s)", section=section,
                known=", ".join(sections))
        heuristics = entry.get("heuristics", [])
        gaps = entry.get("gaps", [])
        if not heuristics or not all(isinstance(h, str) and H_RE.match(h) for h in heuristics):
            bad("heuristics", "heuristics must list H-ids from H1 to H39")
        if not all(isinstance(g, str) and G_RE.match(g) for g in gaps):
            bad("gaps", "gaps must list G-ids")
        scope = SCOPES[scope_key(kind, derive, proposes, step)]
        condition = TRUE
        if "when" in entry:
            try:
                condition = compile_condition(str(entry["when"]), {ns: FIELDS[ns] for ns in scope})
            except ConditionError as error:
                bad("when", "%(error)s", error=str(error))
        message = entry.get("message")
        if not isinstance(message, str) or not message.strip():
            bad("message", "message is missing")
            continue
        visible = scope + ((DERIVES[derive],) if derive in DERIVES else ()) + (
            ("proposal",) if kind == "configure" else ())
        for name in PLACEHOLDER_RE.findall(message):
            namespace, _, attr = name.partition("_")
            allowed = set(FIELDS.get(namespace, {})) | EXTRA_PLACEHOLDERS.get(namespace, set())
            if namespace not in visible or attr not in allowed:
                bad("message", "placeholder '%(name)s' is not a field this rule can see", name=name)
        links = {}
        for key in ("opposes", "overrides"):
            value = entry.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                bad(key, "%(key)s must list rule ids", key=key)
                value = []
            links[key] = tuple(value)
        in_summary = entry.get("summary", True)
        if not isinstance(in_summary, bool) or (not in_summary and kind not in ("advice", "warning")):
            bad("summary", "summary = false is for advice and warnings only (their note is left out of the summary form)")
            in_summary = True
        rules.append(RuleDef(str(rule_id), kind, str(section), tuple(heuristics), tuple(gaps), condition,
                             message, None if factor is None else float(factor), derive, index, str(path), line,
                             links["opposes"], links["overrides"], step, proposes, in_summary))
    if not rules:
        problems.add(str(path), line_at(text, "rule"), "no [[rule]] tables")
    ids = {rule.id for rule in rules}
    taken = [rule.step for rule in rules if rule.step]
    for step in sorted(steps):
        if taken.count(step) != 1:
            # at the second rule that takes it; a step no rule takes is the file's problem
            second = [rule for rule in rules if rule.step == step][1:2]
            problems.add(str(path), line_at(text, f"rule[{second[0].index + 1}].step") if second else 0,
                         "step '%(step)s' of recipes.toml needs exactly one configure rule", step=step)
    for rule in rules:
        for key in ("opposes", "overrides"):
            for other in getattr(rule, key):
                if other not in ids:
                    problems.add(str(path), line_at(text, f"rule[{rule.index + 1}].{key}"),
                                 "rule '%(rule)s': refers to undefined rule '%(other)s'", rule=rule.id, other=other)
    return tuple(rules)


def _recipes(path: Path, doc: dict[str, Any], text: str, estimator: dict[str, Any], stacks: tuple[str, ...],
             problems: Problems) -> dict[str, Any]:
    """The recipes and the ladder of each method, checked against each other,
    the estimator's optimizers and timing.toml's ``stacks``."""
    recipes: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(doc.get("recipe", [])):
        where = entry.get("id")

        def bad(key: str, template: str, index: int = index, recipe: str = where, **params: Any) -> None:
            problems.add(str(path), line_at(text, f"recipe[{index + 1}].{key}"), template, id=recipe, **params)

        if where in recipes or not ID_RE.match(str(where)):
            bad("id", "recipe id '%(id)s' must be unique kebab-case")
            continue
        problems_before = len(problems.items)
        if entry.get("method") not in METHODS:
            bad("method", "recipe '%(id)s': method must be one of %(known)s", known=", ".join(METHODS))
        if entry.get("precision") not in estimator.get("optimizer", {}):
            bad("precision", "recipe '%(id)s': precision must be one of %(known)s",
                known=", ".join(estimator.get("optimizer", {})))
        elif entry.get("optimizer") not in estimator["optimizer"][entry["precision"]]:
            bad("optimizer", "recipe '%(id)s': optimizer must be one of %(known)s",
                known=", ".join(estimator["optimizer"][entry["precision"]]))
        if entry.get("base_bits") not in (16, 8, 4):
            bad("base_bits", "recipe '%(id)s': base_bits must be 16, 8 or 4")
        if "stack" in entry and entry["stack"] not in stacks:
            bad("stack", "recipe '%(id)s': stack must be one of %(known)s", known=", ".join(stacks))
        if not (is_number(entry.get("time_factor")) and 0 < entry["time_factor"] <= 100):
            bad("time_factor", "recipe '%(id)s': time_factor must be a number above 0 and at most 100")
        if len(problems.items) == problems_before:
            recipes[str(where)] = dict(entry)
    for where, recipe in recipes.items():
        twin = recipes.get(str(recipe.get("fp16")))
        if "fp16" in recipe and (twin is None or twin["method"] != recipe["method"] or twin["precision"] != "fp16"):
            problems.add(str(path), line_at(text, "recipe"), "recipe '%(id)s': fp16 must name an fp16 recipe of its "
                         "method", id=where)
    ladders: dict[str, list[dict[str, Any]]] = {}
    for method in METHODS:
        ladder = doc.get("ladder", {}).get(method)
        if not ladder:
            problems.add(str(path), line_at(text, f"ladder.{method}"), "[ladder] needs steps for '%(method)s'",
                         method=method)
            continue
        for n, entry in enumerate(ladder):
            line = line_at(text, f"ladder.{method}[{n + 1}]")
            named = recipes.get(entry["recipe"])
            if named is None or named["method"] != method:
                problems.add(str(path), line, "[ladder] %(method)s: '%(recipe)s' is not a recipe for %(method)s",
                             method=method, recipe=entry["recipe"])
            if entry["spread"] not in SPREADS:
                problems.add(str(path), line, "[ladder] %(method)s: spread must be one of %(known)s", method=method,
                             known=", ".join(SPREADS))
            if not ID_RE.match(entry["step"]) or entry["step"] in OFF_LADDER:
                problems.add(str(path), line, "[ladder] %(method)s: step '%(step)s' must be kebab-case and not "
                             "'%(reserved)s'", method=method, step=entry["step"], reserved=" or ".join(OFF_LADDER))
        names = [entry["step"] for entry in ladder]
        if len(set(names)) != len(names):
            again = next(n for n, name in enumerate(names) if name in names[:n])
            problems.add(str(path), line_at(text, f"ladder.{method}[{again + 1}]"),
                         "[ladder] %(method)s: a step is listed twice", method=method)
        ladders[method] = list(ladder)
    first = next(iter(ladders.values()))[0]["step"] if ladders else None
    odd = [f"ladder.{method}[{n + 1}]" for method, ladder in ladders.items() for n, entry in enumerate(ladder)
           if (n == 0) != (entry["step"] == first)]
    if odd:
        problems.add(str(path), line_at(text, odd[0]), "[ladder] every method starts with the same step, and only there")
    margin = doc.get("fit", {}).get("margin")
    if not (is_number(margin) and 0 <= margin < 0.5):
        problems.add(str(path), line_at(text, "fit.margin"), "[fit] margin must be a number from 0 to 0.5")
    return {"recipe": recipes, "ladder": ladders, "margin": margin}

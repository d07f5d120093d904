"""JSON Schemas of the input and the output, and tool definitions for LLM APIs.

The input schema is built from the profile definition (``rules/profile.toml``,
through the loaded knowledge base): the same source as the type annotations
of ``expert/profile_types.py``. The output schema requires the keys of the
JSON contract (PRODUCT.md, docs/library.md) and lets the objects that grow
(a recommendation, the profile, the requirement, the result) carry more.
``expert schema --what input|output|tools`` prints them.
"""

from __future__ import annotations

from typing import Any

from .kb import KnowledgeBase, ProfileField

SCHEMA_VERSION = "1.0"
DETAILS = ("full", "summary")
JSON_SCHEMA = "https://json-schema.org/draft/2020-12/schema"
MAX_TEXT = 100      # the longest text a value may be (expert/profile.py)

_KIND = {
    "size": "Parameters of the model in billions: a number, or text such as \"70B\" or \"Llama-3-8B\".",
    "hours": "Hours: a number, or text such as \"8h\" or \"2 days\".",
    "number": "GB: a number, or text such as \"24 GB\", or a card's name such as \"RTX 3090\".",
    "amount": "A number, such as 1 or 2.5.",
    "integer": "A whole number, or text such as \"10k\".",
}


def field_schema(spec: ProfileField) -> dict[str, Any]:
    """The JSON Schema of one profile field's value (null: not given)."""
    if spec.type == "choice":
        value: dict[str, Any] = {"type": "string", "enum": list(spec.choices)}
    elif spec.type == "bool":
        value = {"type": "boolean"}
    else:
        number: dict[str, Any] = {"type": "integer" if spec.type == "integer" else "number"}
        if spec.min is not None:
            number["minimum"] = spec.min
        if spec.min_exclusive is not None:
            number["exclusiveMinimum"] = spec.min_exclusive
        if spec.max is not None:
            number["maximum"] = spec.max
        value = {"anyOf": [number, {"type": "string", "minLength": 1, "maxLength": MAX_TEXT}]}
    description = spec.label[:1].upper() + spec.label[1:] + "."
    if spec.type in _KIND:
        description += " " + _KIND[spec.type]
    if spec.default is not None:
        description += f" Default: {spec.default!r}."
    elif spec.none_label:
        description += " Null or \"no\": none."
    schema = {"anyOf": [value, {"type": "null"}]} if "anyOf" not in value else {
        "anyOf": value["anyOf"] + [{"type": "null"}]}
    return {"description": description, **schema}


def profile_properties(kb: KnowledgeBase) -> dict[str, Any]:
    return {name: field_schema(spec) for name, spec in kb.fields.items()}


LANG = {"type": "string", "enum": ["en", "es"],
        "description": "Language of every text and error message (default: English)."}
DETAIL = {"type": "string", "enum": list(DETAILS), "default": "summary",
          "description": "summary: the pick, alternatives, advice and warnings (a few KB); full: everything, "
                         "with the trace of the rules that fired."}


def input_schema(kb: KnowledgeBase) -> dict[str, Any]:
    """The input of a consultation: the profile fields, ``lang`` and ``basis``."""
    return {
        "$schema": JSON_SCHEMA,
        "title": "expert input",
        "description": "A consultation's profile: every field is optional; a missing one takes its default "
                       "and the result lists it under 'assumed'.",
        "type": "object",
        "properties": {
            **profile_properties(kb),
            "lang": LANG,
            "basis": {"type": "string", "enum": ["checked", "guide", "estimate"], "default": "checked",
                      "description": "How configurations are sized."},
        },
        "additionalProperties": False,
    }


# --- output -------------------------------------------------------------------

def _object(required: list[str], properties: dict[str, Any], more: bool = True) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": properties, "additionalProperties": more}


_STR = {"type": "string"}
_STRS = {"type": "array", "items": _STR}
_NUM = {"type": "number"}
_NUM_OR_NULL = {"type": ["number", "null"]}
_NOTE = _object(["id", "rules", "text"], {"id": _STR, "rules": _STRS, "text": _STR})
_RECIPE = _object(
    ["strategy", "precision", "optimizer", "base_bits", "checkpointing", "offload"],
    {"id": _STR, "strategy": _STR, "precision": _STR, "optimizer": _STR, "base_bits": {"type": "integer"},
     "checkpointing": {"type": "boolean"}, "offload": {"type": "boolean"}})


def _recommendation(summary: bool) -> dict[str, Any]:
    properties = {
        "rank": {"type": "integer", "minimum": 1},
        "gpu": {"type": "string", "description": "A catalog id, or \"own\" for the person's own card."},
        "name": _STR, "count": {"type": "integer", "minimum": 1}, "vram_gb": _NUM,
        "strategy": _STR, "where": _STR, "pricing": {"type": ["string", "null"]},
        "hours": _NUM_OR_NULL,
        "cost": {"description": "What the option costs (its shape grows: a level, or an object "
                                "with currency, per_hour, total, pricing)."},
        "meets_deadline": {"type": ["boolean", "null"]}, "recipe": _RECIPE,
        "devices": {"type": "integer", "minimum": 1}, "per_device_gb": _NUM,
        "host_ram_gb": _NUM_OR_NULL, "rules": _STRS, "text": _STR,
    }
    if summary:
        del properties["recipe"]
        properties["recipe_id"] = {"type": "string", "description": "The recipe's id (rules/recipes.toml)."}
    required = ["gpu", "count", "vram_gb", "strategy", "text"]
    if not summary:
        required += ["rules", "recipe", "devices", "per_device_gb", "host_ram_gb", "hours", "cost"]
    return _object(required, properties)


def result_schema(kb: KnowledgeBase, detail: str) -> dict[str, Any]:
    """The JSON of ``Result.to_dict(detail)``."""
    summary = detail == "summary"
    profile = _object(list(kb.fields), {name: {} for name in kb.fields})
    common = {
        "schema_version": {"type": "string", "const": SCHEMA_VERSION},
        "detail": {"type": "string", "const": detail},
        "lang": {"type": "string", "enum": ["en", "es"]},
        "profile": profile,
        "assumed": {"type": "array", "items": {"type": "string", "enum": list(kb.fields)}},
        "requirement": _object(["vram_gb", "text"], {"vram_gb": _NUM, "text": _STR}),
        "recommendations": {"type": "array", "items": _recommendation(summary)},
        "advice": {"type": "array", "items": _NOTE},
        "warnings": {"type": "array", "items": _NOTE},
    }
    if summary:
        note = _object(["id", "text"], {"id": _STR, "text": _STR})
        common["advice"] = common["warnings"] = {"type": "array", "items": note}
        common["more_recommendations"] = {"type": "integer", "minimum": 0,
                                          "description": "Options left out of the summary."}
        return {"title": "expert result (summary)", **_object(list(common), common)}
    full = {
        **common,
        "rejected": {"type": "array", "items": _object(["gpu", "rules", "text"],
                                                       {"gpu": _STR, "name": _STR, "rules": _STRS, "text": _STR})},
        "trace": {"type": "array", "items": _object(
            ["rule", "cites", "matched", "derived"],
            {"rule": _STR, "kind": _STR, "cites": {"type": "object"}, "heuristics": _STRS,
             "matched": {"type": "array", "items": {"type": "object"}},
             "derived": {"type": "array", "items": {"type": "object"}}, "text": _STR})},
    }
    return {"title": "expert result", **_object(list(full), full)}


def output_schema(kb: KnowledgeBase) -> dict[str, Any]:
    """The JSON of ``advise(...).to_dict(detail)``, either detail."""
    return {
        "$schema": JSON_SCHEMA,
        "title": "expert result",
        "description": "What `expert advise --format json` prints and Result.to_dict() returns; "
                       "'detail' says which form.",
        "oneOf": [{"$ref": "#/$defs/full"}, {"$ref": "#/$defs/summary"}],
        "$defs": {"full": result_schema(kb, "full"), "summary": result_schema(kb, "summary")},
    }


# --- tools --------------------------------------------------------------------

def _card(kb: KnowledgeBase) -> dict[str, Any]:
    ids = ", ".join(card.id for card in kb.catalog)
    return {"type": "string", "maxLength": MAX_TEXT, "description": f"A catalog card id ({ids}) or \"own\"."}


_TEXT = {"type": "string", "maxLength": 1000, "description": "What the person said, as they said it."}
_PRICES = {"type": "object", "maxProperties": 100,
           "additionalProperties": {"anyOf": [{"type": "number", "minimum": 0, "maximum": 1000},
                                              {"type": "string", "maxLength": MAX_TEXT}]},
           "description": "What you pay per card-hour (USD), by catalog card id, instead of the catalog's "
                          "indicative prices: {\"<card id>\": 2.4}."}


def _gpu(kb: KnowledgeBase) -> dict[str, Any]:
    ids = [card.id for card in kb.catalog] + [card.id for card in kb.owned]
    return {"type": "string", "enum": ids, "description": "The card, for the training time: a catalog card or "
                                                           "one people own (default: the reference card's speed)."}


def _params(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def tool_specs(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """The tools of `expert mcp`, neutral: name, description, JSON Schema of the parameters."""
    profile = profile_properties(kb)
    consultation = {"type": "string", "minLength": 1, "maxLength": 64,
                    "description": "The id that consultation_start returned."}
    return [
        {"name": "advise",
         "description": "Recommend GPUs for fine-tuning a large language model, with the reasons "
                        "(a rule-based expert system citing a practical guide). Every field is optional.",
         "parameters": _params({**profile, "prices": _PRICES, "lang": LANG, "detail": DETAIL})},
        {"name": "explain",
         "description": "Explain a recommendation: HOW each option was reached, WHY NOT a card "
                        "(why_not), and WHAT IF some answers changed (what_if).",
         "parameters": _params({**profile, "why_not": _card(kb),
                                "what_if": {**_params(profile), "description": "Fields and their new values."},
                                "prices": _PRICES, "lang": LANG})},
        {"name": "estimate",
         "description": "Estimate from first principles the GPU memory a fine-tuning run needs "
                        "(weights, gradients, optimizer state, activations), per GPU and in all, and how long "
                        "it trains on a card (gpu, dataset_examples, tokens_per_example, epochs).",
         "parameters": _params({
             "model_size_b": profile["model_size_b"], "method": profile["method"],
             "gpus": {"type": "integer", "minimum": 1, "maximum": 4096},
             "strategy": {"type": "string", "enum": ["single", "ddp", "zero1", "zero2", "zero3", "fsdp"]},
             "offload": {"type": "boolean"}, "checkpointing": {"type": "boolean"},
             "seq_len": {"type": "integer", "minimum": 1, "maximum": 1000000},
             "batch": {"type": "integer", "minimum": 1, "maximum": 4096},
             "optimizer": {"type": "string", "maxLength": 40},
             "precision": {"type": "string", "enum": ["mixed", "bf16"]},
             "base_bits": {"type": "integer", "enum": [16, 8, 4]},
             "lora_rank": {"type": "integer", "minimum": 1, "maximum": 4096},
             "gpu": _gpu(kb), "dataset_examples": profile["dataset_examples"],
             "tokens_per_example": profile["tokens_per_example"], "epochs": profile["epochs"],
             "lang": LANG})},
        {"name": "models",
         "description": "The open models the knowledge base knows by name (rules/models.toml): total and "
                        "active parameters, architecture and sources; names filter them (\"qwen3\", "
                        "\"llama 3.1\").",
         "parameters": _params({"names": {"type": "array", "maxItems": 10,
                                          "items": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT}}})},
        {"name": "consultation_start",
         "description": "Start a consultation that asks the questions that matter, one at a time. "
                        "Facts already known may be given, as fields or as the person's opening message "
                        "(text). Returns its id, what was understood, and the first question.",
         "parameters": _params({**profile, "text": _TEXT, "lang": LANG})},
        {"name": "consultation_tell",
         "description": "Give a consultation a free-text message in English or Spanish (\"Mistral-7B with "
                        "LoRA on my 3090, by tomorrow\"): every answer recognised in it is taken. Returns "
                        "what was understood and the next question still open.",
         "parameters": _params({"consultation_id": consultation, "text": _TEXT},
                               ["consultation_id", "text"])},
        {"name": "consultation_answer",
         "description": "Answer the current question of a consultation, as the person typed it "
                        "(\"70B\", \"lora\", \"24 GB\", \"no\"). Returns the next question, or done.",
         "parameters": _params({"consultation_id": consultation,
                                "answer": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT}},
                               ["consultation_id", "answer"])},
        {"name": "consultation_back",
         "description": "Undo the last answer of a consultation; returns the question again.",
         "parameters": _params({"consultation_id": consultation}, ["consultation_id"])},
        {"name": "consultation_result",
         "description": "The recommendation of a consultation from its answers so far (defaults for "
                        "the rest).",
         "parameters": _params({"consultation_id": consultation, "detail": DETAIL}, ["consultation_id"])},
        {"name": "launch",
         "description": "The files that run a recommended configuration (docs/launch.md): a TRL training "
                        "script with its accelerate (and DeepSpeed) config, or a torchtune command, a README "
                        "and pinned requirements. Returns their contents; nothing is written on the server. "
                        "option is the rank (default 1, the pick); model the local path or Hugging Face id "
                        "the files load.",
         "parameters": _params({**profile, "prices": _PRICES, "lang": LANG,
                                "option": {"type": "integer", "minimum": 1, "maximum": 100},
                                "model": {"type": "string", "minLength": 1, "maxLength": 300}})},
    ]


def tools(kb: KnowledgeBase, shape: str) -> list[dict[str, Any]]:
    """Tool definitions in the shape an LLM API takes: ``mcp`` or ``openai``."""
    specs = tool_specs(kb)
    if shape == "mcp":
        return [{"name": s["name"], "description": s["description"], "inputSchema": s["parameters"]}
                for s in specs]
    return [{"type": "function", "function": {"name": s["name"], "description": s["description"],
                                              "parameters": s["parameters"]}} for s in specs]

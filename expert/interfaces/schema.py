"""JSON Schemas of the input and the output, and tool definitions for LLM APIs.

The input schema is built from the profile definition (``rules/profile.toml``,
through the loaded knowledge base): the same source as the type annotations
of ``expert/input/profile_types.py``. The output schema requires the keys of the
JSON contract (PRODUCT.md, docs/library.md) and lets the objects that grow
(a recommendation, the profile, the requirement, the result) carry more.
``expert schema --what input|output|tools`` prints them.
"""

from __future__ import annotations

from typing import Any

from ..explanation.result import DETAILS, SCHEMA_VERSION
from ..i18n import SUPPORTED
from ..inference.estimate import PRECISIONS, STRATEGIES
from ..knowledge import KnowledgeBase, ProfileField

JSON_SCHEMA = "https://json-schema.org/draft/2020-12/schema"
MAX_TEXT = 100      # the longest text a value may be (expert/input/profile.py)

_KIND = {
    "size": "Billions (7, \"70B\") or a model name (\"Llama-3-8B\").",
    "hours": "Hours (8) or text (\"2 days\", \"1 week\").",
    "number": "GB (24), or a card's name (\"RTX 3090\").",
    "integer": "Or text (\"10k\").",
}


def field_schema(spec: ProfileField, compact: bool = False) -> dict[str, Any]:
    """The JSON Schema of one profile field's value (null or left out: not given).
    Compact, for the tool definitions a chat model reads: choices also take
    their labels and aliases (the value reader), which the schema does not list."""
    if spec.type == "choice":
        value: dict[str, Any] = {"enum": list(spec.choices)}
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
        value = {"type": [number["type"], "string"]}
        if not compact:
            value.update({k: v for k, v in number.items() if k != "type"}, maxLength=MAX_TEXT)
    description = spec.label[:1].upper() + spec.label[1:] + "."
    if spec.type in _KIND:
        description += " " + _KIND[spec.type]
    if spec.default is None and spec.none_label:
        description += " \"no\": none."
    schema = {"description": description, **value}
    if spec.default is not None:
        schema["default"] = spec.default
    return schema


def profile_properties(kb: KnowledgeBase, nullable: bool = False) -> dict[str, Any]:
    """The profile fields' schemas; ``nullable``: null also stands for "not given"."""
    if not nullable:
        return {name: field_schema(spec, compact=True) for name, spec in kb.fields.items()}
    properties = {}
    for name, spec in kb.fields.items():
        schema = field_schema(spec)
        properties[name] = {"description": schema.pop("description"), "anyOf": [schema, {"type": "null"}]}
    return properties


LANG = {"enum": list(SUPPORTED), "description": "Language of texts and errors (default en)."}
DETAIL = {"enum": list(DETAILS), "default": "summary",
          "description": "summary (a few KB, for chat) or full (with the trace of the rules)."}


def input_schema(kb: KnowledgeBase) -> dict[str, Any]:
    """The input of a consultation: the profile fields, ``lang`` and ``basis``."""
    return {
        "$schema": JSON_SCHEMA,
        "title": "expert input",
        "description": "A consultation's profile: every field is optional; a missing one takes its default "
                       "and the result lists it under 'assumed'.",
        "type": "object",
        "properties": {
            **profile_properties(kb, nullable=True),
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
    ["strategy", "precision", "optimizer", "base_bits", "checkpointing", "offload", "micro_batch",
     "gradient_accumulation_steps", "global_batch"],
    {"id": _STR, "strategy": _STR, "precision": _STR, "optimizer": _STR, "base_bits": {"type": "integer"},
     "checkpointing": {"type": "boolean"}, "offload": {"type": "boolean"},
     "micro_batch": {"type": "integer", "minimum": 1, "description": "Sequences per device per forward pass."},
     "gradient_accumulation_steps": {"type": "integer", "minimum": 1},
     "global_batch": {"type": "integer", "minimum": 1,
                      "description": "Sequences per optimizer step across all devices."},
     "optimizer_in_backward": {"type": "boolean"}, "framework": {"type": ["string", "null"]},
     "offload_params": {"type": "boolean", "description": "Present, true, when the weights are offloaded to CPU "
                        "memory (FSDP cpu_offload)."}})


_GB = {"type": "number", "minimum": 0}
_SETUP = _object(
    ["method", "strategy", "devices", "precision", "optimizer", "base_bits", "lora_rank", "seq_len", "micro_batch",
     "checkpointing", "offload", "stack", "given"],
    {"method": _STR, "strategy": _STR, "devices": {"type": "integer", "minimum": 1}, "precision": _STR,
     "optimizer": _STR, "base_bits": {"type": "integer"},
     "lora_rank": {"type": ["integer", "null"], "minimum": 1, "description": "null for full fine-tuning."},
     "seq_len": {"type": "integer", "minimum": 1, "description": "Tokens per sequence the memory is sized for."},
     "micro_batch": {"type": "integer", "minimum": 1}, "checkpointing": {"type": "boolean"},
     "offload": {"type": "boolean"}, "stack": _STR,
     "given": {"type": "array", "items": {"enum": ["seq_len", "micro_batch", "lora_rank", "checkpointing"]},
               "description": "The settings the person fixed; the rules chose the others."}})
_MEMORY = _object(
    ["weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "overhead_gb", "estimate_gb", "per_device_gb",
     "device_gb", "parts_gib", "estimate_gib", "per_device_gib", "device_memory_gib"],
    {"weights_gb": _GB, "gradients_gb": _GB, "optimizer_gb": _GB, "activations_gb": _GB, "overhead_gb": _GB,
     "estimate_gb": {**_GB, "description": "The parts' sum, per device (GB: 10^9 bytes)."},
     "per_device_gb": {**_GB, "description": "What the option is sized by (the estimate rounded up, or the "
                                             "guide's share under basis guide), in GB (10^9 bytes)."},
     "device_gb": {**_GB, "description": "Each device's size as the card is sold (GiB)."},
     "parts_gib": {"type": "object", "description": "The parts in GiB (2^30 bytes), the unit shown: weights, "
                   "gradients, optimizer, activations, overhead.",
                   "additionalProperties": _GB},
     "estimate_gib": {**_GB, "description": "The parts' sum, per device, in GiB."},
     "per_device_gib": {**_GB, "description": "What the option is sized by, in GiB: the figure shown and "
                                              "compared with the device's memory."},
     "device_memory_gib": {**_GB, "description": "Each device's memory as its driver reports it, in GiB."}})


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
        "devices": {"type": "integer", "minimum": 1},
        "per_device_gb": {**_NUM, "description": "What each device needs, in GB (10^9 bytes)."},
        "host_ram_gb": {**_NUM_OR_NULL, "description": "Host RAM the offloaded or paged state needs, in GB."},
        "per_device_gib": {**_NUM, "description": "What each device needs, in GiB (2^30 bytes): the figure "
                                                  "shown and compared with device_memory_gib."},
        "host_ram_gib": {**_NUM_OR_NULL, "description": "Host RAM the offloaded or paged state needs, in GiB."},
        "device_memory_gib": {**_NUM, "description": "Each device's memory as its driver reports it, in GiB."},
        "rules": _STRS, "text": _STR,
        "setup": {**_SETUP, "description": "The recipe as run, as the memory was sized for it."},
        "memory": {**_MEMORY, "description": "What each device holds, part by part (GB and GiB)."},
    }
    if summary:
        del properties["recipe"], properties["setup"], properties["memory"]
        properties["recipe_id"] = {"type": "string", "description": "The recipe's id (rules/recipes.toml)."}
    required = ["gpu", "count", "vram_gb", "strategy", "text"]
    if not summary:
        required += ["rules", "recipe", "devices", "per_device_gb", "host_ram_gb", "per_device_gib", "host_ram_gib",
                     "device_memory_gib", "hours", "cost", "setup", "memory"]
    return _object(required, properties)


def result_schema(kb: KnowledgeBase, detail: str) -> dict[str, Any]:
    """The JSON of ``Result.to_dict(detail)``."""
    summary = detail == "summary"
    profile = _object(list(kb.fields), {name: {} for name in kb.fields})
    common = {
        "schema_version": {"type": "string", "const": SCHEMA_VERSION},
        "detail": {"type": "string", "const": detail},
        "lang": {"type": "string", "enum": list(SUPPORTED)},
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
        common["more_advice"] = {"type": "integer", "minimum": 1,
                                 "description": "Advice left out to keep the summary under 3,000 bytes."}
        common["more_warnings"] = {"type": "integer", "minimum": 1,
                                   "description": "Warnings left out to keep the summary under 3,000 bytes."}
        return {"title": "expert result (summary)",
                **_object([k for k in common if k not in ("more_advice", "more_warnings")], common)}
    full = {
        **common,
        "rejected": {"type": "array", "items": _object(["gpu", "rules", "text"],
                                                       {"gpu": _STR, "name": _STR, "rules": _STRS, "text": _STR})},
        "rejected_together": {"type": "array", "items": _NOTE,
                              "description": "One line for all the cards a rule rules out together (no provider "
                                             "rents them); their texts in rejected leave it out."},
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
# Written short: every tool definition together is read by the chat model on
# every turn (docs/mcp.md states the size; tests/test_mcp.py holds it under
# TOOLS_BYTES). The value reader accepts more than the schemas list: labels in
# both languages, aliases of values and of argument names (rules/vocabulary.toml).
TOOLS_BYTES = 10_000


def _card(kb: KnowledgeBase) -> dict[str, Any]:
    return {"type": "string", "maxLength": MAX_TEXT,
            "description": "A card id of this consultation (a recommendation's gpu, or \"own\")."}


_TEXT = {"type": "string", "maxLength": 1000, "description": "The person's words, as said (en or es)."}
def _prices(kb: KnowledgeBase) -> dict[str, Any]:
    example = kb.catalog[0].id if kb.catalog else "<card id>"
    return {"type": "object", "maxProperties": 100,
            "additionalProperties": {"type": ["number", "string"], "minimum": 0, "maximum": 1000,
                                     "maxLength": MAX_TEXT},
            "description": f"USD you pay per card-hour, by card id: {{\"{example}\": 1.8}}."}


def _gpu(kb: KnowledgeBase) -> dict[str, Any]:
    return {"type": "string", "maxLength": MAX_TEXT,
            "description": "Card for the training time: a catalog id or a card people own (rtx-3080)."}


def _params(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _settings() -> dict[str, Any]:
    """The settings a person may fix instead of the rules, as parameters (bounds: expert/input/settings.py)."""
    from ..input.settings import BOUNDS

    found: dict[str, Any] = {name: {"type": "integer", "minimum": low, "maximum": high}
                             for name, (low, high) in BOUNDS.items()}
    found["checkpointing"] = {"type": "boolean"}
    return found


def tool_specs(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """The tools of `expert mcp`, neutral: name, description, JSON Schema of the parameters."""
    profile = profile_properties(kb)
    # explain, estimate, consultation_start and launch take the same fields: described once, in advise
    # (the description and the default, annotations; the types and choices are checked in every tool)
    bare = {name: {k: v for k, v in schema.items() if k not in ("description", "default")}
            for name, schema in profile.items()}
    consultation = {"type": "string", "minLength": 1, "maxLength": 64, "description": "From consultation_start."}
    settings = _settings()      # what the person may fix instead of the rules (expert/input/settings.py)
    # advise, explain and launch take the same profile, settings and prices, so that what advise answered
    # is what explain explains and launch writes (round five: explain and launch took neither)
    prices = {k: v for k, v in _prices(kb).items() if k != "description"}
    plain = settings
    return [
        {"name": "advise",
         "description": "Recommend GPUs for fine-tuning an LLM, with reasons (rules citing a practical "
                        "guide). All fields optional; model, vram, gpu, deadline are aliases; seq_len, batch, "
                        "lora_rank, checkpointing: fixed instead of chosen.",
         "parameters": _params({**profile, **settings, "prices": _prices(kb), "lang": LANG, "detail": DETAIL})},
        {"name": "explain",
         "description": "Explain a recommendation: how it was reached, why not a card (why_not), what if "
                        "answers changed (what_if). Fields as in advise.",
         "parameters": _params({**bare, **settings, "why_not": _card(kb),
                                "what_if": {"type": "object", "maxProperties": 11,
                                            "description": "Fields of advise and their new values."},
                                "prices": _prices(kb), "lang": LANG, "detail": DETAIL})},
        {"name": "estimate",
         "description": "First-principles memory per GPU of a fine-tuning run (weights, gradients, optimizer, "
                        "activations) and its training time on a card and stack. Fields as in advise.",
         "parameters": _params({
             "model_size_b": bare["model_size_b"], "method": bare["method"],
             "gpus": {"type": "integer", "minimum": 1, "maximum": 4096},
             "strategy": {"enum": list(STRATEGIES)},
             "offload": {"type": "boolean"}, "offload_params": {"type": "boolean"},
             "checkpointing": plain["checkpointing"], "seq_len": plain["seq_len"], "batch": plain["batch"],
             "optimizer": {"type": "string", "maxLength": 40},
             "precision": {"enum": list(PRECISIONS)},
             "base_bits": {"enum": [16, 8, 4]},
             "lora_rank": plain["lora_rank"],
             "gpu": _gpu(kb), "dataset_examples": bare["dataset_examples"],
             "tokens_per_example": bare["tokens_per_example"], "epochs": bare["epochs"],
             "stack": bare["stack"], "lang": LANG})},
        {"name": "models",
         "description": "Open models known by name: total and active parameters, architecture, sources.",
         "parameters": _params({"names": {"type": "array", "maxItems": 10,
                                          "items": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
                                          "description": "Filters, such as [\"qwen3\", \"llama 3.1\"]."}})},
        {"name": "consultation_start",
         "description": "Start a consultation that asks only what matters; known facts as fields or as the "
                        "person's message (text). Returns its id and the first question.",
         "parameters": _params({**bare, "text": _TEXT, "lang": LANG})},
        {"name": "consultation_tell",
         "description": "The person's message (\"Mistral-7B with LoRA on my 3090\"): what it says is "
                        "taken; returns what was understood and the next question.",
         "parameters": _params({"consultation_id": consultation, "text": _TEXT},
                               ["consultation_id", "text"])},
        {"name": "consultation_answer",
         "description": "Answer the current question as typed (\"70B\", \"lora\", \"24 GB\", \"no\").",
         "parameters": _params({"consultation_id": consultation,
                                "answer": {"type": ["string", "number", "boolean"], "maxLength": MAX_TEXT}},
                               ["consultation_id", "answer"])},
        {"name": "consultation_back",
         "description": "Undo the last answer; the question is asked again.",
         "parameters": _params({"consultation_id": consultation}, ["consultation_id"])},
        {"name": "consultation_result",
         "description": "The recommendation from the answers so far (defaults for the rest).",
         "parameters": _params({"consultation_id": consultation, "detail": DETAIL}, ["consultation_id"])},
        {"name": "launch",
         "description": "Launch files (contents only) of option `option` (default 1) of advise's answer; "
                        "fields as in advise; model: the path or Hugging Face id they load.",
         "parameters": _params({**bare, **settings, "prices": prices, "lang": LANG,
                                "option": {"type": "integer", "minimum": 1, "maximum": 100},
                                "model": {"type": "string", "minLength": 1, "maxLength": 300}})},
    ]


def expected(schema: dict[str, Any], tr: Any) -> str:
    """What a parameter's schema accepts, in words, in the user's language."""
    _ = tr.gettext
    types = {"string": _("text"), "integer": _("a whole number"), "number": _("a number"),
             "boolean": _("true or false"), "array": _("a list"), "object": _("an object of names and values"),
             "null": "null"}
    if "enum" in schema:
        return _("one of %(values)s") % {"values": tr.list([str(v) for v in schema["enum"]], style="or")}
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    words = tr.list([types.get(kind, kind) for kind in kinds], style="or")
    if "items" in schema:
        words = _("a list of %(items)s") % {"items": expected(schema["items"], tr)}
    if "minimum" in schema and "maximum" in schema:
        words += " " + _("from %(min)s to %(max)s") % {"min": schema["minimum"], "max": schema["maximum"]}
    return words


def check_arguments(spec: dict[str, Any], arguments: Any, kb: KnowledgeBase, tr: Any) -> dict[str, Any]:
    """A tool's arguments checked against its own schema: an argument given
    under a declared alias (rules/vocabulary.toml [aliases.arguments]) is
    renamed; an unknown one, a missing required one or one of the wrong type
    raises InputError naming it and listing what is accepted. Profile fields
    are left to the value reader (expert/input/profile.py), which also takes labels
    and aliases the schema does not list. Returns the arguments by their names."""
    from ..errors import InputError
    from ..escape import quoted
    from ..input.profile import shown
    from ..input.values import argument, read_choice
    from ..knowledge.vocabulary import vocabulary

    _ = tr.gettext
    parameters = spec["parameters"]
    properties = parameters["properties"]
    accepted = ", ".join(properties)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InputError("arguments", _("The arguments of %(tool)s are an object of names and values; accepted: "
                                        "%(accepted)s.") % {"tool": spec["name"], "accepted": accepted})
    vocab = vocabulary(kb)
    named: dict[str, Any] = {}
    for name, value in arguments.items():
        target = argument(str(name), properties, vocab)
        if target not in properties:
            raise InputError(shown(str(name))[:40], _("%(argument)s: not an argument of %(tool)s; accepted: "
                                               "%(accepted)s.") % {"argument": shown(str(name)),
                                                                   "tool": spec["name"], "accepted": accepted})
        if target in named and value is not None and named[target] is not None:
            raise InputError(target, _("%(argument)s: given twice, as %(field)s and as %(alias)s; give one.")
                             % {"argument": target, "field": target, "alias": shown(str(name))})
        if value is not None or target not in named:
            named[target] = value
    for name in parameters.get("required", []):
        if named.get(name) is None:
            raise InputError(name, _("%(argument)s: missing; %(tool)s needs %(required)s.") % {
                "argument": name, "tool": spec["name"], "required": tr.list(parameters["required"])})
    import jsonschema

    for name, value in list(named.items()):
        schema = properties[name]
        if value is None:
            continue
        if name in kb.fields:
            if not isinstance(value, (str, int, float, bool)):
                raise InputError(name, _("%(argument)s: '%(value)s' is not accepted; expected %(expected)s.") % {
                    "argument": name, "value": quoted(value, 40), "expected": _("a number, text or true/false")})
            continue
        if "enum" in schema and isinstance(value, str):   # "EN", "Summary", "resumen": the value reader
            words = {str(v): str(v) for v in schema["enum"]}
            words.update({w: v for v, ws in vocab.value_aliases.get(name, {}).items() for w in ws if v in words})
            value = named[name] = read_choice(value, words) or value
        if not jsonschema.Draft202012Validator(schema).is_valid(value):
            raise InputError(name, _("%(argument)s: '%(value)s' is not accepted; expected %(expected)s.") % {
                "argument": name, "value": quoted(value, 60), "expected": expected(schema, tr)})
    return named


SHAPES = ("mcp", "openai", "anthropic")


def tools(kb: KnowledgeBase, shape: str) -> list[dict[str, Any]]:
    """Tool definitions in the shape an LLM API takes: ``mcp``, ``openai`` or
    ``anthropic`` (the Messages API's ``input_schema``)."""
    specs = tool_specs(kb)
    if shape == "mcp":
        return [{"name": s["name"], "description": s["description"], "inputSchema": s["parameters"]}
                for s in specs]
    if shape == "anthropic":
        return [{"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
                for s in specs]
    return [{"type": "function", "function": {"name": s["name"], "description": s["description"],
                                              "parameters": s["parameters"]}} for s in specs]

"""The shape of every file of ``rules/``: each file is checked against its
schema (:data:`SCHEMAS`, by :func:`check_shape`) before anything reads it,
so a value of the wrong type is a message with its file and line, not a crash.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .records import (
    METHODS,
)
from .source import LazyLine, Problems, line_at

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
               "stack": {"*": {"utilization": {"*": float}, "overhead_per_step_s": float, "overhead_per_layer_s": float,
                               "sharded_overhead_per_layer_s": float, "dequantize_s_per_b": float,
                               "padding_waste": float, "moe_efficiency": float,
                               "moe_efficiency_unsharded": float, "overlap": float,
                               "optimizer_bandwidth_share": float}},
               "optimizer_step": {"bytes": {"*": {"*": float}}, "cpu_params_per_s": float, "shown_from": float},
               "quantized": {"reference_bandwidth_gbs": float},
               "batch": {"global_sequences": int, "most_micro_batch": int},
               "bandwidth": {"reference_flops_per_byte": float, "exponent": float}, "vendor_share": {"*": float},
               "sharding": {"gathers": float},
               "links": {"share": {"*": float}, "between_nodes_gbs": {"*": float}, "compare_nvlink_gbs": float},
               "host_link": {"lane_gbs": {"*": float}, "share": float, "default": {"pcie": int, "lanes": int},
                             "card": {"*": {"pcie": int, "lanes": int}}},
               "unknown_card": {"bf16_tflops": float},
               "card_class": {"*": {"cards": [str], "sustained": float, "runs": [str], "source": str}},
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
    "ranking": {"counts": [int], "shown": int, "strategy": {"single": str, "replicated": str, "sharded": str},
                "class_price": {"*": float}, "billing": {"setup_hours": float},
                "budget_weights": {"*": {"cost": float, "time": float}}},
    "labels": {"*": {"*": str}},
    "recipes": {"fit": {"margin": float}, "own_fit": {"sequences": [int]},
                "offload_params": {"host_ram_per_device_gib": float},
                "recipe": [{"id": str, "method": str, "precision": str, "optimizer": str, "base_bits": int,
                            "checkpointing": bool, "offload": bool, "offload_params?": bool, "optimizer_in_backward?": bool,
                            "step_in_time_factor?": bool,
                            "framework?": str, "stack?": str, "needs_bf16?": bool, "single_device?": bool, "sharded_as?": str, "lean?": bool, "fp16?": str, "time_factor": float,
                            "source": str}],
                "ladder": {"*": [{"step": str, "recipe": str, "spread": str}]}},
    "rules": {"stage": [{"id": str, "sees": [str], "trials?": str}],
              "rule": [{"id": str, "kind": str, "stage": str, "then?": str, "step?": str, "section": str, "heuristics": [str],
                        "gaps?": [str], "when?": str, "by?": [str], "message": str, "factor?": float, "opposes?": [str],
                        "overrides?": [str], "summary?": bool, "brief?": bool,
                        "together?": bool, "names_closest?": bool}]},
    "explain": {"change": [{"field": str, "value": ANY}]},
    "questions": {"question": [{"field": str, "ask_if?": str, "text": str, "hint?": str, "why": str,
                                "which_text?": str, "which_hint?": str}]},
    "owned": {"ignore?": [str], "form_factors?": [str], "examples": [str], "card": [{"*": ANY}], "unsupported?": [{"*": ANY}]},
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
        "loss": {"logits_bytes": {"*": float}},
        "overhead": {"per_gpu_mib": float},
        "sharding": {"gathered_layers": float, "fragmentation": float, "checkpointed_extra": float,
                     "working_floor_mib": float, "working_floor_16bit_mib": float,
                     "root_unit_covered_mib": float},
        "typical": {"seq_len": int, "batch": int, "checkpointing": bool, "lora_rank": int, "optimizer": str,
                    "precision": str, "base_bits": dict.fromkeys(METHODS, int)},
        "setup": [{"id": str, "optimizer?": str, "precision?": str, "offload?": bool, "base_bits?": int,
                   "optimizer_in_backward?": bool,
                   "methods": [str]}],
        "published": [{"id": str, "source": str, "date": str, "model": ANY, "method": str, "gpu": str, "count": int,
                       "strategy": str, "offload": str, "seq_len": int, "batch": int, "lora_rank": int, "precision?": str,
                       "peak?": float, "unit?": str, "filled?": bool, "examples?": int, "seconds?": float,
                       "tokens_per_example?": int, "checkpointing?": bool, "sequences_per_step?": int,
                       "stack?": str, "memory_why?": str, "time_why?": str}],
        "published_machine?": [{"id": str, "runs": [str], "link_gbs": float, "source": str}],
        "shape": [{"size_b": float, "name": str, "hidden": int, "layers": int, "heads": int, "kv_heads": int,
                   "ffn": int, "vocab": int, "tied?": bool}],
    },
}


def check_shape(value: Any, schema: Any, where: str, path: Path, text: str, problems: Problems) -> bool:
    """Check ``value`` against ``schema``; report each mismatch at ``where``."""
    if schema is ANY:
        return True
    if schema is float:
        # an int of any length is finite (math.isfinite cannot take one past 1e308)
        good = ((isinstance(value, int) and not isinstance(value, bool))
                or (isinstance(value, float) and math.isfinite(value)))
    elif schema is int:
        good = isinstance(value, int) and not isinstance(value, bool)
    elif not isinstance(schema, (list, dict)):
        good = isinstance(value, schema)
    else:
        return _check_container(value, schema, where, path, text, problems)
    if not good:
        line: Any = LazyLine(text, where)
        if schema is str:
            problems.add(str(path), line, "'%(key)s' must be text", key=where)
        elif schema is int:
            problems.add(str(path), line, "'%(key)s' must be a whole number", key=where)
        elif schema is float:
            problems.add(str(path), line, "'%(key)s' must be a number", key=where)
        else:
            problems.add(str(path), line, "'%(key)s' must be true or false", key=where)
    return good


def _check_container(value: Any, schema: list[Any] | dict[str, Any], where: str, path: Path, text: str,
                     problems: Problems) -> bool:
    """check_shape() for a list or table ``schema``."""
    line: Any = LazyLine(text, where)
    if isinstance(schema, list):
        if not isinstance(value, list):
            problems.add(str(path), line, "'%(key)s' must be a list", key=where)
            return False
        # A list, not a generator: every item is checked, so every problem is reported.
        return all([check_shape(item, schema[0], f"{where}[{n + 1}]", path, text, problems)  # noqa: C419
                    for n, item in enumerate(value)])
    if not isinstance(value, dict):
        problems.add(str(path), line, "'%(key)s' must be a table", key=where or path.stem)
        return False
    ok = True
    if "*" in schema:
        for name, item in value.items():
            ok &= check_shape(item, schema["*"], f"{where}.{name}" if where else name, path, text, problems)
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
        ok &= check_shape(value[bare], item_schema, full, path, text, problems)
    return ok

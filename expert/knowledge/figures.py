"""The files of figures, each checked beyond its shape and made into what the
inference reads: ``models.toml`` (the model table), ``estimator.toml``,
``requirements.toml``, ``timing.toml``, ``ranking.toml`` and ``recipes.toml``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .catalog import INTERCONNECTS
from .records import (
    COSTS,
    ID_RE,
    METHODS,
    OFF_LADDER,
    SPREADS,
    VENDORS,
    ModelDef,
    name_key,
)
from .source import Problems, is_number, line_at

# What each strategy of ranking.toml may be: the estimator knows these, and
# they place the weights as the configuration rules expect.
STRATEGY_KINDS = {"single": ("single",), "replicated": ("ddp", "zero1", "zero2"), "sharded": ("zero3", "fsdp")}


_MOE_KEYS = ("experts", "experts_per_token", "expert_ffn")


def checked_models(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> tuple[ModelDef, ...]:
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


def checked_estimator(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, Any]:
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
    first_at: dict[str, int] = {}
    for index, run in enumerate(doc.get("published", ())):
        # a run is cited by its id (docs, tests, [[published_machine]]): a second row of the same id would be
        # held or left apart unseen
        if run["id"] in first_at:
            problems.add(str(path), line_at(text, f"published[{index + 1}].id"),
                         "published run id '%(id)s' must be unique: it is already used by run %(first)s",
                         id=run["id"], first=first_at[run["id"]])
        else:
            first_at[run["id"]] = index + 1
        if run.get("precision", typical["precision"]) not in doc["optimizer"]:
            problems.add(str(path), line_at(text, f"published[{index + 1}].precision"),
                         "published run '%(id)s': precision must be one of %(known)s", id=run["id"],
                         known=", ".join(doc["optimizer"]))
    # Sizes, byte counts and allowances: the estimate multiplies and divides by them.
    constants = [(f"bytes.{k}", v) for k, v in doc["bytes"].items()]
    constants += [(f"optimizer.{p}.{k}", v) for p in ("mixed", "bf16", "fp16") for k, v in doc["optimizer"][p].items()]
    constants += [("paged.host_bytes", doc["paged"]["host_bytes"])]
    constants += [(f"activations.{k}", v) for k, v in doc["activations"].items()]
    constants += [(f"loss.logits_bytes.{k}", v) for k, v in doc["loss"]["logits_bytes"].items()]
    constants += [("overhead.per_gpu_mib", doc["overhead"]["per_gpu_mib"]),
                  ("sharding.gathered_layers", doc["sharding"]["gathered_layers"]),
                  ("sharding.fragmentation", doc["sharding"]["fragmentation"]),
                  ("sharding.checkpointed_extra", doc["sharding"]["checkpointed_extra"]),
                  ("sharding.working_floor_mib", doc["sharding"]["working_floor_mib"]),
                  ("sharding.working_floor_16bit_mib", doc["sharding"]["working_floor_16bit_mib"]),
                  ("sharding.root_unit_covered_mib", doc["sharding"]["root_unit_covered_mib"])]
    constants += [(f"typical.{k}", typical[k]) for k in ("seq_len", "batch", "lora_rank")]
    for key, value in constants:
        if not (is_number(value) and value >= 0) or (key.startswith("typical.") and value < 1):
            problems.add(str(path), line_at(text, key), "'%(key)s' must not be negative (typical sizes at least 1)",
                         key=key)
    return doc


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


def checked_requirements(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, Any]:
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


def checked_timing(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, Any]:
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
        positive(spec["dequantize_s_per_b"], f"stack.{stack}.dequantize_s_per_b", 10)
        positive(spec["moe_efficiency"], f"stack.{stack}.moe_efficiency", 1)
        positive(spec["moe_efficiency_unsharded"], f"stack.{stack}.moe_efficiency_unsharded", 1)
        positive(spec["optimizer_bandwidth_share"], f"stack.{stack}.optimizer_bandwidth_share", 1)
        # fixed times may be nil (a stack whose micro-step costs nothing per layer), never negative
        for key in ("overhead_per_step_s", "overhead_per_layer_s", "sharded_overhead_per_layer_s", "padding_waste",
                    "overlap"):
            name = f"stack.{stack}.{key}"
            if not (is_number(spec[key]) and 0 <= spec[key] <= 1):
                problems.add(str(path), line_at(text, name), "'%(key)s' must be a number from 0 to 1", key=name)
    positive(doc["quantized"]["reference_bandwidth_gbs"], "quantized.reference_bandwidth_gbs", 1_000_000)
    positive(doc["batch"]["global_sequences"], "batch.global_sequences", 1_000_000)
    positive(doc["batch"]["most_micro_batch"], "batch.most_micro_batch", 4096)
    positive(doc["sharding"]["gathers"], "sharding.gathers", 10)
    for precision, table in doc["optimizer_step"]["bytes"].items():
        for optimizer, value in table.items():
            positive(value, f"optimizer_step.bytes.{precision}.{optimizer}", 1000)
    positive(doc["optimizer_step"]["cpu_params_per_s"], "optimizer_step.cpu_params_per_s", 1e15)
    positive(doc["optimizer_step"]["shown_from"], "optimizer_step.shown_from", 1)
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
    positive(doc["links"]["compare_nvlink_gbs"], "links.compare_nvlink_gbs", 100_000)
    positive(doc["bandwidth"]["reference_flops_per_byte"], "bandwidth.reference_flops_per_byte", 100_000)
    positive(doc["bandwidth"]["exponent"], "bandwidth.exponent", 5)
    shares = _per_method(path, doc, text, "vendor_share", problems, VENDORS)
    for vendor, value in shares.items():
        positive(value, f"vendor_share.{vendor}", 1)
    host = doc["host_link"]
    for generation, value in host["lane_gbs"].items():
        positive(value, f"host_link.lane_gbs.{generation}", 100)
    positive(host["share"], "host_link.share", 1)
    for name, link in [("default", host["default"])] + [(f"card.{k}", v) for k, v in host["card"].items()]:
        if str(link["pcie"]) not in host["lane_gbs"]:
            problems.add(str(path), line_at(text, f"host_link.{name}"), "[host_link] %(key)s: PCIe generation %(value)s is "
                         "not one of lane_gbs", key=name, value=link["pcie"])
        positive(link["lanes"], f"host_link.{name}.lanes", 32)
    positive(doc["unknown_card"]["bf16_tflops"], "unknown_card.bf16_tflops", 100_000)
    for name, spec in doc["card_class"].items():
        positive(spec["sustained"], f"card_class.{name}.sustained", 1)
    positive(doc["calibration"]["tolerance"], "calibration.tolerance", 10)
    return {"passes": doc["passes"], "attention_per_pass": doc["attention_per_pass"], "stack": doc["stack"],
            "quantized": doc["quantized"], "batch": doc["batch"], "optimizer_step": doc["optimizer_step"],
            "sharding": doc["sharding"], "links": doc["links"],
            "bandwidth": doc["bandwidth"], "vendor_share": shares, "host_link": doc["host_link"],
            "unknown_card": doc["unknown_card"], "card_class": doc["card_class"],
            "own": doc["own"], "calibration": doc["calibration"]}


def checked_ranking(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, Any]:
    counts = doc.get("counts")
    if not (isinstance(counts, list) and counts and counts[0] == 1
            and all(isinstance(c, int) and c > 0 for c in counts) and counts == sorted(set(counts))):
        problems.add(str(path), line_at(text, "counts"), "counts must be growing whole numbers starting at 1")
    shown = doc["shown"]
    if not 2 <= shown <= 10:
        problems.add(str(path), line_at(text, "shown"), "'%(key)s' must be a whole number from 2 to 10", key="shown")
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
    return {"counts": counts, "shown": shown, "strategy": strategy, "class_price": prices, "setup_hours": setup,
            "budget_weights": weights}


def checked_recipes(path: Path, doc: dict[str, Any], text: str, estimator: dict[str, Any], stacks: tuple[str, ...],
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
        if "sharded_as" in entry and entry["sharded_as"] not in STRATEGY_KINDS["sharded"]:
            bad("sharded_as", "recipe '%(id)s': sharded_as must be one of %(known)s",
                known=", ".join(STRATEGY_KINDS["sharded"]))
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
    sequences = doc["own_fit"]["sequences"]
    if sequences != sorted(sequences, reverse=True) or any(seq < 1 for seq in sequences):
        problems.add(str(path), line_at(text, "own_fit.sequences"),
                     "[own_fit] sequences must be positive, longest first")
    if not doc["offload_params"]["host_ram_per_device_gib"] > 0:
        problems.add(str(path), line_at(text, "offload_params.host_ram_per_device_gib"),
                     "'%(key)s' must not be negative (typical sizes at least 1)", key="offload_params.host_ram_per_device_gib")
    return {"recipe": recipes, "ladder": ladders, "margin": margin, "own_fit": doc["own_fit"],
            "offload_params": doc["offload_params"]}

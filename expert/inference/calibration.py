"""The time model against ``timing.toml`` [calibration]: the guide's anchors,
published throughput and speed ratios, each with what the model predicts
(``scripts/calibration.py``, docs/calibration.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..knowledge import Card, KnowledgeBase
from .estimate import estimate, shape_for, typical
from .requirement import named_card
from .time_model import host_traffic, recipe_step, run_time, throughput


def calibration(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """The time model against timing.toml [calibration]: the guide's anchors
    (hours, on the typical stack), published throughput (tokens per GPU per
    second, each on its own stack) and speed ratios, each with what the model
    predicts, the published figure and whether the prediction is within
    tolerance. Rows whose cards are not in ``kb``'s catalog are left out."""
    spec = kb.timing["calibration"]
    tolerance = spec["tolerance"]
    default_stack = str(kb.fields["stack"].default)
    rows = []

    def rate(card: Card, count: int, method: str, recipe_id: str, strategy: str, size: float, seq: int, *,
             stack: str = default_stack, model: str | None = None, micro_batch: int = 1,
             checkpointing: bool | None = None, active_b: float | None = None) -> float:
        """Tokens per second per card."""
        recipe = kb.recipes["recipe"][recipe_id]
        found = kb.model(model) if model else None
        shape = found.shape() if found else shape_for(kb, size)
        total = found.params_b if found else size
        active = found.active_b if found else (active_b or size)
        host_s = 0.0
        devices = count * card.devices
        setup = typical(kb, total, method, shape, precision=recipe["precision"], optimizer=recipe["optimizer"],
                        base_bits=recipe["base_bits"], checkpointing=recipe["checkpointing"],
                        offload=recipe["offload"], seq_len=seq, batch=micro_batch,
                        optimizer_in_backward=bool(recipe.get("optimizer_in_backward")))
        memory = estimate(kb, setup)
        if recipe["optimizer"].startswith("paged") and devices == 1:  # states paged at every step
            host_s = host_traffic(kb, card.fact(), memory.cpu_gb, memory.per_gpu_gb)["seconds"]
        # The optimizer step, once per timing.toml [batch] global_sequences (the sources' own global batch
        # is not what our answers run), or every micro-step when it is fused into the backward pass.
        stepping = recipe_step(kb, recipe, trainable_b=memory.trainable_b,
                               strategy="fsdp" if strategy == "sharded" else "ddp", card=card.fact(), count=count,
                               devices=devices, micro_batch=micro_batch)
        speed = throughput(kb, card.fact(), count, count * card.devices, strategy == "sharded", stack=stack,
                           method=method, shape=shape, total_b=total, active_b=active, seq=seq,
                           micro_batch=micro_batch,
                           checkpointing=recipe["checkpointing"] if checkpointing is None else checkpointing,
                           time_factor=recipe["time_factor"], base_bits=recipe["base_bits"], host_s=host_s,
                           optimizer=stepping)
        return speed["tokens_per_second"] / count

    for entry in spec["anchor"]:
        card = kb.card(entry["gpu"])
        if card is None:
            continue
        per_card = rate(card, entry["count"], entry["method"], entry["recipe"], entry["strategy"],
                        entry["model_size_b"], int(kb.fields["tokens_per_example"].default))
        run_tokens = entry["dataset_examples"] * kb.fields["tokens_per_example"].default * kb.fields["epochs"].default
        predicted = run_tokens / (per_card * entry["count"]) / 3600
        low, high = entry["hours"]
        rows.append({"kind": "anchor", "id": entry["id"], "stack": default_stack, "unit": "hours",
                     "predicted": predicted, "published": [low, high], "ratio": None,
                     "holds": low / tolerance <= predicted <= high * tolerance, "source": entry["source"]})
    for entry in spec["measurement"]:
        card = kb.card(entry["gpu"])
        if card is None:
            continue
        predicted = rate(card, entry["count"], entry["method"], entry["recipe"], entry["strategy"],
                         entry["model_size_b"], entry["seq_len"], stack=entry["stack"], model=entry.get("model"),
                         micro_batch=entry["micro_batch"], checkpointing=entry.get("checkpointing"))
        published = entry["tokens_per_second"]
        # predicted time over published time: above 1, the model is slower than the run
        ratio = published / predicted
        rows.append({"kind": "measurement", "id": entry["id"], "stack": entry["stack"], "unit": "tokens/s per GPU",
                     "predicted": predicted, "published": [published, published], "ratio": ratio,
                     "holds": 1 / tolerance <= ratio <= tolerance, "source": entry["source"]})
    for entry in spec.get("moe", []):
        card = kb.card(entry["gpu"])
        if card is None:
            continue
        model = kb.model(entry["model"]) if "model" in entry else None
        size = entry.get("size_b") or (model.params_b if model else None)
        dense = kb.model(entry["dense"])
        assert size and dense is not None, "load() checks the models a calibration row names"
        mixture = rate(card, entry["count"], "lora", "lora-16bit", "sharded", size, entry["seq_len"],
                       stack=entry["stack"], model=entry.get("model"), active_b=entry.get("active_b"))
        plain = rate(card, entry["count"], "lora", "lora-16bit", "sharded", dense.params_b, entry["seq_len"],
                     stack=entry["stack"], model=entry["dense"])
        predicted = plain / mixture
        low, high = entry["published"]
        rows.append({"kind": "moe", "id": entry["id"], "stack": entry["stack"], "unit": "time, MoE ÷ dense",
                     "predicted": predicted, "published": [low, high], "ratio": None,
                     "holds": low / tolerance <= predicted <= high * tolerance, "source": entry["source"]})
    for entry in spec["ratio"]:
        faster, slowest = kb.card(entry["faster"]), kb.card(entry["slower"])
        if faster is None or slowest is None:
            continue
        count = entry.get("faster_count", 1)
        strategy = "sharded" if count > 1 else "single"
        stack = entry.get("stack", default_stack)
        predicted = (rate(faster, count, "full", "mixed-adamw", strategy, 7.0, 2048, stack=stack,
                          micro_batch=entry.get("micro_batch", 1)) * count
                     / rate(slowest, 1, "full", "mixed-adamw", "single", 7.0, 2048, stack=stack,
                            micro_batch=entry.get("micro_batch", 1)))
        low, high = entry["published"]
        rows.append({"kind": "ratio", "id": entry["id"], "stack": stack, "unit": "ratio", "predicted": predicted,
                     "published": [low, high], "ratio": None,
                     "holds": low / tolerance <= predicted <= high * tolerance, "source": entry["source"]})
    return rows


def calibration_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per stack, over the published measurements: how many, the geometric
    mean of predicted over published time, and the spread (the geometric
    standard deviation)."""
    summary = {}
    for stack in sorted({row["stack"] for row in rows if row["kind"] == "measurement"}):
        logs = [math.log(row["ratio"]) for row in rows if row["kind"] == "measurement" and row["stack"] == stack]
        mean = sum(logs) / len(logs)
        spread = math.sqrt(sum((x - mean) ** 2 for x in logs) / len(logs))
        summary[stack] = {"count": len(logs), "geometric_mean": math.exp(mean), "spread": math.exp(spread),
                          "within": sum(1 for x in logs if abs(x) <= math.log(1.5)) / len(logs)}
    return summary


# What a configuration fact carries besides its own fields: its card's fields
# (that the rules read), the configuration a step's first trial would replace


GIB = 2**30
UNITS = {"GiB": GIB, "GB": 1e9}


def published_runs(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """The estimate and the time model against estimator.toml [[published]]:
    each run's memory per GPU (bytes, ours and published, their ratio) and,
    where the source timed it, its seconds (ours and published, their ratio);
    with whether the row is held: memory from 1.0 to 1.15 times the published
    peak, time within timing.toml
    [calibration] tolerance, unless the row says why not."""
    tolerance = float(kb.timing["calibration"]["tolerance"])
    links = {run: float(machine["link_gbs"]) for machine in kb.estimator.get("published_machine", ())
             for run in machine["runs"]}
    rows = []
    for entry in kb.estimator.get("published", ()):
        model = kb.model(str(entry["model"])) if isinstance(entry["model"], str) else None
        size = model.params_b if model else float(entry["model"])
        shape = model.shape() if model else None
        setup = typical(kb, size, entry["method"], shape, gpus=entry["count"],
                        strategy=entry["strategy"] if entry["count"] > 1 else "single",
                        offload_params=entry["offload"] == "params", seq_len=entry["seq_len"],
                        batch=entry["batch"], lora_rank=entry["lora_rank"],
                        precision=entry.get("precision", kb.estimator["typical"]["precision"]),
                        checkpointing=entry.get("checkpointing", kb.estimator["typical"]["checkpointing"]))
        card = named_card(kb, entry["gpu"])
        assert card is not None, "checked by tests/test_published_runs.py"
        if entry["id"] in links:  # the source's machine links its cards more slowly than their slots would
            card = replace(card, link_gbs=links[entry["id"]])
        ours = estimate(kb, setup).per_gpu_gb * 1e9
        row: dict[str, Any] = {"id": entry["id"], "source": entry["source"], "date": entry["date"],
                               "setup": setup, "gpu": entry["gpu"], "ours_bytes": ours,
                               "memory_why": entry.get("memory_why"), "time_why": entry.get("time_why"),
                               "filled": bool(entry.get("filled")),
                               "tokens_per_example": entry.get("tokens_per_example"),
                               "link_gbs": links.get(entry["id"])}
        if "peak" in entry:
            peak = float(entry["peak"]) * UNITS[entry["unit"]]
            row.update(peak_bytes=peak, memory_ratio=ours / peak, memory_holds=1.0 <= ours / peak <= 1.15)
        if "seconds" in entry:
            # an unpacked run's examples hold their own mean length (tokens_per_example), its memory the longest
            time = run_time(kb, setup, card, entry["examples"], entry.get("tokens_per_example", entry["seq_len"]), 1,
                            entry["stack"], entry.get("sequences_per_step"))
            predicted = time["hours"] * 3600
            row.update(seconds=float(entry["seconds"]), predicted_seconds=predicted,
                       time_ratio=predicted / float(entry["seconds"]),
                       time_holds=1 / tolerance <= predicted / float(entry["seconds"]) <= tolerance)
        rows.append(row)
    return rows

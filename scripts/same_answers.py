"""Same answers before and after a change to the engine: every consultation of
a fixed, varied set of profiles reduced to what a person is told.

    python scripts/same_answers.py --save before.json     # on the old code
    python scripts/same_answers.py --compare before.json  # on the new code

The profiles (320 by default, seeded): sizes from 0.5B to 405B and models
named (mixtures of experts among them), the three methods, budgets,
deadlines, own cards by memory and by name, ROCm, interruptible, both stacks,
both shipped catalogs, both languages. What is compared, per consultation:
the recommendations in their order (card, count, recipe, hours, cost and
their text), the rejections (card, rules, text), the advice and the warnings
(id and text). The trace is not compared: it is where the reasoning is
written, and a change to the engine may write it differently. Exit status 1
when any consultation differs (each difference printed), 0 when none does.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

from expert import advise
from expert.errors import InputError

MODELS = ["Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Mixtral-8x7B", "Mixtral-8x22B", "Qwen3-30B-A3B",
          "Qwen3-235B-A22B", "DeepSeek-V3", "Qwen2.5-0.5B", "Gemma-3-27B", "Phi-4", "Mistral-7B-v0.3"]
SIZES = [0.5, 1, 1.5, 3, 7, 8, 13, 14, 20, 30, 34, 40, 70, 120, 180, 405]


def profiles(n: int, seed: int = 37) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        case: dict[str, Any] = {"method": rng.choice(["full", "lora", "qlora"]),
                                "budget": rng.choice(["low", "medium", "high"]),
                                "rocm_ok": rng.random() < 0.5, "interruptible": rng.random() < 0.5,
                                "purpose": rng.choice(["experiment", "production"]),
                                "stack": rng.choice(["typical", "tuned"]),
                                "deadline_h": rng.choice([None, None, 1, 4, 8, 24, 72]),
                                "dataset_examples": rng.choice([1000, 10_000, 100_000, 1_000_000]),
                                "lang": rng.choice(["en", "es"])}
        if i % 3 == 0:
            case["model"] = rng.choice(MODELS)
        else:
            case["model_size_b"] = rng.choice(SIZES)
        own = rng.random()
        if own < 0.15:
            case["vram_gb"] = rng.choice([8, 12, 16, 24, 48, 80])
        elif own < 0.25:
            case["vram_gb"] = rng.choice(["RTX 3090", "RTX 4060", "A6000", "A100 80GB", "RTX 4090"])
        if rng.random() < 0.4:
            case["catalog"] = "current"
        cases.append(case)
    return cases


def told(case: dict[str, Any]) -> dict[str, Any]:
    """What a person is told for one profile."""
    try:
        data = advise(**case).to_dict()
    except InputError as error:   # the same refusal before and after is the same answer
        return {"error": str(error)}
    keep = ("gpu", "count", "strategy", "recipe", "hours", "cost", "meets_deadline", "per_device_gb",
            "host_ram_gb", "text", "rank")
    return {"recommendations": [{k: r.get(k) for k in keep} for r in data["recommendations"]],
            "rejected": [{k: r[k] for k in ("gpu", "rules", "text")} for r in data["rejected"]],
            "advice": [{k: a[k] for k in ("id", "text")} for a in data["advice"]],
            "warnings": [{k: w[k] for k in ("id", "text")} for w in data["warnings"]]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--save", metavar="FILE")
    which.add_argument("--compare", metavar="FILE")
    parser.add_argument("--n", type=int, default=320)
    args = parser.parse_args()
    cases = profiles(args.n)
    answers = [told(case) for case in cases]
    if args.save:
        with open(args.save, "w", encoding="utf-8") as fh:
            json.dump({"cases": cases, "answers": answers}, fh, indent=1, ensure_ascii=False)
        print(f"{len(cases)} consultations saved to {args.save}")
        return 0
    with open(args.compare, encoding="utf-8") as fh:
        before = json.load(fh)
    if before["cases"] != json.loads(json.dumps(cases)):
        print("the saved profiles are not this script's: save again with the same --n", file=sys.stderr)
        return 2
    differ = 0
    for case, old, new in zip(cases, before["answers"], answers, strict=True):
        if old != new:
            differ += 1
            print(f"differs: {json.dumps(case, ensure_ascii=False)}")
            for key in ("error", "recommendations", "rejected", "advice", "warnings"):
                if old.get(key) != new.get(key):
                    print(f"  {key}:\n    before {json.dumps(old.get(key), ensure_ascii=False)[:600]}\n"
                          f"    after  {json.dumps(new.get(key), ensure_ascii=False)[:600]}")
    print(f"{len(cases)} consultations, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

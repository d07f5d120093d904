"""The golden explanations: twenty representative consultations, each rendered by
`expert explain` in both languages as text and markdown, and as a JSON
summary a person reads in a diff (English only: the JSON's keys do not change
with the language, its texts are the ones the text goldens show). The full
JSON is checked by its schema (tests/test_schema.py), not by a golden.

Regenerate them after an intended change, then read the diff before
committing it:

    python tests/golden.py && git diff tests/golden
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
FORMATS = {"text": "txt", "markdown": "md", "json": "json"}
LANGS = ("en", "es")
JSON_LANGS = ("en",)
# Markdown (the same explanation through the chat template) for the first few
# cases only: the goldens stay small enough to read (under 500 KB in all).
MARKDOWN_CASES = 5

PARTIAL = str(HERE / "catalogs" / "partial.toml")   # user cards without a speed or a price
CASES: dict[str, dict[str, Any]] = {
    "8b-lora": dict(model_size_b=8, method="lora"),
    "70b-lora-deadline-8": dict(model_size_b=70, method="lora", deadline_h=8),
    "70b-lora-deadline-8-why-not-h100": dict(model_size_b=70, method="lora", deadline_h=8, why_not="h100-80gb"),
    "8b-full-own-24gb": dict(model_size_b="Llama-3-8B", method="full", vram_gb=24),
    # 14B since the units merge (issue 47): 13B LoRA now fits one's own 16 GB card with an 8-bit base (15.1 GiB)
    "14b-lora-own-16gb-low-budget": dict(model_size_b=14, method="lora", vram_gb=16, budget="low"),
    "70b-lora-rocm-low-budget-mi250-at-0.50": dict(model_size_b=70, method="lora", rocm_ok=True, budget="low",
                                                   prices={"mi250": 0.5}),
    "70b-full-production-spot": dict(model_size_b=70, method="full", purpose="production", interruptible=True,
                                     rocm_ok=True),
    "8b-lora-deadline-48-min": dict(model_size_b=8, method="lora", deadline_h="48 min"),
    # 36B: a micro-batch of 1 with little room (34B fits a micro-batch of 2 since issue 47)
    "36b-qlora-own-24gb-tight": dict(model_size_b=36, method="qlora", vram_gb=24),
    "7b-qlora-own-t4-fp16": dict(model_size_b=7, method="qlora", vram_gb="T4"),
    "70b-lora-guide-basis": dict(model_size_b=70, method="lora", basis="guide"),
    "3b-full-1m-deadline-24-h100-at-2.50": dict(model_size_b=3, method="full", dataset_examples=1_000_000,
                                                deadline_h=24, prices={"h100-80gb": 2.5}),
    "405b-full-deadline-12-min": dict(model_size_b=405, method="full", deadline_h="12 min", budget="high"),
    "2000b-full-nothing-fits": dict(model_size_b=2000, method="full"),
    # models named as people write them (rules/models.toml): a mixture of
    # experts, and an unknown name read by the size in it
    "mixtral-8x7b-qlora": dict(model_size_b="Mixtral 8x7B", method="qlora"),
    # issue 20: a larger micro-batch before more cards, one node before four
    "70b-lora-500k-2k-deadline-48": dict(model_size_b="Llama-3.3-70B", method="lora", budget="high",
                                         dataset_examples=500_000, tokens_per_example=2048, deadline_h=48),
    "mymodel-13b-lora": dict(model_size_b="MyModel-13B-Instruct", method="lora"),
    "7b-full-200k-low-budget-what-if-qlora": dict(model_size_b=7, method="full", dataset_examples=200_000,
                                                  budget="low", what_if={"method": "qlora"}),
    "catalog-without-speed": dict(catalog=["guide", PARTIAL], prices={"no-price-80gb": 100}),
    "catalog-without-price": dict(catalog=["guide", PARTIAL]),
    # issue 47: today's market, weighed by default (catalog=None): one B200
    # where the guide's cards alone give four H100s
    "70b-lora-low-budget-market": dict(model_size_b=70, method="lora", budget="low", catalog=None),
    # issue 47: Answer.AI's setup, 70B QLoRA on two RTX 3090s of one's own with the weights in CPU
    # memory (offload-parameters); the guide's RTX 4090s shard it over PCIe (shard-over-pcie)
    "70b-qlora-own-2x3090": dict(model_size_b="Llama-2-70B", method="qlora", vram_gb="2x RTX 3090",
                                 tokens_per_example=2048),
}
# The cases are asked of the guide's cards alone (--catalog guide): its rules
# and its table's cards, read in a diff; a case that names its catalog
# (None: the default, the guide's and today's market) keeps it.
GUIDE = "guide"
MARKET = {"70b-lora-low-budget-market"}


@contextlib.contextmanager
def on_the_command_line() -> Iterator[None]:
    """The goldens are what `expert explain` prints: worded for the command line (its flags), as the CLI
    words them (expert.i18n.WAY_IN), where the library's default names its keywords."""
    from expert.i18n import WAY_IN

    way_in = WAY_IN.set("cli")
    try:
        yield
    finally:
        WAY_IN.reset(way_in)


@functools.lru_cache(maxsize=None)
def explained(case: str, lang: str) -> Any:
    """The explanation of a case (explained once, rendered in every format)."""
    from expert.application import explain

    with on_the_command_line():
        return explain(**{"catalog": GUIDE, **CASES[case]}, lang=lang)


def render(case: str, lang: str, fmt: str) -> str:
    with on_the_command_line():
        if fmt == "json":
            return json.dumps(summary(explained(case, lang).to_dict()), indent=1, ensure_ascii=False) + "\n"
        return explained(case, lang).render(fmt, width=80, color=False)


def goldens() -> list[tuple[str, str, str]]:
    """Every (case, lang, format) with a golden file (the market's case, the
    longest, in English text and JSON only: under the size the goldens keep)."""
    markdown = list(CASES)[:MARKDOWN_CASES]
    return [(case, lang, fmt) for case in CASES for fmt in FORMATS
            for lang in (JSON_LANGS if fmt == "json" else LANGS)
            if (fmt != "markdown" or case in markdown) and not (case in MARKET and lang != "en")]


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """What a reviewer reads of an explanation's JSON: the decisions and the
    rules behind them, one line each; the texts are in the text goldens."""
    def option(r: dict[str, Any]) -> str:
        cost = (r.get("cost") or {}).get("total")
        return (f"{r['rank']}. {r['count']} x {r['gpu']} {r['strategy']} {(r.get('recipe') or {}).get('id')}: "
                f"{r['per_device_gb']} GB/device, {r['hours']} h, {'no cost' if cost is None else f'${cost}'}"
                f" [{' '.join(reason['rule'] for reason in r['reasons'])}]")

    def step(s: dict[str, Any]) -> str:
        gpus = {x["values"].get("gpu") for x in s.get("derived", [])} - {None}
        return " ".join([s["rule"], *sorted(map(str, gpus))])

    out: dict[str, Any] = {
        "profile": {k: v for k, v in data["profile"].items() if v is not None},
        "assumed": data["assumed"],
        "requirement": data["requirement"]["text"],
        "recommendations": [option(r) for r in data["recommendations"]],
        "advice": [a["id"] for a in data["advice"]],
        "warnings": [w["id"] for w in data["warnings"]],
        "rejected": [f"{r['gpu']}: {' '.join(r['rules'])}" for r in data["rejected"]],
        "trace": [step(s) for s in data["trace"]],
    }
    for why in data.get("why_not") or []:
        out.setdefault("why_not", []).append(
            f"{why['gpu']} {why['status']} [{' '.join(r['rule'] for r in why['reasons'])}]"
            + (f": {why['change']['text']}" if why.get("change") else ""))
    if data.get("what_if"):
        out["what_if"] = {"changes": data["what_if"]["changes"], "after": summary(data["what_if"]["after"])}
    return out


def path(case: str, lang: str, fmt: str) -> Path:
    return GOLDEN / f"{case}.{lang}.{FORMATS[fmt]}"


def main() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for stale in GOLDEN.iterdir():
        stale.unlink()
    for case, lang, fmt in goldens():
        path(case, lang, fmt).write_text(render(case, lang, fmt), encoding="utf-8")
    print(f"wrote {len(goldens())} files in {GOLDEN.relative_to(Path.cwd())}", file=sys.stderr)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    main()

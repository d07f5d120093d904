"""The golden explanations: nineteen representative consultations, each rendered by
`expert explain` in both languages and all three formats.

Regenerate them after an intended change, then read the diff before
committing it:

    python tests/golden.py && git diff tests/golden
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
FORMATS = {"text": "txt", "markdown": "md", "json": "json"}
LANGS = ("en", "es")

PARTIAL = str(HERE / "catalogs" / "partial.toml")   # user cards without a speed or a price
CASES: dict[str, dict[str, Any]] = {
    "8b-lora": dict(model_size_b=8, method="lora"),
    "70b-lora-deadline-8": dict(model_size_b=70, method="lora", deadline_h=8),
    "70b-lora-deadline-8-why-not-h100": dict(model_size_b=70, method="lora", deadline_h=8, why_not="h100-80gb"),
    "8b-full-own-24gb": dict(model_size_b="Llama-3-8B", method="full", vram_gb=24),
    "13b-lora-own-16gb-low-budget": dict(model_size_b=13, method="lora", vram_gb=16, budget="low"),
    "70b-lora-rocm-low-budget-mi250-at-0.50": dict(model_size_b=70, method="lora", rocm_ok=True, budget="low",
                                                   prices={"mi250": 0.5}),
    "70b-full-production-spot": dict(model_size_b=70, method="full", purpose="production", interruptible=True,
                                     rocm_ok=True),
    "8b-lora-deadline-48-min": dict(model_size_b=8, method="lora", deadline_h="48 min"),
    "34b-qlora-own-24gb-tight": dict(model_size_b=34, method="qlora", vram_gb=24),
    "7b-qlora-own-t4-fp16": dict(model_size_b=7, method="qlora", vram_gb="T4"),
    "70b-lora-guide-basis": dict(model_size_b=70, method="lora", basis="guide"),
    "3b-full-1m-deadline-24": dict(model_size_b=3, method="full", dataset_examples=1_000_000, deadline_h=24),
    "405b-full-deadline-1": dict(model_size_b=405, method="full", deadline_h=1, budget="high"),
    "20000b-full-nothing-fits": dict(model_size_b=20000, method="full"),
    # models named as people write them (rules/models.toml): a mixture of
    # experts, and an unknown name read by the size in it
    "mixtral-8x7b-qlora": dict(model_size_b="Mixtral 8x7B", method="qlora"),
    "mymodel-13b-lora": dict(model_size_b="MyModel-13B-Instruct", method="lora"),
    "7b-full-200k-low-budget-what-if-qlora": dict(model_size_b=7, method="full", dataset_examples=200_000,
                                                  budget="low", what_if={"method": "qlora"}),
    "catalog-without-speed": dict(catalog=PARTIAL, prices={"no-price-80gb": 100}),
    "catalog-without-price": dict(catalog=PARTIAL),
}


@functools.lru_cache(maxsize=None)
def explained(case: str, lang: str) -> Any:
    """The explanation of a case (explained once, rendered in every format)."""
    from expert.explanation import explain

    return explain(**CASES[case], lang=lang)


def render(case: str, lang: str, fmt: str) -> str:
    return explained(case, lang).render(fmt, width=80, color=False)


def path(case: str, lang: str, fmt: str) -> Path:
    return GOLDEN / f"{case}.{lang}.{FORMATS[fmt]}"


def main() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for stale in GOLDEN.iterdir():
        stale.unlink()
    for case in CASES:
        for lang in LANGS:
            for fmt in FORMATS:
                path(case, lang, fmt).write_text(render(case, lang, fmt), encoding="utf-8")
    print(f"wrote {len(CASES) * len(LANGS) * len(FORMATS)} files in {GOLDEN.relative_to(Path.cwd())}",
          file=sys.stderr)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    main()

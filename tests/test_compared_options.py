"""The advice that sets the pick beside another option names only an option
the one-screen answer shows (rules/ranking.toml ``shown``)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from expert import KnowledgeBaseError, advise, paths
from expert.i18n import Localizer
from expert.knowledge.load import load

COMPARING = ("faster-card-costs-less", "one-strong-card", "long-run-faster-option",
             "own-card-long-run-renting-is-faster")
# Profiles of scripts/same_answers.py (numbers 44, 42, 109 and 189 of its 320) where, before, the
# advice named an option ranked past the four shown: the L40S (20B LoRA), 4 × RTX 4090 (70B QLoRA),
# 1 × B200 (7B LoRA on one's own RTX 3090), 4 × H100 (Mixtral-8x22B QLoRA).
PROFILES = [
    dict(method="lora", budget="medium", interruptible=True, purpose="production", stack="tuned",
         dataset_examples=100_000, model_size_b=20),
    dict(method="qlora", budget="high", interruptible=True, purpose="production", stack="tuned", deadline_h=72,
         dataset_examples=1_000_000, model="Llama-3.1-70B", vram_gb=16),
    dict(method="lora", budget="low", rocm_ok=True, dataset_examples=100_000, model_size_b=7, vram_gb="RTX 3090"),
    dict(method="qlora", budget="low", rocm_ok=True, purpose="production", stack="tuned",
         dataset_examples=1_000_000, model="Mixtral-8x22B"),
]


def named_options(result: Any, text: str) -> set[str]:
    labels = {f"{rec.count} × {rec.name}" for rec in result.recommendations if rec.gpu != "own"}
    return {label for label in labels if re.search(re.escape(label) + r"(?!\w)", text)}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_comparison_names_only_an_option_the_answer_shows(profile: dict[str, Any]) -> None:
    result = advise(lang="en", **profile)
    shown = {f"{rec.count} × {rec.name}" for rec in result.shown()}
    said = [note for note in result.advice if note.id in COMPARING]
    assert said, "the profile still compares the pick with another option"
    for note in said:
        assert named_options(result, note.text) <= shown, (note.id, note.text, shown)
        assert named_options(result, note.text), note.text


def test_faster_card_costs_less_names_the_cheapest_option_shown() -> None:
    result = advise(lang="en", **PROFILES[0])
    text = next(n.text for n in result.advice if n.id == "faster-card-costs-less")
    assert text.startswith("1 × H100 80 GB costs more per hour than 1 × A100 80 GB, the cheapest in all of the "
                           "other options shown")
    assert "L40S" not in text and "L40S" not in {rec.name for rec in result.shown()}


def test_costs_less_in_all_is_said_only_of_a_pick_no_hidden_option_undercuts() -> None:
    """120B QLoRA for production: 1 × B200 ($121) costs less than every option shown (the H200 $163), but
    1 × RTX PRO 6000, ranked seventh, costs $99: the pick does not cost less in all, and nothing says so."""
    result = advise(method="qlora", budget="medium", rocm_ok=True, purpose="production", deadline_h=72,
                    dataset_examples=100_000, model_size_b=120, vram_gb=12, lang="en")
    shown = result.shown()
    hidden = [rec for rec in result.recommendations if rec not in shown and rec.where == "cloud"]
    assert min(rec.cost["total"] for rec in hidden) < shown[0].cost["total"] < min(
        rec.cost["total"] for rec in shown[1:])
    assert "faster-card-costs-less" not in {note.id for note in result.advice}


@pytest.mark.parametrize("value", ["0", "1", "11", '"four"'])
def test_a_shown_count_out_of_bounds_is_refused(tmp_path: Path, value: str) -> None:
    base = tmp_path / "rules"
    shutil.copytree(paths.RULES, base)
    target = base / "ranking.toml"
    target.write_text(target.read_text(encoding="utf-8").replace("shown = 4", f"shown = {value}"),
                      encoding="utf-8")
    with pytest.raises(KnowledgeBaseError) as error:
        load(base)
    shown = [Localizer("en").gettext(t) % p for _, _, t, p in error.value.problems]
    assert any("shown" in line for line in shown), shown

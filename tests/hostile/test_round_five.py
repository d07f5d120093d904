"""Hostile round five, items 1 and 2: what scripts/sweep.py found in valid
profiles, each held by the one profile that showed it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from expert import advise
from expert.interfaces.cli.main import main


# An answer writes one card as "1 × NVIDIA GeForce RTX 3090 24 GB"; on main af736b5 that text, "1x RTX 3090"
# and "1x 24" given back as one's own GPU were refused ("neither a VRAM figure in GB nor a GPU the knowledge
# base knows"), while "2x RTX 3090" was read.
@pytest.mark.parametrize("own, card", [("1x RTX 3090", "rtx-3090"), ("1 × NVIDIA GeForce RTX 3090 24 GB", "rtx-3090"),
                                       ("1x 24", None), ("one 3090", "rtx-3090")])
def test_one_card_counted_is_read_as_one_card(own: str, card: str | None) -> None:
    profile = advise(model_size_b=8, method="lora", vram_gb=own, catalog="guide").profile
    assert (profile["vram_gb"], profile["own_gpu_count"], profile.get("own_gpu")) == (24.0, 1, card)


def test_one_card_counted_is_read_by_the_cli_in_spanish() -> None:
    outcome = CliRunner().invoke(main, ["advise", "--model-size", "8", "--vram", "1x RTX 3090", "--catalog", "guide",
                                        "--lang", "es", "--format", "json"])
    assert outcome.exit_code == 0, outcome.output
    assert '"own_gpu": "rtx-3090"' in outcome.output

"""The memory a card's driver reports (memory_mib): every shipped card gives
it with its source; the loader and `expert check` refuse a shipped card
without it or with a figure no driver of that card reports, in the reader's
language, naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import edited_rules

from expert import paths
from expert.errors import KnowledgeBaseError
from expert.i18n import Localizer
from expert.knowledge.catalog import MEMORY_SHARE, with_catalogs
from expert.knowledge.check import check
from expert.knowledge.load import load

EN, ES = Localizer("en").gettext, Localizer("es").gettext



def shipped_cards() -> list:  # type: ignore[type-arg]
    kb = load()
    return list(with_catalogs(kb, sorted((paths.RULES / "catalogs").glob("*.toml"))).catalog)


def test_every_shipped_card_gives_its_driver_memory_with_a_source() -> None:
    cards = shipped_cards()
    assert len(cards) >= 11
    for card in cards:
        assert card.memory_source.strip(), card.id
        # less than what the card is sold with (GiB), by no more than ECC takes
        assert MEMORY_SHARE[0] * card.vram_gb * 1024 <= card.memory_mib <= card.vram_gb * 1024, card.id


def test_published_readings_are_the_figures() -> None:
    by_id = {card.id: card.memory_mib for card in shipped_cards()}
    # the readings the issue names: an H100 80GB SXM and an RTX 4090
    assert by_id["h100-80gb"] == 81559 and by_id["rtx-4090"] == 24564
    # a card of two devices (the MI250's two GCDs) counts both
    assert by_id["mi250"] == 2 * 65520


def test_a_guide_card_without_it_is_refused_naming_the_field(tmp_path: Path) -> None:
    base = edited_rules(tmp_path, ("catalog.toml", "memory_mib = 24564\n", ""))
    with pytest.raises(KnowledgeBaseError) as error:
        load(base)
    assert any("'memory_mib' is missing" in EN(template) % params for _, _, template, params in error.value.problems)
    assert any("falta «memory_mib»" in ES(template) % params for _, _, template, params in error.value.problems)


@pytest.mark.parametrize("value", ["1", "30000", "-5", "\"a lot\"", "true"])
def test_a_nonsense_figure_is_refused_naming_the_field(tmp_path: Path, value: str) -> None:
    base = edited_rules(tmp_path, ("catalog.toml", "memory_mib = 24564", f"memory_mib = {value}"))
    with pytest.raises(KnowledgeBaseError) as error:
        load(base)
    shown = [EN(template) % params for _, _, template, params in error.value.problems]
    assert any("'memory_mib'" in line for line in shown), shown


def test_the_bounds_are_said_in_both_languages(tmp_path: Path) -> None:
    base = edited_rules(tmp_path, ("catalog.toml", "memory_mib = 24564", "memory_mib = 30000"))
    with pytest.raises(KnowledgeBaseError) as error:
        load(base)
    (template, params), = [(t, p) for _, _, t, p in error.value.problems if "memory_mib" in t]
    assert EN(template) % params == ("card 1: 'memory_mib' must be the memory its driver reports, in MiB: from "
                                     "22118 to 24576 for a card of 24 GB")
    spanish = ES(template) % params
    assert "memory_mib" in spanish and "22118" in spanish and "24576" in spanish and spanish != EN(template) % params


def test_expert_check_refuses_a_shipped_catalog_card_without_it(tmp_path: Path) -> None:
    base = edited_rules(tmp_path, ("catalogs/current.toml", "memory_mib = 196592\n", ""))
    found = [problem.render(EN) for problem in check(base)]
    assert any("current.toml" in line and "'memory_mib' is missing" in line for line in found), found


def test_a_user_card_without_it_has_none_known(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('[[gpu]]\nid = "mystery"\nname = "Mystery 96 GB"\nvendor = "nvidia"\nvram_gb = 96\n'
                    'cost = "medium"\n', encoding="utf-8")
    card = with_catalogs(load(), [path]).card("mystery")
    assert card is not None and card.memory_mib == 0.0
    path.write_text('[[gpu]]\nid = "mystery"\nname = "Mystery 96 GB"\nvendor = "nvidia"\nvram_gb = 96\n'
                    'cost = "medium"\nmemory_mib = 97887\nmemory_source = "nvidia-smi"\n', encoding="utf-8")
    card = with_catalogs(load(), [path]).card("mystery")
    assert card is not None and card.memory_mib == 97887

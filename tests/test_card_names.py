"""One name per card: the catalogs' short name, the same in the options
table, the chart, the "Not recommended" line and every language, and never
cut at 80 columns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import edited_rules

from expert import KnowledgeBaseError, advise
from expert.i18n import Localizer
from expert.interfaces.cli.main import main
from expert.knowledge.catalog import SHORT_MAX, with_catalogs
from expert.knowledge.check import check
from expert.knowledge.load import load

EN, ES = Localizer("en").gettext, Localizer("es").gettext



def refusals(base: Path) -> tuple[list[str], list[str]]:
    with pytest.raises(KnowledgeBaseError) as error:
        load(base)
    problems = error.value.problems
    return ([EN(t) % p for _, _, t, p in problems], [ES(t) % p for _, _, t, p in problems])


def test_every_shipped_card_has_a_short_name_of_its_own() -> None:
    cards = load().catalog
    assert len(cards) >= 20
    shorts = [card.short for card in cards]
    assert all(0 < len(short) <= SHORT_MAX for short in shorts)
    assert len({short.casefold() for short in shorts}) == len(shorts)
    # one shape: no maker for NVIDIA's cards, no brand word
    assert not any(re.search(r"NVIDIA|GeForce|Instinct", short) for short in shorts), shorts
    by_id = {card.id: card.short for card in cards}
    assert (by_id["rtx-4090"], by_id["rtx-3090"], by_id["rtx-pro-6000"]) == ("RTX 4090", "RTX 3090", "RTX PRO 6000")


@pytest.mark.parametrize("filename, old, new, english, spanish", [
    ("catalogs/current.toml", 'short = "RTX 3090"\n', "", "'short' is missing", "falta «short»"),
    ("catalog.toml", 'short = "RTX 4090"', 'short = "NVIDIA GeForce RTX 4090"', "'short' must be 1 to 16",
     "«short» debe tener de 1 a 16"),
    ("catalogs/current.toml", 'short = "RTX 3090"', 'short = "RTX 4090"',
     "card 'rtx-3090': its short name 'RTX 4090' is already that of card 'rtx-4090'",
     "la tarjeta «rtx-3090»: su nombre corto «RTX 4090» ya es el de la tarjeta «rtx-4090»"),
])
def test_a_short_name_missing_too_long_or_taken_is_refused(tmp_path: Path, filename: str, old: str, new: str,
                                                           english: str, spanish: str) -> None:
    base = edited_rules(tmp_path, (filename, old, new))
    shown_en, shown_es = refusals(base)
    assert any(english in line for line in shown_en), shown_en
    assert any(spanish in line for line in shown_es), shown_es
    assert any(english in p.render(EN) for p in check(base)), "expert check says the same"


def test_a_user_card_without_a_short_name_goes_by_its_name(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('[[gpu]]\nid = "mystery"\nname = "Mystery 96 GB"\nvendor = "nvidia"\nvram_gb = 96\n'
                    'cost = "medium"\n')
    card = next(c for c in with_catalogs(load(), [path]).catalog if c.id == "mystery")
    assert (card.name, card.short) == ("Mystery 96 GB", "")
    result = advise(model_size_b=34, method="lora", lang="en", catalog=["guide", path])
    assert any(r.name == "Mystery 96 GB (mine)" for r in result.recommendations + result.rejected)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_answer_names_each_card_once_the_same_way_at_80_columns(lang: str) -> None:
    done = CliRunner().invoke(main, ["advise", "--model-size", "8", "--method", "full", "--lang", lang],
                              env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    text = done.stdout
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "…" not in text, "no card's name is cut"
    assert not re.search(r"NVIDIA|GeForce|Instinct", text), "the short names alone"
    table, chart, left_out = text.split("\n\n")[2:5]
    for name in ("RTX 4090", "RTX 5090", "RTX PRO 6000", "RTX 3090"):
        assert f"× {name} " in table and f"× {name} " in chart, name
    # the cards left out by the same names, in one line each language
    left_out = " ".join(left_out.split())
    assert "AMD MI210" in left_out and "AMD MI300X" in left_out and "RTX 6000 Ada" in left_out
    assert "Recomendación: 1 × RTX 4090" in text if lang == "es" else "Recommendation: 1 × RTX 4090" in text


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_crowded_table_closes_its_columns_up_before_cutting_a_name(lang: str) -> None:
    """One's own two cards that miss a 3-hour deadline, shown as row 12 ("4,9 h, tarde", "nada que
    alquilar"), widen the table's columns: the columns move one space apart instead of two, so that
    the rented cards' names stay whole at 80 columns (they read "1 × RTX PRO…" before)."""
    result = advise(model_size_b=13, method="qlora", vram_gb="2x RTX 4060 Ti 16GB", deadline_h=3, lang=lang)
    rows = [line for line in result.render("text", width=80).splitlines() if re.match(r"  \d+\. ", line)]
    rented = [rec for rec in result.shown() if rec.gpu != "own"]
    table = rows[:len(result.shown())]
    assert all(len(line) <= 80 for line in table)
    for rec, row in zip(rented, table, strict=False):
        assert f"{rec.count} × {rec.name} " in row, row
    assert "…" not in " ".join(table[:len(rented)])


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("own, asked", [
    ("2x RTX 3090", {"model_size_b": 70, "method": "qlora"}),
    # a catalog's card named as one's own: its label by the catalog's long name ("RTX PRO 6000 Blackwell
    # 96 GB"), row 7 after four rented options, "5,5 h, tarde" past a 3-hour deadline
    ("2x rtx-pro-6000", {"model_size_b": 70, "method": "lora", "deadline_h": 3}),
])
def test_no_name_is_cut_or_broken_across_lines_at_60_80_or_100_columns(lang: str, own: str,
                                                                       asked: dict[str, object]) -> None:
    """A line longer than the terminal wraps where its edge falls, mid-name ("Tus 2 × RTX" / "3090");
    until 2026-12-07 the table also cut the own label at 60 and 80 columns ("Tus 2 × RTX…", "Your 2 ×
    RTX PRO …"). A name that does not fit its column takes a line of its own, its figures under it."""
    result = advise(vram_gb=own, lang=lang, **asked)      # the market: the options the table is crowded with
    shown = result.shown()
    mine = re.compile(r"(Your|Tus|your|tus) 2 × RTX (3090|PRO 6000)")
    for width in (60, 80, 100):
        text = result.render("text", width=width)
        lines = text.splitlines()
        assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
        assert "…" not in text
        table = text.split("\n\n")[2].splitlines()
        chart = text.split("\n\n")[3].splitlines()
        for part in (table, chart):
            assert sum(bool(mine.search(line)) for line in part) == 1, part       # the own label, whole, once
            for rec in shown:
                if rec.gpu != "own":
                    name = f"{rec.count} × {re.sub(r' [0-9]+ GB$', '', rec.name)}"
                    assert any(name in line for line in part), (name, part)
        # every option's figures, in the table, under the table's own headings
        assert sum(line.count(" GiB") for line in table) == len(shown)

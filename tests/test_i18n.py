"""Both languages are real: complete Spanish, babel formatting, no silent fall-back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from expert import advise, i18n, paths
from expert.i18n import CatalogMissing, Localizer, resolve_lang

PO = Path(__file__).resolve().parent.parent / "locales" / "es" / "LC_MESSAGES" / "messages.po"
POT = PO.parent.parent.parent / "messages.pot"


def test_spanish_catalog_is_compiled_and_used() -> None:
    assert (paths.LOCALES / "es" / "LC_MESSAGES" / "messages.mo").is_file()
    assert Localizer("es").gettext("Recommendation") == "Recomendación"


def test_a_missing_catalog_is_an_error_not_english(tmp_path: Path) -> None:
    with pytest.raises(CatalogMissing):
        i18n.translations("es", str(tmp_path))


@pytest.mark.parametrize("cut", [0, 7, 100, 4000])
def test_a_catalog_cut_short_is_an_error_not_english(tmp_path: Path, cut: int) -> None:
    """Half a catalog (a build writing it beside a running process) is the same error as none: it was
    read as OSError at some lengths only, and as struct.error past the header (2026-12-08)."""
    whole = (paths.LOCALES / "es" / "LC_MESSAGES" / "messages.mo").read_bytes()
    folder = tmp_path / "es" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "messages.mo").write_bytes(whole[:cut])
    with pytest.raises(CatalogMissing, match="or is damaged"):
        i18n.translations("es", str(tmp_path))


def test_spanish_catalog_is_complete_and_well_formed() -> None:
    with PO.open("rb") as fh:
        catalog = read_po(fh, locale="es")
    with POT.open("rb") as fh:
        template = read_po(fh)
    assert {m.id for m in template if m.id} == {m.id for m in catalog if m.id}, "run scripts/update_catalogs.py"
    for message in catalog:
        if message.id:
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            assert all(strings) and not message.fuzzy, message.id
    assert [(m.id, errors) for m, errors in catalog.check()] == []


def test_the_spanish_calls_the_software_stack_one_name() -> None:
    # "stack" (masculine) in most messages and "pila" (feminine) in a few: one
    # answer read "horas con un stack típico" beside "esta pila de software",
    # and "con la pila %(stack)s" took the masculine label ("la pila optimizado").
    with PO.open("rb") as fh:
        catalog = read_po(fh, locale="es")
    said = [m.id for m in catalog if m.id and re.search(r"\bpilas?\b", str(m.string))]
    assert said == []


def test_catalog_template_holds_every_message_of_the_knowledge_base(kb) -> None:  # type: ignore[no-untyped-def]
    with POT.open("rb") as fh:
        template = read_po(fh)
    ids = {m.id for m in template}
    assert [m for m in kb.messages() if m not in ids] == []


def test_every_rule_message_reads_in_spanish(kb) -> None:  # type: ignore[no-untyped-def]
    es = Localizer("es")
    untranslated = [rule.id for rule in kb.rules if es.gettext(rule.message) == rule.message]
    assert untranslated == []


def test_numbers_and_units_follow_the_language() -> None:
    es, en = Localizer("es"), Localizer("en")
    assert es.hours(2.5) == "2,5 h" and en.hours(2.5) == "2.5 hr"
    assert es.gib(39.3) == "39,3 GiB" and en.gib(39.3) == "39.3 GiB"
    assert es.number(10_000) == "10.000" and en.number(10_000) == "10,000"
    assert es.list(["a", "b", "c"]) == "a, b y c" and en.list(["a", "b", "c"]) == "a, b, and c"


def test_spanish_output_is_spanish_throughout() -> None:
    result = advise(model_size_b=8, method="full", lang="es", catalog="guide")   # the guide's answer, 1.1 hr
    text = result.render("text", verbose=True)
    flat = " ".join(text.split())
    assert "Recomendación" in flat and "Consejos" in flat and "en torno a 1,1 h" in flat and "US$ bajo demanda" in flat
    brief = result.render("text")
    assert "Recomendación:" in brief and "Memoria usada" in brief and "Descartadas —" in brief
    for english in ("Recommendation", "needed", "Advice", "rented", "cost", "about", "Memory", "Option", "of"):
        assert not re.search(rf"\b{english}\b", text), english
        assert not re.search(rf"\b{english}\b", brief), english


@pytest.mark.parametrize("explicit, env, expected", [
    ("es", {"EXPERT_LANG": "en", "LANG": "en_US.UTF-8"}, "es"),
    (None, {"EXPERT_LANG": "es", "LANG": "en_US.UTF-8"}, "es"),
    (None, {"LC_ALL": "es_ES.UTF-8", "LANG": "en_US.UTF-8"}, "es"),
    (None, {"LANG": "es_MX.UTF-8"}, "es"),
    (None, {"LANG": "fr_FR.UTF-8"}, "en"),
    (None, {"LANG": "C.UTF-8"}, "en"),
    (None, {}, "en"),
    ("ES", {}, "es"),
    ("es_AR", {}, "es"),
])
def test_language_resolution_order(explicit, env, expected) -> None:  # type: ignore[no-untyped-def]
    assert resolve_lang(explicit, env) == expected

"""Input: what a person may type, and a clear, localized error for everything else."""

from __future__ import annotations

import math

import pytest

from expert import InputError, advise
from expert.interfaces.api import knowledge_base

# How an answer is read does not depend on the cards weighed: these read the profile on the guide's six
# cards (docs/development.md, "Tests").


@pytest.mark.parametrize("raw, expected", [
    (7, 7), (7.5, 7.5), ("70", 70), ("70B", 70), ("8b", 8), ("350M", 0.35), ("6,7", 6.7), (" 13 B ", 13),
    # names of the model table: the published totals, not the size in the name
    ("Llama-3-8B", 8.03), ("Llama-2-70b-chat", 69.0), ("Qwen2.5-72B-Instruct", 72.7),
])
def test_model_size_as_people_write_it(raw, expected) -> None:  # type: ignore[no-untyped-def]
    assert advise(catalog="guide", model_size_b=raw, lang="en").profile["model_size_b"] == pytest.approx(expected)


@pytest.mark.parametrize("raw, expected", [(8, 8), ("8", 8), ("8h", 8), ("8 hours", 8), ("2 days", 48),
                                           ("2 días", 48), ("1,5 h", 1.5), ("90 min", 1.5)])
def test_deadline_with_units(raw, expected) -> None:  # type: ignore[no-untyped-def]
    assert advise(catalog="guide", deadline_h=raw, lang="en").profile["deadline_h"] == pytest.approx(expected)


@pytest.mark.parametrize("raw, expected", [(True, True), ("yes", True), ("sí", True), ("Si", True), ("no", False),
                                           ("false", False), ("0", False)])
def test_booleans(raw, expected) -> None:  # type: ignore[no-untyped-def]
    assert advise(catalog="guide", rocm_ok=raw, lang="en").profile["rocm_ok"] is expected


def test_other_fields() -> None:
    profile = advise(catalog="guide", vram_gb="24 GB", dataset_examples="10k", method=" LoRA ", budget="LOW",
                     lang="en").profile
    assert (profile["vram_gb"], profile["dataset_examples"], profile["method"], profile["budget"]) == (
        24, 10_000, "lora", "low")


BAD = [
    ("model_size_b", -5), ("model_size_b", "abc"), ("model_size_b", 0), ("model_size_b", "nan"),
    ("model_size_b", math.nan), ("model_size_b", "inf"), ("model_size_b", math.inf), ("model_size_b", 1e30),
    ("model_size_b", True), ("model_size_b", [7]), ("model_size_b", "1e400B"), ("model_size_b", 1e-300),
    ("model_size_b", "7" * 15000 + "?"), ("dataset_examples", 10**400), ("deadline_h", "30 s"), ("vram_gb", 0.5),
    ("deadline_h", 0), ("deadline_h", "-3"), ("deadline_h", "soon"), ("vram_gb", -1), ("vram_gb", "lots"),
    ("dataset_examples", 1.5), ("dataset_examples", "1.5"), ("dataset_examples", 0), ("dataset_examples", "many"),
    ("method", "foo"), ("method", 3), ("budget", "pricey"), ("purpose", "fun"), ("rocm_ok", "maybe"),
    ("interruptible", 2),
]


@pytest.mark.parametrize("field, value", BAD)
def test_bad_values_raise_an_input_error_naming_the_field(field, value) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as caught:
        advise(**{field: value}, lang="en")
    assert isinstance(caught.value, ValueError)
    assert caught.value.field == field
    # named by its label in the user's language, not by the internal name
    from expert.interfaces.api import knowledge_base

    assert str(caught.value).startswith(knowledge_base().fields[field].label + ": ")
    assert f"({field})" not in str(caught.value)


def test_empty_text_means_not_given() -> None:
    result = advise(model_size_b="", method="  ", deadline_h="", lang="en")
    assert {"model_size_b", "method", "deadline_h"} <= set(result.assumed)


def test_an_exponent_belongs_to_the_number() -> None:
    assert advise(catalog="guide", model_size_b="1e3B", lang="en").profile["model_size_b"] == 1000


def test_the_message_says_what_is_accepted_in_the_users_language() -> None:
    with pytest.raises(InputError) as en:
        advise(method="foo", lang="en")
    assert str(en.value) == "fine-tuning method: 'foo' is not accepted; choose full, lora, or qlora."
    with pytest.raises(InputError) as es:
        advise(method="foo", lang="es")
    assert str(es.value) == "método de ajuste: «foo» no es válido; elige ajuste completo (full), lora o qlora."
    with pytest.raises(InputError) as big:
        advise(model_size_b=1e30, lang="es")
    assert "como mucho 2.000B" in str(big.value)


def test_hostile_text_is_quoted_back_short_and_printable() -> None:
    with pytest.raises(InputError) as caught:
        advise(model_size_b="\x1b[31m" + "x" * 500, lang="en")
    message = str(caught.value)
    assert "\x1b" not in message and len(message) < 200


@pytest.mark.parametrize("lang", ["fr", "", "english", 3])
def test_unsupported_language(lang) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as caught:
        advise(lang=lang)
    assert caught.value.field == "lang"


# On main f2e7dc0 a count followed by its own word was refused: --tokens-per-example "4096 tokens" and
# --examples "10k examples" were "not a number", in the library, the CLI, MCP and a consultation alike.
@pytest.mark.parametrize("given, read", [
    (dict(tokens_per_example="4096 tokens"), (10000, 4096)),
    (dict(tokens_per_example="2k tokens per example", dataset_examples="10k examples"), (10000, 2048)),
    (dict(tokens_per_example="4096Tokens", dataset_examples="50k ejemplos"), (50000, 4096)),
    (dict(tokens_per_example="1k tokens por ejemplo", dataset_examples="10.000 ejemplos", lang="es"), (10000, 1024)),
])
def test_a_count_may_carry_its_own_word(given: dict[str, str], read: tuple[int, int]) -> None:
    result = advise(model_size_b=8, method="lora", catalog="guide", **given)
    assert (result.profile["dataset_examples"], result.profile["tokens_per_example"]) == read


@pytest.mark.parametrize("given, said", [
    (dict(tokens_per_example="10k examples"), "tokens per example: '10k examples' counts training examples, not "
     "tokens per example; give a number such as 512 or 4k, with or without 'tokens' after it."),
    (dict(dataset_examples="4096 tokens", lang="es"), "ejemplos de entrenamiento: «4096 tokens» cuenta tokens por "
     "ejemplo, no ejemplos de entrenamiento; indica un número como 10000, 10k o 50 mil, con o sin «ejemplos» detrás."),
    (dict(dataset_examples="10 throws"), "training examples: '10 throws' is not a number; for example 10000, 10k, "
     "50 thousand."),
])
def test_a_count_carrying_another_counts_word_is_refused(given: dict[str, str], said: str) -> None:
    with pytest.raises(InputError) as refused:
        advise(model_size_b=8, method="lora", catalog="guide", **given)
    assert str(refused.value) == said


# On main c111501 free text read "50 mil ejemplos" as 50,000 while the value reader took only k and m:
# --examples "50 mil", advise(dataset_examples="50 mil") and MCP's argument were "not a number".
@pytest.mark.parametrize("given, read", [
    ("50 mil", 50000), ("50 Mil ejemplos", 50000), ("2 thousand", 2000), ("1,5 millones", 1500000),
    ("3 million examples", 3000000),
])
def test_a_count_reads_every_multiplier_free_text_reads(given: str, read: int) -> None:
    from expert.input.freetext import extract

    assert advise(catalog="guide", dataset_examples=given, lang="es").profile["dataset_examples"] == read
    assert extract(given, knowledge_base(catalog="guide"), "dataset_examples") == {"dataset_examples": read}


@pytest.mark.parametrize("given, lang, said", [
    ("5 mil millones", "es", "ejemplos de entrenamiento: «5 mil millones» no es válido: un recuento no se lee en miles "
     "de millones; dalo en cifras, o en miles o millones, como 10000, 10k o 50 mil."),
    ("2 billion examples", "en", "training examples: '2 billion examples' is not accepted: a count is not read in "
     "billions; give it in digits, or in thousands or millions, such as 10000, 10k, or 50 thousand."),
])
def test_a_count_in_billions_is_refused_naming_what_is_accepted(given: str, lang: str, said: str) -> None:
    with pytest.raises(InputError) as refused:
        advise(catalog="guide", dataset_examples=given, lang=lang)
    assert str(refused.value) == said


def test_free_text_passes_a_count_in_billions_to_the_reader_not_as_a_size() -> None:
    # on main c111501 "5 mil millones de ejemplos" was read as a model of 5B
    from expert.input.freetext import extract

    for text in ("5 mil millones de ejemplos", "2 billion examples"):
        assert extract(text, knowledge_base(catalog="guide")) == {"dataset_examples": text}


def test_the_word_a_counts_refusal_names_is_one_it_takes() -> None:
    from expert.i18n import Localizer
    from expert.input.profile import _COUNT_WORD
    from expert.knowledge.vocabulary import fold, vocabulary

    words = vocabulary(knowledge_base()).count_words
    for lang in ("en", "es"):
        for field, word in _COUNT_WORD.items():
            assert fold(Localizer(lang).gettext(word)) in words[field], (lang, field)


def test_a_consultation_answer_agrees_with_the_reader() -> None:
    # on main f2e7dc0 "4096 tokens" answering the dataset's size was read by free text as 4,096 examples
    from expert import Consultation
    from expert.interfaces.consultation import AnswerError

    consultation = Consultation(lang="es", model_size_b=8, method="lora")
    consultation.answer("tokens_per_example", "4096 tokens")
    consultation.answer("dataset_examples", "10k ejemplos")
    assert (consultation.facts()["dataset_examples"], consultation.facts()["tokens_per_example"]) == (10000, 4096)
    with pytest.raises(AnswerError, match="«4096 tokens» cuenta tokens por ejemplo, no ejemplos de entrenamiento"):
        consultation.answer("dataset_examples", "4096 tokens")
    assert consultation.facts()["dataset_examples"] == 10000

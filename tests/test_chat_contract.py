"""The chat contract (issues 22 and 26): free text fills the slots a person
would expect and no others; one value reader gives the same value or the
same refusal through advise(), the CLI, Consultation.answer and MCP; numbers
written with fractions, Unicode digits, superscripts or exponents are read
correctly or refused, never misread."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from expert import advise
from expert.interfaces.cli.main import main
from expert.interfaces.consultation import AnswerError, Consultation
from expert.errors import InputError


# (language, message, the slots it fills exactly, and what else it says:
#  "refused": fields refused with a message; "asks": fields asked "did you mean?";
#  "counts": cards counted; "notes": fields said back (an assumption, a value said twice)).
MESSAGES: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    # the phrasings of issue 22
    ("en", "budget high", {"budget": "high"}, {}),
    ("en", "budget: high", {"budget": "high"}, {}),
    ("en", "my budget is low", {"budget": "low"}, {}),
    ("en", "we're ok with ROCm", {"rocm_ok": True}, {}),
    ("es", "No quiero AMD", {"rocm_ok": False}, {}),
    ("en", "by friday", {}, {"refused": ["deadline_h"]}),
    ("es", "para el viernes", {}, {"refused": ["deadline_h"]}),
    ("en", "in two days", {"deadline_h": 48.0}, {}),
    ("es", "dos días", {"deadline_h": 48.0}, {}),
    ("en", "ASAP", {"deadline_h": 24.0}, {"notes": ["deadline_h"]}),
    ("en", "examples of 512 tokens", {"tokens_per_example": 512}, {}),
    ("en", "qlroa on a 13B model", {"model_size_b": 13.0}, {"asks": ["method"]}),
    ("en", "I have two 3090s", {"vram_gb": "2x rtx-3090"}, {"counts": {"vram_gb": 2}, "notes": ["vram_gb"]}),
    ("es", "tengo dos 3090", {"vram_gb": "2x rtx-3090"}, {"counts": {"vram_gb": 2}, "notes": ["vram_gb"]}),
    ("en", "4x A100", {}, {"refused": ["vram_gb"]}),      # which A100? asked, as every entry point asks
    ("es", "tengo 4x A100 de 80 GB", {"vram_gb": "4x a100-80gb"}, {"counts": {"vram_gb": 4}, "notes": ["vram_gb"]}),
    ("en", "my A100 80GB", {"vram_gb": "a100-80gb"}, {}),
    # the reproductions of issue 26, item 1
    ("en", "a 7B model, actually a 70B model", {"model_size_b": 70.0}, {"notes": ["model_size_b"]}),
    ("en", "in 2 days, no wait, in 5 hours", {"deadline_h": 5.0}, {"notes": ["deadline_h"]}),
    ("en", "in ½ day", {"deadline_h": 12.0}, {}),
    ("en", "in 1½ days", {"deadline_h": 36.0}, {}),
    ("en", "in ١٫٥ days", {"deadline_h": 36.0}, {}),
    ("en", "with 10⁴ examples", {"dataset_examples": 10000}, {}),
    ("en", "a 2⁴B model", {"model_size_b": 16.0}, {}),
    ("en", "in 1e400 hours", {}, {"refused": ["number"]}),
    ("en", "RTX 4090 vs A100 for a 7B model", {"model_size_b": 7.0}, {}),
    ("en", "Should I rent 4x A100 for Llama 3 70B?", {"model_size_b": "Llama-3-70B"}, {}),
    # English as people write it
    ("en", "I want to fine-tune Mistral-7B with LoRA on my 3090, by tomorrow",
     {"model_size_b": "Mistral-7B-v0.3", "method": "lora", "deadline_h": 24.0, "vram_gb": "rtx-3090"},
     {"notes": ["deadline_h"]}),
    ("en", "Llama 3 70B, full fine-tuning, money is no object",
     {"model_size_b": "Llama-3-70B", "method": "full", "budget": "high"}, {}),
    ("en", "QLoRA for a 65B model on my RTX 4090", {"model_size_b": 65.0, "method": "qlora", "vram_gb": "rtx-4090"}, {}),
    ("en", "no GPU, I'll rent; deadline 1 week", {"deadline_h": 168.0, "vram_gb": None}, {}),
    ("en", "we need it for production and cannot be interrupted", {"purpose": "production", "interruptible": False}, {}),
    ("en", "just testing, spot instances are fine", {"purpose": "experiment", "interruptible": True}, {}),
    ("en", "50k examples, 3 epochs, 2k tokens per example",
     {"dataset_examples": 50000, "tokens_per_example": 2048, "epochs": 3.0}, {}),
    ("en", "nvidia only please, no deadline", {"rocm_ok": False, "deadline_h": None}, {}),
    ("en", "Mixtral 8x7B with qlora, low budget", {"model_size_b": "Mixtral-8x7B", "method": "qlora", "budget": "low"},
     {}),
    ("en", "I have a 24 GB GPU", {"vram_gb": 24.0}, {}),
    ("en", "fine-tune a 13B model in 48h", {"model_size_b": 13.0, "deadline_h": 48.0}, {}),
    ("en", "within 3 days, medium budget", {"budget": "medium", "deadline_h": 72.0}, {}),
    ("en", "tight budget, a week", {"budget": "low", "deadline_h": 168.0}, {}),
    ("en", "by next week, on my A6000", {"deadline_h": 168.0, "vram_gb": "rtx-a6000"}, {"notes": ["deadline_h"]}),
    ("en", "purpose: production", {"purpose": "production"}, {}),
    ("en", "budget is medium and AMD is fine", {"budget": "medium", "rocm_ok": True}, {}),
    ("en", "a 1.5 days deadline", {"deadline_h": 36.0}, {}),
    ("en", "the dataset has 120,000 rows", {"dataset_examples": 120000}, {}),
    ("en", "whenever, no rush", {"deadline_h": None}, {}),
    ("en", "hello there", {}, {}),
    # Spanish as people write it
    ("es", "presupuesto alto", {"budget": "high"}, {}),
    ("es", "presupuesto: bajo", {"budget": "low"}, {}),
    ("es", "mi presupuesto es bajo", {"budget": "low"}, {}),
    ("es", "en dos días", {"deadline_h": 48.0}, {}),
    ("es", "una semana", {"deadline_h": 168.0}, {}),
    ("es", "lo antes posible", {"deadline_h": 24.0}, {"notes": ["deadline_h"]}),
    ("es", "tengo una 4090 y quiero usar qlora", {"method": "qlora", "vram_gb": "rtx-4090"}, {}),
    ("es", "un modelo de 7B, mejor dicho de 70B", {"model_size_b": 70.0}, {"notes": ["model_size_b"]}),
    ("es", "quiero ajustar Llama-3-8B con LoRA en mi 3090 para mañana",
     {"model_size_b": "Llama-3-8B", "method": "lora", "deadline_h": 24.0, "vram_gb": "rtx-3090"},
     {"notes": ["deadline_h"]}),
    ("es", "es para producción, presupuesto medio", {"budget": "medium", "purpose": "production"}, {}),
    ("es", "ajuste completo de un modelo de 13B", {"model_size_b": 13.0, "method": "full"}, {}),
    ("es", "no tengo gpu, voy a alquilar", {"vram_gb": None}, {}),
    ("es", "50 mil ejemplos de 1024 tokens, 2 épocas",
     {"dataset_examples": 50000, "tokens_per_example": 1024, "epochs": 2.0}, {}),
    ("es", "acepto rocm, sin prisa", {"rocm_ok": True, "deadline_h": None}, {}),
    ("es", "solo nvidia, presupuesto ajustado", {"budget": "low", "rocm_ok": False}, {}),
    ("es", "en ١٫٥ días", {"deadline_h": 36.0}, {}),
    ("es", "con 10⁴ ejemplos", {"dataset_examples": 10000}, {}),
    ("es", "es un experimento, instancias spot", {"purpose": "experiment", "interruptible": True}, {}),
    ("es", "un modelo de 70 mil millones con qlroa", {"model_size_b": 70.0}, {"asks": ["method"]}),
    ("es", "en 3 días, no, mejor en 12 horas", {"deadline_h": 12.0}, {"notes": ["deadline_h"]}),
    ("es", "Qwen2.5-7B con lora, el dinero no es problema",
     {"model_size_b": "Qwen2.5-7B", "method": "lora", "budget": "high"}, {}),
    ("es", "hola", {}, {}),
]


def test_the_table_has_at_least_sixty_messages_in_both_languages() -> None:
    assert len(MESSAGES) >= 60
    assert {lang for lang, *_ in MESSAGES} == {"en", "es"}
    assert sum(lang == "es" for lang, *_ in MESSAGES) >= 20


@pytest.mark.parametrize("lang, message, slots, said", MESSAGES, ids=[m for _, m, *_ in MESSAGES])
def test_free_text_fills_the_slots_a_person_expects(lang: str, message: str, slots: dict[str, Any],
                                                     said: dict[str, Any]) -> None:
    consultation = Consultation(lang=lang)
    told = consultation.tell(message)
    assert told.understood == slots, told.text           # every slot, and nothing invented
    assert sorted(told.problems) == sorted(said.get("refused", [])), told.text
    assert sorted(told.questions) == sorted(said.get("asks", [])), told.text
    assert told.counts == said.get("counts", {})
    assert sorted(told.notes) == sorted(said.get("notes", [])), told.text
    question = consultation.next_question()
    assert question is None or question.id not in slots      # never asks what the text answered


def test_a_typo_is_asked_about_and_yes_takes_it() -> None:
    consultation = Consultation(lang="en")
    told = consultation.tell("qlroa on a 13B model")
    assert "did you mean QLoRA (4-bit)?" in told.text and "method" not in told.understood
    question = consultation.next_question()
    assert question is not None and question.id == "method" and question.text.startswith("Did you mean QLoRA")
    restored = Consultation.from_dict(consultation.to_dict())
    restored.answer("method", "yes")
    assert restored.answers["method"] == "qlora"


def test_what_is_said_back() -> None:
    told = Consultation(lang="en").tell("in 2 days, no wait, in 5 hours")
    assert "the later statement is kept (5 hr, not 48 hr)" in told.text
    told = Consultation(lang="es").tell("lo antes posible")
    assert "«lo antes posible» se toma como 24 h, una suposición" in told.text
    told = Consultation(lang="es").tell("para el viernes")
    assert told.problems["deadline_h"].startswith("plazo: «para el viernes» es un día del calendario")


# --- one reader, every entry point -------------------------------------------

# (field, text): the same value, or the same refusal, everywhere.
SAME_EVERYWHERE = [
    ("deadline_h", "1 week"), ("deadline_h", "1w"), ("deadline_h", "a week"), ("deadline_h", "2 days"),
    ("deadline_h", "48h"), ("deadline_h", "dos días"), ("deadline_h", "una semana"), ("deadline_h", "by tomorrow"),
    ("deadline_h", "by friday"), ("deadline_h", "½ day"), ("deadline_h", "1½ days"), ("deadline_h", "١٫٥ days"),
    ("dataset_examples", "10⁴"), ("dataset_examples", "1e4"), ("dataset_examples", "RTX 4090"),
    ("dataset_examples", "1e400"), ("model_size_b", "2⁴B"), ("method", "LoRA"), ("method", "QLoRA (4-bit)"),
    ("budget", "bajo"), ("budget", "HIGH"), ("purpose", "producción"), ("purpose", "prod"), ("method", "lorax"),
    # a thousands separator: a count's thousands, ambiguous where decimals are read
    ("dataset_examples", "1,000"), ("dataset_examples", "10.000"), ("model_size_b", "1,500"),
    ("deadline_h", "1,000"), ("deadline_h", "1.000 horas"), ("vram_gb", "1,024"), ("epochs", "0,5"),
    ("model_size_b", "6,7"),
    # never summed, never read past: fractions after fractions, underscores, two sizes, two answers
    ("deadline_h", "½½"), ("deadline_h", "1½1½"), ("deadline_h", "1¼¾"), ("deadline_h", "½1"),
    ("deadline_h", "4_8"), ("model_size_b", "1_0"), ("dataset_examples", "1_000"),
    ("model_size_b", "7B or 13B"), ("model_size_b", "Llama 3 8B or 70B"), ("method", "full or lora"),
    ("deadline_h", "1 day 2 hours"), ("dataset_examples", "10k or 20k"), ("vram_gb", "3090 or 4090"),
    ("stack", "típico"), ("stack", "optimizado"),
    # what the person does not want is not their answer
    ("method", "not lora"), ("method", "lora en vez de qlora"), ("vram_gb", "no, but I will buy a 4090"),
]
OPTIONS = {"deadline_h": "--deadline", "dataset_examples": "--dataset", "model_size_b": "--model-size",
           "method": "--method", "budget": "--budget", "purpose": "--purpose", "vram_gb": "--vram",
           "epochs": "--epochs", "stack": "--stack"}


# The three ways read a string on the guide's six (docs/development.md, "Tests"); a card's name is
# suggested from the cards weighed, so whoever reads on the market (MCP) asks for catalog=None.
def _library(field: str, text: str, catalog: str | None = "guide") -> Any:
    try:
        return advise(catalog=catalog, lang="es", **{field: text}).profile[field]
    except InputError as error:
        return ("error", error.field, str(error))


def _consultation(field: str, text: str) -> Any:
    consultation = Consultation(lang="es")
    try:
        consultation.answer(field, text)
    except AnswerError as error:
        return ("error", error.field, str(error))
    return advise(catalog="guide", lang="es", **{field: consultation.answers[field]}).profile[field]


def _cli(field: str, text: str) -> Any:
    done = CliRunner().invoke(main, ["advise", OPTIONS[field], text, "--format", "json", "--lang", "es",
                                     "--catalog", "guide"])
    if done.exit_code == 2:
        return ("error", field, done.output.strip().removeprefix("Error: "))
    assert done.exit_code == 0, done.output
    return json.loads(done.output)["profile"][field]


@pytest.mark.parametrize("field, text", SAME_EVERYWHERE)
def test_the_same_string_gives_the_same_value_everywhere(field: str, text: str) -> None:
    library = _library(field, text)
    consultation = _consultation(field, text)
    if isinstance(library, tuple) and isinstance(consultation, tuple):
        # refused by both, for the same field; an answer in words may say more precisely why
        assert consultation[:2] == library[:2]
    else:
        assert consultation == library
    assert _cli(field, text) == library


def test_readings_are_the_right_ones() -> None:
    assert [_library("deadline_h", t) for t in ("1 week", "1w", "a week", "dos días", "½ day", "١٫٥ days")] == \
        [168.0, 168.0, 168.0, 48.0, 12.0, 36.0]
    assert _library("dataset_examples", "10⁴") == 10000 and _library("model_size_b", "2⁴B") == 16.0
    assert _library("dataset_examples", "RTX 4090")[0] == "error"      # a card's name is never a count
    assert _library("budget", "bajo") == "low" and _library("purpose", "producción") == "production"
    error = _library("budget", "caro")
    assert error[2] == "presupuesto: «caro» no es válido; elige bajo (low), medio (medium) o alto (high)."
    # a label with its own brackets takes the value inside them, not a second pair after
    error = _library("stack", "rápido")
    assert error[2].endswith("elige típico (typical, Trainer de Hugging Face) o optimizado (tuned, empaquetado, compilado).")


def test_what_cannot_be_read_one_way_is_refused_not_guessed() -> None:
    # a thousands separator where decimals are read: 1024 or 1.024? asked, in the person's language
    assert _library("vram_gb", "1,024")[2] == (
        "VRAM de tu GPU: «1,024» es ambiguo: en 1,024, «,» puede separar miles o decimales. Escribe la cifra sin "
        "separador de miles, como 1024, o con dos decimales como mucho.")
    assert _library("dataset_examples", "1,000") == _library("dataset_examples", "10.000") / 10 == 1000
    assert _library("epochs", "0,5") == 0.5 and _library("model_size_b", "6,7") == 6.7
    for refused in ("½½", "1½1½", "1¼¾", "½1", "4_8", "1 day 2 hours", "1,000"):
        assert _library("deadline_h", refused)[:2] == ("error", "deadline_h"), refused
    assert _library("deadline_h", "1½") == 1.5
    for refused in ("7B or 13B", "70B with 8B draft", "1_0", "1,500"):
        assert _library("model_size_b", refused)[:2] == ("error", "model_size_b"), refused
    assert _library("model_size_b", "Llama-3.1-8B-Instruct") == 8.03
    # the examples an error gives are the person's language's
    assert _library("deadline_h", "ayer")[2].endswith("por ejemplo 8, 8h, 2 días, 1 semana.")
    assert _library("epochs", "x")[2].endswith("por ejemplo 1 o 2,5.")
    # free text refuses what the answer refuses
    told = Consultation(lang="es").tell("un modelo de 1,500B y un plazo de 1.000 horas")
    assert told.understood == {} and set(told.problems) == {"model_size_b", "deadline_h"}


@pytest.mark.parametrize("answer", ["²", "١", "𝟐", "⁰"])
def test_a_choice_is_answered_by_its_number_in_ascii_digits_only(answer: str) -> None:
    consultation = Consultation()
    # not a ValueError from int("²"); "١" is read as 1 (the one number reader), not as choice number 1
    for field in ("method", "rocm_ok") if answer in "²⁰" else ("method",):
        with pytest.raises(AnswerError) as caught:
            consultation.answer(field, answer)
        assert caught.value.field == field
    consultation.answer("method", "2")
    assert consultation.answers == {"method": "lora"}


def test_a_consultation_starts_as_advise_reads_its_arguments() -> None:
    with pytest.raises(InputError) as caught:
        Consultation(model_size_b=7, model=70)       # one field under two names: refused, not one of them kept
    assert caught.value.field == "model_size_b"
    with pytest.raises(InputError):
        Consultation(vram=24, gpu=48)
    assert Consultation(vram_gb="no", deadline_h="sin plazo", lang="es").facts() == {"vram_gb": None,
                                                                                  "deadline_h": None}
    assert advise(vram_gb="no", deadline_h="sin plazo").profile["vram_gb"] is None


def test_argument_aliases_in_the_library_and_the_consultation() -> None:
    assert advise(model_size=70, vram="RTX 3090").profile["own_gpu"] == "rtx-3090"
    assert advise(gpu=24).profile["vram_gb"] == 24.0
    with pytest.raises(InputError) as caught:
        advise(colour="red")
    assert caught.value.field == "colour" and "model_size_b" in str(caught.value)
    with pytest.raises(InputError) as caught:
        advise(**{"\x1b[31mcolour\u202e": "red"})      # the field an error names is as safe to show as its text
    assert caught.value.field.isprintable() and "\x1b" not in caught.value.field
    with pytest.raises(InputError):
        advise(model_size_b=7, model_size=70)            # one field under two names: refused, not guessed
    consultation = Consultation(model="Llama 3 70B", gpu="RTX 3090")
    assert consultation.known == {"model_size_b": "Llama 3 70B", "vram_gb": "rtx-3090"}


# A value of each field that is not its default, to see it arrive.
NOT_THE_DEFAULT = {"model_size_b": 70, "vram_gb": 24, "deadline_h": 8, "dataset_examples": 5000,
                   "tokens_per_example": 512, "rocm_ok": True, "budget": "high", "method": "full",
                   "purpose": "production"}


@pytest.mark.parametrize("field", sorted(NOT_THE_DEFAULT))
def test_every_alias_of_an_argument_reaches_the_answer(field: str) -> None:
    """Each other name of vocabulary.toml [aliases.arguments] gives advise() the
    value the field's own name gives (advise(model_size=70) once answered for
    the default 7B, the 70 dropped), and says it was given, not assumed."""
    from expert.knowledge.vocabulary import vocabulary
    from expert.knowledge.bases import knowledge_base

    aliases = vocabulary(knowledge_base()).argument_aliases[field]
    assert aliases, field
    # on the guide's six cards: the profile each name gives is compared, which no card changes
    wanted = advise(catalog="guide", **{field: NOT_THE_DEFAULT[field]})
    for alias in aliases:
        got = advise(catalog="guide", **{alias: NOT_THE_DEFAULT[field]})
        assert got.profile == wanted.profile and field not in got.assumed, alias


def test_cli_choices_and_aliases() -> None:
    for args in (["--format", "MARKDOWN"], ["--format", "md"], ["--format=Md"]):
        done = CliRunner().invoke(main, ["advise", "--model-size", "8", *args])
        assert done.exit_code == 0 and done.output.startswith("**Recommendation:**"), done.output
    done = CliRunner().invoke(main, ["advise", "--gpu", "24", "--format", "json", "--detail", "resumen"])
    assert done.exit_code == 0 and json.loads(done.output)["profile"]["vram_gb"] == 24.0
    assert json.loads(done.output)["detail"] == "summary"


def test_explain_summary_stays_small_in_the_library_and_the_cli() -> None:
    from expert.application import explain
    from expert.explanation.explain import SUMMARY_BYTES

    for kwargs in ({"model_size_b": 70}, {"model_size_b": "Qwen3-30B-A3B", "method": "full", "deadline_h": 48},
                   {"model_size_b": 7, "what_if": {"method": "qlora"}, "lang": "es"}):
        explanation = explain(detail="summary", **kwargs)
        sent = json.dumps(explanation.to_dict(), separators=(",", ":"), ensure_ascii=False).encode()   # as MCP sends it
        assert len(sent) <= SUMMARY_BYTES <= 3000
        assert len(explanation.render("markdown").encode()) <= 3000
        assert explanation.to_dict()["how"] and explanation.to_dict()["detail"] == "summary"
    done = CliRunner().invoke(main, ["explain", "--model-size", "70", "--detail", "summary"])
    assert done.exit_code == 0 and len(done.output.encode()) <= 4096 and "Why not" in done.output


def test_saved_state_takes_the_other_names_of_fields_too() -> None:
    state = {"version": 2, "lang": "en", "catalog": [], "known": {"model": "70B"}, "answers": {"vram": 24},
             "history": ["vram"]}
    assert Consultation.from_dict(state).facts() == {"model_size_b": 70.0, "vram_gb": 24.0}
    with pytest.raises(InputError):
        Consultation.from_dict({**state, "known": {"colour": "red"}})
    with pytest.raises(InputError) as caught:       # one field under two names: refused, not the last kept
        Consultation.from_dict({**state, "lang": "es", "answers": {"model": "8B", "model_size_b": "70B"},
                                "history": ["model_size_b"]})
    assert str(caught.value) == "state: «answers» da model_size_b dos veces; dalo una sola vez."


@pytest.mark.parametrize("written, plain", [
    ("in ½ day", "in 0.5 day"), ("in 1½ days", "in 1.5 days"), ("1 ½ days", "1.5 days"), ("١٫٥", "1.5"),
    ("１．５ days", "1.5 days"), ("10⁴", "10000"), ("2⁴B", "16B"), ("1.5×10⁴", "15000"), ("1e4", "10000"),
    ("10^4", "10000"), ("1.5 x 10^4", "15000"), ("2**10", "1024"), ("footnote¹ here", "footnote  here"),
    ("Mixtral-8x7B", "Mixtral-8x7B"), ("RTX 4090", "RTX 4090"),
])
def test_numbers_are_read_as_written(written: str, plain: str) -> None:
    from expert.input.values import plain_numbers

    assert plain_numbers(written) == plain


@pytest.mark.parametrize("written", ["1e400", "10^400", "9⁹⁹⁹", "10**31"])
def test_numbers_beyond_any_figure_are_refused(written: str) -> None:
    from expert.input.values import Unreadable, plain_numbers

    with pytest.raises(Unreadable):
        plain_numbers(written)


def test_a_value_given_twice_is_refused_at_every_entry_point() -> None:
    """Under one name or two, a second value is an error, never the one kept:
    click keeps the last of an option given twice, and a mapping the last key."""
    from expert.application import explain

    for args in (["--model-size", "8", "--model", "70"], ["--vram", "24", "--gpu", "48"],
                 ["--rocm-ok", "--no-rocm"], ["--model-size=8", "--model-size=9"],
                 ["--price", "h100-80gb=2", "--price", "h100-80gb=3"]):
        done = CliRunner().invoke(main, ["advise", *args, "--lang", "es"])
        assert done.exit_code == 2 and "dos veces" in done.output, (args, done.output)
    done = CliRunner().invoke(main, ["advise", "--model-size", "8", "--model", "70"])
    assert "--model-size is given twice (as --model-size and --model); give it once." in done.output
    for what_if in ({"model_size_b": "70B", "model": "8B"}, {"vram": 24, "gpu": 48}):
        with pytest.raises(InputError) as caught:
            explain(model_size_b=8, what_if=what_if)
        assert "given twice" in str(caught.value)
    done = CliRunner().invoke(main, ["explain", "--model-size", "8", "--what-if", "model=70B",
                                     "--what-if", "model-size=13", "--lang", "es"])
    assert done.exit_code == 2 and "dado dos veces, como model y como model_size_b" in done.output


def test_what_if_and_why_not_read_names_as_the_other_arguments_do() -> None:
    from expert.application import explain

    done = CliRunner().invoke(main, ["explain", "--model-size", "8", "--what-if", "model=70B", "--format", "json"])
    assert done.exit_code == 0 and json.loads(done.output)["what_if"]["changes"]["model_size_b"] == 70.0
    done = CliRunner().invoke(main, ["explain", "--model-size", "8", "--what-if", "deadlin=4", "--lang", "es"])
    assert done.exit_code == 2 and "what_if: campo desconocido «deadlin»" in done.output
    assert "¿Quisiste decir deadline_h?" in done.output
    done = CliRunner().invoke(main, ["explain", "--model-size", "8", "--what-if", "deadline4", "--lang", "es"])
    assert done.exit_code == 2 and "no es CAMPO=VALOR" in done.output
    for named in ("H100 80GB", " h100-80gb ", "NVIDIA H100 80 GB"):
        assert [w.gpu for w in explain(model_size_b=70, method="lora", why_not=named).why_not] == ["h100-80gb"]
    with pytest.raises(InputError) as caught:
        explain(model_size_b=70, why_not="A100")          # two cards of that name: which?
    assert caught.value.field == "why_not"


def test_estimate_takes_the_other_names_of_its_arguments_and_refuses_unknown_ones() -> None:
    from expert.interfaces.api import estimate

    assert estimate(model="70B").setup.model_size_b == 70.0
    assert estimate(examples=5000, gpu="rtx-4090").time["tokens"] == 5000 * 1024
    with pytest.raises(InputError) as caught:
        estimate(colour=1)                          # was a TypeError
    assert caught.value.field == "colour" and "model_size_b" in str(caught.value)
    with pytest.raises(InputError):
        estimate(model="70B", model_size_b=8)


def test_estimate_reads_yes_and_no_as_the_profile_does() -> None:
    from expert.interfaces.api import estimate

    assert estimate(model_size_b=8, method="full", offload="sí", lang="es").setup.offload is True
    assert estimate(model_size_b=8, method="full", checkpointing="no").setup.checkpointing is False
    with pytest.raises(InputError) as caught:
        estimate(model_size_b=8, offload="maybe", lang="es")
    assert caught.value.field == "offload" and str(caught.value).endswith("responde sí o no.")


def test_an_answer_in_words_is_taken_unless_it_says_no_to_it() -> None:
    consultation = Consultation(lang="es")
    for answer, value in (("no gpu", None), ("sin GPU", None), ("una 4090", "rtx-4090"), ("yes, a 3090", "rtx-3090")):
        consultation.answer("vram_gb", answer)
        assert consultation.answers["vram_gb"] == value, answer
    consultation.answer("deadline_h", "sin prisa")
    assert consultation.answers["deadline_h"] is None
    for answer in ("not lora", "nunca qlora", "full or lora", "lora o qlora"):
        with pytest.raises(AnswerError) as caught:
            consultation.answer("method", answer)
        assert "dice lo que no quieres" in str(caught.value) or "más de una respuesta" in str(caught.value)
    assert "method" not in consultation.answers
    # what the reviewer of this reader found refused, and is one answer: kept
    for field, answer, value in (
            ("vram_gb", "una 4090 de 24 GB", "rtx-4090"), ("vram_gb", "my 3090 with 24GB", "rtx-3090"),
            ("deadline_h", "no más de 2 días", 48.0), ("deadline_h", "not more than 8 hours", 8.0),
            ("method", "LoRA, no sé", "lora"), ("method", "lora on the full dataset", "lora"),
            ("method", "lora rather than full", "lora"), ("dataset_examples", "about 50k, not more", 50000),
            ("vram_gb", "24 GB, no more", 24.0)):
        consultation.answer(field, answer)
        assert consultation.answers[field] == value, answer
    with pytest.raises(AnswerError) as caught:
        consultation.answer("vram_gb", "no, but I will buy a 4090")
    assert "dice que ninguna y nombra una tarjeta" in str(caught.value)


def test_after_yes_the_question_which_card_offers_none_as_a_change_of_mind() -> None:
    consultation = Consultation(model_size_b=7, method="lora", lang="es")
    assert consultation.next_question().default_label == "ninguna GPU propia"
    consultation.answer("vram_gb", "sí")
    question = consultation.next_question()
    assert question.id == "vram_gb" and question.default_label == "ninguna, al final"


def test_an_option_is_counted_once_and_its_value_is_not_an_option() -> None:
    """The check for options given twice skips their values, whatever they
    look like: a --what-if value that is a flag's name, --color's optional
    value, a short option with its value attached."""
    done = CliRunner().invoke(main, ["explain", "--model", "70", "--method", "lora", "--what-if", "--method=qlora",
                                     "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["what_if"]["changes"]["method"] == "qlora"
    for args in (["--model-size", "8", "--color", "--model-size", "70"], ["-m", "8", "-m70"]):
        done = CliRunner().invoke(main, ["advise", *args])
        assert done.exit_code == 2 and "--model-size is given twice" in done.output, args
    assert CliRunner().invoke(main, ["advise", "--model-size", "8", "--color", "never"]).exit_code == 0
    done = CliRunner().invoke(main, ["advise", "--model-size", "8", "--model-size", "9", "--help"])
    assert done.exit_code == 0 and "--model-size" in done.output           # the help asked for
    done = CliRunner().invoke(main, ["--lang", "es", "advise", "--model-size", "8", "--model-size", "70"])
    assert done.exit_code == 2 and "aparece dos veces" in done.output       # --lang before the command


def test_a_price_with_a_thousands_separator_is_refused() -> None:
    for price in ("1,024", "1.000"):
        done = CliRunner().invoke(main, ["advise", "--model-size", "70", "--price", f"h100-80gb={price}"])
        assert done.exit_code == 2 and "prices" in done.output, price
    assert CliRunner().invoke(main, ["advise", "--model-size", "70", "--price", "h100-80gb=2,50"]).exit_code == 0


def test_free_text_does_not_take_a_choice_it_offers_or_refuses() -> None:
    for message in ("full or lora", "not lora, full please", "lora o qlora"):
        told = Consultation().tell(message)
        assert "method" not in told.understood and "method" in told.problems, message
    told = Consultation().tell("70B with lora on the full dataset")
    assert told.understood == {"model_size_b": 70.0, "method": "lora"}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_summary_fits_3_kb_and_says_what_it_leaves_out(lang: str) -> None:
    """Issue 38: a chat's summary takes at most 3,000 bytes, its JSON (compact,
    UTF-8, as MCP sends it) and its markdown alike, each fitted on its own.
    What does not fit is left out from the end (advice, then the options after
    the pick, then warnings) and counted; the pick stays; text shows what
    markdown shows, and neither the prices' fine print its rule keeps for the
    full form."""
    from expert.explanation.result import SUMMARY_BYTES

    result = advise(model_size_b=405, method="full", deadline_h="12 min", budget="high", lang=lang)
    data = result.to_dict("summary")
    markdown, text = result.render("markdown", detail="summary"), result.render("text", detail="summary", width=2000)
    assert SUMMARY_BYTES == 3000
    assert len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()) <= 3000
    assert len(markdown.encode()) <= 3000
    assert data["recommendations"][0]["gpu"] == result.recommendations[0].gpu
    assert len(data["recommendations"]) + data["more_recommendations"] == len(result.recommendations)
    in_summary = [n for n in result.advice if n.id != "price-basis"]
    assert "price-basis" in [n.id for n in result.advice]
    assert len(data["advice"]) + data.get("more_advice", 0) == len(in_summary) and data["more_advice"] >= 1
    assert len(data["warnings"]) + data.get("more_warnings", 0) == len(result.warnings)
    shown = result.summary_selection("markdown")
    kept = {n.id for n in shown.advice + shown.warnings}
    assert shown.recommendations[0] == result.recommendations[0] and 1 <= shown.more_advice <= len(in_summary)
    for note in result.advice + result.warnings:
        assert (note.text.split(":")[0].replace("$", "\\$") in markdown) == (note.id in kept), note.id
        assert (note.text in text) == (note.id in kept), note.id
    said = (f"{shown.more_advice} more pieces of advice" if lang == "en" else f"{shown.more_advice} consejos más")
    assert said in markdown and said in text
    # the markdown, without the JSON's keys and profile, keeps more of the advice
    common = advise(model_size_b=70, method="lora", deadline_h=8, lang=lang)
    assert len(common.summary_selection("markdown").advice) > len(common.to_dict("summary")["advice"])
    assert len(common.render("markdown", detail="summary").encode()) <= 3000

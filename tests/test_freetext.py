"""Free text: Consultation.tell() and answers in words, in English and Spanish."""

from __future__ import annotations

from pathlib import Path

import pytest

from expert import Consultation
from expert.interfaces.api import knowledge_base
from expert.errors import InputError, KnowledgeBaseError
from expert.input.freetext import extract, vocabulary
from conftest import python_steps

OPENING = {
    "en": "I want to fine-tune Mistral-7B with LoRA on my 3090",
    "es": "Quiero ajustar Mistral-7B con LoRA en mi 3090",
}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_opening_sentence_is_not_asked_again(lang: str) -> None:
    c = Consultation(lang=lang)
    told = c.tell(OPENING[lang])
    # the model by its name in the table, the card by its id (its speed is known)
    assert told.understood == {"model_size_b": "Mistral-7B-v0.3", "method": "lora", "vram_gb": "rtx-3090"}
    assert told.text.startswith("Understood:" if lang == "en" else "Entendido:") and "RTX 3090 (24 GiB)" in told.text
    asked = []
    while (question := c.next_question()) is not None:
        asked.append(question.id)
        c.answer(question.id, question.default if question.default is not None else "no")
    assert not {"model_size_b", "method", "vram_gb"} & set(asked)
    assert asked and c.result().recommendations[0].gpu == "own"


@pytest.mark.parametrize("text, expected", [
    ("Llama-3-70B, full fine-tuning, tengo una RTX 4090, presupuesto bajo, lo necesito para mañana, "
     "50 mil ejemplos, producción",
     {"model_size_b": "Llama-3-70B", "method": "full", "vram_gb": "rtx-4090", "budget": "low", "deadline_h": 24.0,
      "dataset_examples": 50000, "purpose": "production"}),
    ("qlora of a 13b model, no gpu, dataset of 50k, by tomorrow, spot is fine, no rocm",
     {"model_size_b": 13.0, "method": "qlora", "vram_gb": None, "dataset_examples": 50000, "deadline_h": 24.0,
      "interruptible": True, "rocm_ok": False}),
    ("my GPU has 24 GB and I need it in 48h with 10,000 examples",
     {"vram_gb": 24.0, "deadline_h": 48.0, "dataset_examples": 10000}),
    ("sin prisa, un experimento, ROCm me vale, 1,5 millones de ejemplos",
     {"deadline_h": None, "purpose": "experiment", "rocm_ok": True, "dataset_examples": 1500000}),
    ("it cannot be interrupted, 2 days, a 7 billion parameter model",
     {"interruptible": False, "deadline_h": 48.0, "model_size_b": 7.0}),
    ("should I rent an H100 for a 70B?", {"model_size_b": 70.0}),   # a card without "my" is not owned
    ("tengo 64 GB de RAM", {}),                                      # memory, but not a GPU's
    ("16 bits, 4-bit", {}),
    ("fine-tune mixtral 8x7b with qlora", {"model_size_b": "Mixtral-8x7B", "method": "qlora"}),
    ("3 epochs of 2k tokens per example", {"epochs": 3.0, "tokens_per_example": 2048}),   # a k of tokens: 1,024
    ("secuencias de 2048 tokens y 3 épocas", {"epochs": 3.0, "tokens_per_example": 2048}),
    # not misread: an exponent, a negative
    ("1e309 ejemplos", {}), ("-5 días", {}), ("mi GPU tiene -24 GB", {}),
    ("deepseek r1 distill qwen 32b en mi rtx 5090",
     {"model_size_b": "DeepSeek-R1-Distill-Qwen-32B", "vram_gb": "rtx-5090"}),
])
def test_what_is_recognised(text: str, expected: dict) -> None:
    assert extract(text, knowledge_base()) == expected


@pytest.mark.parametrize("field, said, value", [
    ("vram_gb", "RTX 3090", "rtx-3090"), ("vram_gb", "yes, a 4090", "rtx-4090"), ("vram_gb", "una 4090", "rtx-4090"),
    ("vram_gb", "NVIDIA A100 80 GB", "a100-80gb"), ("dataset_examples", "50 mil", 50000),
    ("dataset_examples", "2 million", 2000000), ("deadline_h", "by tomorrow", 24.0),
    ("deadline_h", "para mañana", 24.0), ("method", "full fine-tuning", "full"), ("budget", "cheap", "low"),
])
def test_answers_in_words(field: str, said: str, value: object) -> None:
    c = Consultation(lang="en")
    c.answer(field, said)
    assert c.answers[field] == value


def test_an_answer_still_unrecognised_is_refused_naming_the_field() -> None:
    c = Consultation(lang="es")
    with pytest.raises(InputError) as caught:
        c.answer("vram_gb", "quizás")
    assert caught.value.field == "vram_gb" and "quizás" in str(caught.value)


def test_tell_reports_a_value_out_of_bounds_and_keeps_the_rest() -> None:
    c = Consultation(lang="es")
    told = c.tell("un modelo de 0B con qlora")
    assert told.understood == {"method": "qlora"}
    assert "model_size_b" in told.problems and "al menos" in told.text
    assert c.tell("hola").text == "Nada en ese mensaje responde a una pregunta."


def test_tell_is_bounded_and_survives_saved_state() -> None:
    c = Consultation(lang="en")
    with pytest.raises(InputError) as caught:
        c.tell("lora " * 500)
    assert caught.value.field == "text"
    with pytest.raises(InputError):
        c.tell(None)  # type: ignore[arg-type]
    c.tell(OPENING["en"])
    again = Consultation.from_dict(c.to_dict())
    assert again.answers == c.answers and again.next_question().id == c.next_question().id


def test_the_vocabulary_is_read_from_the_knowledge_base(tmp_path: Path) -> None:
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(Path(knowledge_base().root), rules)
    text = (rules / "vocabulary.toml").read_text(encoding="utf-8")
    (rules / "vocabulary.toml").write_text(text.replace('"cheap", "cheaply"', '"abuela", "cheaply"'),
                                           encoding="utf-8")
    kb = knowledge_base(rules)
    assert extract("on an abuela", kb) == {"budget": "low"}
    (rules / "vocabulary.toml").write_text(text + '\n[phrases.colour]\nred = ["red"]\n', encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="colour"):
        vocabulary(knowledge_base(rules))


@pytest.mark.parametrize(("text", "linear"), [
    ("1" * 1000, True), ("1," * 500, True), ("1.1" * 333, True), ("9 " * 500, True), ("é" * 1000, True),
    ("\u202e" * 1000, True),
    # A word read again and again: each is checked against every stretch already used (input/freetext.py,
    # _Text.free), so the work grows with the square of the words; MAX_TELL bounds it (2026-12-07: 372,769
    # steps for 500 characters of "lora ", 945,819 for 1,000).
    ("lora " * 200, False), (("my 3090 " * 125)[:1000], False)])
def test_hostile_text_is_read_quickly(text: str, linear: bool) -> None:
    # Work counted, not timed (tests/conftest.py, python_steps): the steps for a quarter, a half and the
    # whole of the text (MAX_TELL characters, the most tell() reads). Linear work adds twice as many steps
    # from the half to the whole as from the quarter to the half; the square would add four times as many.
    Consultation(lang="en").tell(text[:len(text) // 4])   # what is loaded once (the vocabulary) loaded first
    steps = []
    for size in (len(text) // 4, len(text) // 2, len(text)):
        c = Consultation(lang="en")
        with python_steps() as counted:
            c.tell(text[:size])
        steps.append(counted.count)
    assert steps[2] < 1_200_000   # the most, 945,819 for "lora " (2026-12-07); a sentence takes 10-50 thousand
    if linear:
        assert steps[2] - steps[1] <= 2.5 * (steps[1] - steps[0]) + 2_000, steps
    c = Consultation(lang="en")
    with python_steps() as counted, pytest.raises(InputError):
        c.tell(text + " " + text)    # over MAX_TELL: refused before it is read
    assert counted.count < min(steps[0], 5_000), counted.count


def test_expert_check_reports_a_bad_vocabulary(tmp_path: Path) -> None:
    import shutil

    from expert.knowledge.check import check

    rules = tmp_path / "rules"
    shutil.copytree(Path(knowledge_base().root), rules)
    text = (rules / "vocabulary.toml").read_text(encoding="utf-8")
    (rules / "vocabulary.toml").write_text(text.replace('qlora = ["qlora"', 'half = ["qlora"'), encoding="utf-8")
    problems = check(rules)
    assert any("phrases.method.half" in problem.params.get("problem", "") for problem in problems), problems

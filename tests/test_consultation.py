"""The turn-by-turn consultation (library) and `expert ask` (CLI)."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

import pytest
from click.testing import CliRunner

from expert import Result, advise
from expert.interfaces.cli.main import main
from expert.interfaces.consultation import AnswerError, Consultation

# Representative answers per question: every combination that changes which
# questions come next.
BRANCHES: dict[str, list[Any]] = {
    "model_size_b": ["7B", "70"], "method": ["2", "full fine-tuning"], "vram_gb": ["no", "80 GB"],
    "dataset_examples": ["10k"], "tokens_per_example": ["2k"], "epochs": ["2"], "purpose": ["experiment", "2"], "budget": ["low"], "rocm_ok": ["sí"],
    "deadline_h": ["8h"], "interruptible": ["yes"], "stack": ["tuned"], "provider": ["Lambda"],
}


def walk(consultation: Consultation, asked: list[str], paths: list[tuple[list[str], Consultation]]) -> None:
    question = consultation.next_question()
    if question is None:
        paths.append((asked, consultation))
        return
    for raw in BRANCHES[question.id]:
        branch = Consultation.from_dict(json.loads(json.dumps(consultation.to_dict())))
        branch.answer(question.id, raw)
        walk(branch, asked + [question.id], paths)


@pytest.fixture(scope="module")
def paths() -> list[tuple[list[str], Consultation, Result, dict[str, Any]]]:
    """Every path through the questions: what was asked, the consultation, its
    result, and what advise() answers for the same facts (made once for the
    module). The engine runs once per profile here: advise() reads the run
    the consultation's result() made when, and only when, both give the
    engine the same profile (a profile built otherwise is run again, and its
    result compared); the engine's answer for a profile is the same every
    run, whatever the hash seed (tests/test_embedding.py).

    On the guide's six cards (``catalog="guide"``), not today's 23: what is
    tested is the questions and that the consultation answers as advise(),
    which the catalog does not change (the provider question is asked on
    both); a question's ``ask_if`` runs the rules on the answers so far, and
    with 23 cards the fixture took 18.6 s of CPU, with six 7.4 s (side by
    side, each pinned to a core, 2026-12-07)."""
    found: list[tuple[list[str], Consultation]] = []
    walk(Consultation(lang="en", catalog="guide"), [], found)
    made = []
    for asked, consultation in found:
        result = consultation.result()
        # An optional field answered "no" is given as "none" (an answer, not a field left out).
        facts = {k: "none" if v is None else v for k, v in consultation.facts().items()}
        made.append((asked, consultation, result, advise(**facts, lang="en", catalog="guide").to_dict()))
    return made


def test_every_path_reaches_the_result_advise_gives_for_the_same_facts(paths) -> None:  # type: ignore[no-untyped-def]
    assert len(paths) == 14
    for asked, _, result, expected in paths:
        assert result.to_dict() == expected, asked


def test_no_own_gpu_is_an_answer_not_an_assumption() -> None:
    c = Consultation(lang="es", model_size_b=8)
    c.answer("vram_gb", "no")
    c.answer("deadline_h", "sin plazo")
    result = c.result()
    assert result.profile["vram_gb"] is None and result.profile["deadline_h"] is None
    assert not {"vram_gb", "deadline_h"} & set(result.assumed)
    assert "vram_gb" not in advise(vram_gb="none", lang="en").assumed


def test_questions_are_asked_only_when_they_matter(paths) -> None:  # type: ignore[no-untyped-def]
    sequences = {tuple(asked) for asked, _, _, _ in paths}
    for asked, consultation, result, _ in paths:
        facts = consultation.facts()
        own_fits = facts.get("vram_gb") == 80 and result.recommendations[0].gpu == "own"
        if own_fits:  # nothing rented: no purpose, budget, ROCm or interruption questions
            assert not {"purpose", "budget", "rocm_ok", "interruptible"} & set(asked), asked
        if facts.get("purpose") == "production":
            assert "rocm_ok" not in asked
    # 7B LoRA on one rented card in about 3 h: no deadline question.
    # (at a low budget, whose prices: the provider)
    assert ("model_size_b", "method", "vram_gb", "dataset_examples", "purpose", "budget", "rocm_ok",
            "interruptible", "provider") in sequences
    # 70B: the deadline matters, and with it the software stack the hours assume.
    assert any("deadline_h" in seq for seq in sequences)
    assert all("stack" in seq for seq in sequences if "deadline_h" in seq)
    longest = max(len(seq) for seq in sequences)
    shortest = min(len(seq) for seq in sequences)
    assert (shortest, longest) == (4, 13)


def test_question_shape_and_why() -> None:
    c = Consultation(lang="es")
    q = c.next_question()
    assert q is not None and q.id == "model_size_b" and q.unit == "B" and q.default == 7
    assert q.text == "¿Qué tamaño tiene el modelo que quieres ajustar?"
    assert "vram-requirement" in q.rules and "Reglas que usan esta respuesta" not in q.why and q.why
    c.answer("model_size_b", "Llama-3-8B")
    q = c.next_question()
    assert q.id == "method" and [ch["value"] for ch in q.choices] == ["full", "lora", "qlora"]
    assert q.choices[0]["label"] == "ajuste completo" and q.default_label == "LoRA"


@pytest.mark.parametrize("field, raw, value", [
    ("model_size_b", "70B", 70), ("model_size_b", "Llama-3-8B", 8.03), ("vram_gb", "8 GB", 8), ("vram_gb", "no", None),
    ("vram_gb", "ninguna", None), ("deadline_h", "2 días", 48), ("deadline_h", "2 days", 48),
    ("deadline_h", "sin plazo", None), ("rocm_ok", "sí", True), ("rocm_ok", "yes", True), ("rocm_ok", "no", False),
    ("rocm_ok", "1", True), ("method", "3", "qlora"), ("method", "QLoRA (4 bits)", "qlora"),
    ("budget", "bajo", "low"), ("dataset_examples", "10k", 10_000),
])
def test_free_text_answers(field: str, raw: str, value: Any) -> None:
    c = Consultation(lang="es")
    c.answer(field, raw)
    # A model's name is kept as named (saved state keeps it); the result resolves it.
    assert c.answers[field] == (raw if raw == "Llama-3-8B" else value)
    assert c.result().profile[field] == value


@pytest.mark.parametrize("field, raw", [("model_size_b", "big"), ("method", "4"), ("vram_gb", "-1"),
                                        ("budget", "whatever"), ("rocm_ok", "maybe"), ("colour", "red")])
def test_bad_answers_raise_and_store_nothing(field: str, raw: str) -> None:
    c = Consultation(lang="en")
    c.answer("model_size_b", "13")
    with pytest.raises(AnswerError) as caught:
        c.answer(field, raw)
    assert isinstance(caught.value, ValueError) and caught.value.field == field
    assert c.answers == {"model_size_b": 13}


def test_answers_can_be_changed_and_undone() -> None:
    c = Consultation(lang="en")
    c.answer("model_size_b", "13")
    c.answer("method", "full")
    c.answer("model_size_b", "70")
    assert c.history == ["method", "model_size_b"] and c.answers["model_size_b"] == 70
    assert c.back() == "model_size_b" and c.back() == "method" and c.back() is None
    assert c.answers == {} and c.next_question().id == "model_size_b"


def test_known_facts_are_not_asked_and_state_round_trips_mid_conversation() -> None:
    c = Consultation(lang="es", model_size_b="70B", purpose="production")
    assert c.next_question().id == "method"
    c.answer("method", "lora")
    c.answer("vram_gb", "no")
    state = json.loads(json.dumps(c.to_dict()))
    again = Consultation.from_dict(state)
    assert again.to_dict() == c.to_dict()
    assert again.next_question().id == c.next_question().id == "dataset_examples"
    assert again.result().to_dict() == c.result().to_dict()
    with pytest.raises(ValueError):
        Consultation.from_dict({"version": 99})


def ask(input_text: str, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, ["ask", *args], input=input_text,
                              env={"EXPERT_LANG": "", "LC_ALL": "", "LANG": "", "NO_COLOR": "1"})


def test_cli_ask_answers_why_and_back() -> None:
    # Tokens per example and epochs are asked too: 70B is a long run (Enter takes the defaults);
    # with a deadline, the software stack as well (Enter: typical).
    done = ask("70B\n?\nback\n70\n2\nno\n\n\n\n\n\n\n8\nno\n\nno\n", "--catalog", "guide")
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert "Full fine-tuning needs far more memory than LoRA" in out and "vram-requirement" not in out  # why
    assert out.count("How large is the model you want to fine-tune?") == 2  # back
    assert "About how many tokens long is one training example?" in out
    assert "Which training software will you run" in out
    assert "Recommendation: 4 × H100 80 GB\n  With a 16-bit base" in out
    assert "Show the full reasoning?" in out and "How the answer was reached" not in out


@pytest.mark.parametrize("lang, message", [
    ("en", "Error: fine-tuning method: 'foo' is not accepted; choose full, lora, or qlora. "
           "(the question: Which fine-tuning method will you use?)"),
    ("es", "Error: método de ajuste: «foo» no es válido; elige ajuste completo (full), lora o qlora. "
           "(la pregunta: ¿Qué método de ajuste vas a usar?)"),
])
def test_a_bad_piped_answer_ends_with_exit_2_naming_the_question(lang: str, message: str) -> None:
    done = ask("70B\nfoo\n2\n", "--lang", lang)
    assert done.exit_code == 2, done.output
    assert done.stderr.strip() == message
    assert done.stdout.count("[LoRA] > ") == 1                # read once, not asked again


def test_piped_yes_ends() -> None:
    """`yes | expert` answers 'y' to the first question: an error, not a loop."""
    done = ask("y\n" * 10_000)
    assert done.exit_code == 2
    assert "(the question: How large is the model you want to fine-tune?)" in done.stderr


def test_endless_piped_whys_end() -> None:
    done = ask("?\n" * 10_000)
    assert done.exit_code == 2
    assert done.stderr.startswith("Error: the input ended before an answer to the question: How large")


def test_cli_ask_offers_the_reasoning_and_takes_flags() -> None:
    # (Enter: each card's cheapest price, the provider question a low budget asks)
    done = ask("no\n\n\nyes\n", "--model-size", "7", "--method", "lora", "--purpose", "production", "--budget", "low",
               "--no-interruptible", "--lang", "es")
    assert done.exit_code == 0, done.output
    assert "¿Qué tamaño" not in done.stdout and "¿Tienes ya una GPU?" in done.stdout
    assert "Cómo se llegó a la respuesta" in done.stdout


def test_cli_ask_stops_with_exit_2_naming_the_question_when_piped_input_ends() -> None:
    done = ask("70B\n")
    assert done.exit_code == 2
    assert done.stderr == "Error: the input ended before an answer to the question: Which fine-tuning method will you use?\n"
    assert "Traceback" not in done.output


def test_cli_without_a_command_is_the_consultation() -> None:
    done = CliRunner().invoke(main, [], input="", env={"EXPERT_LANG": "en"})
    assert done.exit_code == 2 and "How large is the model" in done.stdout


def test_cli_ask_rejects_bad_flags_with_exit_2() -> None:
    done = ask("", "--model-size", "-1")
    assert done.exit_code == 2 and "model size:" in done.stderr


@pytest.mark.parametrize("word", ["quit", "exit", "q", "salir", "QUIT"])
def test_quit_ends_the_consultation_like_ctrl_c(word: str) -> None:
    done = ask(f"70B\n{word}\n2\n")
    assert done.exit_code == 130, done.output
    assert done.stdout.count("[LoRA] > ") == 1 and "Recommendation" not in done.stdout


@pytest.mark.parametrize("lang, says", [("en", "quit or Ctrl-C: stop"), ("es", "salir o Ctrl-C: terminar")])
def test_the_opening_says_how_to_quit(lang: str, says: str) -> None:
    assert says in " ".join(ask("quit\n", "--lang", lang).stdout.split())


def test_an_unrecognised_yes_no_is_asked_again() -> None:
    done = ask("no\n\n\nmaybe\nyes\n", "--model-size", "7", "--method", "lora", "--purpose", "production",
               "--budget", "low", "--no-interruptible")
    assert done.exit_code == 0, done.output
    assert done.stdout.count("Show the full reasoning? (yes/no) [no] > ") == 2
    assert "Please answer yes or no" in done.stderr and "How the answer was reached" in done.stdout


def test_a_profile_already_run_is_not_run_again_and_the_store_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """next_question runs the rules once per provisional profile: an answer
    that leaves the profile as it was (the default, taken with Enter) asks
    the next question without a run; the profiles kept are at most
    PROVISIONAL_KEPT a knowledge base."""
    from expert.inference import engine
    from expert.interfaces import provisional as module

    runs: list[dict[str, Any]] = []
    infer = engine.infer

    def counted(kb: Any, profile: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        runs.append(profile)
        return infer(kb, profile, *args, **kwargs)

    c = Consultation(lang="en", model_size_b=70, method="lora", dataset_examples=123_456)
    c.answer("vram_gb", "no")
    c._read_by_helpers()                  # the helpers' reads, once per knowledge base: not counted here
    monkeypatch.setattr(engine, "infer", counted)
    monkeypatch.setattr(module, "PROVISIONAL_KEPT", 2)
    store = module.store_of(c._kb)
    monkeypatch.setattr(store, "envs", OrderedDict())     # what other tests kept set aside
    assert c.next_question().id == "tokens_per_example"
    assert len(runs) == 1 and len(store.envs) == 1
    c.answer("tokens_per_example", str(c._kb.fields["tokens_per_example"].default))   # the default: the same profile
    assert c.next_question().id == "epochs" and len(runs) == 1
    c.answer("epochs", "3")
    assert c.next_question().id == "purpose" and len(runs) == 2
    c.answer("purpose", "production")
    c.next_question()
    assert len(runs) == 3 and len(store.envs) == 2       # the first profile let go
    assert module.store_of(c._kb) is store


def test_the_provisional_store_goes_with_its_knowledge_base() -> None:
    """A knowledge base's provisional consultations (and its helpers' reads)
    are kept while it lives, under its id, and dropped when it is collected:
    a later object that gets the same id starts empty."""
    import gc

    from expert.interfaces import provisional as module

    class Base:
        pass

    kb = Base()
    store = module.store_of(kb)
    store.helper_reads = {"method": {"some-rule"}}
    key = id(kb)
    assert module._BY_KB[key] is store and module.store_of(kb) is store
    del kb
    gc.collect()
    assert key not in module._BY_KB


def test_a_question_whose_condition_the_answers_settle_runs_no_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The software stack is asked when a deadline is given or the run is
    long: with a deadline given, nothing needs the rules' conclusions, and no
    provisional consultation is run; without one, the pick's hours decide."""
    from expert.inference import engine

    runs: list[dict[str, Any]] = []
    infer = engine.infer

    def counted(kb: Any, profile: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        runs.append(profile)
        return infer(kb, profile, *args, **kwargs)

    answers = dict(model_size_b=70, method="lora", dataset_examples=54_321, tokens_per_example=1024, epochs=1,
                   purpose="production", budget="low", rocm_ok=False, interruptible=False, provider="cheapest")
    with_deadline = Consultation(lang="en", **answers, deadline_h=8)
    without = Consultation(lang="en", **answers)
    for c in (with_deadline, without):
        c.answer("vram_gb", "no")
        c._read_by_helpers()              # the helpers' reads, once per knowledge base: not counted here
    monkeypatch.setattr(engine, "infer", counted)
    assert with_deadline.next_question().id == "stack" and runs == []
    with_deadline.answer("stack", "typical")
    assert with_deadline.next_question() is None and runs == []
    assert without.next_question().id == "deadline_h" and len(runs) == 1    # the pick's hours read


@pytest.mark.parametrize("lang, label", [("en", "50,000"), ("es", "50.000")])
def test_back_makes_the_answer_taken_back_the_default(lang: str, label: str) -> None:
    # issue 49: 50k, back, Enter keeps 50,000 (and the answer is given, not assumed)
    # the guide's cards alone: the order of its questions (tokens per example next)
    c = Consultation(lang=lang, catalog="guide", model_size_b=8, method="lora", vram_gb="no")
    assert c.next_question().id == "dataset_examples"
    c.answer("dataset_examples", "50k")
    assert c.back() == "dataset_examples" and "dataset_examples" not in c.answers
    question = c.next_question()
    assert (question.id, question.default, question.default_label) == ("dataset_examples", 50_000, label)
    c.answer(question.id, question.default)
    assert c.answers["dataset_examples"] == 50_000 and not c.earlier
    assert c.next_question().default_label == ("1,024" if lang == "en" else "1.024")   # the next one keeps its own

"""Saved consultation state is data from outside, never a capability: it names
no file, and anything but what to_dict() writes is the documented error."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import python_steps
from expert import Consultation, InputError, register_catalog

ROOT = Path(__file__).resolve().parents[2]
CURRENT = ROOT / "rules" / "catalogs" / "current.toml"
EXPLORE = "EXPERT_FUZZ" in os.environ
SETTINGS = settings(max_examples=int(os.environ.get("EXPERT_FUZZ", "200")), derandomize=not EXPLORE, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def saved(**changes: Any) -> dict[str, Any]:
    state = Consultation(lang="en", model_size_b=70).to_dict()
    state.update(changes)
    return state


def test_state_is_small_plain_data_with_no_paths() -> None:
    c = Consultation(lang="es", catalog=str(CURRENT), model_size_b=13)
    c.answer("method", "lora")
    state = c.to_dict()
    text = json.dumps(state)
    assert len(text) < 400 and "/" not in text and "rules_dir" not in state
    assert state["catalog"][0].startswith("sha256-")
    again = Consultation.from_dict(json.loads(text))
    assert again.result().to_dict() == c.result().to_dict()


@pytest.mark.parametrize("catalog", [["/dev/zero"], ["/etc/passwd"], [str(CURRENT)], ["sha256-0000000000000000"],
                                     ["x" * 5000], "/dev/zero", [1], [None]])
def test_a_catalog_in_state_is_only_a_registered_id(catalog: Any) -> None:
    state = saved(catalog=catalog)
    with pytest.raises(InputError):
        Consultation.from_dict(state)   # what is loaded once (the knowledge base, its catalogs) loaded first
    with python_steps() as counted, pytest.raises(InputError) as caught:
        Consultation.from_dict(state)
    # Work counted, not timed (tests/conftest.py): refused after the same few thousand Python steps
    # whatever the name's length (7,624-8,062 on 2026-12-07, 5,000 characters included), a sixtieth of
    # what a consultation of a good state takes (489,704); nothing is opened.
    assert caught.value.field in ("catalog", "state") and counted.count < 20_000, counted.count


def test_registered_ids_round_trip_and_a_changed_file_is_refused(tmp_path: Path) -> None:
    card = tmp_path / "mine.toml"
    card.write_text('[[gpu]]\nid = "mine"\nname = "Mine"\nvendor = "nvidia"\nvram_gb = 96\ncost = "medium"\n')
    assert register_catalog(card, name="our-cards") == "our-cards"
    state = Consultation(lang="en", catalog="our-cards", model_size_b=7).to_dict()
    assert state["catalog"] == ["our-cards"]
    assert "mine" in {r.gpu for r in Consultation.from_dict(state).result().recommendations}
    card.write_text(card.read_text().replace("96", "48"))
    with pytest.raises(InputError) as caught:
        Consultation.from_dict(state)
    assert caught.value.field == "catalog" and "changed" in str(caught.value)
    with pytest.raises(InputError):
        register_catalog(card, name="../etc")


@pytest.mark.parametrize("state", [
    None, [], "state", 42, {"version": 99}, {"version": 1},
    saved(answers=[]), saved(history=3), saved(known="70B"), saved(answers={"colour": "red"}),
    saved(answers={"model_size_b": [70]}), saved(answers={"model_size_b": {"a": 1}}),
    saved(answers={"dataset_examples": 10**400}), saved(answers={"model_size_b": "7" * 15000}),
    saved(history=["model_size_b", "model_size_b"]), saved(history=["nope"]), saved(lang="fr"), saved(lang=None),
    saved(rules_dir="/etc"), saved(version=True), saved(known={"model_size_b": float("nan")}),
    {k: v for k, v in saved().items() if k != "answers"}, saved(answers={"model_size_b": "x" * 9000}),
])
def test_malformed_state_is_the_documented_error(state: Any) -> None:
    with pytest.raises(InputError):
        Consultation.from_dict(state)   # what is loaded once loaded first
    with python_steps() as counted, pytest.raises(InputError) as caught:
        Consultation.from_dict(state)
    # Work counted, not timed (tests/conftest.py): refused before any consultation is run, whatever the
    # size (2026-12-07: 161-4,623 Python steps, 15,000 digits and 9,000 letters included; 97,224 for a
    # number of 401 digits, read as text; a good state's consultation takes 489,704).
    assert isinstance(caught.value, ValueError) and counted.count < 150_000, counted.count


values = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**40, max_value=10**40), st.floats(),
                   st.text(max_size=30), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5),
                                                                                              st.integers(), max_size=2))
fields = st.sampled_from(["model_size_b", "method", "budget", "rocm_ok", "deadline_h", "vram_gb", "dataset_examples",
                          "purpose", "interruptible", "colour", ""])
states = st.fixed_dictionaries({}, optional={
    "version": st.one_of(st.just(2), values), "lang": st.one_of(st.sampled_from(["en", "es"]), values),
    "catalog": st.one_of(st.just([]), values, st.lists(st.text(max_size=20), max_size=3)),
    "known": st.one_of(st.dictionaries(fields, values, max_size=4), values),
    "answers": st.one_of(st.dictionaries(fields, values, max_size=4), values),
    "history": st.one_of(st.lists(fields, max_size=4), values),
    "rules_dir": values,
})


@SETTINGS
@given(states)
def test_any_state_gives_a_consultation_or_the_documented_error(state: dict[str, Any]) -> None:
    try:
        Consultation.from_dict(state)
    except InputError:
        pass


def test_the_knowledge_base_cache_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from expert import advise
    from expert.knowledge import bases

    # The bound as the cache reads it, made small: a few consultations past it
    # show it holds (at its shipped size, 32, this was 52 consultations).
    monkeypatch.setattr(bases, "KB_CACHE_SIZE", 4)
    card = tmp_path / "edited.toml"
    for n in range(bases.KB_CACHE_SIZE + 8):  # each edit of a catalog is a new entry
        card.write_text(f'[[gpu]]\nid = "edited"\nname = "Edited"\nvendor = "nvidia"\nvram_gb = {24 + n}\n'
                        'cost = "low"\n')
        os.utime(card, ns=(n * 10**9, n * 10**9))
        # beside the guide's six cards (the market is not what is tested: docs/development.md, "Tests")
        assert advise(catalog=["guide", card], lang="en").recommendations
    assert len(bases._KB) <= bases.KB_CACHE_SIZE


@pytest.mark.parametrize("catalog", [123, [None], b"x.toml", ["x.toml", 5], "a\x00.toml"])
def test_a_catalog_argument_of_the_wrong_kind_is_the_documented_error(catalog: Any) -> None:
    from expert import KnowledgeBaseError, advise

    with pytest.raises((InputError, KnowledgeBaseError)):
        advise(catalog=catalog, lang="en")

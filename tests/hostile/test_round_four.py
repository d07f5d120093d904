"""Hostile round four (issue 48), item 1: WHY NOT's search stays inside the
answers' bounds (rules/profile.toml, expert/input/bounds.py), so wherever
advise answers a profile, explain answers it too: in the library, on
/api/explain, on the page and over MCP."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from expert import InputError, advise, explain
from expert.input.bounds import Bounds

# A grid of realistic profiles: small to huge models, each method, a small and a large dataset, a
# deadline of a day or none. On main 409ece6 four of them made explain refuse the user's own deadline.
GRID = [dict(model_size_b=size, method=method, dataset_examples=examples, epochs=3, deadline_h=deadline)
        for size, method, examples, deadline in itertools.product(
            ["8", "70", "405"], ["full", "lora", "qlora"], [1_000, 1_000_000], [24, None])]
# The profile: a card would need a deadline of 11,930 h (ZeRO-Offload's CPU steps are inside its
# recipe's measured slowdown, not timed again: timing.toml [optimizer_step]), beyond the longest accepted
# (8,760 h). Since
# issue 47 a rented RTX 4090 is answered by QLoRA over four of them (shard-over-pcie); one's own 24 GB card,
# as fast and all there is, is the card of that figure.
BEYOND = dict(model_size_b="70", method="full", dataset_examples=1_000_000, epochs=3, deadline_h=24, vram_gb=24)


def test_bounds_hold_what_the_reader_accepts() -> None:
    deadline = Bounds(min=0.01666, max=8760, kind="hours")
    assert deadline.holds(8760) and deadline.holds(0.01666) and deadline.holds(24)
    assert not deadline.holds(8760.1) and not deadline.holds(0.01)
    assert Bounds(min_exclusive=0).holds(0.5) and not Bounds(min_exclusive=0).holds(0)


# On the guide's six cards (docs/development.md, "Tests"): what is held here is WHY NOT's search, which
# changes answers, not cards, and stays within the answers' bounds whichever cards it explains; the four
# profiles of main 409ece6 were found on these six. On 2026-12-07 the grid took 9.2 s of CPU on them,
# 28.7 s on the market's 23 (100 and 224 WHY NOTs; 16 and 84 changes offered, none of a deadline on either).
@pytest.mark.parametrize("profile", GRID, ids=lambda p: "-".join(str(v) for v in p.values()))
def test_wherever_advise_answers_explain_answers(profile: dict[str, Any]) -> None:
    try:
        advise(**profile, catalog="guide")
    except InputError:
        return      # a profile advise refuses, explain may refuse too
    explanation = explain(**profile, catalog="guide")
    for why in explanation.why_not:
        if why.change:
            deadline = why.change["fields"].get("deadline_h")
            assert deadline is None or deadline <= 8760, why.change     # only changes a person can make


@pytest.mark.parametrize("lang, words", [("en", "It would need this deadline: 11,930 hr, above the most "
                                                "accepted (8,760 hr)"),
                                         ("es", "Haría falta este valor de plazo: 11.930 h, por encima del "
                                                "máximo aceptado (8.760 h)")])
def test_a_change_beyond_the_bounds_is_said_to_be_impossible(lang: str, words: str) -> None:
    explanation = explain(**BEYOND, lang=lang)
    texts = [" ".join(why.text.split()) for why in explanation.why_not]
    assert any(words in text for text in texts), texts
    # and the user's own deadline is not the field any message blames
    assert all("11930" not in str(why.change) for why in explanation.why_not)


def test_a_change_within_the_bounds_is_still_offered() -> None:
    why = explain(model_size_b=8, method="lora", deadline_h=0.8, why_not="a100-80gb", lang="en").why_not[0]
    assert why.change is not None and why.change["fields"] == {"deadline_h": 1.4}


def test_the_api_the_page_and_mcp_explain_the_same_profile() -> None:
    from starlette.testclient import TestClient

    from expert.interfaces.web import create_app

    query = {"model-size": "70", "method": "full", "dataset": "1000000", "epochs": "3", "deadline": "24", "vram": "24"}
    with TestClient(create_app(), base_url="http://127.0.0.1:8000") as client:
        api = client.get("/api/explain", params=query)
        assert api.status_code == 200, api.text
        assert any("8,760 hr" in why["text"] for why in api.json()["why_not"])
        page = client.get("/", params=query)
        assert page.status_code == 200 and "11930" not in page.text and 'aria-invalid="true"' not in page.text

    pytest.importorskip("mcp")
    from expert.interfaces.mcp.server import build_server

    arguments = {"model_size_b": 70, "method": "full", "dataset_examples": 1_000_000, "epochs": 3, "deadline_h": 24,
                 "vram_gb": 24}
    result = asyncio.run(build_server().call_tool("explain", arguments))
    assert not result.is_error, result.content


# --- item 6: a catalog too large to consult within 15 s and 600 MB is refused before any work -------------

@pytest.mark.parametrize("lang, words", [("en", "too many cards: the user catalogs given together may have at "
                                                "most 2000"),
                                         ("es", "demasiadas tarjetas: los catálogos de usuario que se pasan "
                                                "juntos pueden tener como mucho 2000")])
def test_a_catalog_of_10000_cards_is_refused_before_any_consultation(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                                                      lang: str, words: str) -> None:
    import sys

    from expert import KnowledgeBaseError
    from expert.i18n import Localizer
    from expert.inference import engine

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "bench"))
    from scaling import catalog

    path = tmp_path / "cards-10000.toml"
    path.write_text(catalog(10_000), encoding="utf-8")
    runs: list[Any] = []
    real = engine.infer
    monkeypatch.setattr(engine, "infer", lambda *a, **k: runs.append(a) or real(*a, **k))
    with pytest.raises(KnowledgeBaseError) as refused:
        advise(model_size_b=13, method="lora", catalog=[str(path)], lang=lang)
    said = refused.value.render(Localizer(lang).gettext)      # as the CLI and MCP say it
    assert words in said and f"{path}:14001:" in said         # the line of the 2,001st card
    assert runs == []          # no consultation was run

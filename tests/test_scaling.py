"""The engine's work grows with the catalog, not with its square: counted in
facts declared, rules fired and pairs of facts the Rete network's joins
tried (not seconds: a slow machine cannot fail this, a rule that joins every
option with every other cannot pass it). bench/scaling.py times the same
catalogs from 25 to 2,000 cards."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from expert.application import consult
from expert.i18n import Localizer
from expert.inference.run import Run
from expert.interfaces.api import knowledge_base

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from scaling import catalog  # noqa: E402  (the benchmark's cards, not a copy of them)

# Four times the cards may cost at most five times the work (linear, with
# room for the few facts that do not depend on the catalog); a square grows 16 times.
GROWTH = 5.0


def work(tmp_path: Path, cards: int, **profile: Any) -> Run:
    path = tmp_path / f"cards-{cards}.toml"
    path.write_text(catalog(cards), encoding="utf-8")
    return consult(knowledge_base(None, path), profile, Localizer("en"))[0]


@pytest.mark.parametrize("profile", [dict(model_size_b=13, method="lora"),
                                     dict(model_size_b=13, method="lora", budget="low", deadline_h=2)])
def test_four_times_the_cards_is_at_most_five_times_the_work(tmp_path: Path, profile: dict[str, Any]) -> None:
    small, large = work(tmp_path, 50, **profile), work(tmp_path, 200, **profile)
    assert len(small.options) >= 50 and len(large.options) >= 200 and large.ranking   # every card weighed
    for name, measure in (("facts declared", lambda r: r.declared), ("rules fired", lambda r: len(r.firings)),
                          ("pairs tried", lambda r: r.compared)):
        assert measure(large) <= GROWTH * measure(small), (name, measure(small), measure(large))


def test_the_ordering_rules_fire_once_whatever_the_number_of_options(tmp_path: Path) -> None:
    run = work(tmp_path, 50, model_size_b=13, method="lora", budget="low")
    fired = [f.rule.id for f in run.firings]
    assert fired.count("order-options") == 1 and fired.count("cheapest-rented-option") == 1
    assert fired.count("another-beats-it-on-money-and-time") <= 1
    assert fired.count("rank-options") == len(run.ranking) >= 45


def test_the_floor_benchmark_replays_the_facts_and_firings_of_a_consultation() -> None:
    """bench/floor.py's figure is experta's cost for this rule base only if
    its replay, whose actions do nothing but declare and retract what the
    real actions did, fires as many times as the consultation did and ends
    with the same working memory, fact by fact."""
    from floor import engines, replay

    from expert.input.profile import build
    from expert.knowledge.prices import for_profile

    base = knowledge_base()
    recorder, replayer = engines(base)
    for given in (dict(model_size_b=70, method="lora", deadline_h=8),
                  dict(model_size_b=8, method="qlora", vram_gb=12, budget="low"),
                  dict(model_size_b=405, method="full", purpose="production", rocm_ok=True)):
        profile, _ = build(base, given, Localizer("en"), None)
        recorded, replayed, _ = replay(recorder, replayer, for_profile(base, profile), profile)
        # every firing recorded was replayed, none more (an extra one finds the script empty)
        assert len(recorder.script) > 40 and not replayer.script
        assert replayed.declared == recorded.declared
        assert ([(type(f).__name__, dict(f)) for f in replayer.facts.values()]
                == [(type(f).__name__, dict(f)) for f in recorder.facts.values()])

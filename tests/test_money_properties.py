"""The invariants of the recipes, the price basis and the ranking, held over
random profiles, read from the JSON alone (never from wording).

- spot never costs more than on demand;
- on a low budget the first option costs at most a tenth more than the
  cheapest rented option that meets the deadline (a guide preference may
  break a near-tie, never outweigh the money);
- no option ranks above one that beats it on both money and time;
- a deadline counts the setup the bill counts;
- "costs less in all" is said only of an option cheaper than every other;
- the single-device recipe runs on one device, the fp16 recipes only on a card
  without bf16, and a rented pick names the price basis.

Each property replays the same 10 fixed profiles (derandomized, one seed for
all six), each consulted once and read by every property (and, at a low
budget, once more). 10, not the 25 of 2026-12-02 nor the 15 of 2026-12-07: the
10 reach every case the 15 did, which reached every one of the 25's (with and
without a deadline, met and missed; the default catalog and "current"; spot
prices; several options; one's own card, first or not, a T4 or V100 with its
fp16 recipe; the optimizer stepped in the backward pass; the advice
faster-card-costs-less and qlora-fits-own-gpu; at a low budget, a rented pick
and one's own: 17 cases, each read from the answers' JSON, all reached by the
9th profile), for 17 consultations instead of 26.
EXPERT_FUZZ=N explores N fresh random examples instead, each property its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, seed, settings, strategies as st

from expert import advise

EXPLORE = "EXPERT_FUZZ" in os.environ


def SETTINGS(test: Callable[..., None]) -> Callable[..., None]:  # noqa: N802 - a decorator like hypothesis' own
    """10 fixed examples, the same for every property (one seed: their
    consultations are shared, see consult()); or N fresh ones each."""
    test = settings(max_examples=int(os.environ.get("EXPERT_FUZZ", "10")), derandomize=not EXPLORE, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])(test)
    return test if EXPLORE else seed(20261202)(test)


# ../shared/checks/advice_check.py holds the same bound at a low budget.
LOW_BUDGET_SLACK = 1.10

profiles = st.fixed_dictionaries({
    "model_size_b": st.sampled_from([0.5, 1, 3, 7, 8, 13, 14, 30, 34, 70, 180, 405]),
    "method": st.sampled_from(["full", "lora", "qlora"]),
    "budget": st.sampled_from(["low", "medium", "high"]),
    "rocm_ok": st.booleans(),
    "deadline_h": st.sampled_from([None, 0.5, 1, 2, 8, 24, 96]),
    "vram_gb": st.sampled_from([None, 8, 16, 24, 48, 80, "T4", "V100 32GB", "RTX 4090"]),
    "dataset_examples": st.sampled_from([1000, 10_000, 100_000]),
    "interruptible": st.booleans(),
    "catalog": st.sampled_from([None, "current"]),
})


_CONSULTED: dict[str, dict[str, Any]] = {}


def consult(profile: dict[str, Any]) -> dict[str, Any]:
    """The answer's JSON, made once for the profile whichever property asks
    (the properties only read it)."""
    key = repr(sorted(profile.items()))
    if key not in _CONSULTED:
        _CONSULTED[key] = advise(**profile, lang="en").to_dict()
    return _CONSULTED[key]


def beats(one: dict[str, Any], other: dict[str, Any]) -> bool:
    a, b = (one["cost"]["total"], one["hours"]), (other["cost"]["total"], other["hours"])
    return a[0] <= b[0] and a[1] <= b[1] and a != b


@SETTINGS
@given(profiles)
def test_spot_never_dearer_than_on_demand(profile: dict[str, Any]) -> None:
    for rec in consult(profile)["recommendations"]:
        cost = rec["cost"]
        if cost["spot_total"] is not None:
            assert cost["spot_total"] <= cost["on_demand_total"] + 0.005, rec["gpu"]


@SETTINGS
@given(profiles)
def test_the_money_decides_on_a_low_budget(profile: dict[str, Any]) -> None:
    data = consult({**profile, "budget": "low"})
    recs = data["recommendations"]
    rented = [r for r in recs if r["gpu"] != "own" and r["meets_deadline"] is not False]
    if recs and recs[0] in rented:
        cheapest = min(r["cost"]["total"] for r in rented)
        assert recs[0]["cost"]["total"] <= LOW_BUDGET_SLACK * cheapest + 0.005


@SETTINGS
@given(profiles)
def test_no_option_ranks_above_one_that_beats_it(profile: dict[str, Any]) -> None:
    recs = consult(profile)["recommendations"]
    for i, higher in enumerate(recs):
        for lower in recs[i + 1:]:
            # rounding to cents and to four digits of hours may make two options look equal
            if beats(lower, higher) and (higher["cost"]["total"] - lower["cost"]["total"] > 0.01
                                         or higher["hours"] - lower["hours"] > 0.001):
                assert False, (higher["gpu"], lower["gpu"])


@SETTINGS
@given(profiles)
def test_a_deadline_counts_the_setup_the_bill_counts(profile: dict[str, Any]) -> None:
    data = consult(profile)
    deadline = data["profile"]["deadline_h"]
    for rec in data["recommendations"]:
        if deadline is None:
            assert rec["meets_deadline"] is None
            continue
        elapsed = rec["hours"] if rec["gpu"] == "own" else rec["cost"]["billed_hours"]
        assert rec["meets_deadline"] == (elapsed <= deadline * 1.0001), (rec["gpu"], elapsed, deadline)


@SETTINGS
@given(profiles)
def test_costs_less_in_all_only_when_it_does(profile: dict[str, Any]) -> None:
    data = consult(profile)
    if "faster-card-costs-less" in {a["id"] for a in data["advice"]}:
        pick, *others = data["recommendations"]
        assert all(pick["cost"]["total"] < other["cost"]["total"] for other in others if other["gpu"] != "own")


@SETTINGS
@given(profiles)
def test_recipes_run_where_they_can_and_the_price_basis_is_named(profile: dict[str, Any]) -> None:
    data = consult(profile)
    recs = data["recommendations"]
    for rec in recs:
        recipe = rec["recipe"]
        if recipe["optimizer_in_backward"]:
            assert rec["devices"] == 1 and recipe["strategy"] == "single" and recipe["framework"] == "torchtune"
        if recipe["precision"] == "fp16":   # only one's own card without bf16 (a T4 or a V100)
            assert rec["gpu"] == "own" and str(profile["vram_gb"]) in ("T4", "V100 32GB")
        elif rec["gpu"] == "own" and str(profile["vram_gb"]) in ("T4", "V100 32GB"):
            assert False, f"a card without bf16 got a {recipe['precision']} recipe"
    if recs and recs[0]["gpu"] != "own":
        assert "price-basis" in {a["id"] for a in data["advice"]}
    if "qlora-fits-own-gpu" in {a["id"] for a in data["advice"]}:
        assert data["profile"]["vram_gb"] and recs[0]["gpu"] != "own"

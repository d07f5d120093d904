"""The engine: rules join the facts they reason about, and configuration is
a chain of rule firings (R1/XCON style), each step on the candidate the step
before it proposed."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from expert.inference import engine, sizing
from expert.inference.facts import Fact
from expert.inference.patterns import patterns as compiled_patterns
from expert.inference.run import Run

from expert.errors import KnowledgeBaseError
from expert.interfaces.api import knowledge_base
from expert.input.profile import build
from expert.knowledge.prices import for_profile
from expert.i18n import Localizer

from conftest import edited_rules

# The engine itself is tested here: every run made afresh, not read from the
# runs the rest of the suite shares (conftest.SharedRuns).
pytestmark = pytest.mark.fresh_runs


def run(catalog: str | None = None, **given: Any) -> Run:
    """One consultation's run on the cards weighed by default (the guide's and today's market), or on a catalog."""
    kb = knowledge_base(None, catalog)
    profile, _ = build(kb, given, Localizer("en"))
    return engine.infer(for_profile(kb, profile), profile)


def patterns(rule_id: str) -> list[Any]:
    kb = knowledge_base()
    rule = kb.rule(rule_id)
    return [p for p in compiled_patterns(rule) if isinstance(p, Fact)]


def test_rules_join_the_facts_they_reason_about() -> None:
    shard = patterns("shard-when-weights-do-not-fit")
    # The candidate comes first: joins start from the few facts that can match.
    assert [type(p).__name__ for p in shard] == ["Candidate", "Requirement", "Profile"]
    assert shard[0]["next_step"] == "shard"
    # A verdict or a note joins its option (or the pick) with the requirement and the answers, whatever
    # it reads of them: every rule of those kinds starts with the same joins, which the network makes once.
    assert [type(p).__name__ for p in patterns("amd-needs-rocm")] == ["Option", "Requirement", "Profile"]
    assert [type(p).__name__ for p in patterns("use-spot")] == ["Pick", "Requirement", "Profile"]
    # Other rules join only what their condition, message and helper read.
    assert [type(p).__name__ for p in patterns("weigh-options")] == ["Option", "Profile"]
    # The first step matches every card.
    assert [type(p).__name__ for p in patterns("propose-one-card")] == ["Card", "Requirement", "Profile"]


def test_rules_that_start_with_the_same_patterns_share_their_joins(kb) -> None:  # type: ignore[no-untyped-def]
    # The reject, demote and prefer rules all join an option with the requirement, then the answers:
    # the network holds one node for each of those joins, not one for every rule.
    joins = engine.thread_engine(kb).joins
    verdicts = [r for r in kb.rules if r.kind in ("reject", "demote", "prefer")]
    assert len(verdicts) > 10 and len(joins) < len(kb.rules)
    assert max(len(node.children) for node in joins) >= 10   # one join feeding the tests of many rules


def test_a_configuration_carries_its_card_instead_of_a_join() -> None:
    # Joining every candidate with every card would cost the square of the catalog.
    assert [type(p).__name__ for p in patterns("no-scale-out-without-fast-link")] == ["Option", "Requirement", "Profile"]
    result = run(model_size_b=70, method="full")
    assert result.options["rtx-4090"]["card"]["fast_interconnect"] is False
    firing = next(f for f in result.firings if f.rule.id == "no-scale-out-without-fast-link")
    card = next(m for m in firing.matched if m["fact"] == "card")
    assert card["from"] == "catalog" and card["values"]["fast_interconnect"] is False
    own = run(model_size_b=70, method="full", vram_gb=24)
    firing = next(f for f in own.firings if f.rule.id == "offload-as-last-resort" and f.gpu == "own")
    assert next(m for m in firing.matched if m["fact"] == "card")["from"] == "consider-own-gpu"


def ladder(result: Run, gpu: str) -> list[tuple[str, str, bool]]:
    return [(c["step"], c["recipe"], c["fits"]) for c in result.candidates[gpu]]


def test_the_ladder_stops_at_the_first_configuration_that_fits() -> None:
    result = run(model_size_b=7, method="full")
    # 16 bytes per parameter do not fit on 80 GB; 6 do, and then a larger micro-batch (timing.toml [batch]).
    # An experiment on a medium budget keeps the lean recipe (issue 40: leaner-recipe-for-an-experiment).
    assert ladder(result, "a100-80gb") == [("one-card", "mixed-adamw", False), ("lean-optimizer", "bf16-adamw8bit", True),
                                           ("larger-micro-batch", "bf16-adamw8bit", True),
                                           ("precision-kept", "bf16-adamw8bit", True)]
    # On the 4090 8-bit AdamW states do not fit beside the weights; torchtune's
    # single-device recipe does (its paged states in host RAM, 2 bytes per parameter).
    assert ladder(result, "rtx-4090") == [("one-card", "mixed-adamw", False), ("lean-optimizer", "bf16-adamw8bit", False),
                                          ("single-device", "bf16-paged-adamw8bit-in-backward", True),
                                          ("larger-micro-batch", "bf16-paged-adamw8bit-in-backward", True)]
    assert 12 < result.options["rtx-4090"]["host_ram_gb"] < 16
    # 13B does not: the 4090 has no fast link, so it shards over PCIe, on the fewest cards of one
    # machine that hold it (issue 47), and stops there. Since the units merge (issue 47) four hold it at a
    # micro-batch of 1, 22.2 GiB of the 22.79 each may use (23.8 GB of 22.8 before: eight, with a larger batch).
    bigger = run(model_size_b=13, method="full")
    assert [step for step, _, _ in ladder(bigger, "rtx-4090")] == ["one-card", "lean-optimizer", "single-device",
                                                                   "shard"]
    assert bigger.options["rtx-4090"]["count"] == 4 and bigger.options["rtx-4090"]["fits"]
    # 70B does not fit eight of them either: sharding is impossible without a fast link beyond one
    # machine, and offload is the last resort, itself impossible.
    huge = run(model_size_b=70, method="full")
    assert [step for step, _, _ in ladder(huge, "rtx-4090")] == ["one-card", "lean-optimizer", "single-device",
                                                                 "shard", "offload"]
    assert huge.candidates["rtx-4090"][3]["possible"] is False
    assert huge.options["rtx-4090"]["host_ram_gb"] > 100


def test_scale_out_only_for_a_deadline_and_only_on_a_fast_link() -> None:
    relaxed = run(model_size_b=8, method="lora")
    assert all(c["step"] != "scale-out" for cs in relaxed.candidates.values() for c in cs)
    rushed = run(model_size_b=8, method="lora", deadline_h=1, dataset_examples=20000)
    a100 = rushed.options["a100-80gb"]
    assert a100["step"] == "scale-out" and a100["count"] > a100["min_count"] == 1
    assert rushed.options["rtx-4090"]["count"] == 1   # no fast link: it stays one card


def test_every_option_is_the_last_candidate_of_its_card() -> None:
    result = run(model_size_b=70, method="full", deadline_h=96, rocm_ok=True)
    for gpu, option in result.options.items():
        last = result.candidates[gpu][-1]
        assert {k: v for k, v in option.items() if k != "card"} == {
            k: v for k, v in last.items() if k != "card"}
        assert option["card"]["id"] == last["card"]["id"] == gpu
        assert option["fits"] or gpu not in result.ranking


def test_each_declared_fact_knows_the_rule_that_declared_it() -> None:
    result = run(model_size_b=13, method="lora", vram_gb=16)
    declared = {f.rule.id for f in result.firings if f.derived and f.derived[0]["fact"] != f.rule.kind}
    assert set(result.origin.values()) == declared
    assert "consider-own-gpu" in declared and "propose-one-card" in declared


def test_a_fact_a_helper_reads_is_a_whole_mapping() -> None:
    """values() and items() work and note the fields read (mypy found the
    wrapped mapping stored as ``values``, which hid Mapping.values())."""
    read: set[str] = set()
    fact = sizing.Reads({"a": 1, "b": 2}, read)
    assert list(fact.values()) == [1, 2]
    assert read == {"a", "b"}
    assert dict(fact.items()) == {"a": 1, "b": 2}
    own = sizing.Reads({"a": 1, "b": 2})      # (a set of its own: what a sizing read, Sizer.configuration)
    assert own["b"] == 2 and own.read == {"b"}


def test_a_configuration_sized_again_notes_what_the_first_sizing_read() -> None:
    """The second rule that sizes a configuration gets it from the run's
    ``sized`` without the arithmetic, and the fields it notes as read are the
    first sizing's: the trace and WHY NOT say the same either way."""
    kb = knowledge_base()
    result = run(model_size_b=13, method="lora")
    card = next(c for c in kb.catalog if c.id == "h100-80gb").fact()
    sized: dict[Any, Any] = {}
    reads = []
    for _ in range(2):
        noted = {name: set() for name in ("card", "profile", "req")}
        sizer = sizing.Sizer(kb, sizing.Reads(result.profile, noted["profile"]),
                             sizing.Reads(result.req, noted["req"]), "checked", sized)
        config = sizer.configuration(sizing.Reads(card, noted["card"]), "one-card", "lora-16bit", 1, sharded=False)
        reads.append((noted, config))
    assert len(sized) == 1                                  # sized once
    (first, config), (second, again) = reads
    assert first == second and first["card"] >= {"id", "vram_gb", "bf16"} and first["profile"] and first["req"]
    assert again == config
    # a plain mapping notes nothing and sizes the same
    plain = sizing.Sizer(kb, result.profile, result.req, "checked", sized).configuration(
        card, "one-card", "lora-16bit", 1, sharded=False)
    assert plain == config


def tried(result: Run, gpu: str) -> list[tuple[str, int, bool]]:
    """The trials of ``gpu`` as the trace shows them: the rule, the count it tried, whether it fit."""
    return [(f.rule.id, d["values"]["count"], d["values"]["fits"]) for f in result.sorted_firings()
            if f.gpu == gpu for d in f.derived if d["fact"] == "trial"]


def test_the_count_of_cards_is_chosen_by_rules_over_trials() -> None:
    result = run(model_size_b=70, method="full", budget="high")
    # Sharding 70B on H100s: 2 and 4 cards are tried and dropped, 8 hold it.
    assert tried(result, "h100-80gb") == [("shard-when-weights-do-not-fit", 2, False), ("more-cards-to-fit", 4, False),
                                          ("more-cards-to-fit", 8, True)]
    chosen = next(f for f in result.firings if f.gpu == "h100-80gb" and f.rule.id == "fewest-cards-that-fit")
    trial = next(m for m in chosen.matched if m["fact"] == "trial")
    assert trial["from"] == "more-cards-to-fit" and trial["values"]["count"] == 8
    assert chosen.derived[0]["fact"] == "candidate" and chosen.derived[0]["values"]["count"] == 8
    assert result.options["h100-80gb"]["count"] == 8
    # Trials are not options: the pick still stands on its candidates alone.
    assert all("next_count" not in option for option in result.options.values())
    # Without a fast link the counts of one machine are tried over PCIe (issue 47): 30B LoRA on RTX 4090s
    # does not fit two, four hold it, and shard-over-pcie settles the step, timed from the link.
    lora = run(model_size_b=30, method="lora")
    assert tried(lora, "rtx-4090") == [("shard-when-weights-do-not-fit", 2, False), ("more-cards-to-fit", 4, True)]
    assert [f.rule.id for f in lora.firings if f.gpu == "rtx-4090" and f.rule.step == "over-pcie"] == [
        "shard-over-pcie"]
    option = lora.options["rtx-4090"]
    assert option["possible"] and option["count"] == 4
    assert option["hours"] > option["nvlink_hours"] > 0      # PCIe is slower than NVLink would be
    # When no count of one machine holds it, the step is impossible beyond it: no fast link between machines.
    huge = run(model_size_b=405, method="full")
    last = tried(huge, "rtx-4090")
    assert last and not last[-1][2] and last[-1][1] == 8
    assert any(f.rule.id == "several-cards-need-a-fast-link" for f in huge.firings if f.gpu == "rtx-4090")
    assert not any(f.rule.id == "no-count-fits" for f in huge.firings if f.gpu == "rtx-4090")
    assert huge.options["rtx-4090"]["possible"] is False


def test_scaling_out_tries_counts_until_one_meets_the_deadline() -> None:
    # 70B LoRA on 500k 2,048-token sequences in 48 h: A100 40 GB counts are tried one by one.
    result = run(model_size_b="Llama-3.3-70B", method="lora", budget="high", dataset_examples=500_000,
                 tokens_per_example=2048, deadline_h=48)
    trials = [f for f in result.sorted_firings() if f.gpu == "a100-40gb" and f.derived
              and f.derived[0]["fact"] == "trial" and f.derived[0]["values"]["step"] == "scale-out"]
    counts = [f.derived[0]["values"]["count"] for f in trials]
    assert counts == sorted(counts) and len(counts) > 1
    assert [f.rule.id for f in trials] == ["scale-out-for-the-deadline"] + ["more-cards-for-the-deadline"] * (len(counts) - 1)
    # every count but the last missed the deadline; the last met it and stands
    assert all(f.derived[0]["values"]["elapsed_hours"] > 48 or not f.derived[0]["values"]["fits"] for f in trials[:-1])
    met = next(f for f in result.firings if f.gpu == "a100-40gb" and f.rule.id == "fewest-cards-meeting-the-deadline")
    assert met.derived[0]["values"]["count"] == counts[-1] == result.options["a100-40gb"]["count"]
    assert result.options["a100-40gb"]["step"] == "scale-out" and result.options["a100-40gb"]["elapsed_hours"] <= 48
    # No count meets 0.3 h for 70B LoRA: the fastest tried stands, and it is no slower than the first count tried.
    rushed = run(model_size_b=70, method="lora", deadline_h=0.3)
    option = rushed.options["h100-80gb"]
    tried = [f.derived[0]["values"] for f in rushed.firings if f.gpu == "h100-80gb" and f.derived
             and f.derived[0]["fact"] == "trial" and f.derived[0]["values"]["step"] == "scale-out"]
    assert option["hours"] == min(t["hours"] for t in tried if t["fits"])
    assert any(f.rule.id == "fastest-when-no-count-meets-the-deadline" for f in rushed.firings if f.gpu == "h100-80gb")


def test_a_configuration_has_the_fields_the_conditions_and_the_checks_declare() -> None:
    # The candidate's fields are written in three places: the pure evaluation
    # (sizing.Sizer.configuration), the condition compiler's types
    # (conditions.FIELDS) and `expert check`'s domains; they must be one list.
    from expert.knowledge import check, conditions

    declared = set(conditions.FIELDS["candidate"])
    domains = check._domains(knowledge_base())
    for namespace in ("candidate", "option", "proposal"):
        assert {key.split(".", 1)[1] for key in domains if key.startswith(namespace + ".")} == declared
    assert set(conditions.FIELDS["trial"]) - declared == {"next_count"}
    for given in (dict(model_size_b=70, method="full", budget="high"), dict(model_size_b=8, method="full", vram_gb=24),
                  dict(model_size_b=70, method="lora", deadline_h=4, interruptible=True)):
        result = run(**given)
        for option in result.options.values():
            assert set(option) - {"card"} == declared, option["gpu"]


def test_speeding_up_tries_counts_until_a_faster_recipe_pays(tmp_path: Path) -> None:
    # The shipped ladder shards over up to 64 cards before it offloads, so a
    # faster recipe never fits on the few cards of one node after offloading.
    # Here the shard step keeps mixed-precision AdamW (16 bytes a parameter)
    # and counts stop at four: offloading comes sooner, and bf16 with 8-bit
    # AdamW on more cards may then be both quicker and no dearer.
    shard = '{ step = "shard", recipe = "bf16-adamw8bit", spread = "shard" }'
    kb = knowledge_base(rules_dir=edited_rules(
        tmp_path, ("recipes.toml", shard, shard.replace("bf16-adamw8bit", "mixed-adamw")),
        ("ranking.toml", "counts = [1, 2, 4, 8, 16, 32, 64]", "counts = [1, 2, 4]")), catalog="guide")   # its six

    def speed_trials(size: float) -> tuple[Run, dict[str, list[tuple[str, int, bool]]]]:
        profile, _ = build(kb, dict(model_size_b=size, method="full", budget="high"), Localizer("en"))
        result = engine.infer(kb, profile)
        trials: dict[str, list[tuple[str, int, bool]]] = {}
        for f in result.sorted_firings():
            for d in f.derived:
                if d["fact"] == "trial" and d["values"]["step"] == "speed-up":
                    trials.setdefault(str(f.gpu), []).append((f.rule.id, d["values"]["count"], d["values"]["fits"]))
        return result, trials

    result, trials = speed_trials(40)
    # MI250 (two devices a card): bf16 does not fit two cards; on four it pays.
    assert trials["mi250"] == [("faster-recipe-on-more-cards", 2, False), ("more-cards-for-a-faster-recipe", 4, True)]
    paid = next(f for f in result.firings if f.gpu == "mi250" and f.rule.id == "faster-recipe-pays")
    option = result.options["mi250"]
    assert paid.derived[0]["values"]["count"] == option["count"] == 4 and option["recipe"] == "bf16-adamw8bit"
    assert option["hours"] < option["min_count_hours"] and option["total_cost"] <= option["min_count_cost"]
    # MI210: no count within one node pays, so the offloading recipe stands.
    assert any(f.rule.id == "no-faster-recipe-pays" for f in result.firings if f.gpu == "mi210")
    assert result.options["mi210"]["recipe"] == "mixed-adamw-offload" and result.options["mi210"]["sped_up"]
    # Where nothing offloads, nothing is sped up but what pages its optimizer states: 13B fits without
    # offloading, and only the A100 40 GB holds it with paged 8-bit states, 18 GB of which cross its
    # PCIe link at every step (issue 39), so it alone tries more cards.
    quiet, trials = speed_trials(13)
    assert set(trials) == {"a100-40gb"} and quiet.options["a100-40gb"]["host_traffic_gb"] > 0
    assert all(option["host_traffic_gb"] == 0 for gpu, option in quiet.options.items() if gpu != "a100-40gb")


def test_the_ranking_and_the_pick_are_rules_over_facts() -> None:
    # rank-options weighs each standing option once (one weight per option);
    # order-options fires once, reads every weight in the order of its keys
    # and declares that order; the first is the pick.
    result = run(model_size_b=8, method="lora", vram_gb=24)
    ranking = result.ranking
    assert ranking[0] == "own" and result.pick is not None and result.pick["gpu"] == "own" and result.pick["found"]
    weighed = [f for f in result.firings if f.rule.id == "rank-options"]
    assert sorted(f.gpu for f in weighed) == sorted(ranking)
    assert all([d["fact"] for d in f.derived] == ["weight"] for f in weighed)
    [ordered] = [f for f in result.firings if f.rule.id == "order-options"]
    assert [m["values"]["gpu"] for m in ordered.matched if m["fact"] == "weight"] == ranking
    assert ordered.derived[0]["values"]["order"] == ranking and ordered.derived[0]["values"]["options"] == len(ranking)
    # The order is that of the rule's keys: the demotions, then how deep in the chains of options beating
    # one another on money and time it is (one that beats another comes before it, beaten or not), then
    # the score. On today's market the depth decides: the A40 (score 1.12, beaten at depth 2) ranks after
    # the A100 80 GB (score 1.21, beaten at depth 1).
    assert [key.source for key in ordered.rule.by] == ["weight.demotion", "weight.beaten", "weight.score",
                                                       "weight.devices", "weight.order"]
    weights = {f.gpu: f.derived[0]["values"] for f in weighed}
    keys = [tuple(weights[g][key] for key in ("demotion", "beaten", "score", "devices", "order")) for g in ranking]
    assert keys == sorted(keys) and len(ranking) >= 20
    assert max(weights[g]["beaten"] for g in ranking) > 1   # deeper chains than the guide's six ever made
    # One sweep from the cheapest marks the options another beats on money and time, naming one that does; then
    # a demote rule holds each back.
    [sweep] = [f for f in result.firings if f.rule.id == "another-beats-it-on-money-and-time"]
    beaten = {d["values"]["gpu"]: d["values"] for d in sweep.derived}
    assert "rtx-4090" in beaten and "own" not in beaten and beaten["rtx-4090"]["by_gpu"] == "own"
    assert ("beaten-on-money-and-time", "rtx-4090") in {(f.rule.id, f.gpu) for f in result.firings}
    # Nothing stands: no-option-stands declares that there is no pick (on the guide's six cards: 64 B200s
    # of today's market, offloading, hold even a 2,000B model's full fine-tuning).
    none = run(model_size_b=2000, method="full", catalog="guide")
    assert none.ranking == [] and none.pick == {"gpu": None, "count": None, "hours": None, "found": False}
    assert [f.rule.id for f in none.firings if f.rule.then in ("pick", "no-pick")] == ["no-option-stands"]
    assert not any(f.rule.then in ("market", "beaten", "order") for f in none.firings)


def test_the_sweeps_find_what_every_pair_would(kb) -> None:  # type: ignore[no-untyped-def]
    """The cheapest and the beaten, from one pass each, are those a
    comparison of every pair of options finds."""
    from expert.inference import sweep

    rng = random.Random(5)
    for _ in range(300):
        options = [{"gpu": f"g{i}", "count": 1, "total_cost": rng.choice([1.0, 2.0, 2.0, 3.0, 5.0]),
                    "hours": rng.choice([1.0, 2.0, 2.0, 4.0])} for i in range(rng.randint(1, 7))]
        keyed = sorted((([(False, o["total_cost"]), (False, o["hours"]), (False, i)], o)
                        for i, o in enumerate(options)), key=lambda pair: pair[0])
        found = {b["gpu"]: b["by_gpu"] for b in sweep.beaten(keyed)}
        by_pairs = {o["gpu"] for o in options if any(
            p["total_cost"] <= o["total_cost"] and p["hours"] <= o["hours"]
            and (p["total_cost"] < o["total_cost"] or p["hours"] < o["hours"]) for p in options)}
        assert set(found) == by_pairs
        byname = {o["gpu"]: o for o in options}
        for gpu, by in found.items():   # what it names does beat it
            assert byname[by]["total_cost"] <= byname[gpu]["total_cost"] and byname[by]["hours"] <= byname[gpu]["hours"]
        # and how deep each is: the longest chain of options beating one another down to it
        depth = {b["gpu"]: b["depth"] for b in sweep.beaten(keyed)}

        def chain(o: dict[str, Any]) -> int:
            return max((chain(p) + 1 for p in options if p["total_cost"] <= o["total_cost"] and p["hours"] <= o["hours"]
                        and (p["total_cost"] < o["total_cost"] or p["hours"] < o["hours"])), default=0)

        assert depth == {o["gpu"]: chain(o) for o in options if o["gpu"] in by_pairs}


def test_a_verdict_a_rule_overrides_does_not_count(tmp_path: Path) -> None:
    # A prefer rule that overrides a demote rule: the deadline the option
    # misses does not hold it back.
    one_gpu = 'id = "one-gpu-if-it-fits"\nkind = "prefer"\n'
    kb = knowledge_base(rules_dir=edited_rules(tmp_path, ("rules.toml", one_gpu, one_gpu + (
        'opposes = ["misses-deadline"]\noverrides = ["misses-deadline"]\n'))))

    def both(**given: Any) -> tuple[Run, Run]:
        profile, _ = build(kb, given, Localizer("en"))
        return run(**given), engine.infer(for_profile(kb, profile), profile)

    # The RTX 4090 misses a one-hour deadline: demoted, unless the override stands.
    demotions = [rule.id for rule in kb.rules if rule.kind == "demote"]
    bit = 2 ** (len(demotions) - 1 - demotions.index("misses-deadline"))

    def demotion(of: Run) -> int:
        return next(d["values"]["demotion"] for f in of.firings if f.rule.id == "rank-options" and f.gpu == "rtx-4090"
                    for d in f.derived)

    shipped, result = both(model_size_b=7, method="lora", deadline_h=1)
    assert ("misses-deadline", "rtx-4090") in {(f.rule.id, f.gpu) for f in result.firings}
    assert demotion(shipped) & bit and not demotion(result) & bit


def test_only_a_reject_rule_overrides_a_reject_rule(tmp_path: Path) -> None:
    # A preference that took a card back after it was ruled out would make it
    # stand after the sweeps over the standing options: refused when loaded.
    one_gpu = 'id = "one-gpu-if-it-fits"\nkind = "prefer"\n'
    with pytest.raises(KnowledgeBaseError) as refused:
        knowledge_base(rules_dir=edited_rules(tmp_path, ("rules.toml", one_gpu, one_gpu + (
            'opposes = ["no-rental-price"]\noverrides = ["no-rental-price"]\n'))))
    assert "rule 'one-gpu-if-it-fits': only a reject rule may override a reject rule ('no-rental-price')" in str(
        refused.value)


def test_engine_classes_are_kept_for_the_last_few_rule_sets_and_engines_per_thread(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A long-running host that loads edited rules again and again keeps only
    the last CLASS_CACHE_SIZE engine classes (and their threads' engines);
    knowledge bases with the same rules share one class, and each thread has
    its own engine of it."""
    import dataclasses
    import threading

    monkeypatch.setattr(engine, "CLASS_CACHE_SIZE", 2)
    kb = knowledge_base()
    same_rules = dataclasses.replace(kb, catalog=kb.catalog[:2])
    assert engine.engine_class(same_rules) is engine.engine_class(kb)
    mine = engine.thread_engine(kb)
    assert engine.thread_engine(same_rules) is mine
    theirs: list[Any] = []
    worker = threading.Thread(target=lambda: theirs.append(engine.thread_engine(kb)))
    worker.start()
    worker.join()
    assert theirs[0] is not mine and type(theirs[0]) is type(mine)

    first = engine.engine_class(kb)
    edited = [dataclasses.replace(kb, rules=kb.rules[:-1] + kb.rules[-1:]) for _ in range(2)]
    assert all(engine.engine_class(one) is not first for one in edited)
    assert engine.engine_class(kb) is not first          # pushed out by the two newer rule sets: built again
    assert engine.thread_engine(kb) is not mine

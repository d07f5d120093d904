"""A rule names its action (rules.toml ``then``) and its stage: the actions'
registry, the stages' order and the trials each stage settles (that no
hash seed moves the firing order: tests/test_embedding.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from expert.inference import engine
from expert.inference.actions import ACTIONS, registry_problems
from expert.inference.patterns import salience
from expert.inference.run import Run
from expert.i18n import Localizer
from expert.knowledge.prices import for_profile
from expert.input.profile import build
from expert.interfaces.api import knowledge_base
from expert.interfaces.cli.main import main
from expert.knowledge.check import check
from expert.knowledge.records import ACTIONS as DECLARED

from conftest import edited_rules

pytestmark = pytest.mark.fresh_runs


def run(**answers: object) -> Run:
    kb = knowledge_base()
    profile, _ = build(kb, answers, Localizer("en"))
    return engine.infer(for_profile(kb, profile), profile)


def test_every_action_is_registered_once_and_named_by_a_rule() -> None:
    kb = knowledge_base()
    assert registry_problems() == []
    assert {rule.then for rule in kb.rules if rule.then} == set(ACTIONS) == set(DECLARED)
    # Only the rules that declare facts take an action; verdicts and notes are their own conclusion.
    assert all((rule.then is not None) == (rule.kind in ("derive", "configure")) for rule in kb.rules)
    # An action reads what its function takes, and more (what the sizer reads: the answers, the requirement).
    for act in ACTIONS.values():
        assert set(act.parameters) <= set(act.reads), act.name


def test_stages_fire_in_the_order_rules_toml_lists_them() -> None:
    kb = knowledge_base()
    order = sorted(kb.rules, key=lambda rule: -salience(rule, len(kb.rules)))
    # Every rule of an earlier stage before any of a later one; within a stage, the file's order.
    assert [(rule.rank, rule.index) for rule in order] == sorted((rule.rank, rule.index) for rule in kb.rules)
    assert len({salience(rule, len(kb.rules)) for rule in kb.rules}) == len(kb.rules)   # no two rules tie
    ids = [stage.id for stage in kb.stages]
    assert ids.index("configure") < ids.index("count-to-fit") < ids.index("option") < ids.index("reject")
    assert ids.index("reject") < ids.index("standing") < ids.index("rank") < ids.index("pick") < ids.index("advice")


def test_a_trial_is_settled_only_by_the_stage_of_its_kind() -> None:
    # A lora 70B with a tight deadline: trials to fit (shard), then for the deadline; a production full run:
    # trials of mixed precision. Each trial rule matched a trial of its stage's kind, declared by an
    # action that declares that kind.
    kb = knowledge_base()
    stages = {stage.id: stage for stage in kb.stages}
    runs = [run(model_size_b=70, method="lora", deadline_h=0.3), run(model_size_b=8, method="full", purpose="production")]
    settled: dict[str, int] = {}
    for result in runs:
        for firing in result.firings:
            trials = stages[firing.rule.stage].trials
            if trials is None:
                continue
            [trial] = [m for m in firing.matched if m["fact"] == "trial"]
            declarer = kb.rule(trial["from"])
            assert ACTIONS[str(declarer.then)].trial == trials, (firing.rule.id, declarer.id)
            settled[trials] = settled.get(trials, 0) + 1
    assert set(settled) == {"cards", "deadline", "precision"}, settled
    # No condition tells the kinds of trial apart any more.
    assert not any("trial.step" in rule.condition.source for rule in kb.rules)


def test_a_fires_and_a_does_not_fire_through_its_action() -> None:
    # scale-out-for-the-deadline takes first-scale-trial: a trial of the next count, for the deadline.
    fast = run(model_size_b=70, method="lora", deadline_h=0.3)
    [first] = [f for f in fast.firings if f.rule.id == "scale-out-for-the-deadline" and f.gpu == "h100-80gb"]
    assert first.rule.then == "first-scale-trial"
    assert [d["fact"] for d in first.derived] == ["trial"]
    assert first.derived[0]["values"]["count"] > [m for m in first.matched if m["fact"] == "candidate"][0][
        "values"].get("count", 1)
    # Without a deadline it never fires, and no trial for a deadline is declared.
    slow = run(model_size_b=70, method="lora")
    assert not [f for f in slow.firings if f.rule.id == "scale-out-for-the-deadline"]
    assert not [f for f in slow.firings if f.rule.stage == "scale-trial"]


@pytest.mark.parametrize("lang, expected", [
    ("en", "a configure rule names its action (then = one of requirement, own-card, first-step"),
    ("es", "una regla configure nombra su acción (then = una de requirement, own-card, first-step"),
])
def test_expert_check_refuses_a_rule_without_an_action(tmp_path: Path, lang: str, expected: str) -> None:
    base = edited_rules(tmp_path, ("rules.toml", 'stage = "configure"\nthen = "next-step"\nstep = "shard"',
                         'stage = "configure"\nstep = "shard"'))
    result = CliRunner().invoke(main, ["check", "--rules", str(base), "--lang", lang])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "shard-when-weights-do-not-fit" in result.stdout and expected in result.stdout
    assert check(base)[0].params["rule"] == "shard-when-weights-do-not-fit"


def test_expert_check_refuses_an_action_no_rule_names(tmp_path: Path) -> None:
    base = edited_rules(tmp_path, ("rules.toml", 'then = "shard-over-pcie"', 'then = "step-settled"'))
    found = [p.render(lambda text: text) for p in check(base)]
    assert found == [f"{base / 'rules.toml'}: action 'shard-over-pcie' is named by no rule (then = 'shard-over-pcie')"]

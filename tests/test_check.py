"""`expert check`: each problem it reports, from a small broken knowledge base,
and the shipped knowledge base, which has none."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from expert import paths
from expert.interfaces.api import knowledge_base
from expert.knowledge.check import check
from expert.interfaces.cli.main import main
from expert.i18n import Localizer

EN = Localizer("en").gettext
NEW_RULE = '''
[[rule]]
id = "probe"
kind = "%(kind)s"
stage = "%(kind)s"
section = "vram"
heuristics = ["H1"]
when = "%(when)s"
message = "%(message)s"
'''


def rules_dir(tmp_path: Path, extra: str = "", replace: tuple[str, str] | None = None,
              filename: str = "rules.toml") -> Path:
    base = tmp_path / "rules"
    shutil.copytree(paths.RULES, base)
    target = base / filename
    text = target.read_text(encoding="utf-8")
    if replace:
        assert replace[0] in text
        text = text.replace(*replace, 1)
    target.write_text(text + extra, encoding="utf-8")
    return base


def problems(base: Path, catalogs: tuple[str, ...] = ()) -> list[str]:
    return [p.render(EN) for p in check(base, catalogs)]


def with_rule(tmp_path: Path, kind: str = "advice", when: str = "profile.method == 'lora'",
              message: str = "Keep the micro-batch small and use gradient accumulation to reach the batch size you "
                             "want without running out of memory.") -> list[str]:
    base = rules_dir(tmp_path, NEW_RULE % {"kind": kind, "when": when, "message": message})
    if kind == "reject":    # a reject rule has its few words for the one-screen answer (labels.toml [reject])
        labels = base / "labels.toml"
        labels.write_text(labels.read_text(encoding="utf-8").replace("[reject]\n", '[reject]\nprobe = "a probe"\n', 1),
                          encoding="utf-8")
    return problems(base)


def test_the_shipped_knowledge_base_is_sound() -> None:
    assert check() == []
    assert check(catalogs=[paths.RULES / "catalogs" / "current.toml"]) == []


def test_malformed_toml(tmp_path: Path) -> None:
    found = problems(rules_dir(tmp_path, "\n[[rule]\n"))
    assert len(found) == 1 and "rules.toml:" in found[0] and "malformed TOML" in found[0]


def test_unknown_and_missing_fields(tmp_path: Path) -> None:
    found = problems(rules_dir(tmp_path, replace=('factor = 0.75', 'factor = 0.75\nweight = 2')))
    assert any("unknown key" in p and "weight" in p for p in found)
    found = problems(rules_dir(tmp_path / "b", replace=('[field.purpose]', '[field.porpoise]'), filename="profile.toml"))
    assert any("field 'purpose' is missing" in p for p in found)
    assert any("unknown field 'porpoise'" in p for p in found)


def test_wrong_types_and_units(tmp_path: Path) -> None:
    found = problems(rules_dir(tmp_path, replace=("vram_gb = 40\n", 'vram_gb = "40 GB"\n'), filename="catalog.toml"))
    assert found == [f"{tmp_path}/rules/catalog.toml:76: card 2: 'vram_gb' must be a positive number"]


def test_duplicate_ids(tmp_path: Path) -> None:
    found = problems(rules_dir(tmp_path, replace=('id = "deadline-not-met"', 'id = "monitor-usage"')))
    assert any("rule 'monitor-usage': duplicate id" in p for p in found)


def test_references_to_undefined_facts_cards_and_placeholders(tmp_path: Path) -> None:
    assert any("unknown field 'profile.colour'" in p for p in with_rule(tmp_path / "a", when="profile.colour == 'red'"))
    assert any("refers to card 'h200', which is not in the catalog" in p
               for p in with_rule(tmp_path / "b", kind="reject", when="option.gpu == 'h200'"))
    assert any("placeholder 'req_nope' is not a field this rule can see" in p
               for p in with_rule(tmp_path / "c", message="It needs %(req_nope)s."))


def test_messages_missing_from_the_spanish_catalog(tmp_path: Path) -> None:
    found = with_rule(tmp_path, message="A message nobody translated.")
    assert found == [p for p in found if "probe" in p]
    assert any("its message is missing from the es catalog" in p for p in found)


@pytest.mark.parametrize("when", [
    "profile.model_size_b > 30000",                    # above the field's maximum
    "profile.method == 'sft'",                         # not one of its choices
    "option.count > 1 and option.count < 2",           # no card count in between
    "option.where == 'own' and option.where == 'cloud'",
    "profile.rocm_ok and not profile.rocm_ok",
    "option.total_vram_gb < req.vram_gb and option.total_vram_gb >= req.vram_gb",
    "pick.strategy == 'zero4'",
    "(profile.budget == 'tiny' or profile.method == 'rlhf') and profile.purpose == 'experiment'",
])
def test_unreachable_rules(tmp_path: Path, when: str) -> None:
    found = with_rule(tmp_path, kind="reject" if "option" in when else "warning", when=when)
    assert any("rule 'probe': can never fire" in p for p in found), found


@pytest.mark.parametrize("when", ["profile.model_size_b > 100", "option.count > 1 and option.count < 8",
                                  "profile.deadline_h is None", "profile.vram_gb < req.vram_gb"])
def test_reachable_rules_are_not_reported(tmp_path: Path, when: str) -> None:
    kind = "reject" if "option" in when else "warning"
    found = with_rule(tmp_path, kind=kind, when=when)
    assert not any("can never fire" in p for p in found), found


def test_conflicting_rules_without_precedence(tmp_path: Path) -> None:
    base = rules_dir(tmp_path, replace=("when = \"pick.found and pick.where == 'cloud' and profile.interruptible\"",
                                         "when = \"pick.found and pick.where == 'cloud'\""))
    found = problems(base)
    assert any("rule 'use-spot': conflicts with 'on-demand-for-critical'" in p for p in found), found
    settled = rules_dir(tmp_path / "b", replace=("when = \"pick.found and pick.where == 'cloud' and profile.interruptible\"",
                                                  "overrides = [\"on-demand-for-critical\"]\n"
                                                  "when = \"pick.found and pick.where == 'cloud'\""))
    assert not any("conflicts" in p for p in problems(settled))


def test_redundant_rules(tmp_path: Path) -> None:
    found = with_rule(tmp_path, kind="reject", when="option.vendor == 'amd' and not profile.rocm_ok and "
                                                    "profile.budget == 'low'",
                      message="It needs ROCm, which you did not accept: framework support is weaker and more problems "
                              "are yours to solve.")
    assert any("rule 'probe': is redundant: 'amd-needs-rocm' reaches the same conclusion" in p for p in found), found


def test_rules_citing_no_section(tmp_path: Path) -> None:
    found = problems(rules_dir(tmp_path, replace=('section = "amd"\n', '')))
    assert any(".section' is missing" in p for p in found), found


def test_broken_user_catalog(tmp_path: Path) -> None:
    catalog = tmp_path / "mine.toml"
    catalog.write_text('[[gpu]]\nid = "my-card"\nname = "Mine"\nvendor = "intel"\nvram_gb = -3\ncost = "cheap"\n'
                       'interconnect = "carrier-pigeon"\n')
    found = problems(paths.RULES, (str(catalog),))
    assert f"{catalog}:7: card 1: 'interconnect' must be one of nvlink, infinity-fabric, infiniband, pcie" in found
    assert f"{catalog}:5: card 1: 'vram_gb' must be a positive number" in found


def test_cli_check_exit_codes_and_spanish(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["check"], env={"EXPERT_LANG": "en"})
    rules = len(knowledge_base().rules)
    cards = len(knowledge_base().catalog)
    assert ok.exit_code == 0 and ok.stdout.startswith(f"The knowledge base is sound: {rules} rules, {cards} cards")
    base = rules_dir(tmp_path, replace=('id = "deadline-not-met"', 'id = "monitor-usage"'))
    bad = runner.invoke(main, ["check", "--rules", str(base), "--lang", "es"])
    assert bad.exit_code == 1
    assert bad.stdout.strip().endswith("regla «monitor-usage»: id duplicado")
    assert "Traceback" not in bad.output


def test_cli_rules_lists_every_rule_in_both_languages() -> None:
    runner = CliRunner()
    en = runner.invoke(main, ["rules", "--lang", "en"])
    assert en.exit_code == 0 and "amd-needs-rocm (reject) — rules the card out" in en.stdout
    es = runner.invoke(main, ["rules", "--lang", "es", "amd-needs-rocm"])
    assert es.stdout.startswith("amd-needs-rocm (reject) — descarta la tarjeta")
    assert "Necesita ROCm" in es.stdout and "deadline-not-met" not in es.stdout
    bad = runner.invoke(main, ["rules", "no-such-rule"])
    assert bad.exit_code == 2 and "unknown rule 'no-such-rule'" in bad.stderr


def test_cli_check_takes_a_shipped_catalog_by_name() -> None:
    """`expert check --catalog current`, as its help shows and as advise reads the name."""
    done = CliRunner().invoke(main, ["check", "--catalog", "current"], env={"EXPERT_LANG": "en"})
    assert done.exit_code == 0, done.output
    # the shipped market catalog is in the knowledge base already: naming it adds no card
    cards = len(knowledge_base().catalog)
    assert done.stdout.startswith("The knowledge base is sound:") and f"{cards} cards" in done.stdout


# --- the price bases (rules/prices, issue 39) ---------------------------------

def test_spot_above_on_demand_is_found_per_provider(tmp_path: Path) -> None:
    base = rules_dir(tmp_path, replace=("spot = 0.34\n", "spot = 0.90\n"), filename="prices/runpod.toml")
    found = problems(base)
    line = (base / "prices" / "runpod.toml").read_text(encoding="utf-8").splitlines()
    at = next(n for n, text in enumerate(line, 1) if text == 'card = "l40s-48gb"')
    assert found == [f"{base}/prices/runpod.toml:{at}: card 'l40s-48gb': its spot price (0.9) is above its "
                     "on-demand price (0.79)"]


def test_more_memory_of_one_chip_never_costs_less_on_one_basis(tmp_path: Path) -> None:
    # the 80 GB A100 is cheaper on RunPod than the 40 GB one on Lambda: two bases, no finding;
    # on one basis it is one
    extra = '\n[[price]]\ncard = "a100-80gb"\non_demand = 1.50\ndate = "2026-09-25"\nsource = "a test"\n'
    found = problems(rules_dir(tmp_path, extra=extra, filename="prices/lambda.toml"))
    assert len(found) == 1 and "card 'a100-80gb' (80.0 GB) costs less on-demand (1.5) than 'a100-40gb'" in found[0]


def test_a_price_names_a_card_of_the_catalogs(tmp_path: Path) -> None:
    extra = '\n[[price]]\ncard = "rtx-9090"\non_demand = 1.50\ndate = "2026-09-25"\nsource = "a test"\n'
    found = problems(rules_dir(tmp_path, extra=extra, filename="prices/lambda.toml"))
    assert len(found) == 1 and "provider 'lambda': 'rtx-9090' is not a card of the catalogs" in found[0]


def test_the_provider_choices_are_the_bases(tmp_path: Path) -> None:
    base = rules_dir(tmp_path)
    (base / "prices" / "lambda.toml").unlink()
    found = problems(base)
    assert found == [f"{base}/profile.toml: field 'provider': its choices must be cheapest, akash, aws, "
                     "digitalocean, google-cloud, nebius, runpod, verda, the price bases of rules/prices"]


@pytest.mark.parametrize(("old", "new", "expected"), [
    ('date = "2026-05-28"', 'date = "May 2026"', "'date' must be a date (YYYY-MM-DD, or YYYY-MM)"),
    ("on_demand = 1.99", "on_demand = -1", "'on_demand' must be a number of USD per card-hour"),
    ('id = "digitalocean"', 'id = "do"', "id must be kebab-case, not 'cheapest', and the file's name"),
    ('spot = 6.57\n', 'spot = 6.57\nbid = 1\n', "unknown key 'bid'"),
])
def test_a_price_file_is_checked_at_the_line_of_its_key(tmp_path: Path, old: str, new: str, expected: str) -> None:
    name = "google-cloud.toml" if "spot" in old else "digitalocean.toml"
    base = rules_dir(tmp_path, replace=(old, new), filename=f"prices/{name}")
    line = next(n for n, text in enumerate((base / "prices" / name).read_text(encoding="utf-8").splitlines(), 1)
                if text.startswith(new.split("\n")[-2] if new.endswith("\n") else new))
    found = problems(base)
    assert any(expected in p and f"{name}:{line}:" in p for p in found), found

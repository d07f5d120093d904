"""User catalogs: cards the guide does not know take part in every rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from expert import Consultation, InputError, KnowledgeBaseError, advise, explain, paths
from expert.interfaces.cli.main import main

CURRENT = paths.RULES / "catalogs" / "current.toml"


def one_card(tmp_path: Path, card_id: str) -> Path:
    text = CURRENT.read_text(encoding="utf-8")
    block = next(b for b in text.split("[[gpu]]")[1:] if f'id = "{card_id}"' in b)
    path = tmp_path / f"{card_id}.toml"
    path.write_text("[[gpu]]" + block, encoding="utf-8")
    return path


def test_a_b200_holds_70b_lora_on_one_card_as_the_rules_imply(tmp_path: Path) -> None:
    before = advise(model_size_b=70, method="lora", lang="en", catalog="guide")
    assert before.recommendations[0].count > 1   # 140 GB of 16-bit weights: no 80 GB card holds them
    # the market is weighed by default: one B200 without a flag
    assert advise(model_size_b=70, method="lora", lang="en").recommendations[0].gpu == "b200-180gb"
    b200 = one_card(tmp_path, "b200-180gb")
    after = advise(model_size_b=70, method="lora", lang="en", catalog=b200)
    top = after.recommendations[0]
    # One B200 holds the 16-bit base with room for the rest: one card (H17), no sharding.
    assert (top.gpu, top.count, top.devices, top.source) == ("b200-180gb", 1, 1, "b200-180gb.toml")
    assert top.recipe["base_bits"] == 16 and top.strategy == "single" and top.per_device_gib <= top.device_memory_gib * 0.95
    assert "one-gpu-if-it-fits" in top.rules
    # with room left for a micro-batch of 16 (its activations counted), within the 5 % margin of the
    # 179.1 GiB its driver reports (8 when the need was counted in GB against 180)
    assert top.text.startswith("1 × B200 (b200-180gb) with a 16-bit base: about 166.2 GiB of its "
                               "179.1 GiB")
    assert top.recipe["micro_batch"] == 16 and "Micro-batch 16 per device, 2 gradient accumulation steps" in top.text


def test_an_h200_shards_70b_lora_over_two_and_qlora_is_offered_beside_it(tmp_path: Path) -> None:
    after = advise(model_size_b=70, method="lora", lang="en", catalog=["guide", one_card(tmp_path, "h200-141gb")])
    h200 = next(r for r in after.recommendations if r.gpu == "h200-141gb")
    ladder = [s for s in after.trace if s.kind == "configure" and s.derived[0]["values"]["gpu"] == "h200-141gb"]
    # 146.5 GB of 16-bit weights and the rest do not fit 141 GB; no 8-bit base: two, sharded,
    # then the larger micro-batch that fits
    assert [s.rule for s in ladder] == ["propose-one-card", "shard-when-weights-do-not-fit", "fewest-cards-that-fit",
                                        "larger-micro-batch"]
    assert (h200.count, h200.recipe["base_bits"], h200.strategy) == (2, 16, "zero3")
    assert "qlora-instead-of-8bit" in {a.id for a in after.advice}


def test_cli_catalog_flag(tmp_path: Path) -> None:
    done = CliRunner().invoke(main, ["advise", "--model-size", "70", "--method", "lora", "--format", "json",
                                     "--catalog", str(one_card(tmp_path, "b200-180gb"))], env={"EXPERT_LANG": "en"})
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["recommendations"][0]["gpu"] == "b200-180gb"


def test_every_card_of_current_takes_part_in_the_rules() -> None:
    result = advise(model_size_b=70, method="lora", deadline_h=8, lang="en", catalog=CURRENT)
    everything = {r.gpu for r in result.recommendations} | {r.gpu for r in result.rejected}
    assert {"h200-141gb", "b200-180gb", "l40s-48gb", "rtx-5090", "mi300x"} <= everything
    rejected = {r.gpu: r.rules for r in result.rejected}
    # PCIe only (G9): the RTX 5090 and the L40S shard 70B over eight cards of one machine (issue 47,
    # shard-over-pcie); eight 24 GB cards do not hold it, and nothing spreads beyond one machine over PCIe.
    # The RTX 5090 has RunPod's price, the MI300X DigitalOcean's (rules/prices)
    options = {r.gpu: r for r in result.recommendations}
    for gpu in ("rtx-5090", "l40s-48gb"):
        assert (options[gpu].count, options[gpu].strategy) == (8, "zero3"), gpu
    # eight 24 GB cards over PCIe miss 70B, and so does LoRA's last step, an 8-bit base on one card
    assert rejected["rtx-4090"] == rejected["l4"] == ["does-not-fit"]
    assert rejected["mi300x"] == ["amd-needs-rocm"]
    with_rocm = advise(model_size_b=70, method="lora", rocm_ok=True, budget="low", lang="en", catalog=CURRENT)
    mi300x = next(r for r in with_rocm.recommendations if r.gpu == "mi300x")
    assert (mi300x.cost["provider"], mi300x.cost["price_date"]) == ("DigitalOcean", "2026-05-28")
    # RunPod's basis lists no MI300X: with it, the card has no price, and the rule says which bases were searched
    runpod = advise(model_size_b=70, method="lora", rocm_ok=True, budget="low", lang="en", catalog=CURRENT,
                    provider="runpod")
    (no_price,) = [r for r in runpod.rejected if r.gpu == "mi300x"]
    assert no_price.rules == ["no-rental-price"] and no_price.text == ""   # (said with the others, in one line)
    (together,) = runpod.rejected_together
    assert together.rules == ["no-rental-price"] and "(RunPod)" in together.text and "MI300X" in together.text


def test_a_card_no_provider_rents_is_named_once_in_one_line() -> None:
    """Issue 47: the cards no price basis rents (the MI210, the MI250, the RTX
    6000 Ada) are each ruled out by no-rental-price, which the trace shows card
    by card; the answer names them together, once, in one line, not in a
    paragraph of each card's."""
    unrented = ["AMD MI210", "AMD MI250", "RTX 6000 Ada"]
    for lang, line in (("en", "No provider of the price bases searched"),
                       ("es", "Ningún proveedor de las bases de precios consultadas")):
        result = advise(model_size_b=70, method="lora", budget="low", lang=lang)
        assert sum(step.rule == "no-rental-price" for step in result.trace) == 3   # one firing a card
        (together,) = result.rejected_together
        assert together.rules == ["no-rental-price"] and together.text.startswith(line)
        assert all(name in together.text for name in unrented)
        assert not any(line in r.text for r in result.rejected)
        for fmt in ("text", "markdown"):
            verbose = result.render(fmt, verbose=True)
            assert verbose.count(line) == 1 and "\n" not in together.text
            # a card has a paragraph of its own only for another reason (ROCm); the RTX 6000 Ada, which
            # shards 70B over PCIe since issue 47, is in the one line alone
            assert {r.gpu for r in result.rejected if r.text} >= {"mi210", "mi250"}
            assert "rtx-6000-ada" not in {r.gpu for r in result.rejected if r.text}
        data = result.to_dict()
        assert data["rejected_together"] == [{"id": "no-rental-price", "rules": ["no-rental-price"],
                                              "text": together.text}]
    # Not fired: with a price for each, no card is unrented and there is no such line.
    priced = advise(model_size_b=70, method="lora", budget="low", lang="en",
                    prices={"mi210": 1.5, "mi250": 2.0, "rtx-6000-ada": 0.9})
    assert priced.rejected_together == [] and "no-rental-price" not in {s.rule for s in priced.trace}
    assert "No provider" not in priced.render("text", verbose=True)


def test_a_user_card_replaces_the_guide_card_with_its_id(tmp_path: Path) -> None:
    path = tmp_path / "big4090.toml"
    path.write_text('[[gpu]]\nid = "rtx-4090"\nname = "RTX 4090 48 GB (modded)"\nvendor = "nvidia"\nvram_gb = 48\n'
                    'cost = "low"\nsegment = "consumer"\n')
    result = advise(model_size_b=13, method="full", lang="en", catalog=["guide", path])
    card = next(r for r in result.recommendations if r.gpu == "rtx-4090")
    assert (card.count, card.vram_gb, card.source) == (1, 48, "big4090.toml")
    assert len(result.recommendations) + len(result.rejected) == 6


def test_a_user_card_is_ones_own_by_the_names_its_catalog_gives_it(tmp_path: Path) -> None:
    """A catalog card's ``aliases`` are how one's own card is named (owned.find_cards), a user's card too:
    with its catalog's figures."""
    path = tmp_path / "lab.toml"
    path.write_text('[[gpu]]\nid = "lab-card"\nname = "Lab Accelerator 96 GB"\nvendor = "nvidia"\nvram_gb = 96\n'
                    'cost = "medium"\naliases = ["our big card", "lab96"]\n')
    for said in ("our big card", "LAB96", "2x lab96"):
        result = advise(model_size_b=70, method="qlora", vram_gb=said, catalog=["guide", path], lang="en")
        assert result.profile["own_gpu"] == "lab-card" and result.profile["vram_gb"] == 96, said
    with pytest.raises(InputError):       # the guide's six alone: no card of that name
        advise(vram_gb="our big card", catalog="guide", lang="en")


def test_free_text_reads_each_user_catalogs_own_aliases(tmp_path: Path) -> None:
    """The vocabulary free text reads cards by is kept per catalog: two catalogs whose card has the same id
    and name but other aliases are each read by theirs (the cache's key holds the aliases)."""
    from expert.input.freetext import extract
    from expert.interfaces.api import knowledge_base

    card = '[[gpu]]\nid = "lab-card"\nname = "Lab Accelerator"\nvendor = "nvidia"\nvram_gb = 96\ncost = "medium"\n'
    for folder, alias in (("a", "lab96"), ("b", "labxl")):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "lab.toml"
        path.write_text(card + f'aliases = ["{alias}"]\n')
        assert extract(f"tengo una {alias}", knowledge_base(catalog=["guide", path])) == {"vram_gb": "lab-card"}, alias


def test_a_minimal_card_takes_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "min.toml"
    path.write_text('[[gpu]]\nid = "mystery"\nname = "Mystery 96 GB"\nvendor = "nvidia"\nvram_gb = 96\ncost = "medium"\n')
    result = advise(model_size_b=34, method="lora", lang="es", catalog=path)
    mystery = next(r for r in result.recommendations if r.gpu == "mystery")
    a100 = next(r for r in result.recommendations if r.gpu == "a100-80gb")
    # No bf16_tflops: timing.toml's slow default (80), so its time is an upper
    # bound; no prices: its cost class's, $1.50 an hour for "medium".
    assert mystery.count == 1 and mystery.recipe["base_bits"] == 16
    assert mystery.time["speed_assumed"] and mystery.cost["price_assumed"] and mystery.cost["per_hour"] == 1.5
    assert mystery.hours > a100.hours


@pytest.mark.parametrize("text, expected", [
    ("[[gpu]\n", "malformed TOML"),
    ('[[gpu]]\nid = "x"\n', "'name' is missing"),
    ('[[gpu]]\nid = "x"\nname = "X"\nvendor = "nvidia"\nvram_gb = "a lot"\ncost = "low"\n',
     "'vram_gb' must be a positive number"),
    ('[[gpu]]\nid = "x"\nname = "X"\nvendor = "nvidia"\nvram_gb = 8\ncost = "free"\n',
     "bad.toml:6: card 'x': cost must be one of"),
    ('[[gpu]]\nid = "x"\nname = "X"\nvendor = "nvidia"\nvram_gb = 8\ncost = "low"\ncolour = "red"\n',
     "unknown key 'colour'"),
    ('title = "no cards"\n', "no [[gpu]] tables"),
    ('[[gpu]]\nid = "x"\nname = "X"\nvendor = "nvidia"\nvram_gb = 8\ncost = "low"\naliases = "x card"\n',
     "bad.toml:7: card 1: 'aliases' must list at most 16 names of 1 to 40 characters"),
    ('[[gpu]]\nid = "x"\nname = "X"\nvendor = "nvidia"\nvram_gb = 8\ncost = "low"\naliases = ["8 GB"]\n',
     "bad.toml:7: card 1: the alias '8 GB' reads as a VRAM figure"),
])
def test_broken_user_catalogs_never_half_load(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(KnowledgeBaseError) as caught:
        advise(lang="en", catalog=[CURRENT, path])
    assert expected in str(caught.value) and "bad.toml" in str(caught.value)
    done = CliRunner().invoke(main, ["advise", "--catalog", str(path)], env={"EXPERT_LANG": "en"})
    assert done.exit_code == 2 and done.stdout == "" and expected in done.stderr
    assert "Traceback" not in done.stderr
    missing = CliRunner().invoke(main, ["explain", "--catalog", str(tmp_path / "nope.toml")], env={"EXPERT_LANG": "en"})
    assert missing.exit_code == 2 and "nope.toml: no such catalog: neither a shipped one (current, guide) nor a file" in missing.stderr


def test_explanations_and_consultations_name_the_catalog(tmp_path: Path) -> None:
    b200 = one_card(tmp_path, "b200-180gb")
    x = explain(model_size_b=70, method="lora", lang="en", catalog=b200, why_not="h100-80gb")
    assert "B200 (b200-180gb)" in x.render("text")
    c = Consultation(lang="en", catalog=str(b200), model_size_b=70, method="lora")
    again = Consultation.from_dict(json.loads(json.dumps(c.to_dict())))
    assert again.result().recommendations[0].gpu == "b200-180gb"


def test_a_shipped_catalog_by_name_from_any_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    named = advise(model_size_b=70, method="lora", lang="en", catalog="current")
    assert "b200-180gb" in {r.gpu for r in named.recommendations} | {r.gpu for r in named.rejected}
    done = CliRunner().invoke(main, ["advise", "--catalog", "current", "--format", "json"], env={"EXPERT_LANG": "en"})
    assert done.exit_code == 0 and "h200-141gb" in done.stdout


def test_expert_catalogs_lists_the_shipped_ones_from_any_directory(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # In this process, from another directory (the command run as a process: tests/test_cli.py).
    monkeypatch.chdir(tmp_path)
    env = {"EXPERT_LANG": None, "LC_ALL": None, "LANG": None}
    done = CliRunner().invoke(main, ["catalogs", "--format", "json"], env=env)
    assert done.exit_code == 0, done.output
    data = __import__("json").loads(done.stdout)
    assert [c["id"] for c in data["guide"]] == ["rtx-4090", "a100-40gb", "a100-80gb", "h100-80gb", "mi210", "mi250"]
    assert data["shipped"]["current"]["file"] == "rules/catalogs/current.toml"
    assert "h200-141gb" in [c["id"] for c in data["shipped"]["current"]["cards"]]
    assert "guide" not in data["shipped"]
    # a catalog's card gives the names people write for it there; owned.toml only the cards no catalog has
    current = {c["id"]: c for c in data["shipped"]["current"]["cards"]}
    assert current["rtx-3090"]["aliases"] == ["3090", "rtx 3090"] and "rtx-3090" not in [c["id"] for c in data["owned"]]
    assert {"id": "rtx-3080", "name": "NVIDIA GeForce RTX 3080 10 GB", "vram_gb": 10.0,
            "aliases": ["3080", "rtx 3080", "3080 10gb", "rtx 3080 10gb"]} in data["owned"]
    text = CliRunner().invoke(main, ["catalogs", "--lang", "es"], env=env).stdout
    assert "El mercado de hoy, catálogo incluido «current», que se sopesa por defecto:" in text
    assert "rules/" not in text
    assert re.search(r"  rtx-3080 +NVIDIA GeForce RTX 3080 10 GB \(10 GiB\): 3080, rtx 3080", text)
    assert re.search(r"\n  rtx-3090 +3090, rtx 3090\n", text) and text.count("rtx-3090 ") == 2   # its prices, its names


def test_a_card_is_built_from_its_field_list() -> None:
    # Card's fields are the one list: each is a [[gpu]] key copied under its name, or worked out by the loader
    from dataclasses import fields

    from expert.knowledge.catalog import COPIED, DERIVED
    from expert.knowledge.records import Card

    names = [field.name for field in fields(Card)]
    assert sorted(names) == sorted([name for name, _ in COPIED] + list(DERIVED))
    assert not {name for name, _ in COPIED} & set(DERIVED)
    assert dict(COPIED)["vram_gb"] is float and dict(COPIED)["heuristics"] is tuple


def test_a_cards_catalog_is_told_shipped_or_not_once_not_at_every_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every text names cards, and a card of a shipped catalog goes by its name alone (Writer.name): whether
    # its file is in rules/catalogs is resolved once per file, not at each of the hundreds of names written.
    from expert.knowledge.catalog import shipped_card

    catalogs: list[Path] = []
    real = Path.resolve

    def counted(self: Path, strict: bool = False) -> Path:
        if self.suffix == ".toml":
            catalogs.append(self)
        return real(self, strict=strict)

    shipped_card.cache_clear()
    monkeypatch.setattr(Path, "resolve", counted)
    first = advise(model_size_b=13, method="lora", budget="medium", lang="en")
    assert catalogs == [paths.RULES / "catalogs" / "current.toml"]      # today's market: one file, 17 cards
    assert "current" not in first.recommendations[0].text                # named without its file
    advise(model_size_b=13, method="lora", budget="medium", lang="es")
    advise(model_size_b=70, method="qlora", budget="low", lang="en")
    assert len(catalogs) == 1

"""The knowledge base as data: coverage of the guide, and refusal of broken files."""

from __future__ import annotations

import inspect
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from expert import KnowledgeBaseError, knowledge as kb_module, paths
from expert.knowledge.conditions import ConditionError, compile_condition

from conftest import edited_rules

ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "docs" / "knowledge-base.md").read_text(encoding="utf-8")


def test_shipped_knowledge_base_loads(kb) -> None:  # type: ignore[no-untyped-def]
    # the guide's six first, then today's market (rules/catalogs)
    assert [card.id for card in kb.catalog][:6] == ["rtx-4090", "a100-40gb", "a100-80gb", "h100-80gb", "mi210",
                                                    "mi250"]
    assert {card.origin for card in kb.catalog[6:]} == {"current.toml"} and len(kb.catalog) == 23
    assert len(kb.rules) == len({rule.id for rule in kb.rules})
    for rule in kb.rules:
        assert rule.section in kb.sections and rule.heuristics and rule.message


def test_the_profile_fields_are_declared_once(kb) -> None:  # type: ignore[no-untyped-def]
    from expert.interfaces import api
    from expert.interfaces.cli import options as cli
    from expert.knowledge.conditions import DERIVED_PROFILE_FIELDS, FIELDS
    from expert.knowledge.records import OPTIONAL_FIELDS, PROFILE_FIELDS

    # The profile fact holds the input fields, then those the model resolver derives.
    assert PROFILE_FIELDS + DERIVED_PROFILE_FIELDS == tuple(FIELDS["profile"])
    assert PROFILE_FIELDS == tuple(kb.fields)
    assert set(OPTIONAL_FIELDS) <= set(PROFILE_FIELDS)
    # advise() takes them by name (it builds its input from PROFILE_FIELDS), and so does the command line.
    parameters = tuple(inspect.signature(api.advise).parameters)
    assert parameters[:len(PROFILE_FIELDS) + 1] == PROFILE_FIELDS + ("lang",)

    def command() -> None: ...

    for option in cli.PROFILE_OPTIONS:
        option(command)
    assert sorted(p.name for p in command.__click_params__) == sorted(PROFILE_FIELDS)  # type: ignore[attr-defined]
    # the flags are made from the one declaration (profile_types.FIELD_TYPES), in its order: a field the command
    # line has no words for is still a flag, named after it; a yes-or-no field is a pair
    assert list(cli.PROFILE_FLAGS) == list(PROFILE_FIELDS)

    def other() -> None: ...

    cli.profile_option("new_field", int)(other)
    cli.profile_option("new_switch", bool)(other)
    assert [(p.name, p.opts, p.secondary_opts) for p in other.__click_params__] == [  # type: ignore[attr-defined]
        ("new_field", ["--new-field"], []), ("new_switch", ["--new-switch"], ["--no-new-switch"])]
    assert sorted(cli.WHAT_IF_NAMES.values()) == sorted(PROFILE_FIELDS)


def test_the_vocabulary_is_the_one_the_files_and_the_engine_use(kb) -> None:  # type: ignore[no-untyped-def]
    from expert.inference.actions import ACTIONS as REGISTERED
    from expert.inference.actions import registry_problems
    from expert.knowledge.records import ACTIONS, COSTS, METHODS, NAMESPACES, OFF_LADDER, SCALE_OUT, TRIAL_KINDS, VENDORS

    assert kb.fields["method"].choices == METHODS == tuple(kb.recipes["ladder"])
    assert set(VENDORS) <= set(kb.labels["vendor"]) and set(COSTS) <= set(kb.labels["cost"])
    steps = {entry["step"] for ladder in kb.recipes["ladder"].values() for entry in ladder}
    assert steps | set(OFF_LADDER) <= set(kb.labels["step"]) and SCALE_OUT in OFF_LADDER
    # The actions the loader accepts are the engine's, each declaring what the loader says it declares.
    assert registry_problems() == [] and list(REGISTERED) == list(ACTIONS)
    # Every stage is named by a rule, every kind of trial an action declares is settled by one stage,
    # and every fact an action reads is one a stage may see.
    assert [stage.id for stage in kb.stages] == list(dict.fromkeys(rule.stage for rule in
                                                                   sorted(kb.rules, key=lambda r: r.rank)))
    assert sorted(stage.trials for stage in kb.stages if stage.trials) == sorted(TRIAL_KINDS)
    assert {act.trial for act in REGISTERED.values() if act.trial} == set(TRIAL_KINDS)
    assert {ns for act in REGISTERED.values() for ns in act.reads} <= set(NAMESPACES)


def test_the_library_types_name_the_values_the_library_accepts() -> None:
    # typing needs literals; they must be the tuples every entry point reads
    from typing import get_args

    from expert.interfaces import api, schema
    from expert.i18n import SUPPORTED

    assert get_args(api.Lang) == SUPPORTED and get_args(api.Basis) == api.BASES
    assert get_args(api.Detail) == schema.DETAILS
    assert schema.LANG["enum"] == list(SUPPORTED)


def test_the_strategies_and_precisions_are_the_estimators_everywhere(kb) -> None:  # type: ignore[no-untyped-def]
    # estimate.STRATEGIES and estimate.PRECISIONS are the declarations; typing, the CLI's help, the knowledge
    # base's groups and labels are held to them here, and the MCP schema reads them
    from typing import get_args

    from click.testing import CliRunner

    from expert.interfaces import api, schema
    from expert.interfaces.cli.main import main
    from expert.inference.estimate import PRECISIONS, STRATEGIES
    from expert.knowledge.figures import STRATEGY_KINDS

    assert get_args(api.Strategy) == STRATEGIES and get_args(api.Precision) == PRECISIONS
    estimate_tool = next(t for t in schema.tool_specs(kb) if t["name"] == "estimate")["parameters"]["properties"]
    assert estimate_tool["strategy"]["enum"] == list(STRATEGIES)
    assert estimate_tool["precision"]["enum"] == list(PRECISIONS)
    assert sorted(name for kind in STRATEGY_KINDS.values() for name in kind) == sorted(STRATEGIES)
    assert set(STRATEGY_KINDS) == set(kb.ranking["strategy"])
    labels = tomllib.loads((ROOT / "rules" / "labels.toml").read_text(encoding="utf-8"))
    launch = tomllib.loads((ROOT / "rules" / "launch.toml").read_text(encoding="utf-8"))
    assert set(labels["strategy"]) | set(launch["strategy"]) <= set(STRATEGIES)
    shown = " ".join(CliRunner().invoke(main, ["estimate", "--help"], terminal_width=200).output.split())
    for name in STRATEGIES + PRECISIONS:
        assert re.search(rf"\b{name}\b", shown), name


def test_every_heuristic_is_a_rule_or_a_documented_decision(kb) -> None:  # type: ignore[no-untyped-def]
    in_rules = {h for rule in kb.rules for h in rule.heuristics} | {h for card in kb.catalog for h in card.heuristics}
    decisions = set(re.findall(r"^\| (H\d+) \| not a rule", DOCS, flags=re.MULTILINE))
    assert {f"H{n}" for n in range(1, 40)} <= in_rules | decisions


def test_every_gap_is_resolved_in_the_docs() -> None:
    for n in range(1, 10):
        assert re.search(rf"^### G{n}\b", DOCS, flags=re.MULTILINE), f"G{n}"


def test_docs_rules_md_is_what_expert_rules_prints(kb) -> None:  # type: ignore[no-untyped-def]
    from expert.explanation import rulebook
    from expert.i18n import Localizer

    tr = Localizer("en")
    generated = rulebook.render(kb, rulebook.describe(kb, tr), "markdown", tr)
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == generated, \
        "regenerate: expert rules --format markdown --lang en > docs/rules.md"
    for rule in kb.rules:
        assert f"## `{rule.id}`" in generated


def test_python_code_holds_no_gpu_names_or_thresholds(kb) -> None:  # type: ignore[no-untyped-def]
    names = [card.id for card in kb.catalog] + ["4090", "A100", "H100", "MI210", "MI250"]
    for path in (ROOT / "expert").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for name in names:
            assert name.lower() not in text.lower(), f"{name} in {path.name}"


def broken(tmp_path: Path, filename: str, old: str, new: str) -> Path:
    return edited_rules(tmp_path, (filename, old, new))


@pytest.mark.parametrize("filename, old, new, expected", [
    ("rules.toml", 'kind = "reject"', 'kind = "reject', "rules.toml:"),
    ("rules.toml", "when = \"option.vendor == 'amd' and not profile.rocm_ok\"",
     "when = \"option.vendr == 'amd'\"", "unknown field 'option.vendr'"),
    ("rules.toml", "when = \"not option.fits and (option.possible or option.where == 'own')\"",
     "when = \"__import__('os')\"", "is not allowed in a condition"),
    ("recipes.toml", 'optimizer = "adamw8bit"', 'optimizer = "lion"', "optimizer must be one of"),
    ("recipes.toml", 'stack = "tuned"', 'stack = "compiled"', "stack must be one of typical, tuned"),
    ("recipes.toml", '{ step = "shard", recipe = "lora-16bit", spread = "shard" }',
     '{ step = "shard", recipe = "qlora-4bit", spread = "shard" }', "is not a recipe for lora"),
    ("rules.toml", 'step = "offload"', 'step = "offloading"', "a configure rule names one step of"),
    ("rules.toml", "when = \"profile.method == 'qlora'\"", "when = \"profile.method == 4\"", "compares a text with a number"),
    ("rules.toml", 'section = "amd"', 'section = "gpus"', "cites unknown section 'gpus'"),
    ("rules.toml", 'id = "deadline-not-met"', 'id = "monitor-usage"', "duplicate id"),
    ("rules.toml", 'id = "deadline-not-met"', 'id = "Tight Fit"', "id must be kebab-case"),
    ("rules.toml", 'heuristics = ["H20"]', 'heuristics = ["H40"]', "heuristics must list H-ids"),
    ("rules.toml", 'factor = 0.75', 'factor = "high"', ".factor' must be a number"),
    ("rules.toml", 'kind = "advice"', 'kind = "prefer"', "needs a factor"),
    ("rules.toml", "%(pick_count)s cards, the link", "%(pick_cards)s cards, the link", "placeholder 'pick_cards'"),
    ("rules.toml", 'kind = "warning"', 'kind = "hint"', "kind must be one of"),
    ("rules.toml", 'then = "pick"', 'then = "choose"', "then = 'choose' is not an action"),
    ("rules.toml", 'stage = "propose"\nthen = "first-step"\n', 'stage = "propose"\n', "names its action (then = "),
    ("rules.toml", 'then = "shard-over-pcie"', 'then = "step-settled"', "action 'shard-over-pcie' is named by no rule"),
    ("rules.toml", 'kind = "reject"\nstage = "reject"\n', 'kind = "reject"\nstage = "reject"\nthen = "option"\n',
     "a rule of another kind names none"),
    ("rules.toml", 'stage = "prefer"\nfactor', 'stage = "preference"\nfactor', "is not a [[stage]] of this file"),
    ("rules.toml", 'trials = "speed"\n', "", "a stage that sees trials settles one kind of them"),
    ("rules.toml", 'sees = ["profile", "weight"]', 'sees = ["profile", "weights"]', "sees must list facts of"),
    ("rules.toml", 'message = "Reach the batch size', 'mesage = "Reach the batch size', ".mesage' (known: "),
    # issue 47: only a reject rule whose message names the card names its cards together
    ("rules.toml", 'rents %(card_name)s by the hour', 'rents it by the hour', "together = true is for reject rules"),
    ("rules.toml", "id = \"deadline-not-met\"\n", "id = \"deadline-not-met\"\ntogether = true\n", "together = true is for reject rules"),
    ("rules.toml", "id = \"deadline-not-met\"\n", "id = \"deadline-not-met\"\nnames_closest = true\n",
     "names_closest = true is for reject rules"),
    ("rules.toml", "the last one: %(option_summary)s.", "the last one tried.", "names_closest = true is for reject rules"),
    ("rules.toml", "names_closest = true\nmessage = \"None", "names_closest = 1\nmessage = \"None", "names_closest"),
    # the one-screen answer's few words for each reject rule that names its cards one by one, and no other
    ("labels.toml", 'amd-needs-rocm = "ROCm needed, which you did not accept"\n', "",
     "[reject] needs a few words for the reject rule 'amd-needs-rocm'"),
    ("labels.toml", 'does-not-fit = "no setup tried fits"\n', 'does-not-fit = "no setup tried fits"\nno-rental-price = "no price"\n',
     "[reject] 'no-rental-price' is not a reject rule of rules.toml that names its cards one by one"),
    ("catalog.toml", "vram_gb = 24\n", 'vram_gb = "24 GB"\n', "'vram_gb' must be a positive number"),
    ("catalog.toml", 'vendor = "amd"', 'vendor = "intel"', "vendor must be one of"),
    ("catalog.toml", 'cost = "high"', 'cost = "very high"', "cost must be one of"),
    ("catalog.toml", 'id = "mi250"', 'id = "mi210"', "must be unique"),
    ("catalog.toml", "bf16_tflops = 362.1", "bf16_tflop = 362.1", "unknown key 'bf16_tflop'"),
    ("requirements.toml", "lora = [[7, 16], [13, 24], [70, 80]]", "lora = [[7, 16], [13, 12], [70, 80]]",
     "both growing"),
    ("requirements.toml", "factor = 0.5", "factor = 5", "[qlora]"),
    ("timing.toml", "between_nodes_gbs = { default = 25.0", "between_nodes_gbs = { default = -25.0",
     "'links.between_nodes_gbs.default' must be a number above 0"),
    ("ranking.toml", "counts = [1, 2, 4, 8, 16, 32, 64]", "counts = [2, 4]", "counts"),
    ("profile.toml", 'type = "choice"', 'type = "pick-one"', "type must be one of"),
    ("sections.toml", '[section.amd]\nheading = "Ajuste fino de LLM en GPU AMD: ¿es viable?"', "[section.amd]",
     "'section.amd.heading' is missing"),
])
def test_broken_knowledge_base_is_refused_with_file_and_line(tmp_path, filename, old, new, expected) -> None:  # type: ignore[no-untyped-def]
    base = broken(tmp_path, filename, old, new)
    with pytest.raises(KnowledgeBaseError) as caught:
        kb_module.load(base)
    message = str(caught.value)
    assert expected in message
    assert filename in message


def test_rule_problems_name_the_line(tmp_path: Path) -> None:
    base = broken(tmp_path, "rules.toml", 'section = "amd"', 'section = "gpus"')
    with pytest.raises(KnowledgeBaseError) as caught:
        kb_module.load(base)
    path, line, *_ = caught.value.problems[0]
    assert (base / "rules.toml").read_text().splitlines()[line - 1] == 'section = "gpus"'


@pytest.mark.parametrize("filename, old, new, expected, at", [
    # `at`: the problem is on the first line that holds it; None: on the line of `new`.
    ("recipes.toml", '{ step = "shard", recipe = "lora-16bit", spread = "shard" }',
     '{ step = "shard", recipe = "qlora-4bit", spread = "shard" }', "is not a recipe for lora", None),
    ("recipes.toml", '{ step = "shard", recipe = "qlora-4bit", spread = "shard" }',
     '{ step = "shard", recipe = "qlora-4bit", spread = "everywhere" }', "qlora: spread must be one of", None),
    ("recipes.toml", "margin = ", "margin = 0.7 #", "[fit] margin", None),
    ("recipes.toml", 'stack = "tuned"', 'stack = "compiled"', "stack must be one of typical, tuned", None),
    ("recipes.toml", 'sharded_as = "fsdp"', 'sharded_as = "zero2"', "sharded_as must be one of zero3, fsdp", None),
    ("ranking.toml", "medium = { cost = 1.0, time = 0.5 }\n", "", "'medium' needs numbers cost and time",
     "[budget_weights]"),
    ("ranking.toml", "high = { cost = 0.5, time = 1.0 }", "high = { cost = -0.5, time = 1.0 }",
     "'high' needs numbers cost and time", None),
    ("ranking.toml", 'sharded = "zero3"\n', "", "'strategy.sharded' is missing", "[strategy]"),
    ("ranking.toml", "counts = [1, 2, 4, 8, 16, 32, 64]", "counts = [2, 4]", "counts", None),
    ("requirements.toml", "factor = 0.5", "factor = 5", "[qlora]", None),
    ("requirements.toml", "lora = [[7, 16], [13, 24], [70, 80]]", "lora = [[7, 16], [13, 12], [70, 80]]",
     "both growing", None),
    ("requirements.toml", "lora = 1.0", "lora = -1.0", "[floor_bytes_per_param] needs a number for 'lora'", None),
    ("timing.toml", "between_nodes_gbs = { default = 25.0", "between_nodes_gbs = { default = -25.0",
     "'links.between_nodes_gbs.default' must be a number above 0", None),
    ("timing.toml", "overhead_per_step_s = 0.09", "overhead_per_step_s = -0.09",
     "'stack.typical.overhead_per_step_s' must be a number from 0 to 1", None),
    ("timing.toml", "dequantize_s_per_b = 0.028", "dequantize_s_per_b = 0",
     "'stack.typical.dequantize_s_per_b' must be a number above 0", None),
    ("timing.toml", "exponent = 0.55", "exponent = -1", "'bandwidth.exponent' must be a number above 0", None),
    ("timing.toml", "default = { pcie = 4, lanes = 16 }", "default = { pcie = 7, lanes = 16 }",
     "PCIe generation 7 is not one of lane_gbs", None),
    ("timing.toml", "share = 0.8\n", "share = 1.8\n", "'host_link.share' must be a number above 0", None),
    # a calibration row measured on a model the table lacks (mypy found the crash: calibration() read None)
    ("timing.toml", 'dense = "qwen2.5-72b"', 'dense = "qwen2.5-27b"', "'qwen2.5-27b' is not a model of models.toml",
     None),
    ("timing.toml", 'model = "llama-3-8b"', 'model = "llama-3-8x"', "'llama-3-8x' is not a model of models.toml",
     None),
    ("timing.toml", '[[calibration.moe]]\nid = "qwen3-30b-a3b-over-qwq-32b"\nstack = "typical"\ngpu = "h100-80gb"\n'
     'count = 8\nmodel = "qwen3-30b-a3b"\n', '[[calibration.moe]]\nid = "qwen3-30b-a3b-over-qwq-32b"\n'
     'stack = "typical"\ngpu = "h100-80gb"\ncount = 8\n', "a mixture of experts needs size_b or model", None),
    ("catalog.toml", "bf16_tflops = 989.4", "bf16_tflops = -2", "'bf16_tflops' must be a positive number", None),
    ("estimator.toml", 'optimizer = "adamw"\nprecision = "mixed"', 'optimizer = "lion"\nprecision = "mixed"',
     "[typical] names an unknown optimizer", None),
    # a published run's regime is one the optimizer tables know (issue 47: Answer.AI's runs are pure bf16)
    ("estimator.toml", 'precision = "bf16"\npeak = 14.92', 'precision = "bf17"\npeak = 14.92',
     "published run 'answerai-70b-2x3090-offload': precision must be one of mixed, bf16, fp16", None),
    ("estimator.toml", 'id = "answerai-7b-lora-512"', 'id = "answerai-7b-lora"',
     "published run id 'answerai-7b-lora' must be unique: it is already used by run", None),
    ("estimator.toml", "working_floor_mib = 1813.0", "working_floor_mib = -1.0",
     "'sharding.working_floor_mib' must not be negative", None),
    ("profile.toml", 'type = "choice"', 'type = "pick-one"', "type must be one of", None),
    ("sections.toml", '[section.amd]\nheading = "Ajuste fino de LLM en GPU AMD: ¿es viable?"', "[section.amd]",
     "'section.amd.heading' is missing", "[section.amd]"),
    ("explain.toml", 'value = "none"', 'value = "never"', "value 'never' is not accepted", None),
    ("rules.toml", 'opposes = ["configuration-chosen"]', 'opposes = ["configuration-picked"]',
     "refers to undefined rule 'configuration-picked'", None),
    ("rules.toml", 'factor = 0.75', 'factor = "high"', ".factor' must be a number", None),
    ("catalog.toml", 'vendor = "amd"', 'vendor = "intel"', "vendor must be one of", None),
])
def test_problems_are_at_the_line_of_their_key_or_table(tmp_path, filename, old, new, expected, at) -> None:  # type: ignore[no-untyped-def]
    original = (paths.RULES / filename).read_text(encoding="utf-8")
    base = broken(tmp_path, filename, old, new)
    lines = (base / filename).read_text(encoding="utf-8").splitlines()
    line = (original[:original.index(old)].count("\n") + 1 if at is None
            else next(n for n, text in enumerate(lines, 1) if at in text))
    with pytest.raises(KnowledgeBaseError) as caught:
        kb_module.load(base)
    found = [(Path(path).name, number) for path, number, template, params in caught.value.problems
             if expected in template % params]
    assert (filename, line) in found, f"{filename}:{line} {lines[line - 1]!r}\n{caught.value}"


def test_missing_file_and_spanish_messages(tmp_path: Path) -> None:
    base = tmp_path / "rules"
    shutil.copytree(paths.RULES, base)
    (base / "timing.toml").unlink()
    with pytest.raises(KnowledgeBaseError) as caught:
        kb_module.load(base)
    from expert.i18n import Localizer

    assert "timing.toml: falta el archivo" in caught.value.render(Localizer("es").gettext)


class TestConditions:
    ENV = {"profile": {"model_size_b": 70, "method": "lora", "deadline_h": None, "rocm_ok": False},
           "card": {"ideal_methods": ("lora",), "ideal_min_b": 30, "ideal_max_b": 70}}

    @pytest.mark.parametrize("source, expected", [
        ("profile.model_size_b >= 30 and profile.method == 'lora'", True),
        ("profile.method in ['full', 'qlora']", False),
        ("profile.method in card.ideal_methods", True),
        ("card.ideal_min_b <= profile.model_size_b <= card.ideal_max_b", True),
        ("profile.model_size_b > card.ideal_max_b * 0.5 + 1", True),
        ("not profile.rocm_ok", True),
        ("profile.deadline_h < 10", False),    # ordering with a missing value is false
        ("profile.deadline_h > 10", False),
        ("profile.deadline_h is None", True),
        ("-profile.model_size_b < 0", True),
    ])
    def test_evaluation(self, source: str, expected: bool) -> None:
        assert compile_condition(source)(self.ENV) is expected

    @pytest.mark.parametrize("source", [
        "open('x')", "profile.__class__", "model_size_b > 3", "profile.method.upper == 1", "lambda: 1",
        "profile.model_size_b if True else 1", "[x for x in card.ideal_methods]", "profile.nope == 1",
        "profile.model_size_b ** 2 > 1", "profile.method in 'lora'", "profile.model_size_b", "1 +",
    ])
    def test_refused(self, source: str) -> None:
        with pytest.raises(ConditionError):
            compile_condition(source)


def test_an_edited_rules_directory_is_read_again(tmp_path: Path) -> None:
    """A long-running process (a server, a notebook) sees an edited rules/:
    the cache stamps every file of the directory, not only the catalogs."""
    import shutil

    from expert.interfaces.api import knowledge_base
    from expert.paths import RULES

    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    before = knowledge_base(rules)
    assert knowledge_base(rules) is before
    recipes = rules / "recipes.toml"
    recipes.write_text(recipes.read_text(encoding="utf-8").replace("margin = 0.05", "margin = 0.125"),
                       encoding="utf-8")
    after = knowledge_base(rules)
    assert after is not before
    assert (before.recipes["margin"], after.recipes["margin"]) == (0.05, 0.125)


def test_a_text_read_again_is_not_parsed_again_and_each_reader_gets_its_own_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader keeps what it parsed by the file's text (expert.knowledge.source):
    the same text read again, under any name, is not parsed again, a changed one is,
    and what one reader does to its document is not what the next one reads."""
    from expert.knowledge.source import Problems, read_toml

    problems = Problems()
    first = tmp_path / "a.toml"
    first.write_text('x = [1]\n[t]\ny = "z"\n', encoding="utf-8")
    doc, _ = read_toml(first, problems)
    doc["x"].append(2)
    doc["t"]["y"] = "changed"
    parsed: list[str] = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(text) or real(text))
    copy = tmp_path / "b.toml"
    copy.write_text('x = [1]\n[t]\ny = "z"\n', encoding="utf-8")
    assert read_toml(copy, problems)[0] == {"x": [1], "t": {"y": "z"}} and parsed == []
    first.write_text('x = [3]\n', encoding="utf-8")
    assert read_toml(first, problems)[0] == {"x": [3]} and parsed == ['x = [3]\n']
    assert problems.items == []


def test_the_parsed_texts_kept_stay_within_their_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the loader keeps is bounded in bytes (texts and documents), the
    oldest dropped first, and its count of them stays the true one."""
    from collections import OrderedDict

    from expert.knowledge import source

    monkeypatch.setattr(source, "_PARSED", OrderedDict())
    monkeypatch.setattr(source, "_parsed_size", 0)
    monkeypatch.setattr(source, "_PARSED_BYTES", 2000)
    problems = source.Problems()
    for i in range(50):
        path = tmp_path / f"{i}.toml"
        path.write_text(f'n = {i}\ns = "{"x" * 50}"\n', encoding="utf-8")
        source.read_toml(path, problems)
    kept = source._PARSED
    assert source._parsed_size == sum(len(text) + len(blob) for text, blob in kept.items()) <= 2000
    assert 'n = 49\n' in next(reversed(kept)) and all('n = 0\n' not in text for text in kept)
    assert problems.items == []

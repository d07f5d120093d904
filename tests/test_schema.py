"""Types and JSON Schemas from one source (rules/profile.toml); the output
schema holds for real results; the summary is small; `expert schema`."""

from __future__ import annotations

import json
import os
import random
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from expert import Consultation, advise, explain
from expert.interfaces.api import estimate
from expert.input.bounds import Bounds
from expert.interfaces.cli.main import main
from expert.errors import InputError
from expert.interfaces.schema import SCHEMA_VERSION, input_schema, output_schema, tools

ROOT = Path(__file__).resolve().parent.parent


def test_the_generated_types_match_the_profile_definition() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_update_types", ROOT / "scripts" / "update_types.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    assert (ROOT / "expert" / "input" / "profile_types.py").read_text(encoding="utf-8") == module.render(), (
        "expert/input/profile_types.py is out of date: run python scripts/update_types.py")
    for path, text in module.render_signatures().items():
        assert path.read_text(encoding="utf-8") == text, (
            f"the profile fields of {path.name} are out of date: run python scripts/update_types.py")
    # a field added to the profile is a new key of ProfileArguments (so a parameter of every entry point), with its type
    declared = module.fields()
    module.fields = lambda: {**declared, "new_field": {"type": "hours", "min": 1, "max": 2}}
    text = module.render()
    assert "NewField = Annotated[float | str, Bounds(min=1, max=2, kind='hours')]\n" in text
    assert "    new_field: NewField | None\n\n    # other names\n" in text
    assert "    vram: VramGb | None\n" in text and "    model: " not in text   # advise() declares `model` itself
    # ... and a condition type in conditions.FIELDS["profile"], from its type in rules/profile.toml
    fields = f'    "profile": {{\n        {module.START}\n        "old": NUM,\n        {module.END}\n        "model_name": STR,'
    assert module.with_condition_types(fields, {"model_size_b": {"type": "size"}, "new_field": {"type": "hours"}}) == (
        f'    "profile": {{\n        {module.START}\n        "model_size_b": PROFILE_TYPES["size"],\n'
        f'        "new_field": PROFILE_TYPES["hours"],\n        {module.END}\n        "model_name": STR,')


@pytest.mark.parametrize("function", [advise, explain, Consultation.__init__])
def test_the_api_is_annotated_with_the_profile_types(function, kb) -> None:  # type: ignore[no-untyped-def]
    import inspect

    from expert.input.profile_types import FIELD_TYPES, ProfileArguments, Unpack

    # One declaration: each entry point takes **profile: Unpack[ProfileArguments] (what a type checker reads) ...
    hints = typing.get_type_hints(function, include_extras=True)
    assert hints["profile"] == Unpack[ProfileArguments]
    assert hints["lang"] == typing.Literal["en", "es"] | None
    declared = typing.get_type_hints(ProfileArguments, include_extras=True)
    # ... and shows each field as a keyword parameter of its own (what help() and inspect read), typed alike
    shown = inspect.signature(function).parameters
    for name, spec in kb.fields.items():
        assert declared[name] == shown[name].annotation == FIELD_TYPES[name] | None, name
        assert (shown[name].kind, shown[name].default) == (inspect.Parameter.KEYWORD_ONLY, None)
        args = typing.get_args(FIELD_TYPES[name])
        if spec.type == "choice":
            assert set(args) == set(spec.choices)
        elif spec.type != "bool":
            bounds = args[1]
            assert isinstance(bounds, Bounds) and (bounds.min, bounds.max) == (spec.min, spec.max)
    # the fields' other names (rules/vocabulary.toml) are keys too, typed as their field
    from expert.knowledge.vocabulary import vocabulary

    aliases = {alias: field for field, names in vocabulary(kb).argument_aliases.items() for alias in names
               if alias != "model"}
    assert aliases and all(declared[alias] == FIELD_TYPES[field] | None for alias, field in aliases.items())
    assert list(shown)[-1] == "profile" and shown["profile"].kind is inspect.Parameter.VAR_KEYWORD


def test_the_entry_points_read_the_profile_alike() -> None:
    """The fields, their other names and a name that is none of theirs, read alike by advise(), explain() and
    Consultation(): one **profile, one reader (expert.input.arguments.profile_arguments)."""
    result = advise(model_size_b=8, vram="RTX 3090", lang="en")
    assert advise(model="8B", gpu="RTX 3090", lang="en").profile == result.profile
    assert explain(model_size="8B", own_gpu="RTX 3090", lang="en").result.profile == result.profile
    assert Consultation(lang="en", model="8B", vram="RTX 3090").result().profile == result.profile
    for call in (lambda: advise(colour="red"), lambda: explain(colour="red"), lambda: Consultation(colour="red")):
        with pytest.raises(InputError, match="colour: not an accepted argument; accepted: model_size_b, method"):
            call()
    for call in (lambda: advise(model_size_b=8, size=7), lambda: Consultation(model_size_b=8, model="7B")):
        with pytest.raises(InputError, match="model_size_b: given twice"):
            call()


def test_the_input_schema_comes_from_the_profile_definition(kb) -> None:  # type: ignore[no-untyped-def]
    schema = input_schema(kb)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(kb.fields) <= set(schema["properties"])
    assert schema["properties"]["method"]["anyOf"][0]["enum"] == list(kb.fields["method"].choices)
    size = schema["properties"]["model_size_b"]["anyOf"][0]
    assert (size["minimum"], size["maximum"]) == (kb.fields["model_size_b"].min, kb.fields["model_size_b"].max)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"model_size_b": "70B", "method": "lora", "vram_gb": None, "lang": "es"})
    assert not validator.is_valid({"method": "lorax"})
    assert not validator.is_valid({"model_size_b": 0})
    assert not validator.is_valid({"colour": "red"})


def random_profile(rng: random.Random, kb) -> dict:  # type: ignore[no-untyped-def]
    profile = {}
    for name, spec in kb.fields.items():
        if rng.random() < 0.4:
            continue
        if spec.type == "choice":
            profile[name] = rng.choice(spec.choices)
        elif spec.type == "bool":
            profile[name] = rng.random() < 0.5
        elif spec.type == "integer":
            profile[name] = rng.choice([100, 1000, 10_000, 50_000, 1_000_000])
        elif name == "model_size_b":
            profile[name] = rng.choice([0.5, 1, 3, 7, 8, 13, 14, 30, 34, 70, 72, 120, 180, 405])
        elif spec.type == "hours":
            profile[name] = rng.choice([1, 4, 8, 24, 72, 400])
        else:
            profile[name] = rng.choice([8, 12, 16, 24, 32, 48, 80, 96, 141])
    return profile


def test_the_output_schema_validates_real_results_of_random_profiles(kb) -> None:  # type: ignore[no-untyped-def]
    schema = output_schema(kb)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    # 12 fixed profiles (seed 6) in the suite, about 0.15 s of CPU each: they
    # reach every place of the schema the 40 of seed 15 there were until
    # 2026-12-07 reached, with every JSON type and every enum value those gave
    # it there (220 pairs: null and number for each nullable figure, the
    # assumed fields, the settings given, both languages), the last at the
    # 12th; seed 15 needed 24, and the 19 other seeds from 0 to 20 each missed
    # 1 to 6 pairs in their first 12.
    # EXPERT_FUZZ=N validates N fresh random ones.
    fuzz = int(os.environ.get("EXPERT_FUZZ", "0"))
    rng = random.Random(random.randrange(10**6) if fuzz else 6)
    for _ in range(fuzz or 12):
        profile = random_profile(rng, kb)
        result = advise(**profile, lang=rng.choice(["en", "es"]))
        for detail in ("full", "summary"):
            data = json.loads(result.render("json", detail=detail))
            errors = sorted(validator.iter_errors(data), key=str)
            assert not errors, (profile, detail, errors[0].message)
            assert data["schema_version"] == SCHEMA_VERSION and data["detail"] == detail


def test_the_output_schema_requires_the_contract_and_allows_growth(kb) -> None:  # type: ignore[no-untyped-def]
    validator = jsonschema.Draft202012Validator(output_schema(kb))
    data = advise(model_size_b=8, lang="en").to_dict()
    grown = json.loads(json.dumps(data))
    grown["recommendations"][0]["time"] = {"tokens_per_s": 1000}
    grown["recommendations"][0]["cost"] = {"currency": "USD", "per_hour": 0.7, "total": 2.1, "pricing": "spot"}
    grown["profile"]["epochs"] = 3
    assert validator.is_valid(grown)
    for key in ("gpu", "count", "vram_gb", "strategy", "rules", "text"):
        broken = json.loads(json.dumps(data))
        del broken["recommendations"][0][key]
        assert not validator.is_valid(broken), key
    for key in ("profile", "assumed", "requirement", "recommendations", "advice", "warnings", "rejected", "trace"):
        broken = json.loads(json.dumps(data))
        del broken[key]
        assert not validator.is_valid(broken), key


COMMON = [dict(model_size_b=8, method="lora"), dict(model_size_b=7), dict(model_size_b=13, method="qlora", vram_gb=24),
          dict(model_size_b=8, method="lora", vram_gb=24)]


@pytest.fixture(scope="module")
def common_results() -> dict[str, Any]:
    """The results of the common cases in both languages, a case's two
    languages one run of the rules (the words are made after the rules have
    fired; the summary's size is what is checked here)."""
    return {repr((profile, lang)): advise(**profile, lang=lang) for profile in COMMON for lang in ("en", "es")}


@pytest.mark.parametrize("profile", COMMON)
@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_summary_of_a_common_case_is_under_3_kb(profile: dict, lang: str, common_results) -> None:  # type: ignore[no-untyped-def]
    result = common_results[repr((profile, lang))]
    summary = result.to_dict("summary")
    assert "trace" not in summary and "rejected" not in summary
    # 3 KB (issue 38), compact and UTF-8 as MCP sends it
    assert len(json.dumps(summary, separators=(",", ":"), ensure_ascii=False).encode()) <= 3000
    assert summary["recommendations"][0]["gpu"] == result.recommendations[0].gpu
    assert [n["id"] for n in summary["warnings"]] == [n.id for n in result.warnings]
    assert len(result.render("markdown", detail="summary")) < len(result.render("markdown", verbose=True))


def test_a_bad_detail_is_an_input_error_in_the_language() -> None:
    with pytest.raises(InputError) as caught:
        advise(model_size_b=8, lang="es").to_dict("short")
    assert caught.value.field == "detail" and "elige full o summary" in str(caught.value)


def test_estimate_is_a_library_function() -> None:
    assert estimate(model_size_b=7, method="full").per_gpu_gb > estimate(model_size_b=7, method="qlora").per_gpu_gb
    with pytest.raises(InputError) as caught:
        estimate(model_size_b=7, gpus="many", lang="es")
    assert caught.value.field == "gpus"
    from expert.input.profile_types import ModelSizeB

    assert typing.get_type_hints(estimate, include_extras=True)["model_size_b"] == ModelSizeB | None


@pytest.mark.parametrize("shape, key", [("mcp", "inputSchema"), ("openai", "function")])
def test_tool_definitions_in_both_shapes(kb, shape: str, key: str) -> None:  # type: ignore[no-untyped-def]
    defined = tools(kb, shape)
    names = [t["name"] if shape == "mcp" else t["function"]["name"] for t in defined]
    assert names == ["advise", "explain", "estimate", "models", "consultation_start", "consultation_tell",
                     "consultation_answer", "consultation_back", "consultation_result", "launch"]
    for tool in defined:
        assert key in tool
        parameters = tool["inputSchema"] if shape == "mcp" else tool["function"]["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)


@pytest.mark.parametrize("what", ["input", "output", "tools"])
def test_expert_schema_prints_json(what: str) -> None:
    done = CliRunner().invoke(main, ["schema", "--what", what])
    assert done.exit_code == 0, done.output
    json.loads(done.output)


def test_expert_schema_refuses_an_unknown_what() -> None:
    done = CliRunner().invoke(main, ["schema", "--what", "everything", "--lang", "es"])
    assert done.exit_code == 2 and "--what" in done.output and "elige input, output o tools" in done.output


def test_advise_detail_summary_on_the_cli() -> None:
    done = CliRunner().invoke(main, ["advise", "--model-size", "8", "--format", "json", "--detail", "summary"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["detail"] == "summary"
    bad = CliRunner().invoke(main, ["advise", "--model-size", "8", "--detail", "tiny"])
    assert bad.exit_code == 2 and "detail" in bad.output

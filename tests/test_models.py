"""Knowing the model (issue 13): the table of rules/models.toml, names as
people write them, mixture-of-experts memory, a local config.json, and the
same resolver everywhere a size is accepted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from expert import Consultation, InputError, advise
from expert.interfaces.api import knowledge_base
from expert.interfaces.cli.main import main
from expert.knowledge.models import count_params, resolve_name

# The names of the issue, each with the published total and active
# parameters (billions) of the model it names (model cards, papers).
PUBLISHED = [
    ("mixtral 8x7b", 46.7, 12.9),
    ("Mixtral-8x22B", 141.0, 39.0),
    ("Qwen3-30B-A3B", 30.5, 3.3),
    ("Llama-4-Scout-17B-16E", 109.0, 17.0),
    ("Qwen2.5-7B-Instruct-1M", 7.61, 7.61),
    ("gpt2", 0.124, 0.124),
    ("phi-3-mini", 3.8, 3.8),
    ("DeepSeek-V3", 671.0, 37.0),
    ("bert-base", 0.11, 0.11),
    ("Llama 3.3 70B", 70.6, 70.6),
    ("DeepSeek-R1-Distill-Qwen-32B", 32.8, 32.8),
    ("llama 3.1 70b", 70.6, 70.6),
    ("Llama-3.1-70B-Instruct", 70.6, 70.6),
    ("meta-llama/Llama-3.1-70B", 70.6, 70.6),
    ("Meta-Llama-3-8B-Instruct", 8.03, 8.03),
    ("Qwen/Qwen2.5-14B-Instruct-GGUF", 14.7, 14.7),
    ("mistralai/Mistral-7B-Instruct-v0.3", 7.25, 7.25),
    ("google/gemma-2-9b-it", 9.24, 9.24),
    ("Qwen3-235B-A22B", 235.0, 22.0),
    ("Llama-4-Maverick-17B-128E-Instruct", 400.0, 17.0),
    ("OLMo-2-1124-13B", 13.7, 13.7),
    ("tiiuae/falcon-40b", 41.8, 41.8),
    ("microsoft/phi-4", 14.7, 14.7),
    ("Llama-3.2-1B-Instruct", 1.24, 1.24),
]


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def kb() -> Any:
    return knowledge_base()


def test_every_architecture_accounts_for_its_published_total(kb: Any) -> None:
    assert len(kb.models) >= 60
    for model in kb.models:
        total, active = count_params(model.shape())
        assert total == pytest.approx(model.params_b, rel=0.02), model.id
        assert active == pytest.approx(model.active_b, rel=0.02), model.id
        assert model.config.startswith("https://huggingface.co/") and model.config.split(" ")[0].endswith(
            "/config.json"), model.id
        assert model.params_source, model.id


@pytest.mark.parametrize("name, total, active", PUBLISHED, ids=[row[0] for row in PUBLISHED])
def test_names_resolve_to_the_published_totals(name: str, total: float, active: float) -> None:
    profile = advise(catalog="guide", model_size_b=name, lang="en").profile
    assert profile["model_size_b"] == pytest.approx(total, rel=0.02)
    assert profile["model_active_b"] == pytest.approx(active, rel=0.02)
    assert profile["model_read_as"] == "table" and profile["model_name"] == name


def test_the_table_wins_over_the_size_in_the_name(kb: Any) -> None:
    # before: 0B (the -1M context suffix), 7B, 17B and 3B
    assert resolve_name(kb, "Qwen2.5-7B-Instruct-1M").total_b == 7.61
    assert resolve_name(kb, "Mixtral 8x7B").total_b == 46.7
    assert resolve_name(kb, "Llama-4-Scout-17B-16E").total_b == 109
    assert resolve_name(kb, "Qwen3-30B-A3B").total_b == 30.5
    # what a terminal would not show is not part of the name
    hostile = resolve_name(kb, "Mixtral\x1b[2J 8x7B\u202e")
    assert (hostile.total_b, hostile.name) == (46.7, "Mixtral 8x7B")
    # plain sizes stay sizes, never names
    for text, size in (("70B", 70), ("350M", 0.35), ("8b", 8), ("1e3B", 1000)):
        resolved = resolve_name(kb, text)
        assert resolved.read_as == "number" and resolved.total_b == pytest.approx(size)


def test_an_unknown_name_with_a_size_is_read_by_its_pattern_and_says_so() -> None:
    result = advise(model_size_b="MyModel-13B-Instruct", lang="en")
    assert result.profile["model_size_b"] == 13 and result.profile["model_read_as"] == "pattern"
    warning = next(w for w in result.warnings if w.id == "model-size-read-from-name")
    assert "'MyModel-13B-Instruct' is not in the model table" in warning.text and "13B parameters" in warning.text
    moe = advise(catalog="guide", model_size_b="Foo-30B-A3B", lang="es").profile
    assert (moe["model_size_b"], moe["model_active_b"]) == (30, 3)
    assert advise(catalog="guide", model_size_b="Bar-8x3B").profile["model_size_b"] == 24   # at most 8 × 3B


def test_an_unknown_name_without_a_size_suggests_the_closest() -> None:
    with pytest.raises(InputError) as error:
        advise(model_size_b="mistrall", lang="en")
    assert error.value.field == "model_size_b"
    assert "did you mean Mistral-7B-v0.3" in str(error.value)
    with pytest.raises(InputError) as error:
        advise(model_size_b="deepseek", lang="es")
    assert "¿quisiste decir DeepSeek-V3" in str(error.value)
    done = invoke("advise", "--model-size", "lama three", "--lang", "en")
    assert done.exit_code == 2 and "Traceback" not in done.output
    assert done.stderr.startswith("Error: model size: 'lama three' is not a size or a model we know")


def test_mixture_of_experts_memory_counts_every_expert() -> None:
    def guide(**profile: Any) -> Any:    # the requirement and the model's advice, which no card changes
        return advise(catalog="guide", **profile)

    mixtral = guide(model_size_b="Mixtral 8x7B", method="lora", lang="en")
    same_total = guide(model_size_b=46.7, method="lora", lang="en")
    assert mixtral.requirement["vram_gb"] == same_total.requirement["vram_gb"]
    assert mixtral.requirement["vram_gb"] > guide(model_size_b=7, method="lora").requirement["vram_gb"] * 3
    note = next(a for a in mixtral.advice if a.id == "mixture-of-experts-memory")
    assert "46.7B parameters are held in memory, 12.9B of them active per token" in note.text
    # compute counts the active parameters at the stack's MoE efficiency (timing.toml [stack]); the
    # reference run is on one device, where no expert is gathered (moe_efficiency_unsharded): on a tuned
    # stack (grouped kernels) 0.4 of a 12.9B dense model's speed, faster than a dense model of its total
    # size; on a typical one (experts one by one, issue 49) 0.3, about as slow as that dense model
    kb = knowledge_base()
    tuned = guide(model_size_b="Mixtral 8x7B", method="lora", stack="tuned").requirement["ref_hours"]
    dense = guide(model_size_b=12.9, method="lora", stack="tuned").requirement["ref_hours"]
    assert tuned == pytest.approx(dense / kb.timing["stack"]["tuned"]["moe_efficiency_unsharded"], rel=0.1)
    assert tuned < guide(model_size_b=46.7, method="lora", stack="tuned").requirement["ref_hours"]
    typical = mixtral.requirement["ref_hours"]
    assert typical == pytest.approx(guide(model_size_b=46.7, method="lora").requirement["ref_hours"], rel=0.25)
    # the weights the estimate holds are the total's
    data = mixtral.to_dict()
    assert data["profile"]["model_experts"] == 8 and data["profile"]["model_experts_per_token"] == 2
    full = invoke("estimate", "--model", "DeepSeek-V3", "--method", "full", "--format", "json")
    assert json.loads(full.stdout)["breakdown"]["weights"] == pytest.approx(671 * 2)


def test_the_same_resolver_everywhere() -> None:
    name = "Mixtral-8x7B-Instruct-v0.1"
    library = advise(model=name).profile
    flag = json.loads(invoke("advise", "--model-size", name, "--format", "json").stdout)["profile"]
    alias = json.loads(invoke("advise", "--model", name, "--format", "json").stdout)["profile"]
    c = Consultation(lang="en")
    c.answer("model_size_b", name)
    asked = Consultation.from_dict(c.to_dict()).result().profile
    estimate = json.loads(invoke("estimate", "--model-size", name, "--format", "json").stdout)
    for profile in (library, flag, alias, asked):
        assert (profile["model_size_b"], profile["model_active_b"], profile["model_id"]) == (46.7, 12.9,
                                                                                             "mixtral-8x7b")
    assert estimate["setup"]["model_size_b"] == 46.7 and estimate["shape"] == "Mixtral-8x7B"
    with pytest.raises(InputError):
        advise(model_size_b=7, model="Mistral-7B")


def test_the_estimate_uses_the_model_architecture(kb: Any) -> None:
    from expert.inference.estimate import estimate, typical

    gpt2 = resolve_name(kb, "gpt2")
    bert = resolve_name(kb, "bert-base")
    assert typical(kb, gpt2.total_b, "full", gpt2.shape).seq_len == 1024
    assert typical(kb, bert.total_b, "full", bert.shape).seq_len == 512      # its context
    llama3 = resolve_name(kb, "Llama-3.1-8B")
    llama2 = resolve_name(kb, "Llama-2-7B")
    # Llama 3's vocabulary is four times Llama 2's: its logits take more memory
    a3 = estimate(kb, typical(kb, llama3.total_b, "lora", llama3.shape)).breakdown["activations"]
    a2 = estimate(kb, typical(kb, llama2.total_b, "lora", llama2.shape)).breakdown["activations"]
    assert a3 > a2
    # LoRA on every expert of a mixture of experts
    mixtral = resolve_name(kb, "Mixtral-8x7B")
    mistral = resolve_name(kb, "Mistral-7B")
    assert (estimate(kb, typical(kb, mixtral.total_b, "lora", mixtral.shape)).trainable_b
            > 5 * estimate(kb, typical(kb, mistral.total_b, "lora", mistral.shape)).trainable_b)


MIXTRAL_CONFIG = {
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "_name_or_path": "mistralai/Mixtral-8x7B-v0.1",
    "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768, "num_attention_heads": 32,
    "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
    "vocab_size": 32000, "tie_word_embeddings": False, "rope_theta": 1e6, "torch_dtype": "bfloat16",
}
SCOUT_CONFIG = {
    "model_type": "llama4", "text_config": {
        "model_type": "llama4_text", "hidden_size": 5120, "num_hidden_layers": 48, "num_attention_heads": 40,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
        "vocab_size": 202048, "max_position_embeddings": 10485760, "num_local_experts": 16,
        "num_experts_per_tok": 1, "interleave_moe_layer_step": 1, "tie_word_embeddings": False}}
DEEPSEEK_CONFIG = {
    "model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_routed_experts": 256,
    "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "q_lora_rank": 1536,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280,
    "max_position_embeddings": 163840, "tie_word_embeddings": False}
GPT2_CONFIG = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024,
               "vocab_size": 50257}
QWEN3_CONFIG = {"model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32,
                "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288, "vocab_size": 151936,
                "tie_word_embeddings": False, "max_position_embeddings": 40960}


@pytest.mark.parametrize("config, total, active", [
    (MIXTRAL_CONFIG, 46.7, 12.9), (SCOUT_CONFIG, 109, 17), (DEEPSEEK_CONFIG, 671, 37), (GPT2_CONFIG, 0.124, 0.124),
    (QWEN3_CONFIG, 8.2, 8.2),
], ids=["mixtral", "llama4-scout", "deepseek-v3", "gpt2", "qwen3-8b"])
def test_a_local_config_json_is_counted(tmp_path: Path, config: dict[str, Any], total: float, active: float) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    # on the guide's six cards: the profile read from the file is compared, which no card changes
    profile = advise(model_config=path, method="qlora", catalog="guide").profile
    assert profile["model_read_as"] == "config"
    assert profile["model_size_b"] == pytest.approx(total, rel=0.02)
    assert profile["model_active_b"] == pytest.approx(active, rel=0.02)
    done = invoke("advise", "--model-config", str(path), "--format", "json", "--catalog", "guide")
    assert done.exit_code == 0 and json.loads(done.stdout)["profile"]["model_size_b"] == profile["model_size_b"]


@pytest.mark.parametrize("content, message", [
    (b"{not json", "is not a JSON file in UTF-8"),
    (b"[1, 2]", "must hold a JSON object"),
    (json.dumps({**GPT2_CONFIG, "n_layer": True}).encode(), "'n_layer' must be a whole number"),
    (json.dumps({**GPT2_CONFIG, "n_layer": 1.5}).encode(), "'n_layer' must be a whole number"),
    (json.dumps({**GPT2_CONFIG, "n_layer": "12"}).encode(), "'n_layer' must be a whole number"),
    (json.dumps({**GPT2_CONFIG, "n_embd": 10**12}).encode(), "'n_embd' must be a whole number"),
    (json.dumps({"model_type": "llama"}).encode(), "the file has no 'hidden_size'"),
    (json.dumps({**QWEN3_CONFIG, "num_key_value_heads": 7}).encode(), "key/value heads do not divide"),
    (b'{"hidden_size": NaN}', "is not a JSON file"),
    (b"[" * 150_000 + b"]" * 150_000, "larger than"), (b"[" * 100_000 + b"]" * 100_000, "is not a JSON file"),
    ("{\"a\": \"\u00e9\"}".encode("latin-1"), "is not a JSON file in UTF-8"),
])
def test_a_bad_config_json_is_a_clear_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as error:
        advise(model_config=path)
    assert error.value.field == "model_config" and message in str(error.value)
    done = invoke("advise", "--model-config", str(path))
    assert done.exit_code == 2 and "model_config" in done.stderr and "Traceback" not in done.output


def test_a_config_path_that_is_not_a_file(tmp_path: Path) -> None:
    for path, message in ((tmp_path, "is not a regular file"), (tmp_path / "missing.json", "does not exist"),
                          ("a\0b", "is not a file path")):
        done = invoke("advise", "--model-config", str(path), "--lang", "es") if path != "a\0b" else None
        with pytest.raises(InputError) as error:
            advise(model_config=path, lang="en")
        assert message in str(error.value)
        if done is not None:
            assert done.exit_code == 2 and done.stderr.startswith("Error: model_config: «")
    config = tmp_path / "config.json"
    config.write_text(json.dumps(GPT2_CONFIG))
    with pytest.raises(InputError, match="not both"):
        advise(model_size_b=7, model_config=config)


def test_expert_models_lists_the_table(kb: Any) -> None:
    text = invoke("models", "--wide")
    assert text.exit_code == 0
    assert f"{len(kb.models)} models" in text.stdout and "Mixtral-8x7B" in text.stdout
    mixtral_line = next(line for line in text.stdout.splitlines() if line.startswith("Mixtral-8x7B "))
    assert "46.7B" in mixtral_line and "12.9B" in mixtral_line and "8, 2 per token" in mixtral_line
    markdown = invoke("models", "--format", "markdown", "--lang", "es")
    assert "| Mixtral-8x7B | Mixtral | 46,7B | 12,9B |" in markdown.stdout and "modelos, por familia" in markdown.stdout
    data = json.loads(invoke("models", "--format", "json").stdout)
    assert len(data["models"]) == len(kb.models)
    scout = next(m for m in data["models"] if m["id"] == "llama-4-scout")
    assert (scout["params_b"], scout["active_b"], scout["experts"], scout["experts_per_token"]) == (109, 17, 16, 1)
    assert invoke("models", "--format", "yaml").exit_code == 2
    some = json.loads(invoke("models", "qwen3", "Llama 3.1", "--format", "json").stdout)["models"]
    assert [m["id"] for m in some] == ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "qwen3-0.6b", "qwen3-1.7b",
                                       "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b", "qwen3-30b-a3b",
                                       "qwen3-235b-a22b"]
    none = invoke("models", "zzz", "--lang", "es")
    assert none.exit_code == 0 and "Ningún modelo de la tabla coincide con zzz" in none.stdout


def test_a_broken_model_table_is_refused_with_its_line(tmp_path: Path) -> None:
    import shutil

    from expert.errors import KnowledgeBaseError
    from expert.knowledge import load

    rules = tmp_path / "rules"
    shutil.copytree(Path(knowledge_base().root), rules)
    text = (rules / "models.toml").read_text(encoding="utf-8")
    broken = text.replace('id = "mistral-7b"\nname = "Mistral-7B-v0.3"', 'id = "mistral-7b"\nname = "Mixtral 8x7B"')
    broken = broken.replace("experts_per_token = 2\nexpert_ffn = 16384", "experts_per_token = 9\nexpert_ffn = 16384")
    (rules / "models.toml").write_text(broken, encoding="utf-8")
    with pytest.raises(KnowledgeBaseError) as error:
        load(rules)
    problems = "\n".join(str(p) for p in error.value.problems)
    assert "the name 'Mixtral 8x7B' is already model 'mixtral-8x7b'" in problems or "mistral-7b" in problems
    assert "models.toml" in problems and "mixtral-8x22b" in problems


def test_any_text_resolves_or_is_refused_by_name() -> None:
    """Whatever is typed (at most the 100 characters a value may have), the
    resolver answers with a size or an InputError naming the field."""
    from hypothesis import given, settings, strategies as st

    from expert.inference import engine

    class Profiled(Exception):
        """advise() got as far as the engine: the profile it would run on."""

    def stop(kb: Any, profile: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        raise Profiled(dict(profile))

    @settings(max_examples=150, deadline=None, derandomize=True)   # fixed examples, few enough for the suite's time
    @given(st.one_of(st.text(max_size=100), st.from_regex(r"[A-Za-z/ _.\-]{0,20}[0-9]{1,4}(\.[0-9])?[bBmMxX]?[-_ a-zA-Z0-9]{0,20}")))
    def check(text: str) -> None:
        # Every text goes the whole way advise() takes a value (bounds, aliases,
        # the resolver, the profile) up to the engine, which is not run: the
        # result's profile is the profile the engine is given (consult(),
        # dict(run.profile)), and running the rules on it, 0.1 s of CPU an
        # example, told nothing about the resolver (the golden cases and
        # test_the_same_resolver_everywhere run them on resolved names).
        try:
            advise(model_size_b=text, lang="es")
        except InputError as error:
            assert error.field == "model_size_b"
            return
        except Profiled as reached:
            profile = reached.args[0]
        else:
            raise AssertionError("advise() answered without running the engine")
        assert 0.01 <= profile["model_size_b"] <= 2000
        assert 0 < profile["model_active_b"] <= profile["model_size_b"]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "infer", stop)
        check()
    # and one text through the engine too: the result's profile is the one checked above
    assert advise(catalog="guide", model_size_b="7B", lang="es").profile["model_size_b"] == 7


@pytest.mark.parametrize("key", ["params_b", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "context"])
def test_a_zero_in_the_model_table_is_reported_with_its_line(tmp_path: Path, key: str) -> None:
    """`expert check` reports a model entry with a zero at its file and line
    (`layers = 0` once crashed the loader with a TypeError, and `kv_heads = 0`
    divided by zero)."""
    import re
    import shutil

    from expert.knowledge.check import check
    from expert.i18n import Localizer

    rules = tmp_path / "rules"
    shutil.copytree(Path(knowledge_base().root), rules)
    text = (rules / "models.toml").read_text(encoding="utf-8")
    match = re.compile(rf"^{key} = .*$", re.M).search(text, text.index('id = "mistral-7b"'))
    assert match is not None
    broken = text[:match.start()] + f"{key} = 0" + text[match.end():]
    (rules / "models.toml").write_text(broken, encoding="utf-8")
    line = broken[:match.start()].count("\n") + 1
    problems = [p.render(Localizer("en").gettext) for p in check(rules)]
    assert problems == [f"{rules}/models.toml:{line}: model 'mistral-7b': '{key}' must be a positive number"]


def test_the_model_table_fits_80_columns_and_wide_shows_every_column() -> None:
    from click.testing import CliRunner

    from expert.interfaces.cli.main import main

    env = {"EXPERT_LANG": "", "LC_ALL": "", "LANG": "", "COLUMNS": "80"}
    for lang in ("en", "es"):
        narrow = CliRunner().invoke(main, ["models", "-l", lang], env=env)
        assert narrow.exit_code == 0 and max(len(line) for line in narrow.stdout.splitlines()) <= 80
        assert "expert models --wide" in " ".join(narrow.stdout.split())
    narrow = CliRunner().invoke(main, ["models"], env=env).stdout
    wide = CliRunner().invoke(main, ["models", "--wide"], env=env).stdout
    assert "vocabulary  " not in narrow and "128,256" not in narrow
    assert "vocabulary" in wide and "128,256" in wide and "--wide" not in wide
    assert max(len(line) for line in wide.splitlines()) > 80

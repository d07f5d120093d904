"""Memory is sized at the length the examples need (issue 47, item 2): the
tokens per example, shorter than 1,024 too, never beyond the model's
context; the launch files set the same maximum length."""

from __future__ import annotations

import ast
import re
import shlex

from click.testing import CliRunner

from expert import advise
from expert.interfaces.api import estimate
from expert.interfaces.cli.main import main
from expert.interfaces.launch.make import launch


def sft_max_length(files: dict[str, str]) -> int:
    """The max_length train.py gives SFTConfig."""
    tree = ast.parse(files["train.py"])
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "SFTConfig":
            for keyword in node.keywords:
                if keyword.arg == "max_length":
                    return int(ast.literal_eval(keyword.value))
    raise AssertionError("no max_length in train.py")


def text(result: object) -> str:
    """The answer as text, its lines joined: a phrase may wrap."""
    return " ".join(result.render("text").split())  # type: ignore[attr-defined]


def test_short_examples_are_sized_short() -> None:
    short = estimate(model_size_b=8, method="lora", tokens_per_example=256, lang="en")
    floor = estimate(model_size_b=8, method="lora", tokens_per_example=1024, lang="en")
    assert short.setup.seq_len == 256 and floor.setup.seq_len == 1024
    # activations scale with the tokens: a quarter of them, about a quarter of the memory
    assert short.breakdown["activations"] < floor.breakdown["activations"] / 3
    assert short.per_gpu_gb < floor.per_gpu_gb


def test_advice_says_the_length_it_sized_for() -> None:
    result = advise(model_size_b=8, method="lora", tokens_per_example=256, lang="en")
    assert "256-token sequences" in text(result)
    assert "1,024-token sequences" in text(advise(model_size_b=8, method="lora", lang="en"))


def test_the_launch_files_set_the_length_memory_was_sized_for() -> None:
    for tokens in (256, 2048):
        result = advise(model_size_b=8, method="lora", tokens_per_example=tokens, lang="en")
        assert re.search(rf"{tokens:,}-token sequences", text(result))
        assert sft_max_length(launch(result).files) == tokens


def test_never_beyond_the_models_context() -> None:
    # Llama-2-7B reads 4,096 tokens at most (rules/models.toml): longer examples are cut there
    result = advise(model="Llama-2-7B", method="lora", tokens_per_example=8192, lang="en")
    assert "4,096-token sequences" in text(result)
    assert sft_max_length(launch(result).files) == 4096
    # and it says so: every token is timed, as if the examples were split into sequences of the context
    assert "Examples of 8,192 tokens are longer than the 4,096-token sequences memory is sized for" in text(result)
    assert result.requirement["tokens"] == 8192 * result.profile["dataset_examples"]
    # estimate reads the same length the same way (it sized 8,192-token sequences before)
    alone = estimate(model="Llama-2-7B", method="lora", tokens_per_example=8192, gpu="a100-80gb", lang="en")
    assert alone.setup.seq_len == 4096
    cli = CliRunner().invoke(main, ["estimate", "--model", "Llama-2-7B", "--method", "lora", "--tokens-per-example",
                                    "8192", "--gpu", "a100-80gb", "--lang", "en"])
    assert cli.exit_code == 0, cli.output
    shown = " ".join(cli.output.split())
    assert "4,096 tokens × micro-batch 1; examples of 8,192 tokens counted as sequences of 4,096;" in shown
    assert alone.time is not None and alone.time["tokens"] == result.requirement["tokens"]


def test_torchtune_reads_the_same_maximum_length() -> None:
    # torchtune's single-device full recipe (8B on 24 GB): its tokenizer.max_seq_len is the sized length
    for tokens in (512, 2048):
        result = advise(model="Llama-3.1-8B", method="full", vram_gb=24, tokens_per_example=tokens, lang="en")
        files = launch(result).files
        command = shlex.split(files["run_torchtune.sh"].splitlines()[-1])
        assert f"tokenizer.max_seq_len={tokens}" in command
        assert f"{tokens:,}-token sequences" in text(result)


def test_a_given_sequence_length_rules_memory_and_files() -> None:
    # --seq-len 512 with 2,048-token examples: memory and the files both take the person's 512
    result = advise(model_size_b=8, method="lora", tokens_per_example=2048, seq_len=512, lang="en")
    assert "512-token sequences" in text(result)
    assert sft_max_length(launch(result).files) == 512


def test_short_examples_bring_ones_own_card_back() -> None:
    # 9B QLoRA on an 8 GB RTX 4060: sized at 1,024 tokens it misses (own-gpu-fits-its-examples tells the
    # person to set the maximum length); sized at the examples' 300 tokens, the own card is the answer
    # (9B since the units merge, issue 47: Llama 3.1 8B now fits the card's 8 GiB at 1,024 tokens, 7.5 GiB)
    result = advise(model_size_b=9, method="qlora", vram_gb="RTX 4060", tokens_per_example=300, lang="en")
    assert result.recommendations[0].gpu == "own"
    assert "own-gpu-fits-its-examples" not in {a.id for a in result.advice}
    longer = advise(model_size_b=9, method="qlora", vram_gb="RTX 4060", tokens_per_example=300,
                    seq_len=1024, lang="en")
    assert longer.recommendations[0].gpu != "own"
    assert "own-gpu-fits-its-examples" in {a.id for a in longer.advice}

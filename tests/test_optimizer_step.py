"""The optimizer step in the time model (issue 47 item 5, rules/timing.toml
[optimizer_step]): once per optimizer step every device reads and writes the
weight, gradient and moments of the trainable parameters it steps, at a share
of its memory bandwidth; with the states offloaded, the host's CPU steps them.
Full fine-tuning steps every parameter, LoRA its adapters; DDP steps all of
them on each device, ZeRO and FSDP each device's shard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import edited_rules

from expert import advise
from expert.errors import KnowledgeBaseError
from expert.interfaces.api import estimate, knowledge_base
from expert.interfaces.cli.main import main
from expert.knowledge.load import load

KB = knowledge_base(None)
H100_GBS = 3350.0      # the H100 SXM's memory bandwidth in rules/catalog.toml
SIZE = 8.03            # Llama-3.1-8B's parameters, billions


def step(**run: Any) -> dict[str, Any]:
    """``time.optimizer_step`` of an 8B run on H100s, with the time around it."""
    time = estimate(model="Llama-3.1-8B", gpu="h100-80gb", **run).to_dict()["time"]
    return {**time["optimizer_step"], "run_hours": time["hours"]}


def test_the_figures_are_the_knowledge_bases() -> None:
    spec = KB.timing["optimizer_step"]
    assert spec["bytes"]["bf16"]["adamw"] == 14 and spec["bytes"]["mixed"]["adamw"] == 28
    assert spec["bytes"]["bf16"]["adamw8bit"] == 10 and spec["bytes"]["mixed"]["adamw8bit"] == 16
    assert KB.timing["stack"]["typical"]["optimizer_bandwidth_share"] == 0.26
    assert KB.timing["stack"]["tuned"]["optimizer_bandwidth_share"] == 0.85
    assert spec["cpu_params_per_s"] == 4.0e9
    card = KB.card("h100-80gb")
    assert card is not None and card.memory_bandwidth_gbs == H100_GBS


def test_full_fine_tuning_steps_every_parameter() -> None:
    """Mixed-precision AdamW on one H100: 28 bytes for each of the 8.03B
    parameters at 26 % of 3,350 GB/s, once per 32 sequences of 1,024 tokens
    (32 micro-steps of one): about 0.26 s a step, a few per cent of the run."""
    found = step(method="full")
    assert (found["on"], found["micro_steps"], found["bytes_per_parameter"]) == ("gpu", 32, 28.0)
    assert found["params_b"] == pytest.approx(SIZE, rel=1e-3)
    assert found["seconds_per_step"] == pytest.approx(SIZE * 1e9 * 28 / (H100_GBS * 1e9 * 0.26), rel=1e-3)
    assert found["steps"] == 313                     # 10,240,000 tokens / (32 x 1,024)
    assert found["hours"] == pytest.approx(313 * found["seconds_per_step"] / 3600, rel=0.01)
    assert 0.01 < found["hours"] / found["run_hours"] < 0.1
    # pure bf16 moves half the bytes: weight, gradient and moments in 2 bytes each
    assert step(method="full", precision="bf16")["seconds_per_step"] == pytest.approx(
        found["seconds_per_step"] / 2, rel=1e-3)


def test_lora_steps_only_its_adapters() -> None:
    """LoRA's trainable parameters are its adapters (rank 16 on every linear
    layer of Llama-3.1-8B: 42M): its steps take under 0.1 % of the run."""
    found = step(method="lora")
    assert found["params_b"] == pytest.approx(0.042, rel=0.01)
    assert found["hours"] / found["run_hours"] < 0.001


def test_a_sharded_run_steps_its_shard_on_each_device() -> None:
    """ZeRO-3 (and FSDP, ZeRO-2, ZeRO-1) over 8 GPUs: each device steps its
    1/8 of the parameters, an eighth of one device's step; DDP keeps every
    state on every device, so each steps all of them."""
    single = step(method="full")
    for strategy in ("zero3", "fsdp", "zero2", "zero1"):
        sharded = step(method="full", gpus=8, strategy=strategy)
        assert sharded["params_b"] == pytest.approx(SIZE / 8, rel=1e-3), strategy
        assert sharded["seconds_per_step"] == pytest.approx(single["seconds_per_step"] / 8, abs=1e-4), strategy
    replicated = step(method="full", gpus=8, strategy="ddp", precision="bf16", optimizer="adamw8bit")
    assert replicated["params_b"] == pytest.approx(SIZE, rel=1e-3)
    assert replicated["micro_steps"] == 4            # 32 sequences over 8 devices of one


def test_offloaded_states_step_on_the_cpu() -> None:
    """--offload-params (FSDP cpu_offload): DeepSpeed's CPU Adam rate steps all
    8.03B parameters at 4e9 a second, whatever the card. --offload
    (ZeRO-Offload): the same step is inside the recipe's measured slowdown
    (recipes.toml mixed-adamw-offload's time_factor), not counted again."""
    found = step(method="full", offload_params=True, gpus=2, strategy="fsdp")
    assert (found["on"], found["bandwidth_share"]) == ("cpu", None)
    assert found["seconds_per_step"] == pytest.approx(SIZE * 1e9 / 4.0e9, rel=1e-3)
    zero_offload = step(method="full", offload=True)
    assert zero_offload["on"] == "cpu" and zero_offload["seconds_per_step"] == 0.0
    assert KB.recipes["recipe"]["mixed-adamw-offload"]["time_factor"] == 2.5


def test_the_recipe_says_whether_its_time_factor_holds_the_step(tmp_path: Path) -> None:
    """Whether a recipe's slowdown already holds its optimizer steps is
    knowledge (recipes.toml ``step_in_time_factor``), not a rule of the code
    about offload: without it, ZeRO-Offload's steps are timed on the CPU, on
    top of its 2.5x, and the run takes longer."""
    assert KB.recipes["recipe"]["mixed-adamw-offload"]["step_in_time_factor"] is True
    assert all(not recipe.get("step_in_time_factor") for recipe in KB.recipes["recipe"].values()
               if not recipe["offload"])
    base = edited_rules(tmp_path, ("recipes.toml", 'time_factor = 2.5\nstep_in_time_factor = true\nfp16',
                                   'time_factor = 2.5\nfp16'))
    within = step(method="full", offload=True)
    timed = {**estimate(model="Llama-3.1-8B", gpu="h100-80gb", method="full", offload=True,
                        rules_dir=base).to_dict()["time"]["optimizer_step"]}
    assert within["seconds_per_step"] == 0.0
    assert timed["on"] == "cpu" and timed["seconds_per_step"] == pytest.approx(SIZE * 1e9 / 4.0e9, rel=1e-3)
    assert timed["hours"] > 0


def test_the_estimate_names_the_optimizer_steps_in_both_languages() -> None:
    def text(*args: str, lang: str = "en") -> str:
        done = CliRunner().invoke(main, ["estimate", "--model", "Llama-3.1-8B", "--gpu", "h100-80gb", "--lang", lang,
                                         *args], env={"EXPERT_LANG": "", "LC_ALL": "", "LANG": ""})
        assert done.exit_code == 0, done.output
        return " ".join(done.output.split())
    english = text("--method", "full")
    assert "the optimizer steps take about 2 min (3 %): 313 steps of 0.26 s" in english
    assert "28 bytes for every one of the 8.03B parameters a GPU steps, at 26 % of its memory bandwidth" in english
    spanish = text("--method", "full", lang="es")
    assert "los pasos del optimizador se llevan en torno a 2 min (3 %): 313 pasos de 0,26 s" in spanish
    assert "al 26 % de su ancho de banda de memoria" in spanish
    assert "the CPU over the 8.03B parameters it keeps" in text("--method", "full", "--offload-params", "--gpus", "2",
                                                                 "--strategy", "fsdp")
    assert "optimizer steps" not in text("--method", "full", "--offload")     # inside the recipe's slowdown
    assert "optimizer" not in text("--method", "lora").split("Training time")[1]


def test_the_answers_carry_the_share_of_the_hours() -> None:
    """advise's ``time.optimizer_share``: a few per cent for full fine-tuning
    on one card, nothing worth a sentence for LoRA."""
    full = advise(model="Llama-3.1-8B", method="full", budget="high").recommendations[0]
    lora = advise(model="Llama-3.1-8B", method="lora", budget="high").recommendations[0]
    assert 0.001 < full.time["optimizer_share"] < 0.1
    assert lora.time["optimizer_share"] < 0.001


@pytest.mark.parametrize("filename, old, new, expected", [
    ("timing.toml", "optimizer_bandwidth_share = 0.26", "optimizer_bandwidth_share = 1.5",
     "'stack.typical.optimizer_bandwidth_share' must be a number above 0 and at most 1"),
    ("timing.toml", "optimizer_bandwidth_share = 0.85", 'optimizer_bandwidth_share = "fast"',
     "optimizer_bandwidth_share"),
    ("timing.toml", "cpu_params_per_s = 4.0e9", "cpu_params_per_s = 0.0",
     "'optimizer_step.cpu_params_per_s' must be a number above 0"),
    ("timing.toml", "bf16 = { adamw = 14.0,", "bf16 = { adamw = -14.0,",
     "'optimizer_step.bytes.bf16.adamw' must be a number above 0"),
    ("timing.toml", "sgd = 10.0 }", "sgd_ = 10.0 }", "[optimizer_step] bytes needs 'bf16.sgd'"),
    ("recipes.toml", "step_in_time_factor = true\nfp16", 'step_in_time_factor = "yes"\nfp16', "step_in_time_factor"),
    ("estimator.toml", 'stack = "tuned"\nsequences_per_step = 20', 'stack = "tuned"\nsequences_per_step = 32',
     "published run 'scicom-5090-qwen3-1.7b-full': 'sequences_per_step' must be a whole number of "
     "micro-batches of every GPU (a multiple of 5)"),
    ("estimator.toml", 'stack = "typical"\nsequences_per_step = 4', 'stack = "typical"\nsequences_per_step = 0',
     "'sequences_per_step' must be"),
    ("estimator.toml", 'stack = "typical"\nsequences_per_step = 4', 'stack = "typical"\nsequences_per_step = "four"',
     "sequences_per_step"),
])
def test_a_broken_optimizer_step_figure_is_refused(tmp_path: Path, filename: str, old: str, new: str,
                                                   expected: str) -> None:
    with pytest.raises(KnowledgeBaseError) as caught:
        load(edited_rules(tmp_path, (filename, old, new)))
    assert expected in str(caught.value)
    assert filename in str(caught.value)


@pytest.mark.fresh_runs        # the answer's configurations are sized here, not read from a shared run
def test_the_answers_the_estimate_and_the_calibration_take_the_step_from_one_helper(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Sizer.timing, calibration() and run_time() each built the step from a recipe with the same eight
    # arguments (and the micro-steps before it); they now ask time_model.recipe_step(), the one caller
    # of optimizer_step() among them. scripts/same_answers.py: the 320 answers the same before and after.
    import sys

    from expert.inference import calibration, time_model

    callers: list[str] = []
    original = time_model.optimizer_step

    def recorded(*args: Any, **kwargs: Any) -> Any:
        callers.append(sys._getframe(1).f_code.co_name)
        return original(*args, **kwargs)

    monkeypatch.setattr(time_model, "optimizer_step", recorded)
    seen = {}
    for name, work in (("advise", lambda: advise(model_size_b=8, method="lora", catalog="guide", lang="en")),
                       ("estimate", lambda: estimate(model_size_b=8, method="lora", gpu="rtx-4090")),
                       ("calibration", lambda: calibration.calibration(knowledge_base(None, "guide")))):
        callers.clear()
        work()
        seen[name] = set(callers)
    assert seen == {"advise": {"recipe_step"}, "estimate": {"recipe_step"}, "calibration": {"recipe_step"}}

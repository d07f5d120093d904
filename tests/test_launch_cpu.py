"""The launch files, run for real on the CPU (opt-in; docs/launch.md):

    EXPERT_LAUNCH_CPU_TEST=1 python -m pytest -n 0 tests/test_launch_cpu.py

In a venv of its own (``EXPERT_LAUNCH_VENV``, default ``.launch-venv`` at the
repository's root; made when missing; torchtune in a second one,
``EXPERT_LAUNCH_TUNE_VENV``, default ``.launch-venv-torchtune``, since PEFT
refuses the torchao that torchtune 0.6.1 needs) it installs the versions of
rules/launch.toml [versions] from PyPI: torch 2.13.0 (the CPU build on this
workplace's disk; never a CUDA build), transformers, peft, trl, accelerate,
datasets, bitsandbytes, and deepspeed (``--no-build-isolation`` so that it
cannot pull another torch). Nothing here is needed by
``pip install expert``.

It builds a tiny random Llama and its tokenizer locally (no download), writes
the launch files of the issue's four examples through the library, has
accelerate, DeepSpeed and transformers parse the accelerate and DeepSpeed
configs, and starts every file through ``accelerate launch`` with its own
``accelerate.yaml`` for two optimizer steps on one CPU process: a
single-process file with ``--cpu``; a DeepSpeed file through DeepSpeed's CPU
accelerator, its JSON's global batch cut to one process (issue 40: the
launcher refused a config that the parsers alone accepted). The torchtune commands (tuned stack)
are validated by torchtune itself: its shipped config (`tune cp`), the
command's overrides merged as its command line merges them, `tune validate`
(every component's arguments bound to its signature); not run, since
torchtune's checkpointers need a real model's files.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from expert import advise
from expert.interfaces.launch.make import launch, table

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).with_name("launch_cpu_worker.py")
VENV = Path(os.environ.get("EXPERT_LAUNCH_VENV", ROOT / ".launch-venv"))
PYTHON = VENV / "bin" / "python"
# torchtune 0.6.1 needs a torchao that PEFT 0.21 refuses to run beside: a venv of its own,
# as the files' two requirements.txt are two environments.
TUNE_VENV = Path(os.environ.get("EXPERT_LAUNCH_TUNE_VENV", ROOT / ".launch-venv-torchtune"))
STEP_TIMEOUT = 1200

pytestmark = pytest.mark.skipif(os.environ.get("EXPERT_LAUNCH_CPU_TEST") != "1",
                                reason="opt-in: EXPERT_LAUNCH_CPU_TEST=1 (installs torch and friends in a venv)")

# The examples (tests/test_launch.py EXAMPLES), and a few more recipes: the
# option written, whether its script runs here (one process), and a recipe
# changed by hand (a recipe the ladder reaches rarely today). An example that
# names its option by rank or its cards by count is answered on the guide's six
# (catalog="guide"): on today's market the 70B LoRA pick is one B200, and option
# 2 of 8B full fine-tuning an RTX 5090 running torchtune (2026-12-08).
OFFLOAD = dict(id="mixed-adamw-offload", strategy="single", precision="mixed", optimizer="adamw", offload=True,
               optimizer_in_backward=False, framework=None, micro_batch=1, gradient_accumulation_steps=1,
               global_batch=1)
CASES: dict[str, tuple[dict[str, Any], int, bool, dict[str, Any]]] = {
    "8b-lora-rtx4090": (dict(model="8B", method="lora", vram_gb="RTX 4090"), 1, True, {}),
    "8b-full-h100-8bit-adamw": (dict(model="8B", method="full", vram_gb=24, catalog="guide"), 2, True, {}),
    "70b-lora-4x80gb": (dict(model="Llama-3.1-70B", method="lora", catalog="guide"), 1, False, {}),  # 4 processes, ZeRO-3
    "70b-qlora-asked-40gb": (dict(model="70B", method="qlora", vram_gb=40), 1, True, {}),    # the pick: one H100
    "70b-qlora-own-48gb": (dict(model="Llama-2-70B", method="qlora", vram_gb=48), 1, True, {}),      # your 48 GB card
    "13b-lora-8bit-base-24gb": (dict(model="13B", method="lora", vram_gb=24), 1, True,
                                dict(id="lora-8bit", base_bits=8)),                          # LLM.int8() base
    "8b-full-zero-offload-24gb": (dict(model="8B", method="full", vram_gb=24), 1, False, OFFLOAD),  # DeepSpeed
}
PACKAGES = ("transformers", "peft", "trl", "accelerate", "datasets", "bitsandbytes")


def run(args: list[str], env_extra: dict[str, str] | None = None, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(env_extra or {}), "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=STEP_TIMEOUT, **kwargs)


@pytest.fixture(scope="module")
def base_python() -> Path:
    """The venv with torch and the TRL stack (no DeepSpeed: the FSDP files need none)."""
    versions = table()["versions"]
    if not PYTHON.exists():
        assert run([sys.executable, "-m", "venv", str(VENV)]).returncode == 0
    installed = run([str(PYTHON), "-m", "pip", "list", "--format", "json"])
    have = {p["name"].lower(): p["version"] for p in json.loads(installed.stdout or "[]")}
    if not have.get("torch", "").startswith(versions["torch"]):
        done = run([str(PYTHON), "-m", "pip", "install", "-q", f"torch=={versions['torch']}"])
        assert done.returncode == 0, done.stderr[-2000:]
    wanted = [f"{name}=={versions[name]}" for name in PACKAGES if have.get(name) != versions[name]]
    if wanted:
        done = run([str(PYTHON), "-m", "pip", "install", "-q", *wanted])
        assert done.returncode == 0, done.stderr[-2000:]
    check = run([str(PYTHON), "-c", "import torch; assert not torch.cuda.is_available(); print(torch.__version__)"])
    assert check.returncode == 0 and check.stdout.startswith(versions["torch"]), check.stderr[-2000:]
    return PYTHON


@pytest.fixture(scope="module")
def python(base_python: Path) -> Path:
    """The same venv with DeepSpeed."""
    versions = table()["versions"]
    listed = json.loads(run([str(PYTHON), "-m", "pip", "list", "--format", "json"]).stdout or "[]")
    have = {p["name"].lower(): p["version"] for p in listed}
    if have.get("deepspeed") != versions["deepspeed"]:
        # Parsed with DeepSpeed's own config classes; it builds on the CPU (its ops are compiled on first use).
        done = run([str(PYTHON), "-m", "pip", "install", "-q", "--no-build-isolation",
                    f"deepspeed=={versions['deepspeed']}"])
        assert done.returncode == 0, done.stderr[-2000:]
    check = run([str(PYTHON), "-c", "import torch; assert not torch.cuda.is_available(); print(torch.__version__)"])
    assert check.returncode == 0 and check.stdout.startswith(versions["torch"]), check.stderr[-2000:]
    return PYTHON


@pytest.fixture(scope="module")
def tune_python() -> Path:
    versions = table()["versions"]
    python = TUNE_VENV / "bin" / "python"
    if not python.exists():
        assert run([sys.executable, "-m", "venv", str(TUNE_VENV)]).returncode == 0
    listed = json.loads(run([str(python), "-m", "pip", "list", "--format", "json"]).stdout or "[]")
    have = {p["name"].lower(): p["version"] for p in listed}
    if not have.get("torch", "").startswith(versions["torch"]):
        done = run([str(python), "-m", "pip", "install", "-q", f"torch=={versions['torch']}"])
        assert done.returncode == 0, done.stderr[-2000:]
    wanted = [f"{name}=={versions[name]}" for name in ("torchtune", "torchao", "bitsandbytes")
              if have.get(name) != versions[name]]
    if wanted:
        done = run([str(python), "-m", "pip", "install", "-q", *wanted])
        assert done.returncode == 0, done.stderr[-2000:]
    return python


@pytest.fixture(scope="module")
def tiny(base_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("tiny-llama")
    done = run([str(base_python), str(WORKER), "tiny", str(directory)])
    assert done.returncode == 0, done.stderr[-3000:]
    return directory


def test_the_venv_has_the_versions_the_files_pin(python: Path) -> None:
    versions = table()["versions"]
    listed = json.loads(run([str(python), "-m", "pip", "list", "--format", "json"]).stdout)
    have = {p["name"].lower(): p["version"] for p in listed}
    for name in ("torch", *PACKAGES):
        assert have[name].split("+")[0] == versions[name], name
    assert "torchao" not in have     # PEFT refuses the torchao that torchtune 0.6.1 needs
    print("versions:", {name: have.get(name) for name in ("torch", *PACKAGES, "deepspeed")})


def test_the_torchtune_venv_has_the_versions_its_files_pin(tune_python: Path) -> None:
    versions = table()["versions"]
    listed = json.loads(run([str(tune_python), "-m", "pip", "list", "--format", "json"]).stdout)
    have = {p["name"].lower(): p["version"] for p in listed}
    for name in ("torch", "torchtune", "torchao", "bitsandbytes"):
        assert have[name].split("+")[0] == versions[name], name
    print("torchtune versions:", {name: have[name] for name in ("torch", "torchtune", "torchao", "bitsandbytes")})


@pytest.mark.parametrize("name", list(CASES))
def test_the_files_run_or_load(name: str, python: Path, tiny: Path, tmp_path: Path) -> None:
    profile, option, runs, recipe = CASES[name]
    result = advise(**profile)
    if recipe:
        rec = result.recommendations[option - 1]
        result = replace(result, recommendations=[replace(rec, recipe={**rec.recipe, **recipe})])
    files = launch(result, option if not recipe else rec.rank, directory=tmp_path / "run").files
    directory = tmp_path / "run"
    compiled = run([str(python), "-m", "py_compile", str(directory / "train.py")])
    assert compiled.returncode == 0, compiled.stderr
    said = run([str(python), str(WORKER), "configs", str(directory)], env_extra={"TINY_MODEL": str(tiny)})
    assert said.returncode == 0, said.stderr[-3000:]
    parsed = json.loads(said.stdout.strip().splitlines()[-1])
    accelerate = parsed["accelerate"]
    devices = advise(**profile).recommendations[option - 1].devices
    assert accelerate["num_processes"] == devices
    if "ds_config.json" in files:
        ds = json.loads(files["ds_config.json"])
        assert parsed["accelerate_deepspeed"]["zero_stage"] == ds["zero_optimization"]["stage"]
        assert isinstance(parsed["deepspeed"], dict), parsed["deepspeed"]       # DeepSpeed installs here (CPU)
        assert parsed["deepspeed"]["stage"] == ds["zero_optimization"]["stage"]
        whole = parsed["deepspeed_config"]       # DeepSpeed's own DeepSpeedConfig, at world size 1
        assert whole["stage"] == ds["zero_optimization"]["stage"]
        assert (whole["bf16"], whole["fp16"]) == ("bf16" in ds, "fp16" in ds)
        assert (whole["micro_batch"], whole["accumulation"]) == (ds["train_micro_batch_size_per_gpu"],
                                                                 ds["gradient_accumulation_steps"])
        assert whole["train_batch_size"] * devices == ds["train_batch_size"]
        offload = ds["zero_optimization"].get("offload_optimizer")
        assert whole["offload_optimizer"] == (offload["device"] if offload else None)
        checked = parsed["transformers_deepspeed"]
        assert checked["stage"] == ds["zero_optimization"]["stage"]
        assert checked["mismatches"] == [], checked
        assert ds["train_batch_size"] == ds["train_micro_batch_size_per_gpu"] * ds["gradient_accumulation_steps"] \
            * accelerate["num_processes"]
        print(name, "configs:", parsed)
    # Every file through `accelerate launch` with its own accelerate.yaml, on one CPU process, as a
    # person launches it: a single-process file with --cpu; a DeepSpeed file through DeepSpeed (its CPU
    # accelerator), its JSON's global batch cut to one process. accelerate refuses a config that sets
    # mixed_precision beside deepspeed_config_file (issue 40), which parsing the files alone did not show.
    deepspeed = "ds_config.json" in files
    if not runs and not deepspeed:
        return
    if deepspeed:
        ds = json.loads(files["ds_config.json"])
        ds["train_batch_size"] //= accelerate["num_processes"]
        (directory / "ds_config.json").write_text(json.dumps(ds), encoding="utf-8")
    accelerate_bin = python.parent / "accelerate"
    trained = run([str(accelerate_bin), "launch", "--config_file", "accelerate.yaml", "--num_processes", "1",
                   *([] if deepspeed else ["--cpu"]), "train.py", "--model", str(tiny), "--dataset",
                   str(tiny / "train.jsonl"), "--max-steps", "2", "--output-dir", "out", "--cpu"], cwd=directory)
    assert trained.returncode == 0, trained.stderr[-4000:]
    losses = re.findall(r"\{'loss': '([0-9.]+)'", trained.stdout + trained.stderr)
    assert len(losses) >= 2, trained.stdout[-2000:]
    saved = {p.name for p in (directory / "out").iterdir()}
    assert saved & {"adapter_model.safetensors", "model.safetensors"}, saved
    print(name, "losses:", losses[:2])


def tuned(profile: dict[str, Any], **recipe: Any) -> Any:
    """An answer on the tuned stack (issue 20's profile field) with the recipe changed (issue 21's recipes)."""
    result = advise(**profile)
    rec = result.recommendations[0]
    return replace(result, profile={**result.profile, "stack": "tuned"},
                   recommendations=[replace(rec, recipe={**rec.recipe, **recipe})])


TUNED = {
    # the example as the answer gives it: torchtune's single-device recipe, on the typical stack too
    "8b-full-24gb": (dict(model="Llama-3.1-8B", method="full", vram_gb=24), {}),
    "8b-qlora-tuned": (dict(model="Llama-3.1-8B", method="qlora", vram_gb=24), dict(precision="bf16")),
    "8b-lora-tuned": (dict(model="Llama-3.1-8B", method="lora", vram_gb=24), dict(precision="bf16")),
    "70b-lora-4x80gb-tuned": (dict(model="Llama-3.1-70B", method="lora", catalog="guide"), dict(precision="bf16")),
}


@pytest.mark.parametrize("name", list(TUNED))
def test_torchtune_validates_the_command(name: str, tune_python: Path, tmp_path: Path) -> None:
    profile, recipe = TUNED[name]
    files = launch(tuned(profile, **recipe) if recipe else advise(**profile), directory=tmp_path)
    assert files.framework == "torchtune"
    said = run([str(tune_python), str(WORKER), "torchtune", str(tmp_path)])
    assert said.returncode == 0, said.stderr[-3000:]
    parsed = json.loads(said.stdout.strip().splitlines()[-1])
    assert parsed["validate"] == 0 and "well-formed" in parsed["said"], parsed
    assert parsed["new_keys"] == [], parsed
    print(name, parsed)


# Issue 47: 70B QLoRA on two RTX 3090s of one's own, FSDP with the parameters offloaded to CPU memory and the
# 4-bit weights stored in bf16 (bnb_4bit_quant_storage) so that FSDP can flatten them.
OWN_3090S = dict(model_size_b="Llama-2-70B", method="qlora", vram_gb="2x RTX 3090", tokens_per_example=2048)
PROBE = Path(__file__).with_name("launch_cpu_probe")
# What a GPU-less machine cannot take from accelerate.yaml: accelerate's FSDP plugin refuses
# sync_module_states without an accelerator device (FullyShardedDataParallelPlugin.__post_init__), and
# cpu_ram_efficient_loading needs it. The CPU copy turns both off; nothing else changes.
GPU_ONLY = {"fsdp_sync_module_states": False, "fsdp_cpu_ram_efficient_loading": False}


def test_fsdp_offload_files_start_on_two_cpu_processes(base_python: Path, tiny: Path, tmp_path: Path) -> None:
    """The files `expert advise ... --own-gpu "2x RTX 3090" --launch DIR` writes, started as written for
    two optimizer steps: `accelerate launch` with two processes over gloo, the 4-bit NF4 base in bf16 storage
    through bitsandbytes' CPU backend. accelerate 1.15 turns FSDP on for accelerator devices only (its
    state.py: a CPU run is MULTI_CPU, wrapped in DDP), so the FSDP settings of the same accelerate.yaml are
    then applied with torch's own FullyShardedDataParallel to the same 4-bit model, two gloo processes, one
    step: FULL_SHARD, PEFT's wrap policy; not the CPU offload itself, which pins host memory and so needs an
    accelerator. The probe
    (tests/launch_cpu_probe/sitecustomize.py) reports what each process ran."""
    import yaml

    result = advise(**OWN_3090S)
    files = launch(result, 1, directory=tmp_path / "run").files
    directory = tmp_path / "run"
    written = yaml.safe_load(files["accelerate.yaml"])
    assert written["distributed_type"] == "FSDP" and written["num_processes"] == 2
    assert written["fsdp_config"]["fsdp_offload_params"] is True
    assert "bnb_4bit_quant_storage=torch.bfloat16" in files["train.py"]
    cpu = {**written, "fsdp_config": {**written["fsdp_config"], **GPU_ONLY}}
    (directory / "accelerate.cpu.yaml").write_text(yaml.safe_dump(cpu), encoding="utf-8")
    probe = tmp_path / "probe.jsonl"
    accelerate_bin = base_python.parent / "accelerate"
    trained = run([str(accelerate_bin), "launch", "--config_file", "accelerate.cpu.yaml", "train.py", "--model",
                   str(tiny), "--dataset", str(tiny / "train.jsonl"), "--max-steps", "2", "--output-dir", "out",
                   "--cpu"], env_extra={"PYTHONPATH": str(PROBE), "EXPERT_LAUNCH_PROBE": str(probe)}, cwd=directory)
    assert trained.returncode == 0, trained.stderr[-4000:]
    losses = re.findall(r"\{'loss': '([0-9.]+)'", trained.stdout + trained.stderr)
    assert len(losses) >= 2, trained.stdout[-2000:]
    ranks = [json.loads(line) for line in probe.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["rank"] for r in ranks) == [0, 1]
    for said in ranks:
        assert said["distributed"] and said["backend"] == "gloo" and said["world_size"] == 2, said
        assert said["linear4bit"] > 0 and said["quant_type"] == "nf4", said
        assert said["quant_storage"] == "torch.bfloat16" and not said["cuda"], said
    assert (directory / "out" / "adapter_model.safetensors").exists()
    # The FSDP settings themselves, with torch's FSDP: two gloo processes, one step.
    sharded = run([str(base_python), str(WORKER), "fsdp", str(directory)], env_extra={"TINY_MODEL": str(tiny)})
    assert sharded.returncode == 0, sharded.stderr[-4000:]
    said = json.loads(sharded.stdout.strip().splitlines()[-1])
    assert said["world_size"] == 2 and said["backend"] == "gloo" and said["offload_params_in_file"] is True, said
    assert said["offload_params_applied"] is False      # pinned host memory needs an accelerator (docs/launch.md)
    assert said["sharding"] == "FULL_SHARD" and said["fsdp_units"] > 1, said
    assert said["base_dtypes"] == ["torch.bfloat16"], said
    assert said["quantization"]["bnb_4bit_quant_storage"] == "torch.bfloat16", said
    print("fsdp offload:", losses[:2], ranks[0], said)

"""Runs inside the launch test's own venv (torch CPU, transformers, peft, trl,
accelerate; tests/test_launch_cpu.py): builds the tiny model, or loads the
emitted configs with the libraries' own parsers. Never imported by the
project's suite.

    python launch_cpu_worker.py tiny DIR          a tiny random Llama and its tokenizer in DIR
    python launch_cpu_worker.py configs DIR       accelerate.yaml / ds_config.json of DIR parsed
    python launch_cpu_worker.py torchtune DIR     run_torchtune.sh's config and overrides, validated by `tune`
"""

import json
import os
import sys


def tiny(directory):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = "the a model learns from data text tokens fine tuning gpu memory batch step".split()
    tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator([" ".join(words)] * 4, trainers.WordLevelTrainer(
        special_tokens=["<unk>", "<s>", "</s>", "<pad>"]))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", pad_token="<pad>")
    fast.save_pretrained(directory)
    config = LlamaConfig(vocab_size=len(fast), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                         pad_token_id=fast.pad_token_id)
    LlamaForCausalLM(config).save_pretrained(directory)
    with open(os.path.join(directory, "train.jsonl"), "w", encoding="utf-8") as out:
        for i in range(32):
            out.write(json.dumps({"text": " ".join(words[i % 5:] + words[:i % 5])}) + "\n")


def configs(directory):
    """What each parser said, as JSON on stdout."""
    from accelerate.commands.config.config_args import load_config_from_file

    said = {}
    cluster = load_config_from_file(os.path.join(directory, "accelerate.yaml"))   # unknown keys are refused
    said["accelerate"] = {"distributed_type": str(cluster.distributed_type), "num_processes": cluster.num_processes,
                          "mixed_precision": str(cluster.mixed_precision)}
    ds_path = os.path.join(directory, "ds_config.json")
    if os.path.exists(ds_path):
        from accelerate.utils import DeepSpeedPlugin

        plugin = DeepSpeedPlugin(hf_ds_config=ds_path)
        said["accelerate_deepspeed"] = {"zero_stage": plugin.zero_stage,
                                        "offload_optimizer": plugin.offload_optimizer_device}
        try:
            from deepspeed.runtime.zero.config import DeepSpeedZeroConfig
        except ImportError as error:
            said["deepspeed"] = f"not installed: {error}"
        else:
            with open(ds_path, encoding="utf-8") as f:
                config = json.load(f)
            zero = DeepSpeedZeroConfig(**config["zero_optimization"])   # extra keys are refused
            said["deepspeed"] = {"stage": int(zero.stage),
                                 "offload_optimizer": str(zero.offload_optimizer.device) if zero.offload_optimizer else None}
            processes = cluster.num_processes
            if processes > 1:
                # This CPU is one process: the same JSON with the global batch of one process
                # (the test checks the original is micro-batch x accumulation x processes).
                config["train_batch_size"] //= processes
                ds_path = os.path.join(directory, "ds_config.one-process.json")
                with open(ds_path, "w", encoding="utf-8") as f:
                    json.dump(config, f)
            # DeepSpeed's own whole-config class (deepspeed/runtime/config.py): it checks the batch
            # arithmetic against the world size (1 here) and reads every section.
            from deepspeed.runtime.config import DeepSpeedConfig

            whole = DeepSpeedConfig(ds_path)
            offload = whole.zero_config.offload_optimizer
            said["deepspeed_config"] = {
                "stage": int(whole.zero_optimization_stage), "bf16": bool(whole.bfloat16_config.enabled),
                "fp16": bool(whole.float16_config.enabled), "train_batch_size": whole.train_batch_size,
                "micro_batch": whole.train_micro_batch_size_per_gpu,
                "accumulation": whole.gradient_accumulation_steps, "gradient_clipping": whole.gradient_clipping,
                "offload_optimizer": str(offload.device.value if hasattr(offload.device, "value") else offload.device)
                if offload else None, "optimizer": whole.optimizer_name}
            said["transformers_deepspeed"] = script_against_deepspeed(directory, ds_path)
    print(json.dumps(said))


def script_against_deepspeed(directory, ds_path):
    """The script's own SFTConfig values (its literal keyword arguments) with
    the DeepSpeed JSON, through transformers' DeepSpeed integration: the values
    it reports as mismatching the JSON (trainer_config_finalize), at world
    size 1 (this CPU)."""
    import ast

    import torch
    from transformers import AutoModelForCausalLM
    from trl import SFTConfig

    with open(os.path.join(directory, "train.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call)
                and getattr(node.func, "id", "") == "SFTConfig")
    kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords
              if kw.arg not in ("output_dir", "max_steps", "use_cpu", "deepspeed")}
    # Loaded before the config: under ZeRO-3 a later load would be partitioned, which needs processes.
    model = AutoModelForCausalLM.from_pretrained(os.environ["TINY_MODEL"], dtype=torch.float32)
    args = SFTConfig(output_dir=os.path.join(directory, "out"), max_steps=2, use_cpu=True, deepspeed=ds_path,
                     **kwargs)
    ds = args.hf_deepspeed_config
    try:
        ds.trainer_config_finalize(args, model, 2)
        mismatches = []
    except ValueError as error:
        mismatches = [line.split("=")[0].strip("- ").replace("ds ", "") for line in str(error).splitlines()
                      if line.startswith("- ")]
    return {"stage": ds.config["zero_optimization"]["stage"], "mismatches": mismatches, "world_size": args.world_size}


def torchtune(directory):
    """torchtune's shipped config (tune cp), the command's overrides merged as
    its command line merges them (OmegaConf dotlist), then `tune validate`."""
    import shlex
    import subprocess

    from omegaconf import OmegaConf

    with open(os.path.join(directory, "run_torchtune.sh"), encoding="utf-8") as f:
        words = shlex.split(f.read().strip().splitlines()[-1])
    at = words.index("--config")
    config, overrides = words[at + 1], words[at + 2:]
    tune = os.path.join(os.path.dirname(sys.executable), "tune")
    base = os.path.join(directory, "base.yaml")
    subprocess.run([tune, "cp", config, base], check=True, capture_output=True)
    shipped = OmegaConf.load(base)
    new_keys = [word.split("=", 1)[0] for word in overrides
                if OmegaConf.select(shipped, word.split("=", 1)[0], default="<missing>") == "<missing>"]
    merged = OmegaConf.merge(shipped, OmegaConf.from_dotlist(overrides))
    path = os.path.join(directory, "merged.yaml")
    OmegaConf.save(merged, path)
    done = subprocess.run([tune, "validate", path], capture_output=True, text=True)
    print(json.dumps({"config": config, "validate": done.returncode, "said": done.stdout.strip()[-300:],
                      "new_keys": new_keys,
                      "values": {word.split("=", 1)[0]: OmegaConf.to_container(merged, resolve=False).get(
                          word.split("=", 1)[0]) for word in overrides if "." not in word.split("=", 1)[0]},
                      "optimizer": merged.optimizer._component_}))


if __name__ == "__main__":
    {"tiny": tiny, "configs": configs, "torchtune": torchtune}[sys.argv[1]](sys.argv[2])

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


def fsdp(directory):
    """The FSDP settings of DIR's accelerate.yaml, applied with torch's own
    FullyShardedDataParallel to the tiny model loaded in 4 bits with the
    quantization train.py writes (its BitsAndBytesConfig keywords read from
    the file), two processes over gloo on the CPU, one optimizer step each:
    what accelerate does not do on a CPU (it turns FSDP on for accelerator
    devices only). One JSON line on stdout from rank 0."""
    import ast
    import torch.multiprocessing as mp
    import yaml

    with open(os.path.join(directory, "accelerate.yaml"), encoding="utf-8") as f:
        fsdp_config = yaml.safe_load(f)["fsdp_config"]
    with open(os.path.join(directory, "train.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "BitsAndBytesConfig")
    quantization = {k.arg: ast.unparse(k.value) for k in call.keywords}
    result = os.path.join(directory, "fsdp.json")
    mp.spawn(_fsdp_rank, args=(2, os.environ["TINY_MODEL"], fsdp_config, quantization, result), nprocs=2, join=True)
    with open(result, encoding="utf-8") as f:
        print(f.read().strip())


def _fsdp_rank(rank, world, model_dir, fsdp_config, quantization, result):
    import torch
    import torch.distributed as dist
    from peft import LoraConfig, get_peft_model
    from peft.utils.other import fsdp_auto_wrap_policy
    from torch.distributed.fsdp import CPUOffload, ShardingStrategy
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    dtypes = {"torch.bfloat16": torch.bfloat16, "torch.float16": torch.float16, "torch.float32": torch.float32}
    keywords = {k: (dtypes[v] if v in dtypes else ast_literal(v)) for k, v in quantization.items()}
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16,
                                                 quantization_config=BitsAndBytesConfig(**keywords))
    # the adapters in the weights' dtype: FSDP flattens one dtype per unit (what TRL does under FSDP)
    model = get_peft_model(model, LoraConfig(r=8, target_modules="all-linear", task_type="CAUSAL_LM"),
                           autocast_adapter_dtype=False)
    storage = {p.dtype for n, p in model.named_parameters() if "lora" not in n}
    # PEFT's policy, as transformers' Trainer sets it for a PEFT model under FSDP: the decoder layers
    # (fsdp_transformer_layer_cls_to_wrap / TRANSFORMER_BASED_WRAP) and each trainable adapter unit apart
    # (one requires_grad per flat parameter when use_orig_params is false)
    wrapped = FSDP(model, auto_wrap_policy=fsdp_auto_wrap_policy(model),
                   sharding_strategy=getattr(ShardingStrategy, fsdp_config["fsdp_sharding_strategy"]),
                   # CPU offload pins host memory for the copies to the device (FlatParamHandle.init_flat_
                   # param_attributes: pin_memory), which needs an accelerator: on a CPU the parameters are
                   # where offload would put them already, and the file's setting is reported, not applied
                   cpu_offload=CPUOffload(offload_params=torch.cuda.is_available()
                                          and bool(fsdp_config["fsdp_offload_params"])),
                   use_orig_params=bool(fsdp_config["fsdp_use_orig_params"]), device_id=torch.device("cpu"))
    optimizer = torch.optim.AdamW([p for p in wrapped.parameters() if p.requires_grad], lr=1e-3)
    ids = torch.randint(4, 16, (1, 32))
    loss = wrapped(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    layers = sum(isinstance(m, FSDP) for m in wrapped.modules())
    said = {"world_size": dist.get_world_size(), "backend": str(dist.get_backend()),
            "offload_params_in_file": bool(fsdp_config["fsdp_offload_params"]),
            "offload_params_applied": bool(wrapped.cpu_offload.offload_params), "fsdp_units": layers,
            "sharding": fsdp_config["fsdp_sharding_strategy"], "base_dtypes": sorted(str(d) for d in storage),
            "quantization": quantization, "loss": float(loss)}
    dist.barrier()
    if rank == 0:
        with open(result, "w", encoding="utf-8") as out:
            out.write(json.dumps(said))
    dist.destroy_process_group()


def ast_literal(text):
    import ast

    return ast.literal_eval(text)


if __name__ == "__main__":
    {"tiny": tiny, "configs": configs, "torchtune": torchtune, "fsdp": fsdp}[sys.argv[1]](sys.argv[2])

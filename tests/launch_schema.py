"""The keys, and their types, that the launch files may use: what the target
libraries document, at the versions of rules/launch.toml [versions]. The
default suite (tests/test_launch.py) checks every emitted file against it;
the opt-in CPU test (tests/test_launch_cpu.py) has the libraries themselves
load the files.

Sources (file paths in each library's repository or package):
- SFTConfig: trl/trainer/sft_config.py (max_length, ...) over
  transformers/training_args.py TrainingArguments (per_device_train_batch_size,
  gradient_accumulation_steps, gradient_checkpointing, optim, bf16, fp16,
  learning_rate, max_grad_norm, num_train_epochs, max_steps, logging_steps,
  save_strategy, report_to, output_dir, deepspeed, use_cpu).
- optim values: transformers/training_args.py class OptimizerNames.
- BitsAndBytesConfig: transformers/utils/quantization_config.py.
- LoraConfig: peft/tuners/lora/config.py (r, lora_alpha, lora_dropout,
  target_modules, task_type); "all-linear": peft/utils/constants.py.
- from_pretrained: transformers/modeling_utils.py (dtype, quantization_config).
- accelerate config: src/accelerate/commands/config/config_args.py
  (BaseConfig, ClusterConfig); deepspeed_config's keys:
  src/accelerate/commands/config/cluster.py and utils/dataclasses.py
  DeepSpeedPlugin (deepspeed_config_file, zero3_init_flag); fsdp_config's
  keys: src/accelerate/commands/config/cluster.py (fsdp_auto_wrap_policy,
  fsdp_backward_prefetch, fsdp_cpu_ram_efficient_loading,
  fsdp_forward_prefetch, fsdp_offload_params, fsdp_sharding_strategy,
  fsdp_state_dict_type, fsdp_sync_module_states, fsdp_use_orig_params), as
  peft's examples/sft/configs/fsdp_config_qlora.yaml writes them.
- DeepSpeed JSON: deepspeed/runtime/config.py and constants.py (top level:
  train_batch_size, train_micro_batch_size_per_gpu,
  gradient_accumulation_steps, gradient_clipping, steps_per_print,
  wall_clock_breakdown, optimizer, bf16, fp16), deepspeed/runtime/zero/config.py
  DeepSpeedZeroConfig, deepspeed/runtime/zero/offload_config.py,
  deepspeed/runtime/precision_config.py (fp16: loss_scale, initial_scale_power).
- torchtune overrides: the shipped configs' keys, pytorch/torchtune
  recipes/configs/llama3_1/*.yaml; fsdp_cpu_offload and optimizer_in_bwd:
  recipes/full_finetune_distributed.py / full_finetune_single_device.py.
"""

OPTIM = {"adamw_torch", "adamw_bnb_8bit", "adamw_8bit", "paged_adamw_8bit", "paged_adamw_32bit", "adafactor"}

CALLS = {
    "SFTConfig": {"output_dir": "name", "max_steps": "name", "use_cpu": "name", "deepspeed": "expr",
                  "per_device_train_batch_size": int, "gradient_accumulation_steps": int,
                  "gradient_checkpointing": bool, "optim": str, "bf16": bool, "fp16": bool,
                  "learning_rate": float, "max_grad_norm": float, "num_train_epochs": float, "max_length": int,
                  "logging_steps": int, "save_strategy": str, "report_to": str},
    "BitsAndBytesConfig": {"load_in_8bit": bool, "load_in_4bit": bool, "bnb_4bit_quant_type": str,
                           "bnb_4bit_use_double_quant": bool, "bnb_4bit_compute_dtype": "dtype",
                           "bnb_4bit_quant_storage": "dtype"},
    "LoraConfig": {"r": int, "lora_alpha": int, "lora_dropout": float, "target_modules": str, "task_type": str},
    "from_pretrained": {"dtype": "dtype", "quantization_config": "name"},
}

ACCELERATE = {"compute_environment": str, "debug": bool, "distributed_type": str, "machine_rank": int,
              "main_training_function": str, "mixed_precision": str, "num_machines": int, "num_processes": int,
              "rdzv_backend": str, "same_network": bool, "use_cpu": bool, "deepspeed_config": dict,
              "fsdp_config": dict}
ACCELERATE_DEEPSPEED = {"deepspeed_config_file": str, "zero3_init_flag": bool}
ACCELERATE_FSDP = {"fsdp_auto_wrap_policy": str, "fsdp_backward_prefetch": str, "fsdp_cpu_ram_efficient_loading": bool,
                   "fsdp_forward_prefetch": bool, "fsdp_offload_params": bool, "fsdp_sharding_strategy": str,
                   "fsdp_state_dict_type": str, "fsdp_sync_module_states": bool, "fsdp_use_orig_params": bool}
DISTRIBUTED_TYPES = {"NO", "MULTI_GPU", "DEEPSPEED", "FSDP"}
MIXED_PRECISION = {"no", "fp16", "bf16", "fp8"}

DEEPSPEED = {"train_batch_size": int, "train_micro_batch_size_per_gpu": int, "gradient_accumulation_steps": int,
             "gradient_clipping": float, "steps_per_print": int, "wall_clock_breakdown": bool, "optimizer": dict,
             "bf16": dict, "fp16": dict, "zero_optimization": dict}
DEEPSPEED_ZERO = {"stage": int, "overlap_comm": bool, "contiguous_gradients": bool, "offload_optimizer": dict,
                  "offload_param": dict, "stage3_gather_16bit_weights_on_model_save": bool}
DEEPSPEED_OFFLOAD = {"device": str, "pin_memory": bool}
DEEPSPEED_PRECISION = {"enabled": bool, "loss_scale": int, "initial_scale_power": int}
DEEPSPEED_OPTIMIZER = {"type": str, "params": dict}
DEEPSPEED_ADAM = {"lr": float, "betas": list, "eps": float, "weight_decay": float}

# Every key a torchtune override may name: present in the shipped configs the
# table starts from, or read by the recipe with a default.
TORCHTUNE = {"output_dir", "checkpointer.checkpoint_dir", "tokenizer.path", "tokenizer.max_seq_len", "batch_size",
             "gradient_accumulation_steps", "epochs", "optimizer._component_", "optimizer.lr", "dtype",
             "enable_activation_checkpointing", "enable_activation_offloading", "optimizer_in_bwd",
             "fsdp_cpu_offload", "model.lora_rank", "model.lora_alpha", "model.lora_dropout",
             "model.lora_attn_modules", "model.apply_lora_to_mlp", "model.apply_lora_to_output"}
TORCHTUNE_RECIPES = {"full_finetune_single_device", "full_finetune_distributed", "lora_finetune_single_device",
                     "lora_finetune_distributed"}
TORCHTUNE_COMPONENTS = {"torch.optim.AdamW", "bitsandbytes.optim.AdamW8bit", "bitsandbytes.optim.PagedAdamW8bit"}

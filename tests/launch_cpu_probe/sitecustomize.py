"""Put on PYTHONPATH by tests/test_launch_cpu.py (never by the project): when
EXPERT_LAUNCH_PROBE names a file, every training process that runs the
launch files' train.py appends to it, once its training ends, one JSON line
saying what actually ran: the process group (backend, world size, rank),
how accelerate wrapped the model (FSDP, CPU offload of the parameters), and
the 4-bit layers bitsandbytes put in it. The files themselves are not
changed: Trainer.train is wrapped from outside."""

import json
import os

PROBE = os.environ.get("EXPERT_LAUNCH_PROBE")


def _report(trainer):
    import torch
    import torch.distributed as dist

    said = {"distributed": dist.is_available() and dist.is_initialized()}
    if said["distributed"]:
        said.update(backend=str(dist.get_backend()), world_size=dist.get_world_size(), rank=dist.get_rank())
    said["accelerate"] = str(trainer.accelerator.state.distributed_type)
    wrapped = trainer.model_wrapped
    said["wrapper"] = type(wrapped).__name__
    offload = getattr(wrapped, "cpu_offload", None)
    said["offload_params"] = bool(getattr(offload, "offload_params", False))
    said["parameter_device"] = sorted({str(p.device) for p in wrapped.parameters()})
    try:
        import bitsandbytes as bnb
    except ImportError:
        bnb = None
    model = trainer.model
    said["linear4bit"] = sum(isinstance(m, bnb.nn.Linear4bit) for m in model.modules()) if bnb else 0
    config = getattr(getattr(model, "config", None), "quantization_config", None)
    storage = getattr(config, "bnb_4bit_quant_storage", None) if config is not None else None
    said["quant_storage"] = str(storage) if storage is not None else None
    said["quant_type"] = getattr(config, "bnb_4bit_quant_type", None) if config is not None else None
    said["cuda"] = torch.cuda.is_available()
    with open(PROBE, "a", encoding="utf-8") as out:
        out.write(json.dumps(said) + "\n")


if PROBE:
    import importlib.abc
    import sys

    class _Hook(importlib.abc.MetaPathFinder):
        """Wraps Trainer.train once transformers.trainer is imported (not before: the launcher needs none of it)."""

        def find_spec(self, name, path, target=None):
            if name != "transformers.trainer":
                return None
            sys.meta_path.remove(self)
            import importlib.util

            spec = importlib.util.find_spec(name)
            loader = spec.loader
            original = loader.exec_module

            def exec_module(module):
                original(module)
                train = module.Trainer.train

                def wrapped(self, *args, **kwargs):
                    result = train(self, *args, **kwargs)
                    _report(self)
                    return result

                module.Trainer.train = wrapped

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Hook())

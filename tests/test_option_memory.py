"""Issue 46 item 4: each option of a result carries its recipe as run (``setup``) and what each device holds,
part by part (``memory``), in the library's Result, its JSON and its markdown; the page draws its bars from
there (tests/test_web.py)."""

from __future__ import annotations

import json

import pytest

from expert import advise
from expert.interfaces.api import estimate
from expert.interfaces.schema import result_schema
from expert.knowledge import load
from expert.knowledge.bases import knowledge_base

PROFILES = [
    dict(model_size_b=70, method="lora"),
    dict(model_size_b=8, method="full", vram_gb=24),
    dict(model_size_b=405, method="full"),
    dict(model_size_b="Mixtral 8x7B", method="qlora", deadline_h=8),
]
PARTS = ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "overhead_gb")


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: f"{p['model_size_b']}-{p['method']}")
def test_each_option_carries_the_setup_it_was_sized_with_and_its_parts(profile: dict) -> None:
    result = advise(**profile)
    assert result.recommendations
    for rec in result.recommendations:
        setup, memory = rec.setup, rec.memory
        assert setup is not None and memory is not None
        # the recipe as run is the option's own: the same strategy, micro-batch, checkpointing, offload
        assert (setup.strategy, setup.micro_batch, setup.checkpointing, setup.offload, setup.precision) == (
            rec.recipe["strategy"], rec.recipe["micro_batch"], rec.recipe["checkpointing"], rec.recipe["offload"],
            rec.recipe["precision"])
        assert setup.devices == rec.devices and setup.method == profile["method"] and setup.given == []
        assert (setup.lora_rank is None) == (profile["method"] == "full")
        # the parts add up to the estimate, which the option's figure rounds up (basis checked)
        assert abs(sum(memory.parts().values()) - memory.estimate_gib) < 0.01
        assert memory.estimate_gib <= rec.per_device_gib == memory.per_device_gib < memory.estimate_gib + 0.11
        assert memory.estimate_gb <= rec.per_device_gb == memory.per_device_gb < memory.estimate_gb + 0.11
        # the same bytes in both units
        assert memory.estimate_gib * 2**30 == pytest.approx(memory.estimate_gb * 1e9, rel=1e-4)
        assert memory.device_gb * rec.devices == pytest.approx(rec.vram_gb * rec.count)
        # each device's memory as its driver reports it: a card's memory_mib, a little under its size
        assert 0.9 * memory.device_gb <= memory.device_memory_gib == rec.device_memory_gib <= memory.device_gb


def test_the_parts_are_what_expert_estimate_says_of_the_same_setup() -> None:
    """The breakdown is not a second arithmetic: the public estimate() of the setup the option carries gives the
    same parts."""
    rec = advise(model_size_b=70, method="lora").recommendations[0]
    assert rec.setup is not None and rec.memory is not None
    same = estimate(70, "lora", gpus=rec.setup.devices, strategy=rec.setup.strategy, seq_len=rec.setup.seq_len,
                    batch=rec.setup.micro_batch, checkpointing=rec.setup.checkpointing,
                    precision=rec.setup.precision, optimizer=rec.setup.optimizer, base_bits=rec.setup.base_bits,
                    lora_rank=rec.setup.lora_rank, offload=rec.setup.offload, stack=rec.setup.stack)
    assert {k: round(v, 3) for k, v in same.breakdown_gib.items()} == rec.memory.parts()


def test_the_json_has_the_new_keys_beside_the_old_and_the_schema_says_so() -> None:
    data = json.loads(advise(model_size_b=70, method="lora").render("json"))
    option = data["recommendations"][0]
    assert {"recipe", "per_device_gb", "setup", "memory"} <= set(option)      # added; nothing renamed
    assert set(PARTS) <= set(option["memory"])
    # issue 47: the GiB beside the GB (10^9 bytes) keys, which keep their meaning
    assert {"per_device_gib", "host_ram_gib", "device_memory_gib"} <= set(option)
    assert {"parts_gib", "estimate_gib", "per_device_gib", "device_memory_gib"} <= set(option["memory"])
    assert option["memory"]["weights_gb"] * 1e9 == pytest.approx(option["memory"]["parts_gib"]["weights"] * 2**30,
                                                                rel=1e-4)
    card = knowledge_base(None).card(option["gpu"])
    assert card is not None and card.memory_mib > 0
    assert option["device_memory_gib"] == pytest.approx(card.memory_mib / 1024 / card.devices, abs=1e-3)
    assert {"seq_len", "micro_batch", "lora_rank", "checkpointing", "given"} <= set(option["setup"])
    schema = result_schema(load(), "full")["properties"]["recommendations"]["items"]
    assert {"setup", "memory"} <= set(schema["required"])
    summary = json.loads(advise(model_size_b=70, method="lora").render("json", detail="summary"))
    assert "memory" not in summary["recommendations"][0]       # the chat's 3 KB keep the pick and its figure


@pytest.mark.parametrize(("lang", "words"), [("en", ("Per device:", "weights 36 GiB", "all chosen by the rules")),
                                             ("es", ("Por dispositivo:", "pesos 36 GiB",
                                                     "todo elegido por las reglas"))])
def test_the_markdown_says_what_the_picks_devices_hold(lang: str, words: tuple[str, ...]) -> None:
    text = advise(model_size_b=70, method="lora", lang=lang, catalog="guide").render("markdown")   # 4 × H100
    line = next(line for line in text.splitlines() if line.startswith("- " + words[0]))
    for word in words[1:]:
        assert word in line
    summary = advise(model_size_b=70, method="lora", lang=lang).render("markdown", detail="summary")
    assert words[0] not in summary

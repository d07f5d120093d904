"""Hostile round five, items 1 and 2: what scripts/sweep.py found in valid
profiles, each held by the one profile that showed it."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from expert import advise
from expert.interfaces.cli.main import main


# An answer writes one card as "1 × NVIDIA GeForce RTX 3090 24 GB"; on main af736b5 that text, "1x RTX 3090"
# and "1x 24" given back as one's own GPU were refused ("neither a VRAM figure in GB nor a GPU the knowledge
# base knows"), while "2x RTX 3090" was read.
@pytest.mark.parametrize("own, card", [("1x RTX 3090", "rtx-3090"), ("1 × NVIDIA GeForce RTX 3090 24 GB", "rtx-3090"),
                                       ("1x 24", None), ("one 3090", "rtx-3090")])
def test_one_card_counted_is_read_as_one_card(own: str, card: str | None) -> None:
    profile = advise(model_size_b=8, method="lora", vram_gb=own, catalog="guide").profile
    assert (profile["vram_gb"], profile["own_gpu_count"], profile.get("own_gpu")) == (24.0, 1, card)


def test_one_card_counted_is_read_by_the_cli_in_spanish() -> None:
    outcome = CliRunner().invoke(main, ["advise", "--model-size", "8", "--vram", "1x RTX 3090", "--catalog", "guide",
                                        "--lang", "es", "--format", "json"])
    assert outcome.exit_code == 0, outcome.output
    assert '"own_gpu": "rtx-3090"' in outcome.output


# On main af736b5 every LoRA and QLoRA answer on the tuned stack was refused by --launch ("recipe.precision:
# 'mixed' cannot be written as launch files"): torchtune has no fp32 master copy, but what LoRA trains is the
# adapters, which torchtune's LoRA recipes keep in the config's dtype (rules/launch.toml torchtune_adapters).
@pytest.mark.parametrize("method, recipe", [("lora", "lora_finetune_single_device"),
                                            ("qlora", "lora_finetune_single_device")])
def test_lora_on_the_tuned_stack_writes_torchtune_files(method: str, recipe: str) -> None:
    from expert import launch

    result = advise(model="Llama-3.1-8B", method=method, stack="tuned", vram_gb="RTX 4090", catalog="guide")
    assert result.recommendations[0].recipe["precision"] == "mixed"
    command = launch(result).files["run_torchtune.sh"].splitlines()[-1]
    assert f"tune run {recipe}" in command and "dtype=bf16" in command
    assert ("qlora" in command) == (method == "qlora")


# On main af736b5 the MCP tools explain and launch took neither the settings advise takes (seq_len, batch,
# lora_rank, checkpointing) nor, for launch, prices: a client could not explain or write the files of the
# answer advise gave it (explain answered for 1,024 tokens what advise answered for 8,192).
def test_mcp_explain_and_launch_take_what_advise_takes() -> None:
    pytest.importorskip("mcp")
    import asyncio

    from mcp import Client

    from expert.interfaces.mcp.server import build_server

    fields = {"model_size_b": 8, "method": "lora", "seq_len": 8192, "batch": 2, "lora_rank": 64,
              "checkpointing": True, "prices": {"rtx-pro-6000": 0.01}}

    async def script() -> list[Any]:
        async with Client(build_server(), mode="legacy") as client:
            return [await client.call_tool(name, {**fields, **extra})
                    for name, extra in (("advise", {"detail": "full"}), ("explain", {"detail": "full"}), ("launch", {}))]

    advised, explained, launched = asyncio.run(asyncio.wait_for(script(), timeout=120))
    assert not (advised.is_error or explained.is_error or launched.is_error), explained.content
    pick = advised.structured_content["recommendations"][0]
    assert (pick["gpu"], pick["setup"]["seq_len"], pick["setup"]["lora_rank"]) == ("rtx-pro-6000", 8192, 64)
    assert explained.structured_content["recommendations"][0]["gpu"] == "rtx-pro-6000"
    assert explained.structured_content["recommendations"][0]["setup"]["seq_len"] == 8192
    train = next(f["content"] for f in launched.structured_content["files"] if f["name"] == "train.py")
    assert "max_length=8192" in train and "r=64" in train


# On main f2e7dc0 the sweep reported the launch files' refusals with their field twice, "tool error in MCP
# launch: recipe.precision: recipe.precision: 'mixed' cannot be written ...": it put the field before a
# message that names it already (the library and MCP say it once). Said once now, in both languages.
@pytest.mark.parametrize("field, message, shown", [
    ("recipe.precision", "recipe.precision: «mixed» no se puede escribir", "recipe.precision: «mixed» no se puede escribir"),
    ("recipe.base_bits", "recipe.base_bits: '8' cannot be written", "recipe.base_bits: '8' cannot be written"),
    ("epochs", "épocas: «abc» no es un número", "epochs: épocas: «abc» no es un número"),   # another name: kept
    (None, "a knowledge base problem", "a knowledge base problem"),
])
def test_the_sweep_names_a_refusals_field_once(field: str | None, message: str, shown: str) -> None:
    import importlib.util
    from pathlib import Path

    from expert import InputError

    spec = importlib.util.spec_from_file_location("sweep", Path(__file__).parents[2] / "scripts" / "sweep.py")
    assert spec is not None and spec.loader is not None
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    assert sweep.said(field, message) == shown
    if field is not None:
        found = sweep.Sweep(cli=False, mcp=False, web=False)

        def refused() -> None:
            raise InputError(field, message)

        found.guarded("launch", {"hostile": "x"}, refused)
        assert found.findings["refusal in launch"][0] == shown

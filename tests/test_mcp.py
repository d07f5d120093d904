"""`expert mcp` through the SDK's own client: every tool, errors naming the
field in the caller's language. The server runs in this process (the SDK's
in-memory transport, the same JSON-RPC handshake); the real `expert mcp`
process over stdio is started once, by the first test, and over HTTP in
tests/test_mcp_sessions.py."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from expert.escape import markdown  # noqa: E402
from expert.interfaces.consultation import Consultation  # noqa: E402
from expert.interfaces.mcp.server import ConsultationStore, build_server  # noqa: E402


SERVER = StdioServerParameters(command=sys.executable, args=["-m", "expert", "mcp"])


def over_stdio(script: Any) -> Any:
    """Run ``script(session)`` against a fresh `expert mcp` process and return what it returns."""

    async def main() -> Any:
        async with stdio_client(SERVER) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                return await script(client)

    return asyncio.run(asyncio.wait_for(main(), timeout=60))


def session(script: Any) -> Any:
    """Run ``script(client)`` against a fresh server (build_server(), what `expert mcp` serves) in this process."""

    async def main() -> Any:
        async with Client(build_server(), mode="legacy") as client:
            return await script(client)

    return asyncio.run(asyncio.wait_for(main(), timeout=60))


def test_the_tools_and_their_schemas() -> None:
    async def script(client: ClientSession) -> Any:
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in over_stdio(script)}
    assert list(tools) == ["advise", "explain", "estimate", "models", "consultation_start", "consultation_tell",
                           "consultation_answer", "consultation_back", "consultation_result", "launch"]
    assert tools["advise"].input_schema["properties"]["method"]["enum"] == ["full", "lora", "qlora"]
    assert tools["consultation_answer"].input_schema["required"] == ["consultation_id", "answer"]


def test_advise_explain_estimate_and_errors() -> None:
    async def script(client: ClientSession) -> Any:
        return [await client.call_tool("advise", {"model_size_b": "70B", "method": "lora", "lang": "es"}),
                await client.call_tool("advise", {"model_size_b": 8, "detail": "full"}),
                await client.call_tool("explain", {"model_size_b": 70, "why_not": "rtx-4090", "lang": "en"}),
                await client.call_tool("estimate", {"model_size_b": 7, "method": "full"}),
                await client.call_tool("advise", {"method": "lorax", "lang": "es"}),
                await client.call_tool("advise", {"model_size_b": "x" * 5000}),
                await client.call_tool("explain", {"why_not": "nonexistent-card", "lang": "es"})]

    summary, full, why, memory, bad, long, unknown_card = session(script)
    assert not summary.is_error and summary.structured_content["detail"] == "summary"
    assert summary.structured_content["lang"] == "es" and "trace" not in summary.structured_content
    assert len(json.dumps(summary.structured_content, separators=(",", ":"), ensure_ascii=False).encode()) <= 3000
    assert full.structured_content["detail"] == "full" and full.structured_content["trace"]
    assert why.structured_content["why_not"][0]["gpu"] == "rtx-4090"
    assert memory.structured_content["per_gpu_gb"] > 50
    assert bad.is_error and bad.structured_content["error"]["field"] == "method"
    assert bad.content[0].text.startswith("método de ajuste: «lorax» no es válido")
    assert long.is_error and long.structured_content["error"]["field"] == "model_size_b"
    assert unknown_card.is_error and unknown_card.structured_content["error"]["field"] == "why_not"


def test_a_damaged_catalog_is_said_by_the_tool_not_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool read its language's catalog before its own error handling: a catalog cut short (a build
    rewriting it beside the server) came back as the SDK's bare "Error executing tool advise" (CI,
    tests/test_mcp_sessions.py, 2026-12-07 and 2026-12-08). Now the catalog's own error, and the next
    call answers."""
    from expert.i18n import CatalogMissing, Localizer
    from expert.interfaces.mcp import server

    broken = {"calls": 0}

    def localizer(lang: str) -> Localizer:
        if lang == "es" and not broken["calls"]:
            broken["calls"] += 1
            raise CatalogMissing("the 'es' message catalog is not compiled in /x, or is damaged")
        return Localizer(lang)

    monkeypatch.setattr(server, "Localizer", localizer)

    async def script(client: ClientSession) -> Any:
        return [await client.call_tool("advise", {"model_size_b": 8, "lang": "es"})
                for _ in range(2)]

    refused, answered = session(script)
    assert refused.is_error and refused.content[0].text.startswith("the 'es' message catalog is not compiled")
    assert refused.structured_content == {"error": {"field": None, "message": refused.content[0].text}}
    assert not answered.is_error and "Recomendación" in answered.content[0].text


def test_a_consultation_held_through_the_tools() -> None:
    async def script(client: ClientSession) -> Any:
        seen = []
        started = await client.call_tool("consultation_start", {"lang": "es", "purpose": "production"})
        key = started.structured_content["consultation_id"]
        seen.append(started)
        seen.append(await client.call_tool("consultation_answer", {"consultation_id": key, "answer": "mucho"}))
        for answer in ["70B", "lora"]:
            seen.append(await client.call_tool("consultation_answer", {"consultation_id": key, "answer": answer}))
        seen.append(await client.call_tool("consultation_back", {"consultation_id": key}))
        # method, own GPU, examples, budget, tokens, epochs, deadline, interruptions, software, provider
        for answer in ["qlora", "no", "10k", "bajo", "1024", "1", "no", "no", "típico", "RunPod"]:
            last = await client.call_tool("consultation_answer", {"consultation_id": key, "answer": answer})
            assert not last.is_error, (answer, last.content[0].text)
            seen.append(last)
            if last.structured_content.get("done"):
                break
        seen.append(await client.call_tool("consultation_result", {"consultation_id": key}))
        seen.append(await client.call_tool("consultation_result", {"consultation_id": "forged"}))
        return seen

    seen = session(script)
    start, bad, size, method, back = seen[:5]
    assert start.structured_content["question"]["id"] == "model_size_b"
    assert start.structured_content["question"]["text"].startswith("¿Qué tamaño")
    assert len(start.structured_content["consultation_id"]) >= 16
    assert bad.is_error and "tamaño del modelo: «mucho»" in bad.content[0].text
    assert "no es un tamaño ni un modelo conocido" in bad.content[0].text
    assert method.structured_content["answered"] == {"model_size_b": 70.0, "method": "lora"}
    assert back.structured_content["question"]["id"] == "method"
    assert seen[-3].structured_content["done"] is True
    result = seen[-2].structured_content
    assert result["profile"]["method"] == "qlora" and result["profile"]["purpose"] == "production"
    assert result["profile"]["provider"] == "runpod"
    assert result["recommendations"]
    assert seen[-1].is_error and seen[-1].structured_content["error"]["field"] == "consultation_id"


def test_the_store_is_bounded() -> None:
    store = ConsultationStore(size=3)
    keys = [store.put(Consultation(lang="en")) for _ in range(5)]
    assert len(store) == 3
    store.get(keys[-1], "en")
    with pytest.raises(ValueError):
        store.get(keys[0], "en")


@pytest.mark.parametrize("lang, text", [("en", "I want to fine-tune Mistral-7B with LoRA on my 3090"),
                                        ("es", "Quiero ajustar Mistral-7B con LoRA en mi 3090")])
def test_an_opening_message_and_free_text_over_mcp(lang: str, text: str) -> None:
    async def script(client: ClientSession) -> Any:
        started = await client.call_tool("consultation_start", {"lang": lang, "text": text})
        key = started.structured_content["consultation_id"]
        told = await client.call_tool("consultation_tell", {"consultation_id": key, "text": "50k examples, spot"})
        return started, told

    started, told = session(script)
    assert started.structured_content["understood"]["understood"] == {"model_size_b": "Mistral-7B-v0.3",
                                                                       "method": "lora", "vram_gb": "rtx-3090"}
    assert started.structured_content["question"]["id"] == "dataset_examples"
    assert told.structured_content["understood"]["understood"] == {"dataset_examples": 50000, "interruptible": True}


def test_without_the_mcp_extra_the_command_says_how_to_install_it() -> None:
    import subprocess

    code = ("import sys; sys.modules['mcp'] = None; sys.argv = ['expert', 'mcp']; "
            "from expert.interfaces.cli.main import run; run()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "pip install 'expert[mcp]'" in done.stderr and "Traceback" not in done.stderr


def test_models_prices_and_training_time_over_mcp() -> None:
    async def script(client: ClientSession) -> Any:
        return [await client.call_tool("models", {"names": ["mixtral"]}),
                await client.call_tool("estimate", {"model_size_b": 8, "gpu": "rtx-3090", "dataset_examples": 50000,
                                                    "stack": "tuned"}),
                await client.call_tool("advise", {"model_size_b": 13, "prices": {"h100-80gb": 1.0}}),
                await client.call_tool("advise", {"prices": {"h100": 1.0}, "lang": "es"})]

    models, estimated, priced, bad = session(script)
    assert [m["name"] for m in models.structured_content["models"]] == ["Mixtral-8x7B", "Mixtral-8x22B"]
    time = estimated.structured_content["time"]
    assert time["gpu"] == "rtx-3090" and time["tokens"] == 50000 * 1024 and not time["speed_assumed"]
    assert time["stack"] == "tuned" and time["other_stack"]["stack"] == "typical"
    pick = priced.structured_content["recommendations"][0]
    assert pick["gpu"] == "h100-80gb" and pick["cost"]["per_hour"] == 1.0
    assert bad.is_error and bad.content[0].text.startswith("precios por hora: «h100» no es una tarjeta del catálogo")


def test_arguments_are_checked_strictly_and_aliases_are_taken() -> None:
    """Issue 22: a misnamed, extra, mistyped or missing argument is an error
    naming it; the declared aliases work; the text content is a markdown
    summary, the JSON only in the structured content; the tools are small."""

    async def script(client: ClientSession) -> Any:
        listed = await client.list_tools()
        calls = [("advise", {"model": "Llama 3 70B", "method": "qlora"}), ("advise", {"vram": 24}),
                 ("advise", {"model_size": 70}), ("advise", {"colour": "red", "lang": "es"}),
                 ("consultation_start", {"model": "Llama 3 70B", "gpu": "RTX 3090"}),
                 ("models", {"names": "mixtral"}), ("consultation_answer", {"consultation_id": "x"}),
                 ("advise", {"model_size_b": [70]}), ("advise", {"lang": "ES", "detail": "Summary"}),
                 ("advise", {"model_size_b": 7, "model": 70}),
                 ("explain", {"model_size_b": 70, "detail": "summary"}),
                 ("explain", {"model_size_b": "Qwen3-30B-A3B", "method": "full", "deadline_h": 48})]
        return listed, [await client.call_tool(name, arguments) for name, arguments in calls]

    listed, results = session(script)
    size = len(listed.model_dump_json(by_alias=True, exclude_none=True).encode())
    # 10,000 (issue 38: launch and estimate take advise's fields as explain does, described once)
    assert size <= 10_000, size
    (llama, vram, size70, colour, start, names, missing, listed_value, upper, twice, summary, explained) = results
    assert not llama.is_error and llama.structured_content["profile"]["model_size_b"] > 60
    assert llama.structured_content["profile"]["method"] == "qlora"
    assert vram.structured_content["profile"]["vram_gb"] == 24.0
    assert size70.structured_content["profile"]["model_size_b"] == 70.0
    assert colour.is_error and colour.structured_content["error"]["field"] == "colour"
    assert colour.content[0].text.startswith("colour: no es un argumento de advise; se aceptan: model_size_b")
    assert start.structured_content["question"]["id"] not in ("model_size_b", "vram_gb")
    assert names.is_error and names.structured_content["error"]["field"] == "names"
    assert "a list of text" in names.content[0].text
    assert missing.is_error and missing.structured_content["error"]["field"] == "answer"
    assert listed_value.is_error and listed_value.structured_content["error"]["field"] == "model_size_b"
    assert not upper.is_error and upper.structured_content["lang"] == "es"
    assert upper.structured_content["detail"] == "summary"
    assert twice.is_error and twice.structured_content["error"]["field"] == "model_size_b"
    for result in (llama, summary, explained):
        text = result.content[0].text
        assert not text.lstrip().startswith("{") and "**" in text       # markdown, not the JSON again
    for result in (summary, explained):
        assert result.structured_content["detail"] == "summary"
        assert len(json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False).encode()) <= 3000
        assert len(result.content[0].text.encode()) <= 3000


def test_the_same_strings_read_the_same_over_mcp() -> None:
    from test_chat_contract import SAME_EVERYWHERE, _library

    async def script(client: ClientSession) -> Any:
        return [await client.call_tool("advise", {field: text, "lang": "es"}) for field, text in SAME_EVERYWHERE]

    for (field, text), result in zip(SAME_EVERYWHERE, session(script)):
        expected = _library(field, text, catalog=None)     # the MCP server weighs the market
        if isinstance(expected, tuple):
            assert result.is_error and result.structured_content["error"]["message"] == expected[2], (field, text)
            assert result.content[0].text == markdown(expected[2])      # the text content is markdown
        else:
            assert result.structured_content["profile"][field] == expected, (field, text)


def test_launch_files_over_mcp_are_contents_not_writes() -> None:
    async def script(client: ClientSession) -> Any:
        # at a high budget the first option is 4 H100s sharing the model (one B200 holds it whole otherwise)
        return [await client.call_tool("launch", {"model_size_b": "Llama-3.1-70B", "method": "lora", "budget": "high"}),
                await client.call_tool("launch", {"model_size_b": 8, "method": "qlora", "vram_gb": 24, "option": 2,
                                                  "model": "$(touch pwned)", "lang": "es"}),
                await client.call_tool("launch", {"model_size_b": 8, "option": 99, "lang": "es"})]

    seventy, eight, bad = session(script)
    files = {f["name"]: f["content"] for f in seventy.structured_content["files"]}
    assert sorted(files) == ["README.md", "accelerate.yaml", "ds_config.json", "requirements.txt", "train.py"]
    assert json.loads(files["ds_config.json"])["zero_optimization"]["stage"] == 3
    assert seventy.structured_content["framework"] == "trl" and seventy.structured_content["option"] == 1
    readme = next(f["content"] for f in eight.structured_content["files"] if f["name"] == "README.md")
    assert eight.structured_content["option"] == 2 and "## Lanzamiento" in readme
    assert bad.is_error and bad.content[0].text.startswith("option: «99» no es un puesto")    # the tool's argument


def test_an_error_quotes_the_callers_value_as_markdown_text() -> None:
    async def script(client: ClientSession) -> Any:
        return (await client.call_tool("advise", {"model_size_b": "![x](http://t.example/a.png)"}),
                await client.call_tool("models", {"names": ["[evil](http://x.example)"]}))

    error, models = session(script)
    assert error.is_error and "![x](" not in error.content[0].text and "!\\[x\\]" in error.content[0].text
    assert error.structured_content["error"]["message"].count("![x](http://t.example/a.png)") == 1   # the data: as said
    assert "[evil](" not in models.content[0].text


def test_the_launch_refusals_name_the_tools_arguments_never_a_flag() -> None:
    # 8B full on one 24 GB card, asked by size: torchtune's configs are per model (tests/test_launch.py),
    # and options 2 and 3 run without it. An MCP client has no --launch-option or --model: until
    # 2026-12-07 it was told to use them. It is told the launch tool's own arguments.
    asked = {"model_size_b": "8B", "method": "full", "vram_gb": 24}

    async def script(client: ClientSession) -> Any:
        return [await client.call_tool("launch", {**asked, "lang": lang}) for lang in ("en", "es")] + [
            await client.call_tool("launch", {**asked, "option": 99, "lang": "es"}),
            await client.call_tool("launch", {**asked, "option": 2, "model": "a\nb"})]

    english, spanish, rank, model = session(script)
    for refused in (english, spanish, rank, model):
        assert refused.is_error and "--" not in refused.structured_content["error"]["message"]
    assert [r.structured_content["error"]["field"] for r in (english, spanish, rank, model)] == [
        "model_size_b", "model_size_b", "option", "model"]
    assert english.structured_content["error"]["message"].startswith("model_size_b: this option runs torchtune's")
    assert "call again with its name (model_size_b: Llama-3.1-8B)" in english.structured_content["error"]["message"]
    assert re.search(r"Options [\d, and]+ of this answer run without torchtune: call launch again with one of them "
                     r"in option \(such as option: \d+\)\.$", english.structured_content["error"]["message"])
    assert re.search(r"Las opciones [\d, y]+ de esta respuesta se ejecutan sin torchtune: vuelve a llamar a launch "
                     r"con una de ellas en option \(como option: \d+\)\.$", spanish.structured_content["error"]["message"])
    assert rank.structured_content["error"]["message"].startswith("option: «99» no es un puesto de la respuesta")
    assert model.structured_content["error"]["message"].startswith("model: give a model's local path")


def test_the_form_factor_names_the_card_over_mcp_too() -> None:
    # the one reader of card names (rules/owned.toml form_factors): nvidia-smi's "NVIDIA H100 PCIe" is the
    # PCIe card (756 BF16 TFLOPS), not the H100 SXM (989) it was read as until 2026-12-07
    async def script(client: ClientSession) -> Any:
        return [await client.call_tool("advise", {"model_size_b": 8, "method": "lora", "vram_gb": said})
                for said in ("2x NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB")]

    pcie, sxm = session(script)
    assert (pcie.structured_content["profile"]["own_gpu"], pcie.structured_content["profile"]["own_gpu_count"]) == (
        "h100-pcie", 2)
    assert sxm.structured_content["profile"]["own_gpu"] == "a100-80gb"

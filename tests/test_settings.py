"""Issue 49 item 4: the settings people set — sequence length, micro-batch, LoRA rank, activation checkpointing —
in advise() and explain(), `expert advise`/`explain`, MCP's advise and the page, under `expert estimate`'s names,
read by one reader (expert/input/settings.py); the answer says which were given and which the rules chose."""

from __future__ import annotations

import html
import json
import re

import pytest
from click.testing import CliRunner

from expert import InputError, advise, explain
from expert.interfaces.api import estimate
from expert.interfaces.cli.main import main

BASE = dict(model_size_b=70, method="lora")


def fired(result, rule: str) -> bool:  # type: ignore[no-untyped-def]
    return any(step.rule == rule for step in result.trace)


def test_a_fixed_micro_batch_is_every_options_and_no_rule_raises_it() -> None:
    chosen = advise(**BASE)
    assert fired(chosen, "larger-micro-batch")            # left to the rules, they raise it (to 8 on the pick)
    assert chosen.recommendations[0].setup.micro_batch > 1 and chosen.recommendations[0].setup.given == []
    fixed = advise(**BASE, batch=2)
    assert not fired(fixed, "larger-micro-batch")
    for rec in fixed.recommendations:
        assert rec.setup.micro_batch == rec.recipe["micro_batch"] == 2 and rec.setup.given == ["micro_batch"]


def test_each_setting_changes_the_memory_it_should() -> None:
    def pick(**settings):  # type: ignore[no-untyped-def]
        return advise(**BASE, batch=1, **settings).recommendations[0]

    base = pick()
    longer = pick(seq_len=4096)
    assert longer.setup.seq_len == 4096 and longer.setup.given == ["seq_len", "micro_batch"]
    assert longer.memory.activations_gb > 3 * base.memory.activations_gb
    ranked = pick(lora_rank=64)
    assert ranked.setup.lora_rank == 64
    assert ranked.memory.gradients_gb > 3 * base.memory.gradients_gb and ranked.memory.optimizer_gb > 3 * base.memory.optimizer_gb
    plain = pick(checkpointing="no")
    assert plain.setup.checkpointing is False and plain.recipe["checkpointing"] is False
    assert plain.memory.activations_gb > base.memory.activations_gb
    assert base.setup.checkpointing is True and base.recipe["checkpointing"] is True


def test_left_alone_nothing_changes() -> None:
    """None of the settings given is the consultation as before: the same options, figures and words."""
    assert advise(**BASE).to_dict() == advise(**BASE, seq_len=None, batch=None, lora_rank=None,
                                              checkpointing=None).to_dict()


def test_explain_keeps_the_settings_in_its_reruns() -> None:
    explained = explain(**BASE, deadline_h=8, batch=2, what_if={"deadline_h": 24})
    assert explained.result.to_dict() == advise(**BASE, deadline_h=8, batch=2).to_dict()
    assert explained.what_if is not None
    after = explained.to_dict()["what_if"]["after"]["profile"]
    assert after["micro_batch"] == 2


@pytest.mark.parametrize(("lang", "given", "chosen"), [("en", "(your value)", "(chosen by the rules)"),
                                                       ("es", "(valor tuyo)", "(elegido por las reglas)")])
def test_the_answer_says_which_were_given_and_which_chosen(lang: str, given: str, chosen: str) -> None:
    text = " ".join(advise(**BASE, seq_len=2048, lang=lang).render("text").split())
    line = text.split(" = ", 1)[1].split(" + ")[0].split(" Alternative")[0]
    assert line.count(given) == 1 and line.count(chosen) == 3
    assert "2,048" in line or "2.048" in line
    markdown = advise(**BASE, lang=lang).render("markdown")
    assert given not in markdown and ("all chosen by the rules" in markdown or "todo elegido por las reglas" in markdown)
    assert "  = " not in advise(**BASE, lang=lang).render("text")     # nothing given: the text answer is as before


@pytest.mark.parametrize(("name", "value", "accepted"), [
    ("batch", 0, "a whole number from 1 to 4,096"),
    ("seq_len", "long", "a whole number from 1 to 1,048,576"),
    ("lora_rank", 2.5, "a whole number from 1 to 4,096"),
    ("checkpointing", "maybe", "answer yes or no"),
])
def test_a_bad_setting_names_its_field_in_every_entry_point(name: str, value: object, accepted: str) -> None:
    with pytest.raises(InputError) as caught:
        advise(**BASE, **{name: value})
    assert caught.value.field == name and accepted in str(caught.value)
    with pytest.raises(InputError) as again:
        explain(**BASE, **{name: value})
    assert str(again.value) == str(caught.value)
    if name != "checkpointing":      # estimate reads the same values with the same reader
        with pytest.raises(InputError) as estimated:
            estimate(70, "lora", **{name: value})
        assert str(estimated.value) == str(caught.value)
        flag = "--" + name.replace("_", "-")
        done = CliRunner().invoke(main, ["advise", "--model-size", "70", flag, str(value), "--lang", "en"])
        assert done.exit_code == 2 and done.stderr.strip() == "Error: " + str(caught.value)
    with pytest.raises(InputError) as spanish:
        advise(**BASE, **{name: value}, lang="es")
    assert spanish.value.field == name and str(spanish.value) != str(caught.value)


def test_seq_len_on_the_command_line_is_the_setting_not_the_examples_length() -> None:
    done = CliRunner().invoke(main, ["advise", "--model-size", "8", "--seq-len", "4096", "--batch", "1",
                                     "--lora-rank", "8", "--no-checkpointing", "--format", "json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["profile"]["tokens_per_example"] == 1024 and "tokens_per_example" in data["assumed"]
    assert (data["profile"]["seq_len"], data["profile"]["micro_batch"], data["profile"]["lora_rank"],
            data["profile"]["checkpointing"]) == (4096, 1, 8, False)
    assert data["recommendations"][0]["setup"]["given"] == ["seq_len", "micro_batch", "lora_rank", "checkpointing"]


def test_a_sequence_length_is_written_as_the_examples_length_is() -> None:
    # --tokens-per-example takes "4k" (4,096) and --seq-len refused it: "'4k' is not accepted; a whole number from
    # 1 to 1,048,576", though 4,096 is one; the one reader reads a k of tokens as 1,024 for both
    from expert.i18n import Localizer
    from expert.input import settings
    from expert.interfaces.api import knowledge_base

    kb = knowledge_base()
    assert settings.read(kb, Localizer("en"), {"seq_len": "4k"}) == {"seq_len": 4096}
    assert settings.read(kb, Localizer("es"), {"seq_len": "2,5k", "batch": "8"}) == {"seq_len": 2560, "batch": 8}
    done = CliRunner().invoke(main, ["estimate", "--model-size", "8", "--method", "lora", "--seq-len", "8K",
                                     "--format", "json"])
    assert done.exit_code == 0 and json.loads(done.stdout)["setup"]["seq_len"] == 8192, done.output
    for wrong in ("2000k", "4kb", "k"):       # past the bound, or no count: refused as before
        with pytest.raises(InputError) as caught:
            settings.read(kb, Localizer("en"), {"seq_len": wrong})
        assert caught.value.field == "seq_len" and "a whole number from 1 to 1,048,576" in str(caught.value)
    with pytest.raises(InputError):
        settings.read(kb, Localizer("en"), {"batch": "4k"})      # a micro-batch is no count of tokens
    # the same strings, the same counts: --seq-len read "4k" with a pattern of its own, which took k and m
    # only ("4 thousand", "4 mil" refused) (2026-12-08)
    for text in ("4k", "2,5k", "4 thousand", "4 Mil", "1.5k", "0.5m"):
        expected = advise(model_size_b=7, method="lora", tokens_per_example=text, catalog="guide")
        assert settings.read(kb, Localizer("es"), {"seq_len": text}) == {
            "seq_len": expected.profile["tokens_per_example"]}, text


def test_the_page_takes_the_settings_and_says_so() -> None:
    from starlette.testclient import TestClient

    from expert.interfaces.web import create_app

    client = TestClient(create_app(), base_url="http://127.0.0.1:8000")
    params = {"model-size": "70", "method": "lora", "seq-len": "4096", "batch": "2", "lora-rank": "32",
              "checkpointing": "yes", "lang": "en"}
    page = client.get("/", params=params)
    assert page.status_code == 200
    text = html.unescape(page.text)
    assert "Sized for 4,096-token sequences (your value), a micro-batch of 2 (your value)" in text
    for key, value in (("seq-len", "4096"), ("batch", "2"), ("lora-rank", "32")):
        assert re.search(rf'id="f-{key}" name="{key}" value="{value}"', page.text), key
    api = client.get("/api/advise", params=params).json()
    assert api == advise(**BASE, seq_len="4096", batch="2", lora_rank="32", checkpointing="yes").to_dict()
    bad = client.get("/", params={**params, "batch": "0"})
    assert bad.status_code == 400 and 'id="e-batch"' in bad.text and "micro-batch: &#39;0&#39; is not accepted" in bad.text


def test_mcp_advise_takes_the_settings() -> None:
    pytest.importorskip("mcp")
    import asyncio

    from mcp import Client

    from expert.interfaces.mcp.server import build_server

    async def main_() -> tuple:  # type: ignore[type-arg]
        async with Client(build_server(), mode="legacy") as client:
            return (await client.call_tool("advise", {"model_size_b": 70, "method": "lora", "batch": 2,
                                                      "detail": "full"}),
                    await client.call_tool("advise", {"model_size_b": 70, "lora_rank": 0}))

    good, bad = asyncio.run(main_())
    assert not good.is_error
    assert good.structured_content["recommendations"][0]["setup"]["micro_batch"] == 2
    assert bad.is_error and bad.structured_content["error"]["field"] == "lora_rank"


def test_the_launch_files_run_the_settings_given() -> None:
    from expert import launch

    files = launch(advise(model_size_b=8, method="lora", lora_rank=64, batch=2, checkpointing="no"))
    train = files.files["train.py"]
    assert "        r=64,\n" in train
    assert "per_device_train_batch_size=2,\n" in train and "gradient_checkpointing=False,\n" in train
    default = launch(advise(model_size_b=8, method="lora")).files["train.py"]
    assert "        r=16,\n" in default and "gradient_checkpointing=True,\n" in default

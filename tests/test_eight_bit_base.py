"""The guide's 13B LoRA on an RTX 4090 (issue 47, item 7): the LoRA ladder's
step `eight-bit-base`, after `shard`, loads the frozen weights in 8 bits on
one card where the 16-bit base cannot be sharded (no fast link) or does not
fit sharded; the answer says the trade-off in one sentence."""

from __future__ import annotations

import ast

from expert import advise
from expert.interfaces.launch.make import launch

GUIDE_CASE = dict(model_size_b=13, method="lora", budget="low")


def option(result: object, gpu: str):  # type: ignore[no-untyped-def]
    return next(r for r in result.recommendations if r.gpu == gpu)  # type: ignore[attr-defined]


def test_the_guides_card_holds_13b_lora_with_an_8_bit_base() -> None:
    # the guide's six cards: a 16-bit base needs 28.8 GB of the RTX 4090's 24 (refused before); 8 bits, 16.1
    result = advise(**GUIDE_CASE, catalog=["guide"], lang="en")  # type: ignore[arg-type]
    pick = result.recommendations[0]
    assert (pick.gpu, pick.recipe["id"], pick.count, pick.per_device_gb) == ("rtx-4090", "lora-8bit", 1, 16.1)
    assert result.requirement["first_principles_gb"] == 28.8
    # the trade-off, one sentence, in the brief answer too, in both languages
    brief = " ".join(result.render("text").split())
    assert "half the memory of a 16-bit base" in brief and "about twice the training time" in brief
    spanish = " ".join(advise(**GUIDE_CASE, catalog=["guide"], lang="es").render("text").split())  # type: ignore[arg-type]
    assert "la mitad de memoria que uno de 16 bits" in spanish and "el doble de tiempo" in spanish
    # the step is a rule the trace shows, with its numbers
    assert any(step["rule"] == "eight-bit-base-for-lora" and "1 × NVIDIA RTX 4090 with an 8-bit base" in step["text"]
               for step in result.to_dict()["trace"])


def test_on_todays_market_it_is_an_option_after_cheaper_faster_cards() -> None:
    result = advise(**GUIDE_CASE, lang="en")  # type: ignore[arg-type]
    rtx = option(result, "rtx-4090")
    assert (rtx.recipe["id"], rtx.per_device_gb) == ("lora-8bit", 16.1)
    # an option, not the answer: a 96 GB card rents for less in all and finishes sooner
    first = result.recommendations[0]
    assert first.cost["total"] < rtx.cost["total"] and first.hours < rtx.hours
    assert "eight-bit-base-trade-off" not in {a.id for a in result.advice}


def test_a_16_bit_base_that_fits_is_kept() -> None:
    # 7B fits one RTX 4090 with a 16-bit base: no 8-bit step
    result = advise(model_size_b=7, method="lora", budget="low", catalog=["guide"], lang="en")
    assert option(result, "rtx-4090").recipe["id"] == "lora-16bit"
    assert not any(step["rule"] == "eight-bit-base-for-lora" for step in result.to_dict()["trace"])


def test_cards_with_a_fast_link_shard_the_16_bit_base_first() -> None:
    # 70B LoRA: H100s shard the 16-bit base (faster than an 8-bit base), the ladder never reaches 8 bits
    result = advise(model_size_b=70, method="lora", catalog=["guide"], lang="en")
    h100 = option(result, "h100-80gb")
    assert h100.recipe["id"] == "lora-16bit" and h100.count > 1


def test_the_launch_files_load_the_base_in_8_bits() -> None:
    files = launch(advise(**GUIDE_CASE, catalog=["guide"], lang="en")).files  # type: ignore[arg-type]
    tree = ast.parse(files["train.py"])
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and getattr(node.func, "id", "") == "BitsAndBytesConfig"]
    assert [{kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg == "load_in_8bit"}
            for call in calls] == [{"load_in_8bit": True}]

"""The VRAM requirement (H1-H6, G1, G2, G4, G7) and the time estimates (H15, H16, H23, G6)."""

from __future__ import annotations


import pytest

from conftest import run
from expert.inference import requirement as calc
from expert.inference.sizing import round_up

# The requirement depends on the model and the method, not on the cards weighed: the tests that read only
# the requirement ask on the guide's six cards (docs/development.md, "Tests"); those that read a card's
# hours keep the default.


@pytest.mark.parametrize("size, method, gb", [
    (7, "lora", 16), (7, "full", 24),      # H3
    (13, "lora", 24), (13, "full", 40),    # H4
    (70, "lora", 80),                      # H5
])
def test_guide_table_figures(size: float, method: str, gb: float) -> None:
    req = run(catalog="guide", model_size_b=size, method=method).requirement
    assert req["vram_gb"] == gb
    assert req["basis"] == "table"
    assert not req["floor_binds"]


def test_70b_full_is_more_than_100_gb_and_the_weights_floor_binds() -> None:
    # H5 says "more than 100 GB"; bf16 weights alone are 140 GB (H1).
    req = run(catalog="guide", model_size_b=70, method="full").requirement
    assert req["table_gb"] == 100
    assert req["weights_gb"] == 140
    assert req["vram_gb"] == 140 and req["floor_binds"]


def test_8b_is_in_the_7b_class_so_full_fine_tuning_fits_a_24_gb_card() -> None:
    # G7: the guide's own example runs Llama-3-8B full fine-tuning on a 4090 (H16).
    result = run(model_size_b="Llama-3-8B", method="full")
    assert result.requirement["vram_gb"] == 24
    assert result.requirement["basis"] == "band"
    assert "rtx-4090" in [r.gpu for r in result.recommendations]


def test_interpolation_between_classes_is_linear_and_continuous(kb) -> None:  # type: ignore[no-untyped-def]
    points = kb.requirements["table"]["lora"]
    band = kb.requirements["class_band"]
    # Just past the 7B class: continuous with the class figure.
    just_after, basis, _ = calc.piecewise(7 * (1 + band) + 1e-6, points, band)
    assert basis == "interpolated" and just_after == pytest.approx(16, abs=1e-3)
    # Half-way between the end of the 7B class (8.05) and 13B.
    middle, _, anchors = calc.piecewise((8.05 + 13) / 2, points, band)
    assert middle == pytest.approx(20)
    assert anchors == [[7, 16], [13, 24]]
    # 30B lies between the 13B class (ends at 14.95) and 70B.
    gb_30, basis, _ = calc.piecewise(30, points, band)
    assert basis == "interpolated"
    assert gb_30 == pytest.approx(24 + (30 - 14.95) * (80 - 24) / (70 - 14.95))


def test_outside_the_table_figures_scale_with_size_and_say_so() -> None:
    small = run(catalog="guide", model_size_b=1, method="lora").requirement
    assert small["basis"] == "extrapolated"
    assert small["vram_gb"] == pytest.approx(round_up(16 / 7))
    big = run(model_size_b=405, method="lora")
    assert big.requirement["basis"] == "extrapolated"
    # The proportional figure (402.5 GB) is below the 8-bit weights (405 GB): the floor binds.
    assert big.requirement["vram_gb"] == 405 and big.requirement["floor_binds"]
    assert {"size-outside-table", "weights-floor"} <= {w.id for w in big.warnings}


def test_qlora_takes_half_the_lora_figure_never_below_4_bit_weights() -> None:
    # G2: half, not the best-case 70 %.
    assert run(catalog="guide", model_size_b=7, method="qlora").requirement["vram_gb"] == 8
    assert run(catalog="guide", model_size_b=70, method="qlora").requirement["vram_gb"] == 40
    assert run(catalog="guide", model_size_b=70, method="lora").requirement["qlora_vram_gb"] == 40
    req = run(catalog="guide", model_size_b=405, method="qlora").requirement
    assert req["vram_gb"] == pytest.approx(405 * 0.5)
    assert req["floor_binds"]


@pytest.mark.parametrize("size", [0.1, 1, 3, 7, 8, 10, 13, 20, 30, 34, 70, 180, 405, 1000])
@pytest.mark.parametrize("method, bytes_per_param", [("full", 2), ("lora", 1), ("qlora", 0.5)])
def test_requirement_never_below_the_weights(size: float, method: str, bytes_per_param: float) -> None:
    req = run(catalog="guide", model_size_b=size, method=method).requirement
    assert req["vram_gb"] >= size * bytes_per_param - 1e-9
    assert req["vram_gb"] >= req["table_gb"]


def test_requirement_grows_with_model_size() -> None:
    for method in ("full", "lora", "qlora"):
        figures = [run(catalog="guide", model_size_b=s, method=method).requirement["vram_gb"]
                   for s in (1, 7, 8, 10, 13, 30, 70, 180)]
        assert figures == sorted(figures), method


def hours(result, gpu):  # type: ignore[no-untyped-def]
    option = next(r for r in result.recommendations if r.gpu == gpu)
    return option.count, option.hours


def test_h15_one_4090_fine_tunes_8b_with_lora_in_2_to_4_hours() -> None:
    result = run(model_size_b=8, method="lora", dataset_examples=10_000)
    count, h = hours(result, "rtx-4090")
    # The guide's 2-4 h within timing.toml's tolerance, on the typical stack it describes;
    # a micro-batch of 2 fits and is a little faster than the guide's.
    assert count == 1 and 2 / 1.5 <= h <= 4
    card = next(r for r in result.recommendations if r.gpu == "rtx-4090")
    assert card.time["stack"] == "typical" and card.recipe["micro_batch"] >= 1
    # on a tuned stack (packed, compiled) well under the guide's lower end
    _, tuned = hours(run(model_size_b=8, method="lora", dataset_examples=10_000, stack="tuned"), "rtx-4090")
    assert tuned < h / 1.3 and card.time["other_stack"] == {"stack": "tuned", "hours": pytest.approx(tuned, rel=0.01)}


def test_h16_full_fine_tuning_there_fits_with_torchtunes_single_device_recipe() -> None:
    result = run(model_size_b=8, method="full")
    # The guide's H16 offloads to fit 8B full fine-tuning in 24 GB (8-12 h); torchtune's
    # single-device recipe fits without offload (18.9 GiB measured), its paged 8-bit
    # states needing about 16 GB of host RAM, at the card's full speed.
    card = next(r for r in result.recommendations if r.gpu == "rtx-4090")
    assert card.count == 1 and not card.recipe["offload"] and card.recipe["optimizer"] == "paged_adamw8bit"
    assert card.recipe["optimizer_in_backward"] and card.recipe["framework"] == "torchtune"
    assert 18 <= card.per_device_gb <= 22.8 and 12 < card.host_ram_gb < 17
    assert card.hours < 8 / 1.5


def test_h23_four_a100_80gb_for_70b_lora_and_what_an_h100_takes() -> None:
    result = run(model_size_b=70, method="lora", deadline_h=7, catalog="guide")   # the guide's H23
    count, h = hours(result, "a100-80gb")
    # The guide's "about 6 h" is slower than Qwen's published Qwen-72B LoRA run on 4 A100s
    # under ZeRO-3 (about 2.5 h for these 10M tokens at a micro-batch of 1); the warning says so.
    assert count == 4 and 1.2 <= h <= 3.5
    assert "guide-timing-differs" in {w.id for w in result.warnings}
    # The guide's one H100 holds 70B LoRA only with an 8-bit base, which is not a
    # step of the ladder (QLoRA is offered instead): even on the guide's reading
    # it takes more cards. With 16-bit weights it takes four, sharded, far quicker
    # than "a little over 20 h": an H100 is about 2.2 times an A100.
    count, four = hours(run(model_size_b=70, method="lora"), "h100-80gb")
    assert count == 4 and four < h / 2


def test_time_scales_with_dataset_and_model_size() -> None:
    _, base = hours(run(model_size_b=8), "rtx-4090")
    _, double_data = hours(run(model_size_b=8, dataset_examples=20_000), "rtx-4090")
    assert double_data == pytest.approx(2 * base, rel=0.01)
    _, bigger = hours(run(model_size_b=13 * 1.15, method="lora"), "a100-80gb")
    _, smaller = hours(run(model_size_b=13, method="lora"), "a100-80gb")
    # 6 FLOPs per parameter and token, plus attention, which does not grow with the parameters.
    assert 1.12 * smaller <= bigger <= 1.15 * smaller


def test_qlora_is_slower_than_lora() -> None:
    # H7: constant de/quantization.
    assert hours(run(model_size_b=7, method="qlora"), "rtx-4090")[1] > hours(run(model_size_b=7), "rtx-4090")[1]


# How a sentence says what the run needs, and where it gives the guide's figures instead.
NEEDS = {"en": "this run needs", "es": "que necesita este entrenamiento"}
INSTEAD = {"en": "instead of %s", "es": "en lugar de %s"}
GUIDE = {"en": "guide", "es": "guía"}


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("profile", [
    # the review's case: the header said 71.3 GiB, a warning 39.9 GiB "this run needs", the QLoRA advice
    # "about 20 GiB instead of 39.9 GiB"
    dict(model_size_b="Qwen3-30B-A3B", method="lora", vram_gb="RTX 5090"),
    dict(model_size_b=13, method="lora", vram_gb=8),
    dict(model_size_b=70, method="full", budget="low"),
    dict(model_size_b=70, method="lora", vram_gb=24, budget="low"),
])
def test_every_sentence_gives_the_headers_figure_for_what_the_run_needs(profile: dict, lang: str) -> None:
    """The requirement's sentence leads with the usual recipe's estimate on one GPU and gives the guide's
    figure in brackets; every advice and warning that says what this run needs gives that same figure, the
    QLoRA advice sets QLoRA's need against it, and a sentence that gives the guide's figure says it is the
    guide's."""
    from expert import advise
    from expert.i18n import Localizer

    data = advise(lang=lang, **profile).to_dict()
    req, tr = data["requirement"], Localizer(lang)
    needed, guide = tr.gib(req["first_principles_gib"]), tr.gib(req["table_gb"])
    assert needed in req["text"].split("(")[0] and guide in req["text"]
    said = {item["id"]: item["text"] for item in data["advice"] + data["warnings"]}
    for rule, text in said.items():
        if NEEDS[lang] in text:
            assert f"{needed} {NEEDS[lang]}" in text, (rule, text)
        for figure in {guide, tr.gib(req["vram_gb"])} - {needed}:
            if figure in text:
                assert GUIDE[lang] in text, (rule, text)
    if "qlora-fallback" in said:
        assert INSTEAD[lang] % needed in said["qlora-fallback"]
    if profile.get("vram_gb") in ("RTX 5090", 8):       # one's own card is short of what the run needs
        assert f"{needed} {NEEDS[lang]}" in said["own-gpu-too-small"]
        assert INSTEAD[lang] % needed in said["qlora-fallback"]

"""The estimate and the time model held to the published runs of
rules/estimator.toml [[published]] (issue 47): every row's memory from 1.0 to
1.15 times its published peak per GPU, every timed row within timing.toml's
tolerance (x/÷1.5), unless the row says why not; and a row that says why is
one that misses, so that a reason cannot outlive the miss it explains."""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import edited_rules

from expert.errors import KnowledgeBaseError
from expert.inference.calibration import published_runs
from expert.inference.estimate import Setup, estimate, typical
from expert.inference.requirement import named_card
from expert.inference.time_model import sustained_share
from expert.knowledge.bases import knowledge_base
from expert.knowledge.load import load

KB = knowledge_base(None)
ROWS = {row["id"]: row for row in published_runs(KB)}


def test_the_table_has_memory_and_time_rows() -> None:
    assert sum("peak_bytes" in row for row in ROWS.values()) >= 15
    assert sum("seconds" in row for row in ROWS.values()) >= 15
    for entry in KB.estimator["published"]:
        assert named_card(KB, entry["gpu"]) is not None, entry["id"]
        assert entry["source"].startswith("https://"), entry["id"]


@pytest.mark.parametrize("run_id", [r for r, row in ROWS.items() if "peak_bytes" in row])
def test_memory_holds_the_published_peak(run_id: str) -> None:
    row = ROWS[run_id]
    if row["memory_why"] is None:
        assert 1.0 <= row["memory_ratio"] <= 1.15, (run_id, row["memory_ratio"])
    else:   # the reason stands only while the row misses
        assert not row["memory_holds"], (run_id, row["memory_ratio"], "holds now: drop its memory_why")


@pytest.mark.parametrize("run_id", [r for r, row in ROWS.items() if "seconds" in row])
def test_time_holds_the_published_run(run_id: str) -> None:
    row = ROWS[run_id]
    if row["time_why"] is None:
        assert 1 / 1.5 <= row["time_ratio"] <= 1.5, (run_id, row["time_ratio"])
    else:
        assert not row["time_holds"], (run_id, row["time_ratio"], "holds now: drop its time_why")


def test_sharded_70b_qlora_is_never_under_the_published_peaks() -> None:
    """The out-of-memory the issue measured: PEFT's FSDP and ZeRO-3 runs of
    70B QLoRA on two GPUs were estimated at 0.75-0.83 of their peaks."""
    for run_id in ("peft-fsdp-qlora-70b", "peft-zero3-qlora-70b", "peft-fsdp-qlora-70b-offload"):
        assert ROWS[run_id]["memory_ratio"] >= 1.0


def test_parameter_offload_leaves_the_gathered_layers_on_the_gpu() -> None:
    with_offload, without = ROWS["peft-fsdp-qlora-70b-offload"], ROWS["peft-fsdp-qlora-70b"]
    # the 4-bit shard (about 18 GB per GPU of 70B) leaves the GPU; PEFT measured 35.6 -> 19.6 GB
    assert 14e9 < without["ours_bytes"] - with_offload["ours_bytes"] < 20e9


def test_zero3_over_pcie_is_timed_from_the_link() -> None:
    """Sharded QLoRA over PCIe cards (A5000, RTX 6000 Ada, L4: no NVLink)
    within x/÷1.5 of the published times; the multi-L4 ZeRO-3 runs were timed
    4.3-4.6x slow before the link between PCIe cards was modelled."""
    for run_id in ("answerai-70b-4xa5000", "answerai-70b-8xa5000", "answerai-70b-2x6000ada",
                   "answerai-70b-4x6000ada", "answerai-34b-2x3090", "schmid-2025-4xl4-zero3",
                   "schmid-2025-8xl4-zero3"):
        assert 1 / 1.5 <= ROWS[run_id]["time_ratio"] <= 1.5, run_id


def with_timing(**card_class: float) -> dict[str, dict]:
    """The published runs on a copy of the knowledge base whose card classes
    sustain the shares given (class name -> share)."""
    timing = copy.deepcopy(KB.timing)
    for name, share in card_class.items():
        timing["card_class"][name]["sustained"] = share
    return {row["id"]: row for row in published_runs(dataclasses.replace(KB, timing=timing))}


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


@pytest.mark.parametrize("name", sorted(KB.timing["card_class"]))
def test_each_card_class_is_fixed_by_its_runs(name: str) -> None:
    """A class's share is what brings its runs to the published times: with
    it, every run it names holds and their geometric mean is within 10 % of
    1; at the whole datasheet peak (share 1) they were off by more than
    that, so the class is not a factor without evidence."""
    spec = KB.timing["card_class"][name]
    assert spec["runs"], name
    ratios = [ROWS[run]["time_ratio"] for run in spec["runs"]]
    assert all(1 / 1.5 <= r <= 1.5 for r in ratios), ratios
    assert 0.9 <= geometric_mean(ratios) <= 1.1, ratios
    whole = with_timing(**{name: 1.0})
    before = [whole[run]["time_ratio"] for run in spec["runs"]]
    assert not 0.9 <= geometric_mean(before) <= 1.1, before


def test_the_l4_sustains_less_than_its_peak_and_other_cards_their_whole() -> None:
    """The power-capped L4 (72 W) was timed 1.35x fast on Phil Schmid's runs
    (the packed single-L4 run 1.64x: 0.61 of its time); its class keeps 0.65
    of its peak. Cards no class names keep all of it."""
    assert sustained_share(KB, {"id": "l4", "speed_of": ""}) == 0.65
    for card in ("a100-80gb", "h100-80gb", "rtx-4090", "rtx-3090", "rtx-a6000", "l40s-48gb", "rtx-5090",
                 "rtx-pro-6000"):
        assert sustained_share(KB, {"id": card, "speed_of": ""}) == 1.0, card
    whole = with_timing(**{"power-capped": 1.0})
    assert whole["schmid-2025-l4-packed"]["time_ratio"] < 1 / 1.5   # the miss the class fixes
    assert 1 / 1.5 <= ROWS["schmid-2025-l4-packed"]["time_ratio"] <= 1.5


def test_ones_own_l4_is_timed_as_the_l4_one_rents() -> None:
    """One's own card is timed as the card the person names, its class
    included: an own L4 trains as long as a rented one (it was timed at
    its whole peak, 3.6 hours against 5.5); an own RTX 4090, no class, as
    long as a rented 4090."""
    from expert.interfaces.api import advise

    def hours(**profile: object) -> dict[str, float]:
        result = advise(model_size_b=8, method="qlora", **profile)
        return {option.gpu: option.hours for option in result.recommendations}

    for name, card in (("L4", "l4"), ("RTX 4090", "rtx-4090")):
        own, rented = hours(own_gpu=name)["own"], hours()[card]
        assert own == rented, (name, own, rented)
    assert hours(own_gpu="L4")["own"] > hours(own_gpu="RTX 4090")["own"] * 3


def test_packing_is_the_profile_not_the_card() -> None:
    """The same L4 recipe, unpacked (10,000 examples of 554 tokens on
    average, one a micro-step) and packed (5,408 sequences of 1,024): the
    same tokens, and the packed run is timed faster because it takes fewer,
    fuller micro-steps, with the card's one share for both."""
    unpacked, packed = ROWS["schmid-2025-l4-unpacked"], ROWS["schmid-2025-l4-packed"]
    assert unpacked["setup"].seq_len == packed["setup"].seq_len == 1024   # memory sized for the longest
    assert packed["predicted_seconds"] < unpacked["predicted_seconds"]
    assert packed["seconds"] < unpacked["seconds"]


def test_the_slow_link_of_the_dual_3090_rig_is_measured_not_excused() -> None:
    """Answer.AI's dual-3090 rig (its "older motherboard", "slow PCI lanes")
    links its cards at 24 GB/s both ways, from its own LoRA-against-QLoRA
    pairs: its 7B LoRA run, 0.60 of its time over a PCIe 4.0 x16 slot's link,
    now holds, and the difference between the pair at 2,048 tokens (1,526 s
    published) is the link's."""
    machine = next(m for m in KB.estimator["published_machine"] if m["id"] == "answerai-dual-3090")
    assert machine["link_gbs"] == 24
    assert 1 / 1.5 <= ROWS["answerai-7b-lora"]["time_ratio"] <= 1.5
    assert ROWS["answerai-7b-lora"]["time_why"] is None
    pair = ROWS["answerai-7b-lora"]["predicted_seconds"] - ROWS["answerai-7b-qlora-2048"]["predicted_seconds"]
    assert 0.85 * 1526 <= pair <= 1.15 * 1526, pair
    slot = {row["id"]: row for row in published_runs(dataclasses.replace(
        KB, estimator={**KB.estimator, "published_machine": []}))}
    assert slot["answerai-7b-lora"]["time_ratio"] < 1 / 1.5


@pytest.mark.parametrize("filename, old, new, expected", [
    ("timing.toml", 'cards = ["l4"]', 'cards = ["l5"]', "'l5' is not a card of the catalogs or of owned.toml"),
    ("timing.toml", 'cards = ["l4"]', 'cards = ["l4", "l4"]', "'l4' is already in the class 'power-capped'"),
    ("timing.toml", 'runs = ["schmid-2025-l4-unpacked"', 'runs = ["no-such-run"',
     "'no-such-run' is not a timed run of estimator.toml"),
    ("timing.toml", 'runs = ["schmid-2025-l4-unpacked"', 'runs = ["answerai-7b-lora"',
     "the run 'answerai-7b-lora' is not on a card of the class"),
    ("timing.toml", "sustained = 0.65", "sustained = 1.5", "'card_class.power-capped.sustained' must be a number"),
    ("timing.toml", "sustained = 0.65", 'sustained = "most"', "sustained"),
    ("estimator.toml", "tokens_per_example = 554", "tokens_per_example = 0", "'tokens_per_example' must be"),
    ("estimator.toml", "link_gbs = 24", "link_gbs = 0", "'link_gbs' must be a number above 0"),
    ("estimator.toml", "checkpointing = false", 'checkpointing = "no"', "checkpointing"),
    ("estimator.toml", 'runs = ["answerai-70b-2x3090-offload"', 'runs = ["nowhere"',
     "machine 'answerai-dual-3090': 'nowhere' is not a run"),
])
def test_a_broken_card_class_or_machine_is_refused(tmp_path: Path, filename: str, old: str, new: str,
                                                   expected: str) -> None:
    with pytest.raises(KnowledgeBaseError) as caught:
        load(edited_rules(tmp_path, (filename, old, new)))
    assert expected in str(caught.value)
    assert filename in str(caught.value)


def test_a_run_without_recomputation_is_timed_without_it() -> None:
    """PEFT's L40S runs keep every activation (``checkpointing = false``):
    their FLOPs count no second forward pass. Timed with the typical setup's
    recomputation the LoRA run would be a third slower and miss."""
    row = ROWS["peft-metamath-l40s-lora"]
    assert row["setup"].checkpointing is False
    assert 1 / 1.5 <= row["time_ratio"] <= 1.5
    entry = next(e for e in KB.estimator["published"] if e["id"] == "peft-metamath-l40s-lora")
    recomputed = {**entry, "checkpointing": True}
    estimator = {**KB.estimator, "published": [recomputed]}
    [again] = published_runs(dataclasses.replace(KB, estimator=estimator))
    assert again["time_ratio"] > 1.5 > row["time_ratio"]


def test_the_l40s_runs_hold_at_the_whole_peak_once_their_steps_are_timed() -> None:
    """The L40S's two runs (PEFT's loop, same card, data and length) pulled
    opposite ways until the optimizer step was timed (issue 47 item 5):
    full fine-tuning 0.61x, its AdamW step after every micro-batch of 4
    uncounted. Timed as run (sequences_per_step = 4: 5,000 steps, each
    moving 14 bytes of each of 3.21B bf16 parameters at the typical stack's
    share of the L40S's bandwidth) it holds, and so does LoRA, with no class.
    Stepping once per 32 sequences, as the answers do, it would take 4,375
    steps fewer, each costing exactly that."""
    lora, full = ROWS["peft-metamath-l40s-lora"], ROWS["peft-metamath-l40s-full"]
    for row in (lora, full):
        assert 1 / 1.5 <= row["time_ratio"] <= 1.5 and row["time_why"] is None, row["id"]
    assert not any("l40s-48gb" in spec["cards"] for spec in KB.timing["card_class"].values())
    entry = next(e for e in KB.estimator["published"] if e["id"] == "peft-metamath-l40s-full")
    assert entry["sequences_per_step"] == 4
    unstated = {k: v for k, v in entry.items() if k != "sequences_per_step"}
    [fewer] = published_runs(dataclasses.replace(KB, estimator={**KB.estimator, "published": [unstated]}))
    step_s = 3.21e9 * 14 / (864e9 * KB.timing["stack"]["typical"]["optimizer_bandwidth_share"])
    assert KB.timing["optimizer_step"]["bytes"]["bf16"]["adamw"] == 14
    assert full["predicted_seconds"] - fewer["predicted_seconds"] == pytest.approx(
        (20000 // 4 - 20000 // 32) * step_s, abs=8)       # hours are rounded to 3.6 s
    assert fewer["time_ratio"] < full["time_ratio"]


def test_the_rtx_5090_runs_pull_opposite_ways() -> None:
    """The RTX 5090's two runs: LLaMA-Factory's 154-token micro-steps timed
    0.60 (most of our time there is the fixed time of a micro-step, not the
    card's FLOPs), Scicom's packed 4,096-token rows 1.13. They disagree on
    the card, so it keeps its peak; the one that misses says why."""
    short, packed = ROWS["llamafactory-5090-llama3-8b-lora"], ROWS["scicom-5090-qwen3-1.7b-full"]
    assert short["time_ratio"] < 1 / 1.5 and 1.0 < packed["time_ratio"] <= 1.5
    assert short["time_why"] is not None and packed["time_why"] is None
    fixed = KB.timing["stack"]["typical"]["overhead_per_step_s"] * 3273   # one micro-step an example
    assert fixed / short["predicted_seconds"] > 0.5


def test_the_same_run_on_an_h100_and_an_rtx_5090() -> None:
    """Scicom's run on each card: both rows hold, and the H100's published
    lead over the RTX 5090 (2.04x) is smaller than the peaks and bandwidths
    give (about 3.4x): said in the docs, not fitted from one pair."""
    h100, rtx = ROWS["scicom-h100-qwen3-1.7b-full"], ROWS["scicom-5090-qwen3-1.7b-full"]
    for row in (h100, rtx):
        assert 1 / 1.5 <= row["time_ratio"] <= 1.5, row["id"]
    assert rtx["seconds"] / h100["seconds"] == pytest.approx(2.04, abs=0.01)
    assert 3.2 < rtx["predicted_seconds"] / h100["predicted_seconds"] < 3.6


def test_the_rtx_pro_6000_against_the_same_code_on_an_a100_and_an_h100() -> None:
    """universal-llm-trainer's Llama 3.1 8B full fine-tuning on three cards:
    the A100 and H100 rows hold (the loop is slower than our typical stack
    on both), the RTX PRO 6000 row misses, and beyond the loop the card
    keeps 0.76 of the A100's share and 0.81 of the H100's: the evidence the
    docs give, with no class (one source, one model)."""
    pro, h100, a100 = (ROWS[f"ulmt-{card}-llama3.1-8b-full"] for card in ("pro6000", "h100", "a100"))
    assert 1 / 1.5 <= a100["time_ratio"] <= 1.0 and 1 / 1.5 <= h100["time_ratio"] <= 1.0
    assert pro["time_ratio"] < 1 / 1.5 and pro["time_why"] is not None
    assert pro["time_ratio"] / a100["time_ratio"] == pytest.approx(0.76, abs=0.01)
    assert pro["time_ratio"] / h100["time_ratio"] == pytest.approx(0.81, abs=0.01)
    assert not any("rtx-pro-6000" in spec["cards"] for spec in KB.timing["card_class"].values())


@pytest.mark.parametrize("model", ["llama3.1-8b", "llama2-13b"])
def test_the_same_loops_lora_misses_on_every_card_alike(model: str) -> None:
    """universal-llm-trainer's LoRA rows: its LoRA micro-step is slower than
    its own full fine-tuning's, where the FLOPs put it at three quarters, so
    ours is under 0.5 of it on the RTX PRO 6000, the H100 and the A100 alike
    and each row says why. Beyond the loop the RTX PRO 6000 keeps 0.77-0.78
    of the A100's share and 0.94-0.96 of the H100's: one source, so the card
    keeps its whole peak."""
    pro, h100, a100 = (ROWS[f"ulmt-{card}-{model}-lora"] for card in ("pro6000", "h100", "a100"))
    for row in (pro, h100, a100):
        assert 0.35 < row["time_ratio"] < 0.5 and row["time_why"] is not None, row["id"]
    assert 0.76 < pro["time_ratio"] / a100["time_ratio"] < 0.79
    assert 0.93 < pro["time_ratio"] / h100["time_ratio"] < 0.97
    assert sustained_share(KB, {"id": "rtx-pro-6000", "speed_of": ""}) == 1.0


def test_the_loops_lora_is_slower_than_its_full_fine_tuning_and_ours_is_not() -> None:
    """What the LoRA rows' reason rests on, for each card: published, the
    LoRA micro-step takes longer than the full fine-tuning's (the same 2 x
    8,192 tokens); ours takes about three quarters of it."""
    for card in ("pro6000", "h100", "a100"):
        lora, full = ROWS[f"ulmt-{card}-llama3.1-8b-lora"], ROWS[f"ulmt-{card}-llama3.1-8b-full"]
        assert lora["seconds"] > full["seconds"], card
        assert 0.65 < lora["predicted_seconds"] / full["predicted_seconds"] < 0.8, card


def test_the_table_in_the_docs_is_current() -> None:
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("published_runs_script", root / "scripts" / "published_runs.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.table() in (root / "docs" / "estimator.md").read_text(encoding="utf-8"), (
        "run: python scripts/published_runs.py --write")


# The components issue 47 item 4 corrected (rules/estimator.toml [sharding]), each shown taking effect
# where its figure says and not elsewhere.

GIB = 2**30


def _answerai_7b(**changes: object) -> Setup:
    model = KB.model("llama-2-7b")
    assert model is not None
    setup = typical(KB, model.params_b, "qlora", model.shape(), gpus=2, strategy="fsdp", lora_rank=64,
                    precision="bf16", seq_len=2048)
    return replace(setup, **changes)  # type: ignore[arg-type]


def _cache_gib(setup: Setup) -> float:
    """What the estimate counts for the allocator's cache: its overhead beyond the context allowance."""
    return estimate(KB, setup).breakdown_gib["overhead"] - KB.estimator["overhead"]["per_gpu_mib"] / 1024


def _moving_gib(setup: Setup) -> float:
    """What comes and goes: the activations and the layers gathered whole."""
    found = estimate(KB, setup)
    shard = estimate(KB, replace(setup, gpus=1, strategy="single")).breakdown_gib["weights"] / setup.gpus
    return found.breakdown_gib["activations"] + found.breakdown_gib["weights"] - shard


def test_short_sequences_are_reserved_at_the_working_floor() -> None:
    """Answer.AI's 7B QLoRA reserves 4.98 GiB at 512 tokens and 5.21 at 2,048: at 512 what comes and goes
    is counted at the floor (the blocks loading left cached), at 2,048 at its share; one GPU has neither."""
    floor = KB.estimator["sharding"]["working_floor_mib"] / 1024
    short, long = _answerai_7b(seq_len=512), _answerai_7b(seq_len=2048)
    assert _moving_gib(short) < floor < _moving_gib(long)
    assert _cache_gib(short) == pytest.approx(floor - _moving_gib(short))
    assert _cache_gib(long) == pytest.approx(KB.estimator["sharding"]["fragmentation"] * _moving_gib(long))
    assert _cache_gib(replace(short, gpus=1, strategy="single")) == pytest.approx(0)
    assert ROWS["answerai-7b-qlora-512"]["memory_holds"] and ROWS["answerai-7b-qlora-2048"]["memory_holds"]


def _per_token_gib(row: dict[str, object]) -> float:
    """What grows with the tokens: the activations and the allocator's share of them."""
    setup = row["setup"]
    assert isinstance(setup, Setup)
    return estimate(KB, setup).breakdown_gib["activations"] + _cache_gib(setup)


def test_the_micro_batch_10_rows_cannot_be_held_with_the_rows_beside_them() -> None:
    """The reason the micro-batch 10 rows give, checked: the cut in what grows with the tokens that would
    bring them to 1.15 times their peak puts the LoRA row at micro-batch 6 on the same cards under its own."""
    b10, b6 = ROWS["answerai-7b-qlora-b10"], ROWS["answerai-7b-lora-b6-4090"]
    over = b10["ours_bytes"] / GIB - 1.15 * b10["peak_bytes"] / GIB
    cut = over / _per_token_gib(b10)
    assert 0.02 < cut < 0.05                              # "3 % less per token"
    assert b6["ours_bytes"] / GIB - cut * _per_token_gib(b6) < b6["peak_bytes"] / GIB
    assert 1.15 < b10["memory_ratio"] < 1.2 and not b10["memory_holds"]
    # and the micro-batch below it fits the card the run filled (24,576 MiB)
    assert estimate(KB, replace(b10["setup"], batch=9)).per_gpu_gib < 24576 / 1024 < b10["ours_bytes"] / GIB


def test_answerais_runs_keep_their_optimizer_state_in_bf16() -> None:
    """train.py's --precision defaults to bf16: AdamW's states in bf16, 4 bytes a trainable parameter
    (2 GPUs share them), not mixed precision's 12."""
    for run_id in ("answerai-7b-qlora-b4", "answerai-34b-2x3090", "answerai-7b-lora"):
        setup = ROWS[run_id]["setup"]
        assert setup.precision == "bf16"
        found = estimate(KB, setup)
        assert found.breakdown["optimizer"] == pytest.approx(found.trainable_b * 4 / 2)
    assert ROWS["peft-fsdp-qlora-70b"]["setup"].precision == "mixed"


def test_yi_34b_rows_use_its_own_shape() -> None:
    """Yi-34B is 60 layers of 7,168 with a 64,000-token vocabulary, not CodeLlama-34B's 48 of 8,192 and 32,000."""
    for run_id in ("answerai-34b-2x3090", "answerai-34b-2x4090", "answerai-34b-2x3090-offload"):
        shape = ROWS[run_id]["setup"].shape
        assert shape is not None and (shape["layers"], shape["hidden"], shape["vocab"]) == (60, 7168, 64000)
        assert ROWS[run_id]["memory_holds"], run_id


def test_llama_3s_vocabulary_is_counted_in_the_logits() -> None:
    """Philipp Schmid's Llama 3 70B run: 3,072 tokens of fp32 logits over 128,256 words, 1.47 GiB, in the count."""
    setup = ROWS["schmid-fsdp-qlora-llama3-70b-offload"]["setup"]
    assert setup.shape is not None and setup.shape["vocab"] == 128256
    small = dict(setup.shape, vocab=32000)
    difference = (estimate(KB, setup).breakdown_gib["activations"]
                  - estimate(KB, replace(setup, shape=small)).breakdown_gib["activations"])
    assert difference == pytest.approx(3072 * (128256 - 32000) * KB.estimator["activations"]["logits_bytes"] / GIB)


def test_the_16_bit_floor_is_what_the_7b_lora_reserves_beyond_what_stays() -> None:
    """estimator.toml [sharding] working_floor_16bit_mib, checked against its source: Answer.AI's 7B LoRA on
    two GPUs reserves 10.24 GiB at 512 tokens and 10.22 at 2,048 (benchmarks_03_2024.md, "Starting at 7B");
    less what stays on each GPU as counted here, that is the floor; with it both rows hold, and at 512 tokens
    the floor, not the activations, sets what comes and goes (it did not with the 4-bit load's floor)."""
    from expert.inference.estimate import estimate

    short, long = ROWS["answerai-7b-lora-512"], ROWS["answerai-7b-lora"]
    assert short["memory_holds"] and long["memory_holds"]
    parts = estimate(KB, short["setup"]).breakdown_gib
    shape = short["setup"].shape
    gathered = 6.74e9 * 2 / shape["layers"] * KB.estimator["sharding"]["gathered_layers"] / GIB
    stays = parts["weights"] - gathered + parts["gradients"] + parts["optimizer"]
    floor = KB.estimator["sharding"]["working_floor_16bit_mib"] / 1024
    assert 10.24 - stays == pytest.approx(floor, abs=0.01)
    assert parts["activations"] + gathered < KB.estimator["sharding"]["working_floor_mib"] / 1024 < floor

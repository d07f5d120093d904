"""The estimate and the time model held to the published runs of
rules/estimator.toml [[published]] (issue 47): every row's memory from 1.0 to
1.15 times its published peak per GPU, every timed row within timing.toml's
tolerance (x/÷1.5), unless the row says why not; and a row that says why is
one that misses, so that a reason cannot outlive the miss it explains."""

from __future__ import annotations

import pytest

from expert.inference.calibration import published_runs
from expert.inference.requirement import named_card
from expert.knowledge.bases import knowledge_base

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
    """Sharded QLoRA over PCIe cards (A5000, RTX 6000 Ada: no NVLink) within x/÷1.5 of Answer.AI's times."""
    for run_id in ("answerai-70b-4xa5000", "answerai-70b-8xa5000", "answerai-70b-2x6000ada",
                   "answerai-70b-4x6000ada", "answerai-34b-2x3090"):
        assert 1 / 1.5 <= ROWS[run_id]["time_ratio"] <= 1.5, run_id


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

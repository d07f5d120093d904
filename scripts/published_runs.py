"""Print the table of published runs (rules/estimator.toml [[published]]) as
markdown: each run's memory per GPU, ours against the published peak, and
its time, ours against the published one, with whether the row is held.
docs/estimator.md holds its output between the markers

    <!-- published:start --> ... <!-- published:end -->

    python scripts/published_runs.py --write    # refresh the docs
    python scripts/published_runs.py            # print it

tests/test_published_runs.py fails when the docs are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "estimator.md"
GIB = 2**30


def table() -> str:
    sys.path.insert(0, str(ROOT))
    from expert.inference.calibration import published_runs
    from expert.interfaces.api import knowledge_base

    lines = ["| run | setup | published peak per GPU | ours | ours ÷ published | published time | ours | "
             "ours ÷ published | held |", "|---|---|---|---|---|---|---|---|---|"]
    for row in published_runs(knowledge_base(None)):
        setup = row["setup"]
        offload = ", parameters offloaded" if setup.offload_params else ""
        precision = ", pure bf16" if setup.precision == "bf16" else ""
        recompute = "" if setup.checkpointing else ", no activation checkpointing"
        shape = f" ({setup.shape['name']})" if setup.shape else ""
        what = (f"{setup.method} {setup.model_size_b:.1f}B{shape}, {setup.gpus} × {row['gpu']}, {setup.strategy}"
                f"{offload}, {setup.batch} × {setup.seq_len:,} tokens, rank {setup.lora_rank}{precision}{recompute}")
        if row["tokens_per_example"]:
            what += f", unpacked examples of {row['tokens_per_example']:,} tokens on average"
        if row["link_gbs"]:
            what += f", cards linked at {row['link_gbs']:,.0f} GB/s"
        memory = ["—", "—", "—"]
        if "peak_bytes" in row:
            memory = [f"{row['peak_bytes'] / GIB:.2f} GiB" + (" (card filled)" if row["filled"] else ""),
                      f"{row['ours_bytes'] / GIB:.2f} GiB", f"{row['memory_ratio']:.2f}"]
        time = ["—", "—", "—"]
        if "seconds" in row:
            time = [f"{row['seconds']:,.0f} s", f"{row['predicted_seconds']:,.0f} s", f"{row['time_ratio']:.2f}"]
        held = []
        if "peak_bytes" in row:
            held.append("memory " + ("yes" if row["memory_holds"] else "no: " + str(row["memory_why"])))
        if "seconds" in row:
            held.append("time " + ("yes" if row["time_holds"] else "no: " + str(row["time_why"])))
        name = f"[{row['id']}]({row['source'].split(' ')[0]}) ({row['date']})"
        lines.append("| " + " | ".join([name, what, *memory, *time, "; ".join(held)]).replace("\n", " ") + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    # beside this script; imported here, as the tests load table() alone
    from docs_table import print_or_write

    print_or_write(table(), DOC, "published")


if __name__ == "__main__":
    main()

"""The CPU of ``--format json``: expert.escape.json_text on an advise() and
an explain() result, the text every JSON output (the CLI, the web and MCP
APIs) is written with.

    python bench/json_text.py [--n 20]

Reports, for each result, the size of its JSON and the CPU of one
json_text() (the smallest of N calls, and their mean). The results are
built once, before anything is timed. To compare two versions, run it from
each one's tree (PYTHONPATH=<tree>), side by side or back to back
(docs/performance.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from expert import advise, explain
from expert.escape import json_text


def cpu(work: Callable[[], Any], n: int) -> list[float]:
    spent = []
    for _ in range(n):
        started = time.process_time()
        work()
        spent.append(time.process_time() - started)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="calls of json_text per result (default 20)")
    n = parser.parse_args().n
    results = {
        "advise 8B lora (en)": advise(model_size_b=8, method="lora").to_dict("full"),
        "advise 70B qlora (es)": advise(model_size_b=70, method="qlora", lang="es").to_dict("full"),
        "explain 8B lora, why not h100 (en)": explain(model_size_b=8, method="lora", why_not="h100-sxm").to_dict(),
    }
    print(f"{'result':38} {'JSON':>9} {'min ms':>8} {'mean ms':>8}")
    for name, data in results.items():
        size = len(json_text(data).encode("utf-8"))
        spent = cpu(lambda data=data: json_text(data), n)
        print(f"{name:38} {size / 1000:7.0f} KB {min(spent) * 1000:8.1f} {statistics.mean(spent) * 1000:8.1f}")


if __name__ == "__main__":
    main()

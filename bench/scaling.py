"""How the engine's cost grows with the catalog: advise() and explain() on
generated catalogs of 25 to 2,000 cards, each size in a fresh process.

    python bench/scaling.py [--sizes 25 100 400 1000 2000] [--timeout 300]

For each size: the CPU time and peak resident memory of one consultation
(`--model-size 13 --method lora`, the catalog as a user's file; the catalog
is loaded and the engine warmed in the same process first, and not counted),
the facts declared, the rules fired and the pairs of facts the Rete
network's joins tried, and then the same for explain() (HOW
of the pick and WHY NOT of the last card). Last, the fitted exponent of each
column (least squares on the logarithms: 1 is linear, 2 quadratic).

The cards are the issue's (issue 37): `c<I>-48gb`, NVIDIA, 24 + I % 100 GB,
cost class medium (priced by ranking.toml [class_price]), no links given.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

PROFILE = {"model_size_b": 13, "method": "lora"}


def catalog(n: int) -> str:
    return "\n".join(f'[[gpu]]\nid = "c{i}-48gb"\nname = "Card {i}"\nvendor = "nvidia"\nvram_gb = {24 + i % 100}\n'
                     f'cost = "medium"\n' for i in range(n))


def one(path: str) -> dict[str, Any]:
    """In this (fresh) process: the cost of one advise() and one explain() on ``path``."""
    from expert import advise
    from expert.application import consult, explain
    from expert.i18n import Localizer
    from expert.knowledge.bases import knowledge_base

    advise(catalog=path, model_size_b=1, method="qlora")   # the catalog loaded, the engine built
    out: dict[str, Any] = {}
    start = time.process_time()
    run, result = consult(knowledge_base(None, path), dict(PROFILE), Localizer("en"))
    out["advise_s"] = time.process_time() - start
    out["facts"], out["firings"], out["compared"] = run.declared, len(run.firings), run.compared
    out["advise_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    last = result.rejected[-1].gpu if result.rejected else result.recommendations[-1].gpu
    start = time.process_time()
    explain(catalog=path, why_not=last, **PROFILE)
    out["explain_s"] = time.process_time() - start
    out["explain_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def exponent(xs: list[float], ys: list[float]) -> float:
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum((a - mx) ** 2 for a in lx)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 100, 400, 1000, 2000])
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--one", metavar="CATALOG", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in args.sizes:
            path = os.path.join(folder, f"cards-{n}.toml")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(catalog(n))
            try:
                done = subprocess.run([sys.executable, __file__, "--one", path], capture_output=True, text=True,
                                      timeout=args.timeout, check=True)
            except subprocess.TimeoutExpired:
                print(f"{n:6d} cards: over {args.timeout:.0f} s")
                continue
            row = json.loads(done.stdout) | {"cards": n}
            rows.append(row)
            print(f"{n:6d} cards: advise {row['advise_s']:7.2f} s CPU, peak RSS {row['advise_rss_mb']:6.0f} MB, "
                  f"{row['facts']:6d} facts, {row['firings']:6d} firings, {row['compared']:7d} pairs tried; explain {row['explain_s']:7.2f} s CPU, "
                  f"peak RSS {row['explain_rss_mb']:6.0f} MB")
    if len(rows) >= 2:
        cards = [r["cards"] for r in rows]
        print("fitted exponent (1 = linear): " + ", ".join(
            f"{name} {exponent(cards, [r[name] for r in rows]):.2f}"
            for name in ("advise_s", "advise_rss_mb", "facts", "firings", "compared", "explain_s", "explain_rss_mb")))
    return 0


if __name__ == "__main__":
    sys.exit(main())

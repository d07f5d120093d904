"""What each option's setup and memory breakdown (issue 46 item 4) adds to a
consultation: the estimator run once more per option, counted and timed.

    python bench/setup_memory.py [--n 50] [--repeat 5]

Reports, over bench.py's varied profiles: the options, the estimate() calls
the sizing makes in all (the breakdown's included) and the breakdown's, and
the CPU time of the breakdown beside that of a whole advise(), per
consultation, on one core. Compare the shares, not the milliseconds: the
machine's speed varies (docs/development.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench
import expert
from expert.application import consult
from expert.explanation.answer import setup_and_memory
from expert.i18n import Localizer
from expert.inference import estimate as estimator
from expert.inference import sizing
from expert.interfaces.api import knowledge_base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=50, help="consultations (default 50)")
    parser.add_argument("--repeat", type=int, default=5, help="passes timed (default 5)")
    args = parser.parse_args()
    profiles = [{k: v for k, v in p.items() if k != "lang"} for p in bench.profiles(args.n)]
    kb, tr = knowledge_base(), Localizer("en")

    calls = {"n": 0}
    original = estimator.estimate

    def counted(*a: Any, **k: Any) -> Any:
        calls["n"] += 1
        return original(*a, **k)

    runs = [consult(kb, dict(p), tr)[0] for p in profiles]       # warm
    sizing.estimate = counted       # the sizing's own name of it (module global)
    try:
        for p in profiles:
            consult(kb, dict(p), tr)
    finally:
        sizing.estimate = original
    options = [(run, run.options[gpu]) for run in runs for gpu in run.ranking]

    start = time.process_time()
    for _ in range(args.repeat):
        for run, option in options:
            setup_and_memory(kb, run.profile, option)
    breakdown = (time.process_time() - start) / args.repeat / len(runs)
    start = time.process_time()
    for _ in range(args.repeat):
        for p in profiles:
            expert.advise(**p)
    whole = (time.process_time() - start) / args.repeat / len(profiles)
    print(f"{len(runs)} consultations, {len(options)} options")
    print(f"estimate() calls in sizing: {calls['n']} in all, {len(options)} of them the breakdown's "
          f"({len(options) / (calls['n'] - len(options)) * 100:.1f} % more)")
    print(f"CPU per consultation: advise() {whole * 1000:.2f} ms, the breakdown {breakdown * 1000:.3f} ms "
          f"({breakdown / whole * 100:.2f} %)")


if __name__ == "__main__":
    main()

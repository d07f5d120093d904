"""Benchmark: advise() in-process and `expert` as a whole process.

    python bench/bench.py [--n 1000]

Plain Python, no extra dependency. Prints the median and p99 of advise(),
consultations per second on one core, and whole-process times of
`expert --help` and `expert advise` against the floor of importing
experta, jinja2, babel and click.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

PROFILES = [
    dict(model_size_b=70, method="lora", deadline_h=8),
    dict(model_size_b=8, method="full", vram_gb=24),
    dict(model_size_b=13, method="lora", budget="low", rocm_ok=True),
    dict(model_size_b=405, method="qlora", interruptible=True, purpose="production"),
]


def in_process(n: int) -> list[float]:
    from expert import advise

    for profile in PROFILES:  # warm-up: engine class, engine, catalogs
        advise(**profile, lang="es")
    times = []
    for i in range(n):
        profile = PROFILES[i % len(PROFILES)]
        start = time.perf_counter()
        advise(**profile, lang="es" if i % 2 else "en")
        times.append(time.perf_counter() - start)
    return times


def whole_process(args: list[str], runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    n = parser.parse_args().n
    times = sorted(in_process(n))
    median, p99 = statistics.median(times), times[int(0.99 * (len(times) - 1))]
    print(f"advise() x {n}: median {median * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms, "
          f"{1 / statistics.mean(times):.0f} consultations/s on one core")
    floor = whole_process([sys.executable, "-c", "import expert._experta, jinja2, babel, click"])
    help_ = whole_process([sys.executable, "-m", "expert", "--help"])
    advise = whole_process([sys.executable, "-m", "expert", "advise", "--model-size", "70", "--lang", "es"])
    print(f"import floor (experta via expert._experta, jinja2, babel, click): {floor * 1e3:.0f} ms")
    print(f"expert --help: {help_ * 1e3:.0f} ms")
    print(f"expert advise: {advise * 1e3:.0f} ms ({advise / floor:.2f}x the import floor)")


if __name__ == "__main__":
    main()

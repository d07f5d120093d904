"""The test suite's time, as issue 46 counts it: the README's test command
(`python -m pytest`) run as a whole, N times, on this machine.

    python bench/suite.py [--runs 3] [--axe PATH/axe.min.js] [-- PYTEST ARGS]

For each run: the wall time; the CPU of the processes pytest waited for
(user + system, `getrusage(RUSAGE_CHILDREN)`, what `/usr/bin/time` prints);
and, on Linux, the CPU the whole machine spent meanwhile (`/proc/stat`),
which also counts what those processes do not wait for: Chromium's
processes under chromedriver spent 8-13 s of CPU in the browser test that
`/usr/bin/time` never saw (2026-12-08). The cores' idle seconds
(cores x wall - machine CPU) are the suite waiting: on a deadline of the
serving tests, on a tool that is stopped, on the last file of one worker.
Then the ten-million-step Python loop, the machine's speed that hour: the
same code took 79-118 s on this kind of machine as that loop took
0.53-1.13 s (docs/development.md, "Tests").

`--axe PATH` runs the browser test as `.ci/run` does: axe-core from PATH,
and a missing browser a failure (EXPERT_BROWSER_TESTS=required).
Reported, not asserted; the machine's other work counts in every figure.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def machine_cpu() -> float | None:
    """Seconds of CPU the machine spent busy since it started (Linux), or None: user to softirq, and steal;
    not idle and iowait, nor guest (counted inside user)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    ticks = [int(f) for f in fields]
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


LOOP = "import time\nstarted = time.time()\ni = 0\nwhile i < 10_000_000:\n    i += 1\nprint(time.time() - started)"


def loop_seconds() -> float:
    """The machine's speed: a ten-million-step Python loop at a module's top level (its globals, as the
    figures of earlier notes were taken), in a fresh process, its seconds."""
    return float(subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True, check=True).stdout)


@dataclass
class Run:
    exit: int
    summary: str
    wall: float
    waited_cpu: float
    machine_cpu: float | None
    idle: float | None
    loop: float


def one_run(pytest_args: list[str], env: dict[str, str]) -> Run:
    before_cpu, before_children = machine_cpu(), resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", *pytest_args], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    wall = time.monotonic() - started
    after_children, after_cpu = resource.getrusage(resource.RUSAGE_CHILDREN), machine_cpu()
    waited = (after_children.ru_utime - before_children.ru_utime) + (after_children.ru_stime - before_children.ru_stime)
    summary = next((line.strip("= ") for line in reversed(done.stdout.splitlines()) if " in " in line), "")
    busy = idle = None
    if before_cpu is not None and after_cpu is not None:
        busy = after_cpu - before_cpu
        idle = max(0.0, (os.cpu_count() or 1) * wall - busy)
    if done.returncode != 0:      # what failed, kept: a failure seen once is worth its output
        sys.stderr.write(done.stdout[-20000:] + done.stderr[-4000:])
    return Run(done.returncode, summary, wall, waited, busy, idle, loop_seconds())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="how many times to run the suite (default 1)")
    parser.add_argument("--axe", metavar="PATH", help="axe.min.js: run the browser test as .ci/run does")
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments (default: none, the README's)")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.axe:
        env.update(EXPERT_AXE=str(Path(args.axe).resolve()), EXPERT_BROWSER_TESTS="required")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "?"
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {commit}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}; python -m pytest {' '.join(args.pytest_args)}".rstrip())
    print("| run | wall s | CPU waited for s | machine's CPU s | idle core-s | loop s | pytest |")
    print("|---|---|---|---|---|---|---|")
    walls = []
    for n in range(1, args.runs + 1):
        got = one_run(args.pytest_args, env)
        walls.append(got.wall)
        machine, idle = ("-" if value is None else f"{value:.1f}" for value in (got.machine_cpu, got.idle))
        print(f"| {n} | {got.wall:.1f} | {got.waited_cpu:.1f} | {machine} | {idle} | {got.loop:.2f} | "
              f"{got.summary.replace('|', '/')} (exit {got.exit}) |", flush=True)
        if got.exit != 0:
            return got.exit
    if len(walls) > 1:
        print(f"wall: median {statistics.median(walls):.1f} s, {min(walls):.1f}-{max(walls):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

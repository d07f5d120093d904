"""What a command costs before it answers: `expert advise` and the other
commands as whole processes, cold (a fresh Python each time), as a person
runs them.

    python bench/cold_start.py [--runs 11]

Reports, for each command, the CPU time of the process (user + system, of
the child as the OS counts it; median and smallest of N runs), and the
modules it imports: in all, of the package, and of jinja2, babel, click and
the vendored experta. The installed `expert` script's Python runs it, with
the bytecode written (PYTHONDONTWRITEBYTECODE unset: an installed package
has its bytecode; without it every run compiles the package again). The
knowledge-base and template caches are filled by a first run, not counted.
Reported, not asserted: compare two versions side by side, each pinned to
one core (docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

COMMANDS = {
    "expert --version": ["--version"],
    "expert advise --model-size 8 --method lora": ["advise", "--model-size", "8", "--method", "lora"],
    "expert advise ... --format json": ["advise", "--model-size", "8", "--method", "lora", "--format", "json"],
    "expert explain --model-size 8 --method lora": ["explain", "--model-size", "8", "--method", "lora"],
}

# Runs the command in this process's Python, then writes the modules it imported to stderr's last line.
RUN = """
import sys
sys.argv = ["expert"] + sys.argv[1:]
from expert.interfaces.cli.main import main
try:
    main()
except SystemExit:
    pass
import json
sys.stderr.write("\\n" + json.dumps(sorted(sys.modules)) + "\\n")
"""


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def cpu(arguments: list[str]) -> float:
    """CPU seconds (user + system) of one process running the command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "expert", *arguments], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=environment(), check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def modules(arguments: list[str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", RUN, *arguments], capture_output=True, text=True,
                          env=environment(), check=False)
    return json.loads(done.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="processes per command (default 11)")
    runs = parser.parse_args().runs
    print(f"{'command':46} {'CPU median':>10} {'smallest':>9} {'modules':>8} {'expert':>7} "
          f"{'jinja2':>7} {'babel':>6} {'click':>6} {'experta':>8}")
    for name, arguments in COMMANDS.items():
        cpu(arguments)                                   # the caches filled, the bytecode written
        spent = [cpu(arguments) for _ in range(runs)]
        names = modules(arguments)

        def count(prefix: str, names: list[str] = names) -> int:
            return sum(1 for module in names if module == prefix or module.startswith(prefix + "."))
        print(f"{name:46} {statistics.median(spent) * 1000:7.0f} ms {min(spent) * 1000:6.0f} ms {len(names):8} "
              f"{count('expert'):7} {count('jinja2'):7} {count('babel'):6} {count('click'):6} "
              f"{count('expert._vendor.experta'):8}")


if __name__ == "__main__":
    main()

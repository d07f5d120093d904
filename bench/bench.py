"""Benchmark `expert`: in-process speed, memory over many consultations, and
whole-process times.

    python bench/bench.py [--n 1000] [--memory 20000]
    python bench/bench.py --sizes        # the sizes of docs/mcp.md

Plain Python, no extra dependency. Reports:
- advise(): median and p99 over N consultations of varied profiles, and
  consultations per second on one core (budget: median <= 10 ms, p99 <= 30 ms),
  by default and on the guide's six alone (--catalog guide), side by side;
- resident memory growth over M consultations after a warm-up;
- `expert --version`, one Tab press (shell completion), `expert --help`,
  `expert advise` and `expert explain --why-not CARD` as whole processes (the
  installed `expert` script; budget for explain: 0.5 s), beside the time it
  takes only to import experta (through expert._vendor.experta, since experta
  1.9.4 does not import on Python >= 3.10 by itself), jinja2, babel and click;
  with the ratios budgeted: completion <= 1.2 x `expert --version` (issue 25),
  `expert advise` <= 1.5 x that import floor (issue 37; wall clock and CPU time);
  and `expert advise` in parts (CPU time of each, in a fresh process):
  importing, the knowledge base, the Rete network, inference, result, text;
- explain() beside advise() by catalog size: the guide's 6 cards
  (--catalog guide), the default (the guide's and today's market, 23 cards),
  and generated catalogs of 8 to 64 more cards beside the guide's (issue 26:
  explain with 64 more cards within 4x explain with the shipped catalog).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from typing import Any


def profiles(n: int, seed: int = 1) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [dict(model_size_b=rng.choice([1, 3, 7, 8, 13, 20, 30, 34, 70, 180, 405]),
                 method=rng.choice(["full", "lora", "qlora"]), budget=rng.choice(["low", "medium", "high"]),
                 rocm_ok=rng.random() < 0.5, deadline_h=rng.choice([None, 2, 8, 24, 72]),
                 vram_gb=rng.choice([None, 12, 24, 48, 80]), dataset_examples=rng.choice([1000, 10_000, 100_000]),
                 purpose=rng.choice(["experiment", "production"]), interruptible=rng.random() < 0.5,
                 lang=rng.choice(["en", "es"]))
            for _ in range(n)]


def rss_kb() -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))


def timing(n: int) -> None:
    """advise() over varied profiles: by default (the guide's cards and today's
    market, rules/catalogs) and on the guide's six alone (--catalog guide, the
    default before issue 47), side by side in one process: the engine is
    linear in cards, and the machine's speed is the same for both."""
    from expert import advise
    from expert.interfaces.api import knowledge_base

    cases = profiles(n)
    for label, catalog in ((f"default ({len(knowledge_base().catalog)} cards)", None),
                           (f"--catalog guide ({len(knowledge_base(catalog='guide').catalog)} cards)", "guide")):
        for profile in cases[:50]:  # warm-up: engine class, engine, catalogs, caches
            advise(catalog=catalog, **profile)
        times, cpu = [], []
        for profile in cases:
            start, start_cpu = time.perf_counter(), time.process_time()
            advise(catalog=catalog, **profile)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        times.sort()
        median, p99 = statistics.median(times), times[int(0.99 * (len(times) - 1))]
        # CPU time too: a machine shared with other work stretches the wall clock, not the CPU seconds
        print(f"advise() x {n} varied profiles, {label}: median {median * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms, "
              f"{len(times) / sum(times):.0f} consultations/s on one core; CPU median "
              f"{statistics.median(cpu) * 1e3:.2f} ms, mean {statistics.fmean(cpu) * 1e3:.2f} ms")
    start = time.perf_counter()   # the machine's speed in the same run: a 10M-step loop (0.8-0.9 s on 2026-12-03)
    total = 0
    for step in range(10_000_000):
        total += step
    print(f"reference: a 10,000,000-step Python loop took {time.perf_counter() - start:.2f} s")


def memory(m: int) -> None:
    from expert import advise

    cases = profiles(500, seed=2)
    for profile in cases:
        advise(**profile)
    gc.collect()
    before = rss_kb()
    for i in range(m):
        advise(**cases[i % len(cases)])
    gc.collect()
    after = rss_kb()
    print(f"memory: {m} consultations after warm-up: RSS {before / 1024:.1f} MB -> {after / 1024:.1f} MB "
          f"({(after - before) / 1024:+.2f} MB)")


def bench_catalog(n: int, seed: int = 7) -> str:
    """A user catalog of ``n`` generated cards (vendors, sizes, links, prices mixed)."""
    rng = random.Random(seed)
    cards = []
    for i in range(n):
        vendor = rng.choice(["nvidia", "nvidia", "amd"])
        link = rng.choice(["pcie", "nvlink" if vendor == "nvidia" else "infinity-fabric"])
        cards.append(f'[[gpu]]\nid = "bench-{i + 1}"\nname = "Bench card {i + 1}"\nvendor = "{vendor}"\n'
                     f'vram_gb = {rng.choice([16, 24, 32, 40, 48, 64, 80, 96, 128, 141, 192])}\n'
                     f'cost = "{rng.choice(["low", "medium", "medium-high", "high"])}"\n'
                     f'segment = "{rng.choice(["consumer", "datacenter"])}"\ninterconnect = "{link}"\n'
                     f'bf16_tflops = {rng.choice([80, 165, 312, 400, 989])}\n'
                     f'price_on_demand = {rng.choice([0.4, 0.9, 1.5, 2.5, 4.0])}\n')
    return "\n".join(cards)


def explain_scaling(runs: int) -> None:
    import tempfile

    from expert import advise
    from expert.application import explain

    cases = [dict(model_size_b=70, method="lora", deadline_h=24),
             dict(model="Qwen3-30B-A3B", method="full", deadline_h=48),
             dict(model_size_b=405, method="full", rocm_ok=False, purpose="production")]
    with tempfile.TemporaryDirectory() as folder:
        catalogs: dict[str, Any] = {"guide (6 cards)": "guide", "default: guide + market (23 cards)": None}
        for n in (8, 16, 32, 64):
            path = os.path.join(folder, f"bench-{n}.toml")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(bench_catalog(n))
            catalogs[f"guide + {n} ({n + 6} cards)"] = ["guide", path]
        print(f"explain() by catalog size, median of {runs} runs of {len(cases)} profiles (seconds per call):")
        for label, catalog in catalogs.items():
            for case in cases:  # warm-up: the catalog loaded and cached
                advise(catalog=catalog, **case)
            timed: dict[str, list[float]] = {"advise": [], "explain": []}
            for _ in range(runs):
                for name, call in (("advise", advise), ("explain", explain)):
                    start = time.perf_counter()
                    for case in cases:
                        call(catalog=catalog, **case)
                    timed[name].append((time.perf_counter() - start) / len(cases))
            print(f"  {label:36s} advise {statistics.median(timed['advise']):6.3f}   "
                  f"explain {statistics.median(timed['explain']):6.3f}")


def command(*args: str) -> list[str]:
    """The installed ``expert`` script beside this Python (what a person runs),
    else ``python -m expert``."""
    script = os.path.join(os.path.dirname(sys.executable), "expert")
    return [script, *args] if os.path.exists(script) else [sys.executable, "-m", "expert", *args]


def processes(runs: int) -> float:
    # Bytecode caches allowed (as after any pip install), one warm-up run
    # each, then the commands in turn so that a busy moment hits all alike.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    commands = {
        "floor": [sys.executable, "-c", "import expert._vendor.experta, jinja2, babel, click"],
        "version": command("--version"),
        "complete": command(),
        "help": command("--help"),
        "advise": command("advise", "--model-size", "70", "--lang", "es"),
        "explain": command("explain", "--model-size", "70", "--method", "lora", "--lang", "es",
                           "--why-not", "rtx-4090"),
    }
    # One Tab press: bash completing `expert advise --vram rtx-30`.
    complete_env = {**env, "_EXPERT_COMPLETE": "bash_complete", "COMP_WORDS": "expert advise --vram rtx-30",
                    "COMP_CWORD": "3"}
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}

    def run(name: str, args: list[str]) -> None:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True, env=complete_env if name == "complete" else env)
        times[name].append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)

    for name, args in commands.items():
        run(name, args)
        times[name].clear(), cpu[name].clear()
    for _ in range(runs):
        for name, args in commands.items():
            run(name, args)
    median = {name: statistics.median(times[name]) for name in commands}
    used = {name: statistics.median(cpu[name]) for name in commands}
    print(f"whole processes, median of {runs} ({' '.join(commands['advise'][:1])}), wall clock (CPU time):")
    for name, label in (("floor", "importing experta, jinja2, babel, click"), ("version", "expert --version"),
                        ("complete", "one Tab press (completion)"), ("help", "expert --help"),
                        ("advise", "expert advise"), ("explain", "expert explain --why-not (budget 500 ms)")):
        print(f"  {label}: {median[name] * 1e3:.0f} ms ({used[name] * 1e3:.0f} ms CPU)")
    print(f"  completion / --version: {median['complete'] / median['version']:.2f}x "
          f"({used['complete'] / used['version']:.2f}x CPU; budget 1.2x)")
    print(f"  expert advise / import floor: {median['advise'] / median['floor']:.2f}x "
          f"({used['advise'] / used['floor']:.2f}x CPU; budget 1.5x)")
    imported = subprocess.run([sys.executable, "-X", "importtime", "-m", "expert", "--help"], capture_output=True,
                              text=True, env=env).stderr
    heavy = sorted({name for name in ("experta", "jinja2", "babel") if f" {name}\n" in imported})
    print(f"  expert --help imports: {', '.join(heavy) or 'none'} of experta, jinja2, babel")
    return used["floor"]


def one_advise() -> None:
    """In this (fresh) process: the CPU time of each part of `expert advise
    --model-size 70 --lang es` beyond the import floor, as JSON on stdout."""
    import json

    parts: dict[str, float] = {}
    last = [time.process_time()]

    def lap(name: str) -> None:
        now = time.process_time()
        parts[name] = (now - last[0]) * 1e3
        last[0] = now

    import babel  # noqa: F401
    import click  # noqa: F401
    import jinja2  # noqa: F401

    import expert._vendor.experta
    lap("import floor")
    import expert.interfaces.cli.main  # noqa: F401
    lap("import expert.interfaces.cli.main")
    from expert.explanation.answer import build_result
    from expert.i18n import Localizer
    from expert.inference import engine
    from expert.input import profile
    from expert.interfaces import api
    lap("import the library")
    kb = api.knowledge_base()
    lap("knowledge base")
    tr = Localizer("es")
    given, assumed = profile.build(kb, {"model_size_b": 70}, tr, None)
    engine.engine_class(kb)
    lap("profile, engine class")
    engine.thread_engine(kb)
    lap("Rete network")
    run = engine.infer(kb, given, "checked")
    lap("inference")
    result = build_result(kb, run, tr, assumed)
    lap("result (babel's locale data)")
    result.render("text", width=80)
    lap("text (templates)")
    print(json.dumps(parts))


def advise_parts(runs: int, floor_cpu: float) -> None:
    """Medians of one_advise() over ``runs`` fresh processes, beside what
    the budget leaves: 0.5 x the floor process's CPU time (``floor_cpu``)."""
    import json

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    child = [sys.executable, os.path.abspath(__file__), "--one-advise"]
    subprocess.run(child, check=True, capture_output=True, env=env)     # warm-up: bytecode, the cache folder
    found: dict[str, list[float]] = {}
    for _ in range(runs):
        out = subprocess.run(child, check=True, capture_output=True, text=True, env=env).stdout
        for name, ms in json.loads(out).items():
            found.setdefault(name, []).append(ms)
    print(f"expert advise in parts, CPU time, median of {runs} processes:")
    for name, values in found.items():
        print(f"  {name}: {statistics.median(values):.0f} ms")
    above = sum(statistics.median(v) for name, v in found.items() if name != "import floor")
    print(f"  beyond the import floor: {above:.0f} ms (1.5 x the floor process allows {0.5 * floor_cpu * 1e3:.0f} ms)")


def listed_tools_bytes() -> int | str:
    """The `tools/list` result as the MCP SDK sends it (tests/test_mcp.py holds its bound)."""
    try:
        import anyio
        from mcp import Client
    except ImportError:
        return "(the mcp extra is not installed)"

    from expert.interfaces.mcp.server import build_server

    async def listed() -> int:
        async with Client(build_server(), mode="legacy") as client:
            tools = await client.list_tools()
            return len(tools.model_dump_json(by_alias=True, exclude_none=True).encode())

    return anyio.run(listed)


def sizes() -> None:
    """The sizes a chat pays for (docs/mcp.md): the tool definitions, and the
    summaries of advise and explain over the golden cases (tests/golden.py),
    JSON compact and UTF-8 (as MCP sends it) and markdown; the tool
    definitions also as the `tools/list` result the MCP SDK sends."""
    import json

    def sent(data: Any) -> int:
        return len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
    from golden import CASES  # type: ignore[import-not-found]

    from expert import advise
    from expert.application import explain
    from expert.interfaces.api import knowledge_base
    from expert.interfaces.schema import tool_specs, tools

    kb = knowledge_base()
    print(f"tool definitions (mcp shape, compact JSON): {len(json.dumps(tools(kb, 'mcp'), separators=(',', ':')))} B")
    for spec in tool_specs(kb):
        print(f"  {spec['name']}: {len(json.dumps(spec, separators=(',', ':')))} B")
    print(f"tools/list result over MCP: {listed_tools_bytes()} B")
    rows: dict[str, list[int]] = {}
    for given in CASES.values():
        for lang in ("en", "es"):
            arguments = {k: v for k, v in given.items() if k not in ("why_not", "what_if")}
            result = advise(lang=lang, **arguments)
            x = explain(lang=lang, detail="summary", **given)
            full = x.to_dict("full")
            full.pop("trace", None)
            for name, size in (("advise summary JSON", sent(result.to_dict("summary"))),
                               ("advise summary markdown", len(result.render("markdown", detail="summary").encode())),
                               ("explain summary JSON", sent(x.to_dict())),
                               ("explain summary markdown", len(x.render("markdown").encode())),
                               ("explain full JSON, no trace", sent(full))):
                rows.setdefault(name, []).append(size)
    print(f"over the {len(CASES)} golden cases, en and es (median / largest):")
    for name, values in rows.items():
        print(f"  {name}: {int(statistics.median(values))} / {max(values)} B")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="consultations timed (default 1000)")
    parser.add_argument("--memory", type=int, default=20000, help="consultations for the memory check (default 20000)")
    parser.add_argument("--runs", type=int, default=21, help="runs of each whole process (default 21)")
    parser.add_argument("--sizes", action="store_true", help="only the sizes a chat pays for (docs/mcp.md)")
    parser.add_argument("--processes", action="store_true", help="only the whole-process times")
    parser.add_argument("--explain-runs", type=int, default=3, help="runs of explain() by catalog size (default 3)")
    parser.add_argument("--one-advise", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_advise:
        one_advise()
        return
    print(f"measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: {platform.machine()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, Python {platform.python_version()}")
    if args.sizes:
        sizes()
        return
    if not args.processes:
        timing(args.n)
        memory(args.memory)
        explain_scaling(args.explain_runs)
    advise_parts(args.runs, processes(args.runs))


if __name__ == "__main__":
    main()

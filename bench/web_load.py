"""A bounded load test of `expert serve` on the loopback (issues 38 and 48).

Starts `expert serve` on a free port (with its default workers, as a person
starts it, or --workers N), warms it up, then lets CLIENTS concurrent
clients (threads, each with its own keep-alive connection) send REQUESTS
requests each, every one a different consultation (model sizes, methods,
deadlines, own cards, both languages). Reports errors (any status but 200),
the server's time per request (its Server-Timing header) and the client's,
p50/p99, the answers per second, and the server's resident memory before
and after (all its processes).

With --idle N, N sockets are opened first and send nothing (or a header
line every 2 s with --trickle) while the load runs: the answers the others
get show whether idle clients can starve them. With --abandon N, N page
requests are sent and their sockets closed at once before the load (work
for clients that have gone).

    python bench/web_load.py                       # the page: 50 clients x 40 requests
    python bench/web_load.py --path /api/advise    # the JSON API
    python bench/web_load.py --clients 10 --requests 5
    python bench/web_load.py --idle 1000 --requests 5
    python bench/web_load.py --abandon 100 --clients 1 --requests 5 --path /api/estimate

Dated figures go in docs/performance.md ("The web page").
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import http.client
import itertools
import math
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from urllib.parse import urlencode

SIZES = ["1", "3", "7", "8B", "13", "Llama-3.1-8B", "34", "Mixtral 8x7B", "70", "Qwen2.5-14B"]
METHODS = ["full", "lora", "qlora"]
EXTRAS: list[dict[str, str]] = [{}, {"deadline": "8"}, {"vram": "24"}, {"budget": "low"}, {"deadline": "2 days"},
                                {"vram": "RTX 3090", "interruptible": "yes"}, {"dataset": "50k", "epochs": "3"}]


def profiles() -> list[str]:
    """Query strings, all different: 10 sizes x 3 methods x 7 extras x 2 languages."""
    queries = []
    for size, method, extra, lang in itertools.product(SIZES, METHODS, EXTRAS, ("en", "es")):
        queries.append(urlencode({"model-size": size, "method": method, **extra, "lang": lang}))
    return queries


def rss_kb(pid: int) -> int:
    """The resident memory of ``pid`` and its children (the workers), in kB."""
    total = 0
    for each in [pid, *children(pid)]:
        try:
            with open(f"/proc/{each}/status", encoding="ascii") as fh:
                total += int(next(line for line in fh if line.startswith("VmRSS:")).split()[1])
        except (OSError, StopIteration):
            pass
    return total


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
            return [int(child) for child in fh.read().split()]
    except OSError:
        return []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def percentile(values: list[float], p: float) -> float:
    if not values:          # no request answered by the app (every one refused by the server itself)
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=40, help="requests per client")
    parser.add_argument("--path", default="/", help="/ (the page), /api/advise or /api/explain")
    parser.add_argument("--workers", type=int, default=None, help="expert serve --workers (default: its own)")
    parser.add_argument("--idle", type=int, default=0, help="sockets that send nothing during the load")
    parser.add_argument("--trickle", action="store_true", help="the idle sockets send a header line every 2 s")
    parser.add_argument("--abandon", type=int, default=0, help="page requests closed at once before the load")
    options = parser.parse_args()

    port = free_port()
    workers = ["--workers", str(options.workers)] if options.workers else []
    server = subprocess.Popen([sys.executable, "-m", "expert", "serve", "--port", str(port), *workers],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"expert serve did not start: {server.stderr.read().decode() if server.stderr else ''}") from None
                time.sleep(0.1)
        queries = profiles()
        warm = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for query in queries[::4]:      # the knowledge base loaded, the templates compiled, the engines built
            warm.request("GET", f"{options.path}?{query}")
            warm.getresponse().read()
        warm.close()
        before = rss_kb(server.pid)
        if options.abandon:     # heavy requests whose clients leave at once
            for query in queries[: options.abandon]:
                with socket.create_connection(("127.0.0.1", port)) as gone:
                    gone.sendall(f"GET /?{query}&why-not=h100-80gb HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(options.idle)]
        stop_trickle = threading.Event()

        def trickle() -> None:
            for held in idle:
                held.sendall(b"GET / HTTP/1.1\r\n")
            while not stop_trickle.wait(2.0):
                for held in idle:
                    with contextlib.suppress(OSError):
                        held.sendall(b"X-Slow: 1\r\n")

        trickler = threading.Thread(target=trickle, daemon=True)
        if options.trickle:
            trickler.start()

        server_ms: list[float] = []      # computing the answer (the library and the template)
        app_ms: list[float] = []         # in the server, with the wait for its consultation thread
        client_ms: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()

        def client(number: int) -> None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            for i in range(options.requests):
                query = queries[(number * options.requests + i) % len(queries)]
                started = time.perf_counter()
                try:
                    connection.request("GET", f"{options.path}?{query}")
                    response = connection.getresponse()
                    response.read()
                except (OSError, http.client.HTTPException) as error:
                    with lock:
                        errors.append(f"{type(error).__name__}: {error}")
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                    continue
                took = (time.perf_counter() - started) * 1000
                timing = re.search(r"compute;dur=([\d.]+), app;dur=([\d.]+)", response.getheader("server-timing", ""))
                with lock:
                    client_ms.append(took)
                    if response.status != 200:
                        errors.append(f"HTTP {response.status} for {query}")
                    if timing:
                        server_ms.append(float(timing.group(1)))
                        app_ms.append(float(timing.group(2)))
            connection.close()

        done = threading.Event()
        samples: list[int] = []           # the server's RSS, every second of the load

        def sample() -> None:
            while not done.wait(1.0):
                samples.append(rss_kb(server.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.perf_counter()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(options.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
        done.set()
        sampler.join()
        stop_trickle.set()
        closed = 0          # the idle sockets the server had closed by the end of the load
        for held in idle:
            held.setblocking(False)
            with contextlib.suppress(BlockingIOError, OSError):
                closed += held.recv(1) == b""
            held.close()
        after = rss_kb(server.pid)
    finally:
        server.terminate()
        server.wait(10)

    total = options.clients * options.requests
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}; expert serve ({'--workers ' + str(options.workers) if options.workers else 'default workers'}), GET {options.path}, "
          f"{options.clients} clients x {options.requests} requests = {total}, {len(queries)} different profiles")
    if options.idle:
        print(f"{options.idle} sockets {'trickling a header line every 2 s' if options.trickle else 'idle'} "
              f"during the load; {closed} of them closed by the server by its end")
    if options.abandon:
        print(f"{options.abandon} heavy page requests sent and abandoned before the load")
    print(f"errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    print(f"warm-up: {len(queries[::4])} requests")
    print(f"server time per consultation (computing it): p50 {percentile(server_ms, 50):.1f} ms, "
          f"p99 {percentile(server_ms, 99):.1f} ms, mean {statistics.fmean(server_ms or [math.nan]):.1f} ms")
    print(f"in the server, with the wait for its thread: p50 {percentile(app_ms, 50):.0f} ms, "
          f"p99 {percentile(app_ms, 99):.0f} ms")
    print(f"client time per request (queueing included): p50 {percentile(client_ms, 50):.0f} ms, "
          f"p99 {percentile(client_ms, 99):.0f} ms")
    print(f"answers: {total / wall:.1f} per second over {wall:.1f} s")
    middle = samples[len(samples) // 2] if samples else after
    print(f"server RSS: {before / 1024:.1f} MB after warm-up, {middle / 1024:.1f} MB half-way, "
          f"{after / 1024:.1f} MB after the load ({(after - before) / 1024:+.1f} MB; "
          f"at most {max(samples or [after]) / 1024:.1f} MB)")
    if errors:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from expert import advise, paths
from expert.explanation.result import Result
from expert.interfaces.api import knowledge_base


def pytest_configure(config: pytest.Config) -> None:
    """The processes the suite starts (xdist's workers, the ``expert`` commands and
    Python children the tests run) write their compiled bytecode, as Python
    does by default: a machine that sets PYTHONDONTWRITEBYTECODE (this one
    does) would otherwise have each of them compile the whole package again,
    about 0.2 s of CPU a process. Beside the sources (__pycache__), not in a
    folder of its own (PYTHONPYCACHEPREFIX): with a prefix, every module,
    the standard library's and the installed packages' too, is compiled
    again into it, 2-3 s of CPU for each process that starts before the
    prefix is filled (docs/development.md, "Tests").

    The cyclic garbage collector runs every 50,000 allocations, not every
    700: the suite keeps thousands of engine runs alive (SharedRuns), and
    each collection walked them again; it was a tenth of the suite's CPU
    (2026-12-07, test_golden, test_explain and test_consultation in one
    process: 3.55 of 31.6 s, 1,317 collections; then 0.77 s, 8 collections,
    the same peak memory, 137 MB). gc.collect() collects as before."""
    import gc

    from consultations import register  # EXPERT_TEST_CONSULTATIONS=FILE: the consultations each test runs

    register(config)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    gc.set_threshold(50_000, 20, 10)
    # No test touches the Hugging Face Hub or the person's own cache and token: the Hub is a closed port of
    # the loopback (tests/test_hub.py points HF_ENDPOINT at its own server), its cache and token file a
    # folder of this run; the processes the tests start inherit all three.
    import tempfile

    home = tempfile.mkdtemp(prefix="expert-test-hf-")
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))
    os.environ["HF_HOME"] = home
    os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_CACHE", "HF_TOKEN_PATH"):
        os.environ.pop(name, None)


# The files that take the longest wall time (Chromium, the page's links), run first. xdist hands whole
# files to its workers in the order they are collected (--dist loadfile), and these sort near the end:
# one of them started last kept one worker busy alone for its last 20-30 s while the other had finished.
LONGEST_FIRST = ("tests/test_web_browser.py", "tests/test_web.py")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))    # stable: the rest as collected


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="list the N tests that took the most CPU time (their own and their child "
                          "processes'), and the suite's total (docs/development.md, \"Tests\")")


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children waited for: what a
    loaded machine does not stretch, unlike the wall time --durations lists."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Each test's CPU seconds, setup and teardown included, carried to the
    process that reports (xdist's controller) in its last report."""
    if item.config.getoption("--cpu-durations") is None:
        yield
        return
    start = _cpu_seconds()
    item.user_properties.append(("cpu_start", start))
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield
    starts = [value for name, value in item.user_properties if name == "cpu_start"]
    if starts:
        item.user_properties.append(("cpu_seconds", _cpu_seconds() - starts[-1]))


_CPU: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == "cpu_seconds" and report.when == "teardown":
            _CPU[report.nodeid] = value


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    shown = config.getoption("--cpu-durations")
    if shown is None or not _CPU:
        return
    terminalreporter.write_sep("=", f"most CPU time: {shown} of {len(_CPU)} tests")
    for nodeid, seconds in sorted(_CPU.items(), key=lambda kv: -kv[1])[:shown]:
        terminalreporter.write_line(f"{seconds:8.2f}s cpu  {nodeid}")
    terminalreporter.write_line(f"{sum(_CPU.values()):8.2f}s cpu  in the tests (setup and teardown included; "
                                "not the collection or the workers' start)")


def edited_rules(tmp_path: Path, *edits: tuple[str, str, str]) -> Path:
    """A copy of rules/ in ``tmp_path`` with each (file, old, new) edit made
    once; an ``old`` text the file no longer holds fails the test."""
    base = tmp_path / "rules"
    shutil.copytree(paths.RULES, base)
    for filename, old, new in edits:
        target = base / filename
        text = target.read_text(encoding="utf-8")
        assert old in text, old
        target.write_text(text.replace(old, new, 1), encoding="utf-8")
    return base


class Work:
    """The engine runs made while counting (``counting_work``), and what they did."""

    def __init__(self) -> None:
        self.runs: list[Any] = []

    def within(self, per_card: int = 60, fixed: int = 200) -> bool:
        """Did every run do work linear in its catalog: at most ``per_card``
        facts declared, rules fired and pairs tried by its joins per card,
        plus ``fixed``? A card proposes, climbs its method's ladder and tries
        the counts of ranking.toml: a bounded number of steps each."""
        return all(max(run.declared, len(run.firings), run.compared) <= per_card * len(run.options) + fixed
                   for run in self.runs)


@contextlib.contextmanager
def counting_work() -> Iterator[Work]:
    """Count the engine's work (facts, firings, pairs tried) instead of the
    clock: a slow machine cannot fail it, a quadratic rule cannot pass it."""
    from expert.inference import engine

    work, infer = Work(), engine.infer

    def counted(*args: Any, **kwargs: Any) -> Any:
        work.runs.append(infer(*args, **kwargs))
        return work.runs[-1]

    engine.infer = counted
    try:
        yield work
    finally:
        engine.infer = infer


class Steps:
    """The Python steps counted while a ``python_steps()`` block ran."""

    def __init__(self) -> None:
        self.count = 0


@contextlib.contextmanager
def python_steps() -> Iterator[Steps]:
    """Count the work of the Python code the block runs: every call and
    every line (``sys.settrace``), in this thread, instead of the clock: a
    loaded machine cannot fail it, a loop over the input cannot hide from
    it. Code in C (a regular expression's matching, ``str.find``) counts as
    the line that calls it."""
    import sys

    steps, before = Steps(), sys.gettrace()

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        steps.count += 1
        return tracer

    sys.settrace(tracer)
    try:
        yield steps
    finally:
        sys.settrace(before)


@pytest.fixture(scope="session")
def kb():  # type: ignore[no-untyped-def]
    return knowledge_base()


def fired(result: Result, rule: str, gpu: str | None = None) -> bool:
    """Did ``rule`` fire (on ``gpu``, for rules about one card)?"""
    for step in result.trace:
        if step.rule != rule:
            continue
        if gpu is None:
            return True
        matched = [m for m in step.matched if m["fact"] == "option"]
        derived = [d for d in step.derived if d["values"].get("gpu") == gpu]
        if derived or any(m["values"].get("gpu") == gpu for m in matched):
            return True
    return False


def run(**profile: Any) -> Result:
    profile.setdefault("lang", "en")
    return advise(**profile)


@contextlib.contextmanager
def made_once(owner: Any, name: str) -> Iterator[dict[str, Any]]:
    """``owner.name`` (``explain`` of its module, say) answering each set of
    arguments once while the block runs, the same object every time after
    the first: for tests that ask the same question many times to check what
    is done with the answer (a flag, a colour, a format), not the answer.
    Yields what was made, by arguments."""
    made: dict[str, Any] = {}
    real = getattr(owner, name)

    def once(*args: Any, **kwargs: Any) -> Any:
        key = repr((args, sorted(kwargs.items())))
        if key not in made:
            made[key] = real(*args, **kwargs)
        return made[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(owner, name, once)
        yield made


class SharedRuns:
    """The engine's entry point, ``infer``, answering the same facts on the
    same knowledge base (the same object) with the run it made the first
    time: the engine gives the same run for the same facts, whatever ran
    before and whatever the hash seed (tests/test_embedding.py holds it to
    that), and nothing outside the engine changes a run (a Run is read,
    never written, by the explanation and the interfaces). The runs of the
    last few knowledge bases are kept: each knowledge base is kept with its
    runs (a run holds it), so its id stays its own."""

    def __init__(self, real: Any, bases: int = 8) -> None:
        self.real = real
        self.bases = bases
        self.runs: OrderedDict[int, tuple[Any, dict[tuple[str, ...], Any]]] = OrderedDict()
        self.lock = threading.Lock()

    def __call__(self, kb: Any, profile: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        key = (repr(sorted(profile.items())), repr(args), repr(sorted(kwargs.items())))
        with self.lock:
            _, runs = self.runs.setdefault(id(kb), (kb, {}))
            self.runs.move_to_end(id(kb))
            while len(self.runs) > self.bases:
                self.runs.popitem(last=False)
            run = runs.get(key)
        if run is None:
            run = self.real(kb, profile, *args, **kwargs)
            with self.lock:
                run = runs.setdefault(key, run)
        return run


@pytest.fixture(scope="session", autouse=True)
def engine_runs_shared() -> Iterator[None]:
    """Every test of a process reads the engine's runs through one
    ``SharedRuns``: a consultation the suite asks again (the same profile in
    another language, format or test) is read, not run again: about a
    fifth of the engine's runs, 5 % of the suite's CPU measured side by side
    against sharing module by module (docs/development.md). A test of
    the engine itself (threads, caches, counting its runs) is marked
    ``fresh_runs`` and runs it for itself; EXPERT_TEST_FRESH_RUNS=1 runs
    every test so (docs/development.md, "Tests")."""
    from expert.inference import engine

    if os.environ.get("EXPERT_TEST_FRESH_RUNS") == "1" or not hasattr(engine, "infer"):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "infer", SharedRuns(engine.infer))
        yield


@pytest.fixture(autouse=True)
def runs_fresh_where_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """The engine run afresh by a test marked ``fresh_runs``."""
    from expert.inference import engine

    shared = getattr(engine, "infer", None)
    if request.node.get_closest_marker("fresh_runs") is None or not isinstance(shared, SharedRuns):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "infer", shared.real)
        yield


@contextlib.contextmanager
def priced_once() -> Iterator[None]:
    """While the block runs, the knowledge base with the prices a person
    gives (``prices=``) is the same object for the same knowledge base and
    prices, as the knowledge base itself is (knowledge_base() keeps it): so
    that the shared runs (``SharedRuns``) of a priced consultation are read
    again too (they know a knowledge base by its id; with_prices() makes a
    new, equal, one every call). Were with_prices renamed, every one is made."""
    import importlib

    arguments, api, explain = (importlib.import_module(f"expert.{name}") for name in (
        "input.arguments", "interfaces.api", "application"))
    real = getattr(arguments, "with_prices", None)
    if real is None:
        yield
        return
    made: dict[tuple[int, str], tuple[Any, Any]] = {}

    def once(kb: Any, prices: Any, tr: Any) -> Any:
        if not prices:
            return real(kb, prices, tr)
        key = (id(kb), repr(sorted(prices.items())) if hasattr(prices, "items") else repr(prices))
        if key not in made:
            made[key] = (kb, real(kb, prices, tr))   # the kb kept, so that its id stays its own
        return made[key][1]

    with pytest.MonkeyPatch.context() as patch:
        for module in (arguments, api, explain):
            if getattr(module, "with_prices", None) is real:
                patch.setattr(module, "with_prices", once)
        yield


@contextlib.contextmanager
def expert_serving(command: tuple[str, ...], *args: str, before: str = "") -> Iterator[int]:
    """`python -m expert COMMAND --port P ARGS` on a free loopback port P, once it
    accepts connections (a loaded machine starts it slowly: up to 60 s), until
    the block ends (tests/hostile/test_serving.py, tests/test_mcp_sessions.py).
    ``before``: Python run in that process before the command (a test's shorter
    limit), the command then run as `python -m expert` runs it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    start = ["-c", f"{before}\nfrom expert.interfaces.cli.main import run\nrun()"] if before else ["-m", "expert"]
    folder = Path(tempfile.mkdtemp(prefix="expert-serving-"))
    SERVER_LOGS[port] = folder / "stderr"
    with SERVER_LOGS[port].open("ab") as log:        # appended to: reading it moves no writer's offset
        server = subprocess.Popen([sys.executable, *start, *command, "--port", str(port), *args],
                                  stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=20)
        del SERVER_LOGS[port]
        shutil.rmtree(folder, ignore_errors=True)


SERVER_LOGS: dict[int, Path] = {}


def server_log(port: int, most: int = 4000) -> str:
    """The last ``most`` characters the server :func:`expert_serving` started on ``port`` wrote to its
    stderr so far (a failing test's message: what the server logged, the cause of a tool's error)."""
    return SERVER_LOGS[port].read_bytes().decode("utf-8", "replace")[-most:]

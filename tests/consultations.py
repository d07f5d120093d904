"""Count the consultations each test runs (``EXPERT_TEST_CONSULTATIONS=FILE``).

A pytest plugin that tests/conftest.py registers when the variable is set:
it wraps the application's entry points (``expert.application``: ``consult``,
``explain``, ``run_rules`` and ``Reruns.alone``, and the copies of ``consult``
the interfaces import by name) and records, per test, each consultation's
kind (advise, explain, why-not, what-if, provisional), CPU seconds and a key
of its arguments (the kind, the catalog's cards, the language, the answers,
the basis and the cards it was limited to), the engine's runs actually made
(the rest were read from ``SharedRuns``) and their CPU, the knowledge bases
loaded, and when each test ended in which process (are xdist's workers done
together?).
Each process appends one JSON line per test to FILE; then

    python tests/consultations.py FILE

prints the table: by file, the consultations, their distinct keys, their CPU
and the engine's runs; the keys most repeated across tests; the tests that
consult the default market (its 23 cards). The processes the tests start
(the CLI's, the servers) are not counted. The CPU of an ``explain`` includes
its reruns; a rerun's own CPU is also listed under its kind, so sum by kind,
not across kinds. Count the suite as it is run (README's command, xdist's
workers): in one process (``-n0``) some property tests draw other examples
(tests/hostile/test_escapes.py's ``test_explain``: 4.7 s there, 0.3 s on a
worker), and SharedRuns shares runs across more files.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import importlib
import json
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

_kind: contextvars.ContextVar[str | None] = contextvars.ContextVar("kind", default=None)
_records: list[dict[str, Any]] = []
_counts: Counter[str] = Counter()


def _catalog(kb: Any) -> str:
    ids = sorted(card.id for card in kb.catalog)
    return f"{len(ids)} cards {hashlib.sha1(' '.join(ids).encode()).hexdigest()[:6]}"


def _shown(value: Any) -> str:
    try:
        return repr(value)[:80]
    except ValueError:      # an integer too long to write (hostile tests give them)
        return f"<{type(value).__name__}>"


def _key(kind: str, kb: Any, given: Any, lang: str, *rest: Any) -> str:
    answers = sorted((k, _shown(v)) for k, v in dict(given).items() if v is not None)
    return repr((kind, _catalog(kb), lang, answers, *rest))


def _timed(kind: str, key: str, call: Any) -> Any:
    outer = _kind.get()
    token, start = _kind.set(kind), time.process_time()
    try:
        return call()
    finally:
        _records.append({"kind": kind, "key": key, "cpu": time.process_time() - start,
                         "nested": outer is not None})
        _kind.reset(token)


def _rerun_kind() -> str:
    outer = _kind.get()
    return outer if outer in ("why-not", "what-if") else ("advise" if outer is None else f"{outer}/consult")


class _Plugin:
    def __init__(self, path: str) -> None:
        self.path = path
        self.patch = pytest.MonkeyPatch()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        application = importlib.import_module("expert.application")
        explain_module = importlib.import_module("expert.explanation.explain")
        bases = importlib.import_module("expert.knowledge.bases")
        consult, explain, run_rules = application.consult, application.explain, application.run_rules
        alone = application.Reruns.alone

        def counted_consult(kb: Any, given: Any, tr: Any, basis: str = "checked", model_config: Any = None,
                            only: Any = None) -> Any:
            kind = _rerun_kind()
            return _timed(kind, _key(kind, kb, given, tr.lang, basis, sorted(only or ())),
                          lambda: consult(kb, given, tr, basis, model_config, only))

        def counted_explain(**arguments: Any) -> Any:
            key = repr(("explain", sorted((k, _shown(v)) for k, v in arguments.items() if v is not None)))
            return _timed("explain", key, lambda: explain(**arguments))

        def counted_rules(kb: Any, profile: Any) -> Any:
            return _timed("provisional", _key("provisional", kb, profile, "-"), lambda: run_rules(kb, profile))

        def counted_alone(self: Any, given: Any, gpu: str) -> Any:
            return _timed("why-not", _key("why-not alone", self.kb, given, self.tr.lang, gpu),
                          lambda: alone(self, given, gpu))

        for counted, real in ((counted_consult, consult), (counted_explain, explain), (counted_rules, run_rules)):
            functools.update_wrapper(counted, real)     # the signature too (tests/hostile/test_escapes.py reads it)
        for name in ("why_not", "what_if"):
            real = getattr(explain_module.Explainer, name)

            def within(self: Any, *args: Any, _real: Any = real, _kind_name: str = name.replace("_", "-")) -> Any:
                token = _kind.set(_kind_name)
                try:
                    return _real(self, *args)
                finally:
                    _kind.reset(token)

            self.patch.setattr(explain_module.Explainer, name, within)
        self.patch.setattr(application.Reruns, "alone", counted_alone)
        for module in list(sys.modules.values()):
            if not getattr(module, "__name__", "").startswith("expert"):
                continue
            for name, real, counted in (("consult", consult, counted_consult), ("explain", explain, counted_explain),
                                        ("run_rules", run_rules, counted_rules)):
                if getattr(module, name, None) is real:
                    self.patch.setattr(module, name, counted)
        for name in ("load", "load_shipped", "with_catalogs"):
            real = getattr(bases, name)

            def loaded(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
                _counts[f"kb {_name}"] += 1
                return _real(*args, **kwargs)

            self.patch.setattr(bases, name, loaded)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        from expert.inference import engine

        shared, made, engine_cpu = getattr(engine, "infer", None), [0], [0.0]
        real = getattr(shared, "real", None)
        if real is not None:
            def counted(*args: Any, **kwargs: Any) -> Any:
                made[0] += 1
                start = time.process_time()
                try:
                    return real(*args, **kwargs)
                finally:
                    engine_cpu[0] += time.process_time() - start
            shared.real = counted     # type: ignore[union-attr]
        _records.clear()
        _counts.clear()
        start = time.process_time()
        yield
        if real is not None:
            shared.real = real       # type: ignore[union-attr]
        line = {"test": item.nodeid, "cpu": time.process_time() - start, "engine_runs": made[0],
                "engine_cpu": engine_cpu[0],
                "worker": os.environ.get("PYTEST_XDIST_WORKER", "-"), "end": time.time(),
                "counts": dict(_counts), "consultations": list(_records)}
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.patch.undo()


def register(config: pytest.Config) -> None:
    path = os.environ.get("EXPERT_TEST_CONSULTATIONS")
    if path:
        config.pluginmanager.register(_Plugin(os.path.abspath(path)), "expert-consultations")


def table(path: str, shown: int = 25) -> str:
    with open(path, encoding="utf-8") as lines:
        tests = [json.loads(line) for line in lines]
    by_file: dict[str, dict[str, Any]] = defaultdict(lambda: {"tests": 0, "n": 0, "keys": set(), "cpu": 0.0,
                                                                "test_cpu": 0.0, "runs": 0, "market": 0})
    key_tests: dict[str, set[str]] = defaultdict(set)
    key_calls: Counter[str] = Counter()
    key_cpu: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    kind_cpu: Counter[str] = Counter()
    market: dict[str, list[Any]] = defaultdict(lambda: [0, 0.0])
    loads: Counter[str] = Counter()
    for test in tests:
        row = by_file[test["test"].split("::", 1)[0]]
        row["tests"] += 1
        row["test_cpu"] += test["cpu"]
        row["runs"] += test["engine_runs"]
        loads.update(test["counts"])
        for c in test["consultations"]:
            row["n"] += 1
            row["keys"].add(c["key"])
            kinds[c["kind"]] += 1
            kind_cpu[c["kind"]] += c["cpu"]
            key_tests[c["key"]].add(test["test"])
            key_calls[c["key"]] += 1
            key_cpu[c["key"]] += c["cpu"]
            if not c["nested"]:
                row["cpu"] += c["cpu"]
            if "'23 cards" in c["key"] and (not c["nested"] or c["kind"] == "explain/consult"):
                row["market"] += 1
                market[test["test"]][0] += 1
                market[test["test"]][1] += c["cpu"]
    out = [f"{'file':48} {'tests':>5} {'consult.':>8} {'keys':>6} {'cpu s':>7} {'test cpu':>8} {'engine':>6} "
           f"{'on 23':>6}"]
    quiet = [name for name, row in by_file.items() if not row["n"] and row["test_cpu"] < 1]
    for name, row in sorted(by_file.items(), key=lambda kv: -kv[1]["cpu"]):
        if name in quiet:
            continue
        out.append(f"{name:48} {row['tests']:5} {row['n']:8} {len(row['keys']):6} {row['cpu']:7.1f} "
                   f"{row['test_cpu']:8.1f} {row['runs']:6} {row['market']:6}")
    total = {k: sum(r[k] for r in by_file.values()) for k in ("tests", "n", "cpu", "test_cpu", "runs", "market")}
    distinct = len(set().union(*(r["keys"] for r in by_file.values())))
    out.append(f"{'all':48} {total['tests']:5} {total['n']:8} {distinct:6} {total['cpu']:7.1f} "
               f"{total['test_cpu']:8.1f} {total['runs']:6} {total['market']:6}")
    out.append(f"({len(quiet)} more files: no consultation, under 1 s each)")
    out.append(f"the engine's own runs: {sum(t.get('engine_cpu', 0.0) for t in tests):.1f} s of CPU "
               "(inside the consultations' CPU above)")
    out.append("\nby kind (calls, cpu s; a rerun's cpu is inside its explain's too):")
    out.extend(f"  {kind:20} {kinds[kind]:6} {kind_cpu[kind]:7.1f}" for kind in sorted(kinds, key=lambda k: -kind_cpu[k]))
    out.append(f"\nknowledge-base loads: {dict(loads)}")
    ends: dict[str, float] = {}
    for test in tests:
        ends[test.get("worker", "-")] = max(ends.get(test.get("worker", "-"), 0.0), test.get("end", 0.0))
    first = min(ends.values())
    out.append("each process's last test ended (s after the first to end): "
               + ", ".join(f"{worker} +{end - first:.1f}" for worker, end in sorted(ends.items())))
    out.append("\nkeys asked in most tests (tests, files, calls, cpu s, key):")
    for key in sorted(key_tests, key=lambda k: (-len(key_tests[k]), -key_cpu[k]))[:shown]:
        files = {t.split("::", 1)[0] for t in key_tests[key]}
        out.append(f"  {len(key_tests[key]):4} {len(files):3} {key_calls[key]:5} {key_cpu[key]:6.2f}  {key[:150]}")
    out.append("\ntests consulting the 23 cards (top-level calls, cpu s):")
    out.extend(f"  {n:4} {cpu:6.2f}  {test}" for test, (n, cpu) in sorted(market.items(), key=lambda kv: -kv[1][1])[:shown])
    return "\n".join(out)


if __name__ == "__main__":
    print(table(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25))

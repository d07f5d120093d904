from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from expert import advise, paths
from expert.interfaces.api import knowledge_base
from expert.explanation.result import Result


def pytest_configure(config: pytest.Config) -> None:
    """The processes the suite starts (xdist's workers, the ``expert`` commands and
    Python children the tests run) keep their compiled bytecode in
    .pytest_cache/pycache, not beside the sources. A machine that sets
    PYTHONDONTWRITEBYTECODE (this one does) would otherwise have each of them
    compile the whole package again: about 0.2 s of CPU a process."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(config.rootpath / ".pytest_cache" / "pycache")


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


@contextlib.contextmanager
def engine_runs_shared() -> Iterator[None]:
    """While the block runs, the engine runs once for the same facts on the
    same knowledge base (the same object) and the run is read again after
    that: for tests of what is made of a run (words, languages, formats,
    escaping), not of the run itself. Were the engine's entry point renamed,
    every run is made, as without this."""
    from expert.inference import engine

    infer = getattr(engine, "infer", None)
    if infer is None:
        yield
        return
    runs: dict[tuple[Any, ...], tuple[Any, Any]] = {}

    def once(kb: Any, profile: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        key = (id(kb), repr(sorted(profile.items())), repr(args), repr(sorted(kwargs.items())))
        if key not in runs:
            runs[key] = (kb, infer(kb, profile, *args, **kwargs))   # the kb kept, so that its id stays its own
        return runs[key][1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "infer", once)
        yield



@pytest.fixture(scope="module")
def runs_shared_in_module() -> Iterator[None]:
    """``engine_runs_shared()`` for a whole module: a module whose tests read
    what is made of the engine's runs, or ask the same consultation twice,
    says ``pytestmark = pytest.mark.usefixtures("runs_shared_in_module")``
    with its reason beside it. The engine gives the same run for the same
    facts (tests/test_embedding.py holds it to that)."""
    with engine_runs_shared():
        yield

@contextlib.contextmanager
def priced_once() -> Iterator[None]:
    """While the block runs, the knowledge base with the prices a person
    gives (``prices=``) is the same object for the same knowledge base and
    prices, as the knowledge base itself is (knowledge_base() keeps it): so
    that ``engine_runs_shared()`` shares the runs of a priced consultation
    too (it knows a knowledge base by its id; with_prices() makes a new,
    equal, one every call). Were with_prices renamed, every one is made."""
    import importlib

    arguments, api, explain = (importlib.import_module(f"expert.{name}") for name in (
        "input.arguments", "interfaces.api", "explanation.explain"))
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

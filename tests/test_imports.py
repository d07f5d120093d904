"""The modules depend on each other one way: api -> result -> templating <- render,
and the knowledge base (expert/knowledge/) on nothing but conditions, errors, paths and
cachedir (the user's cache folder, where the shipped knowledge base is kept).

A result renders itself with the environment of :mod:`expert.explanation.templating`;
:mod:`expert.explanation.render` (explanations, estimates) takes the knowledge base it
needs from its arguments. Imports inside functions count too: a lazy import
is still a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

EXPERT = Path(__file__).resolve().parent.parent / "expert"


def imported(module: str) -> set[str]:
    """Every module ``module`` imports, at the top or inside a function, as an absolute name."""
    path = EXPERT.parent.joinpath(*module.split(".")).with_suffix(".py")
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = ".".join(module.split(".")[:-node.level])
                base = f"{parent}.{base}" if base else parent
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}    # from . import api
    return names


@pytest.mark.parametrize("module, forbidden", [
    ("expert.explanation.render", {"expert.interfaces.api"}),
    ("expert.explanation.result", {"expert.explanation.render", "expert.interfaces.api"}),
    ("expert.explanation.templating", {"expert.explanation.result", "expert.explanation.render", "expert.interfaces.api"}),
])
def test_imports_go_one_way(module: str, forbidden: set[str]) -> None:
    assert imported(module) & forbidden == set()


def test_the_check_sees_lazy_imports() -> None:
    assert "expert.interfaces.api" in imported("expert.explanation.explain")
    assert "expert.explanation.render" in imported("expert.explanation.explain")    # inside Explanation.render


@pytest.mark.parametrize("module", ["expert.knowledge.__init__", "expert.knowledge.records", "expert.knowledge.source", "expert.knowledge.load",
                                    "expert.knowledge.catalog", "expert.knowledge.cache"])
def test_the_knowledge_base_stands_on_its_own(module: str) -> None:
    top = {".".join(name.split(".")[:2]) for name in imported(module) if name.startswith("expert")}
    assert top <= {"expert", "expert.knowledge", "expert.knowledge.conditions", "expert.errors", "expert.paths", "expert.cachedir"}

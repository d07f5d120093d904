"""The package is in layers, and its modules import one way (docs/development.md, "Layout").

Every module of ``expert/`` (the vendored experta aside) belongs to one layer:

    ground -> knowledge -> input -> inference -> explanation -> application -> interfaces -> the package root

The application (``expert.application``) is the one place that runs a
consultation: it reads the input, runs the engine and has the explanation
word what the engine recorded; nothing below it runs the engine.

A module imports only modules of its own layer or of the layers before it.
Imports inside functions count as much as those at the top (a lazy import is
still a dependency), and so do those under ``if TYPE_CHECKING``. No two
modules import each other, directly or round a longer cycle; and no module
takes a private name (``_name``) from another, neither by ``from m import
_name`` nor as ``m._name``.

The graph is read with :mod:`ast` from the files themselves, so it sees what
runs and what only type-checks alike.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

EXPERT = Path(__file__).resolve().parent.parent / "expert"
# The ground every layer stands on: modules at the package's root.
GROUND = {"expert.errors", "expert.escape", "expert.paths", "expert.cachedir", "expert.i18n", "expert.version"}
LAYERS = ("ground", "knowledge", "input", "inference", "explanation", "application", "interfaces", "root")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(EXPERT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(EXPERT.rglob("*.py")) if "_vendor" not in path.parts}


def layer(module: str) -> str:
    if module in GROUND:
        return "ground"
    if module in ("expert", "expert.__main__"):
        return "root"
    return module.split(".")[1]


def imports_in(module: str, tree: ast.AST) -> tuple[tuple[str, int, str, str], ...]:
    """What ``module`` (its syntax tree) imports from the package, at the top or
    inside a function: (the module imported, the line, the name taken from it
    or "" for the module itself, the local name it is bound to)."""
    package = module if MODULES.get(module, Path()).name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, "", alias.asname or "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:       # from . import api: the module itself
                    found.append((f"{base}.{alias.name}", node.lineno, "", alias.asname or alias.name))
                else:
                    found.append((base, node.lineno, alias.name, alias.asname or alias.name))
    return tuple(entry for entry in found if entry[0].split(".")[0] == "expert" and not entry[0].startswith("expert._vendor"))


@cache
def tree_of(module: str) -> ast.AST:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"))


def imports(module: str) -> tuple[tuple[str, int, str, str], ...]:
    return imports_in(module, tree_of(module))


def edges(module: str) -> set[str]:
    return {name for name, _, _, _ in imports(module) if name in MODULES and name != module}


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_every_import_names_a_module_of_the_package() -> None:
    unknown = [f"{module}:{line} {name}" for module in MODULES for name, line, _, _ in imports(module)
               if name not in MODULES]
    assert unknown == []


def test_every_module_has_a_layer() -> None:
    assert {module: layer(module) for module in MODULES if layer(module) not in LAYERS} == {}


def test_imports_follow_the_layers() -> None:
    upward = [f"{module}:{line} ({layer(module)}) imports {name} ({layer(name)})"
              for module in MODULES for name, line, _, _ in imports(module)
              if name in MODULES and LAYERS.index(layer(name)) > LAYERS.index(layer(module))]
    assert upward == []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of ``graph`` a depth-first search meets: a module met again on
    the current path closes one, given from that module round to it."""
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            found.append([*path[path.index(module):], module])
            return
        if module in done:
            return
        for name in sorted(graph.get(module, ())):
            visit(name, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    return found


def test_no_import_cycles() -> None:
    assert [" -> ".join(cycle) for cycle in cycles({module: edges(module) for module in MODULES})] == []


def test_the_cycle_search_finds_cycles() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def privates_taken(module: str, tree: ast.AST) -> list[str]:
    """The private names ``module`` takes from other modules of the package."""
    found = imports_in(module, tree)
    as_module = {bound: name for name, _, taken_name, bound in found if not taken_name and bound}
    taken = [f"{module}:{line} from {name} import {each}" for name, line, each, _ in found
             if name != module and private(each)]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in as_module
                and as_module[node.value.id] != module and private(node.attr)):
            taken.append(f"{module}:{node.lineno} {as_module[node.value.id]}.{node.attr}")
    return taken


def test_no_private_names_across_modules() -> None:
    assert [taken for module in MODULES for taken in privates_taken(module, tree_of(module))] == []


def test_the_checks_see_what_they_forbid() -> None:
    """A module of the knowledge layer that imports the interfaces and takes
    private names three ways: each is found."""
    source = ("from ..interfaces.api import advise\n"
              "from .source import _read, Problems\n"
              "from . import catalog\n"
              "def f():\n"
              "    import expert.knowledge.load as load\n"
              "    return catalog._Card, load._shape, catalog.with_catalogs, _read\n")
    tree = ast.parse(source)
    module = "expert.knowledge.example"
    upward = [name for name, _, _, _ in imports_in(module, tree) if LAYERS.index(layer(name)) > LAYERS.index(layer(module))]
    assert upward == ["expert.interfaces.api"]
    assert privates_taken(module, tree) == [
        "expert.knowledge.example:2 from expert.knowledge.source import _read",
        "expert.knowledge.example:6 expert.knowledge.catalog._Card",
        "expert.knowledge.example:6 expert.knowledge.load._shape",
    ]


def test_only_the_application_runs_a_consultation() -> None:
    # The engine's infer() and the profile's build() are called from the application, not from the
    # explanation (which words what the engine recorded) nor from the interfaces (which call the application).
    runners = sorted(module for module in MODULES for name, _, taken, _ in imports(module)
                     if (name, taken) in {("expert.inference.engine", ""), ("expert.inference", "engine")}
                     and layer(module) in ("explanation", "interfaces"))
    assert runners == []
    assert "expert.inference.engine" in {name for name, _, _, _ in imports("expert.application")}


@pytest.mark.parametrize("module, lazily", [
    ("expert.explanation.explain", "expert.explanation.render"),      # inside Explanation.render
    ("expert", "expert.interfaces.api"),                               # the package root's __getattr__
])
def test_the_check_sees_lazy_imports(module: str, lazily: str) -> None:
    assert lazily in edges(module)

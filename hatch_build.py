"""Build products of the package, made on every build and (editable) install.

- The gettext catalogs (``locales/*/LC_MESSAGES/*.po``) compiled into ``.mo``,
  written beside their ``.po`` (git ignores them) and shipped inside the wheel
  as ``expert/locales``. A catalog with errors (a broken placeholder, a fuzzy
  or missing translation) stops the build instead of shipping English in
  place of Spanish.
- ``expert/_prebuilt/``: the parsed knowledge base, the compiled templates
  and the CLDR data expert formats with, so that a process does not redo
  that work (see ``expert/prebuilt.py``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def compile_catalogs(root: Path) -> list[Path]:
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    written = []
    for po_path in sorted((root / "locales").glob("*/LC_MESSAGES/*.po")):
        with po_path.open("rb") as fh:
            catalog = read_po(fh, locale=po_path.parent.parent.name)
        problems = []
        for message, errors in catalog.check():
            problems += [f"{po_path}: {message.id!r}: {error}" for error in errors]
        for message in catalog:
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            if message.id and (message.fuzzy or not all(strings)):
                problems.append(f"{po_path}: {message.id!r}: not translated")
        if problems:
            raise SystemExit("\n".join(problems))
        mo_path = po_path.with_suffix(".mo")
        with mo_path.open("wb") as fh:
            write_mo(fh, catalog)
        written.append(mo_path)
    return written


def build_prebuilt(root: Path) -> list[Path]:
    # expert/templating.py and expert/prebuilt.py are loaded on their own, by
    # path: the package itself needs experta, which the build does not have.
    def load(name: str) -> Any:
        spec = importlib.util.spec_from_file_location(f"_expert_build_{name}", root / "expert" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load("prebuilt").build(root / "expert" / "_prebuilt", rules=root / "rules",
                                  templates=root / "expert" / "templates",
                                  new_environment=load("templating").new_environment)


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        compile_catalogs(Path(self.root))
        build_prebuilt(Path(self.root))

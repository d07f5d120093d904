"""The build hook, run on every build and (editable) install: the gettext
catalogs (``locales/*/LC_MESSAGES/*.po``) compiled into ``.mo``, written
beside their ``.po`` (git ignores them) and shipped inside the wheel as
``expert/locales``. A catalog with errors (a broken placeholder, a fuzzy or
missing translation) stops the build instead of shipping English in place of
Spanish.
"""

from __future__ import annotations

import os
from pathlib import Path

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
        # Written whole, then renamed over the old one: a build (a wheel, an editable install) beside a
        # running `expert` must never let it read half a catalog. Writing in place did: a Spanish tool
        # call of `expert mcp` failed while the suite built a wheel from the same tree (2026-12-08).
        temporary = mo_path.with_name(f".{mo_path.name}.{os.getpid()}.tmp")
        try:
            with temporary.open("wb") as fh:
                write_mo(fh, catalog)
            os.replace(temporary, mo_path)
        finally:
            temporary.unlink(missing_ok=True)
        written.append(mo_path)
    return written


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        compile_catalogs(Path(self.root))

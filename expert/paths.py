"""Where the knowledge base and the catalogs are.

Installed from a wheel they live inside the package (``expert/rules``,
``expert/locales``); in a source checkout (editable install, tests) they are
the top-level ``rules/`` and ``locales/`` beside the package.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    inside = PACKAGE / name
    return inside if inside.is_dir() else PACKAGE.parent / name


RULES = data_dir("rules")
LOCALES = data_dir("locales")
TEMPLATES = PACKAGE / "explanation" / "templates"

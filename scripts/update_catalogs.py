"""Extract every user-facing message into locales/messages.pot and merge it
into each language's .po (run after changing a message; then translate the
new or fuzzy entries and run the tests).

    python scripts/update_catalogs.py

Sources: the package's Python code (gettext, ngettext, _, and the error
helpers that take a message template), the jinja2 templates, and the
knowledge base (rule messages, field and code labels).
"""

from __future__ import annotations

import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from expert import knowledge as kb  # noqa: E402

KEYWORDS = {**DEFAULT_KEYWORDS, "error": None, "add": (3,), "bad": (2,)}
METHODS = [("**.py", "python"), ("**/templates/**.j2", "jinja2")]
OPTIONS = {"**/templates/**.j2": {"extensions": "jinja2.ext.i18n", "trim_blocks": "true"}}


def extract() -> Catalog:
    catalog = Catalog(project="expert", msgid_bugs_address="", copyright_holder="", charset="utf-8")
    for filename, lineno, message, comments, _ in extract_from_dir(
            ROOT / "expert", METHODS, keywords=KEYWORDS, options_map=OPTIONS, strip_comment_tags=True):
        catalog.add(message, locations=[(f"expert/{filename}", lineno)], auto_comments=comments)
    base = kb.load(ROOT / "rules")
    for message in base.messages():
        catalog.add(message, locations=[("rules", 0)])
    return catalog


def main() -> None:
    template = extract()
    with (ROOT / "locales" / "messages.pot").open("wb") as fh:
        write_po(fh, template, width=100, omit_header=False, sort_output=False)
    for po_path in sorted((ROOT / "locales").glob("*/LC_MESSAGES/messages.po")):
        with po_path.open("rb") as fh:
            catalog = read_po(fh, locale=po_path.parent.parent.name)
        catalog.update(template, no_fuzzy_matching=True)
        with po_path.open("wb") as fh:
            write_po(fh, catalog, width=100, ignore_obsolete=True)
        missing = sum(1 for m in catalog if m.id and (not m.string or m.fuzzy))
        print(f"{po_path.relative_to(ROOT)}: {len(catalog)} messages, {missing} to translate")
    print(f"locales/messages.pot: {len(template)} messages")


if __name__ == "__main__":
    main()

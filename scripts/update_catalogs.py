"""Extract every user-facing message into locales/messages.pot and merge it
into each language's .po (run after changing a message; then translate the
new or fuzzy entries and run the tests).

    python scripts/update_catalogs.py
    python scripts/update_catalogs.py --translations-from OTHER.po ...

The second form also fills an entry with no translation from the other
catalogs given (of the same language): after a merge whose catalogs
conflicted, keep either side, then give the other side's catalog here
(`git show MERGE_HEAD:locales/es/LC_MESSAGES/messages.po > /tmp/theirs.po`).

Sources: the package's Python code (gettext, ngettext, _, and the error
helpers that take a message template), the jinja2 templates, and the
knowledge base (rule messages, field and code labels).
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from expert import knowledge as kb  # noqa: E402
from expert.explanation import sources  # noqa: E402

# What is extracted, and how: as expert.explanation.sources reads it back (where a sentence is written).
KEYWORDS = {**DEFAULT_KEYWORDS, **sources.KEYWORDS}
METHODS, OPTIONS = sources.METHODS, sources.OPTIONS
# Written without source locations, sorted by message and with a fixed date, so
# that two branches that each add a message touch different lines of the
# catalogs (a location or a date moved by any edit conflicted on every merge).
CREATED = datetime(2026, 11, 1, tzinfo=timezone.utc)


def extract() -> Catalog:
    catalog = Catalog(project="expert", msgid_bugs_address="", copyright_holder="", charset="utf-8",
                      creation_date=CREATED)
    for filename, lineno, message, comments, _ in extract_from_dir(
            ROOT / "expert", METHODS, keywords=KEYWORDS, options_map=OPTIONS, strip_comment_tags=True):
        catalog.add(message, locations=[(f"expert/{filename}", lineno)], auto_comments=comments)
    base = kb.load(ROOT / "rules")
    for message in base.messages():
        catalog.add(message, locations=[("rules", 0)])
    return catalog


def other_translations(paths: list[str]) -> dict[object, object]:
    found: dict[object, object] = {}
    for path in paths:
        with open(path, "rb") as fh:
            for message in read_po(fh):
                if message.id and message.string and not message.fuzzy:
                    found.setdefault(message.id, message.string)
    return found


def main(argv: list[str]) -> None:
    others = other_translations(argv[1:]) if argv[:1] == ["--translations-from"] else {}
    if argv and not others and argv[:1] != ["--translations-from"]:
        sys.exit("usage: update_catalogs.py [--translations-from OTHER.po ...]")
    template = extract()
    with (ROOT / "locales" / "messages.pot").open("wb") as fh:
        write_po(fh, template, width=100, omit_header=False, no_location=True, sort_output=True)
    for po_path in sorted((ROOT / "locales").glob("*/LC_MESSAGES/messages.po")):
        with po_path.open("rb") as fh:
            catalog = read_po(fh, locale=po_path.parent.parent.name)
        catalog.update(template, no_fuzzy_matching=True)
        for message in catalog:
            if message.id and (not message.string or message.fuzzy) and message.id in others:
                message.string, message.flags = others[message.id], message.flags - {"fuzzy"}
        with po_path.open("wb") as fh:
            write_po(fh, catalog, width=100, ignore_obsolete=True, no_location=True, sort_output=True)
        missing = sum(1 for m in catalog if m.id and (not m.string or m.fuzzy))
        print(f"{po_path.relative_to(ROOT)}: {len(catalog)} messages, {missing} to translate")
    print(f"locales/messages.pot: {len(template)} messages")


if __name__ == "__main__":
    main(sys.argv[1:])

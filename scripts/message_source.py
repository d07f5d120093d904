"""Where a sentence of an answer is written: the messages it holds, each
with its id (its English text, the catalogs' key) and where it is written
(a record of the knowledge base, or a file and line of the package).

    python scripts/message_source.py "Your own card is weighed before any rented one"
    python scripts/message_source.py --lang es "Tu propia tarjeta se sopesa antes ..."
    expert advise --model-size 70 | python scripts/message_source.py --lines

Each message is shown once where it stands, the messages inside it (its
values' words) left out. A sentence is read as one paragraph (its line breaks are folded); with
--lines each line of the standard input is one (render it wide: a wrapped
line holds part of a message). Words that no message wrote, values aside,
are listed last (docs/explanations.md, "Where a sentence is written").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from expert.explanation.sources import MAX_TEXT, outermost, sources, unwritten  # noqa: E402
from expert.knowledge.bases import knowledge_base  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sentence", nargs="?", help="the sentence (default: the standard input)")
    parser.add_argument("--lang", choices=("en", "es"), default="en")
    parser.add_argument("--lines", action="store_true", help="each line of the input is a paragraph of its own")
    args = parser.parse_args(argv)
    text = args.sentence if args.sentence is not None else sys.stdin.read(MAX_TEXT + 1)
    if len(text) > MAX_TEXT:
        parser.error(f"the text is longer than {MAX_TEXT:,} characters")
    kb = knowledge_base()
    left = []
    for paragraph in text.split("\n") if args.lines else [text]:
        for found in outermost(sources(paragraph, kb, args.lang)):
            print(f"{found.message.id!r}\n    {'; '.join(found.message.where) or '(not found in the sources)'}")
        left += unwritten(paragraph, kb, args.lang)
    if left:
        print("written by no message: " + ", ".join(dict.fromkeys(left)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

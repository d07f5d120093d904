"""The one way the scripts that print a table for the docs write it: between
``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` in a docs file with
``--write``, printed otherwise (scripts/calibration.py, published_runs.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def print_or_write(text: str, doc: Path, name: str) -> None:
    """``text`` between ``doc``'s markers named ``name`` under ``--write``; on standard output otherwise."""
    if "--write" not in sys.argv[1:]:
        sys.stdout.write(text)
        return
    markers = re.compile(rf"(<!-- {re.escape(name)}:start -->\n).*?(<!-- {re.escape(name)}:end -->)", re.DOTALL)
    doc.write_text(markers.sub(lambda m: m.group(1) + text + m.group(2), doc.read_text(encoding="utf-8")),
                   encoding="utf-8")
    print(f"updated {doc.relative_to(doc.parent.parent)}")

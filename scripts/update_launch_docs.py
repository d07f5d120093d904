"""Refresh the launch files shown in docs/launch.md: every block after a
``<!-- launch-file: {...} -->`` marker gets what the library writes now for
that profile, option and file.

    python scripts/update_launch_docs.py && git diff docs/launch.md

tests/test_launch.py fails when a shown file no longer matches.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "launch.md"
MARKER = re.compile(r"(<!-- launch-file: (\{.*?\}) -->\n````(\w*)\n)(.*?)(````\n)", re.DOTALL)


def shown(spec: dict[str, Any]) -> str:
    from expert import advise
    from expert.interfaces.launch.make import launch

    result = advise(**spec["profile"])
    return launch(result, spec.get("option", 1), model=spec.get("model")).files[spec["file"]]


def refreshed(text: str) -> str:
    return MARKER.sub(lambda m: m.group(1) + shown(json.loads(m.group(2))) + m.group(5), text)


def main() -> None:
    text = DOC.read_text(encoding="utf-8")
    new = refreshed(text)
    if new != text:
        DOC.write_text(new, encoding="utf-8")
        print(f"updated {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

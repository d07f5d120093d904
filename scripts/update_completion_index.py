"""Write expert/interfaces/cli/completion.json, the words shell completion offers (card ids,
rule ids, choices, formats...), from the knowledge base. Run it after changing
rules/ (a card, a rule, a choice); tests/test_completion.py fails when it is stale.

    python scripts/update_completion_index.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from expert.interfaces.api import knowledge_base  # noqa: E402
from expert.interfaces.cli import completion  # noqa: E402


def main() -> None:
    completion.INDEX.write_text(completion.index_text(knowledge_base()), encoding="utf-8")
    print(f"wrote {completion.INDEX.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

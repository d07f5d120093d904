"""Instructions per consultation, as callgrind counts them (a count the
machine's load does not move, unlike a clock).

    PYTHONHASHSEED=0 valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=cg.out \
        python bench/instructions.py 10 --callgrind
    callgrind_annotate cg.out | grep "PROGRAM TOTALS"

The process loads the knowledge base and builds the engine with one warm-up
consultation, then (with ``--callgrind``) turns callgrind's instrumentation
on (``callgrind_control -i on``) and answers the first N profiles of
scripts/same_answers.py (varied: sizes, methods, budgets, deadlines, own
cards, both catalogs and languages) with advise(): the total counts those
consultations only, not the start (the knowledge base cache in the user's
folder, which other processes fill and empty, would move that). The
instructions of one consultation are the total over N. Compare two versions
the same way, each in a worktree of its own on PYTHONPATH
(docs/performance.md).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from expert import advise
from expert.errors import InputError

SAME_ANSWERS = Path(__file__).resolve().parent.parent / "scripts" / "same_answers.py"


def profiles(n: int) -> list[dict[str, Any]]:
    """The first ``n`` of scripts/same_answers.py's 50 profiles."""
    spec = importlib.util.spec_from_file_location("same_answers", SAME_ANSWERS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.profiles(50))[:n]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 10
    cases = profiles(n)
    advise(model_size_b=7)   # warm: the knowledge base loaded, the engine class built
    if "--callgrind" in sys.argv:
        subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
    for case in cases:
        with contextlib.suppress(InputError):
            advise(**case)


if __name__ == "__main__":
    main()

"""Refresh the command examples in README.md and docs/*.md: every fenced block that starts
with `$ expert ...` gets the command's current output, trimmed to the same
section as before (the block's second line names where the excerpt starts).

    python scripts/update_doc_examples.py && git diff docs/

tests/test_docs.py fails when an example no longer matches.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```\n(\$ expert [^\n]*)\n(.*?)```", re.DOTALL)


def run(command: str) -> str:
    args = shlex.split(command[2:])
    env = dict(os.environ, EXPERT_LANG="en", COLUMNS="80", NO_COLOR="1")
    done = subprocess.run([sys.executable, "-m", "expert", *args[1:]], capture_output=True, text=True, env=env,
                          cwd=ROOT)
    return done.stdout + done.stderr


def excerpt(output: str, old: str) -> str:
    """The part of ``output`` that corresponds to the old excerpt: from its first
    line to its last, or as many lines as it had when the end moved."""
    lines = output.splitlines()
    old_lines = [line for line in old.rstrip("\n").splitlines() if line.strip() != "..."]
    if not old_lines:
        return ""
    start = next((i for i, line in enumerate(lines) if line == old_lines[0]), 0)
    end = next((i for i in range(start, len(lines)) if lines[i] == old_lines[-1]), None)
    if end is None:
        end = min(len(lines) - 1, start + len(old_lines) - 1)
    return "\n".join(lines[start:end + 1]) + "\n"


def main() -> None:
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")

        def refresh(match: re.Match[str]) -> str:
            command, old = match.group(1), match.group(2)
            interactive = not {"advise", "explain", "estimate", "check", "rules"} & set(shlex.split(command))
            if interactive or "..." in old.splitlines():
                return match.group(0)
            return f"```\n{command}\n{excerpt(run(command), old)}```"

        new = BLOCK.sub(refresh, text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"updated {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

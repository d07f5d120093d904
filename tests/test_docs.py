"""The code examples in docs/ run."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def python_blocks(name: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(encoding="utf-8"), flags=re.DOTALL)


def test_chatbot_example_runs(capsys) -> None:  # type: ignore[no-untyped-def]
    example = python_blocks("consultation.md")[-1]
    exec(compile(example, "docs/consultation.md", "exec"), {})
    assert "**Recomendación:**" in capsys.readouterr().out


def test_every_command_is_documented() -> None:
    from expert.cli import main

    text = (DOCS / "cli.md").read_text(encoding="utf-8") + (DOCS / "consultation.md").read_text(encoding="utf-8")
    for name in main.commands:
        assert f"expert {name}" in text, name
        assert main.commands[name].help, name

"""Write docs/cli-reference.md: every command's help, generated from the
click group itself (``expert.interfaces.cli.main:main``, the group tools such as
sphinx-click or click-man load), at 80 columns.

    python scripts/update_cli_reference.py && git diff docs/cli-reference.md

tests/test_docs.py fails when the reference no longer matches the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from expert.interfaces.cli.main import main  # noqa: E402

TARGET = ROOT / "docs" / "cli-reference.md"
WIDTH = 80


def reference() -> str:
    """The reference, as markdown: `expert --help`, then each command's help, in order."""
    parts = ["# Command-line reference", "",
             "Every command's `--help`, generated from the click group (`expert.interfaces.cli.main:main`) by",
             "`python scripts/update_cli_reference.py`; [cli.md](cli.md) explains them.", ""]
    root = click.Context(main, info_name="expert", terminal_width=WIDTH, max_content_width=WIDTH,
                         **main.context_settings)
    parts += ["## expert", "", "```", main.get_help(root), "```", ""]
    for name in main.list_commands(root):
        command = main.commands[name]
        ctx = click.Context(command, info_name=name, parent=root, terminal_width=WIDTH, max_content_width=WIDTH)
        parts += [f"## expert {name}", "", "```", command.get_help(ctx), "```", ""]
    return "\n".join(parts)


if __name__ == "__main__":
    TARGET.write_text(reference(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")

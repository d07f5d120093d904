"""Write man/expert.1, the manual page, from the click group itself
(``expert.interfaces.cli.main:main``): the group's help, then each command's usage, help and
options, in roff (what click-man writes, without the dependency: one page for
the whole command). The wheel installs it as share/man/man1/expert.1.

    python scripts/update_man_page.py && man ./man/expert.1

tests/test_docs.py fails when the page no longer matches the code.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from expert import __version__  # noqa: E402
from expert.interfaces.cli.main import main  # noqa: E402

TARGET = ROOT / "man" / "expert.1"


def roff(text: str) -> str:
    """Text as roff: backslashes and hyphens escaped, no line starting with a control character."""
    lines = []
    for line in text.replace("\\", "\\e").replace("-", "\\-").splitlines():
        lines.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(lines)


def paragraphs(help_text: str) -> list[str]:
    """A click help text as roff paragraphs; a \\b block (examples) kept as written."""
    out: list[str] = []
    for block in click.unstyle(help_text or "").split("\n\n"):
        block = block.strip("\n")
        if not block.strip():
            continue
        if block.lstrip().startswith("\b"):
            example = textwrap.dedent(block.lstrip(" ").replace("\b\n", "", 1)).rstrip()
            out += [".PP", ".nf", roff(example), ".fi"]
        else:
            out += [".PP", roff(" ".join(block.split()))]
    return out


def options(command: click.Command, ctx: click.Context) -> list[str]:
    out: list[str] = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        out += [".TP", "\\fB" + roff(names) + "\\fR", roff(help_text or "")]
    return out


def page() -> str:
    root = click.Context(main, info_name="expert", **main.context_settings)
    lines = [f'.TH EXPERT 1 "" "expert {__version__}" "User Commands"', ".SH NAME",
             "expert \\- " + roff(main.get_short_help_str(limit=200).rstrip(".")),
             ".SH SYNOPSIS", "\\fBexpert\\fR [\\fIOPTIONS\\fR] [\\fICOMMAND\\fR] [\\fIARGS\\fR]...",
             ".SH DESCRIPTION", *paragraphs(main.help or ""), ".SH OPTIONS", *options(main, root), ".SH COMMANDS"]
    for name in main.list_commands(root):
        command = main.commands[name]
        ctx = click.Context(command, info_name=name, parent=root)
        usage = " ".join(command.collect_usage_pieces(ctx))
        lines += [".SS " + roff(f"expert {name} {usage}".rstrip()), *paragraphs(command.help or ""),
                  *options(command, ctx)]
    lines += [".SH EXIT STATUS", "0 answered (even when nothing fits); 2 invalid input; 1 anything else;",
              "130 a consultation ended by quit or Ctrl\\-C.",
              ".SH SEE ALSO", "docs/cli.md and docs/cli\\-reference.md in the source distribution."]
    return "\n".join(lines) + "\n"


def main_() -> None:
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(page(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main_()

"""click's own usage errors in the person's language: an unknown option or
command, an option without its value, an extra argument, and the lines
around every usage error ("Usage:", "Try '... --help' for help."). click
writes them in English whatever --lang says; for another language they are
written again here, from what the error carries (its option, its
possibilities), never by translating click's sentences. A message of ours
(a flag given twice) is already in the person's language and kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import click

from ...escape import quoted, terminal
from ...i18n import Localizer

_EXTRA = re.compile(r"^Got unexpected extra arguments? \((?P<args>.*)\)$", re.S)


def localizer(args: Sequence[str] | None) -> Localizer | None:
    """The language the arguments ask for (--lang, -l, --lang=; else the
    environment's), when it is one of ours other than English; else None."""
    from ...i18n import resolve_lang

    words = list(args or ())
    lang = next((words[i + 1] for i, arg in enumerate(words[:-1]) if arg in ("--lang", "-l")),
                next((arg.partition("=")[2] for arg in words if arg.startswith("--lang=")), None))
    try:
        resolved = resolve_lang(lang)
    except Exception:       # an unsupported --lang is refused by the command itself, in English
        return None
    return Localizer(resolved) if resolved != "en" else None


def message(error: click.UsageError, tr: Localizer) -> str:
    """The error's message in ``tr``'s language where click wrote it; else as it is."""
    _ = tr.gettext
    possibilities = list(getattr(error, "possibilities", None) or [])
    if isinstance(error, click.NoSuchOption):
        return (_("No such option '%(name)s'.") % {"name": quoted(error.option_name)}
                + tr.did_you_mean(quoted(p) for p in possibilities))
    if type(error).__name__ == "NoSuchCommand":         # click 8.4 and later
        return (_("No such command '%(name)s'.") % {"name": quoted(getattr(error, "command_name", ""))}
                + tr.did_you_mean(quoted(p) for p in possibilities))
    if isinstance(error, click.BadOptionUsage) and " requires " in error.message:
        return _("Option '%(name)s' requires a value.") % {"name": quoted(error.option_name)}
    extra = _EXTRA.match(error.message)
    if extra is not None:
        words = extra.group("args").split()
        return tr.ngettext("Unexpected extra argument: %(args)s.", "Unexpected extra arguments: %(args)s.",
                           len(words)) % {"args": quoted(extra.group("args"), most=80)}
    return error.message


def show(error: click.UsageError, tr: Localizer) -> None:
    """What click's UsageError.show() writes, in ``tr``'s language."""
    lines: list[str] = []
    ctx = error.ctx
    if ctx is not None:
        usage = ctx.get_usage()
        if usage.startswith("Usage:"):
            usage = tr.gettext("Usage:") + usage[len("Usage:"):]
        lines.append(usage)
        if ctx.command.get_help_option(ctx) is not None:
            lines.append(tr.gettext("Try '%(command)s --help' for help.") % {"command": ctx.command_path})
        lines.append("")
    lines.append("Error: " + message(error, tr))
    click.echo(terminal("\n".join(lines), newlines=True), err=True, color=ctx.color if ctx is not None else None)

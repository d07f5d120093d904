"""click's own usage errors in the person's language: an unknown option or
command, an option without its value, an extra argument, a value its types
refuse (--port abc, --color=purple), and the lines around every usage error
("Usage:", "Try '... --help' for help."). click writes them in English
whatever --lang says; for another language they are written again here, from
what the error carries (its option, its possibilities, its type's bounds and
choices), never by translating click's sentences; a refused value in English
too, naming its option and what it takes (:func:`bad_value`). A message of
ours (a flag given twice) is already in the person's language and kept.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

import click

from ...escape import quoted, terminal
from ...i18n import Localizer

_EXTRA = re.compile(r"^Got unexpected extra arguments? \((?P<args>.*)\)$", re.S)
# What click's types say of a value they refuse (click/types.py): the value, as click quoted it, and
# for a path what is wrong with it; the rest the error's parameter carries (its type's bounds, choices).
_NOT_A_NUMBER = re.compile(r"^(?P<value>.*) is not a valid [a-z ]+\.$", re.S)
_OUT_OF_RANGE = re.compile(r"^(?P<value>.*) is not in the range .*\.$", re.S)
_NOT_A_CHOICE = re.compile(r"^(?P<value>.*) is not (?:one of )?.*\.$", re.S)
_BAD_PATH = re.compile(r"^(?:File|Directory|Path) (?P<value>.*) (?P<wrong>does not exist|is a file|is a directory|"
                       r"is not readable|is not writable|is not executable)\.$", re.S)


def lang_asked(args: Sequence[str] | None, before: str | None = None) -> str | None:
    """The language the arguments ask for before click has read them (--lang, -l, --lang=), else
    ``before`` (the one given before the command): the one reader of --lang in raw arguments."""
    words = list(args or ())
    return next((words[i + 1] for i, arg in enumerate(words[:-1]) if arg in ("--lang", "-l")),
                next((arg.partition("=")[2] for arg in words if arg.startswith("--lang=")), before))


def localizer(args: Sequence[str] | None) -> Localizer | None:
    """The language the arguments ask for (:func:`lang_asked`; else the
    environment's), when it is one of ours other than English; else None."""
    from ...i18n import resolve_lang

    try:
        resolved = resolve_lang(lang_asked(args))
    except Exception:       # an unsupported --lang is refused by the command itself, in English
        return None
    return Localizer(resolved) if resolved != "en" else None


def message(error: click.UsageError, tr: Localizer) -> str:
    """The error's message in ``tr``'s language where click wrote it; else as it is."""
    _ = tr.gettext
    possibilities = list(getattr(error, "possibilities", None) or [])
    if isinstance(error, click.NoSuchOption) and vars(error).get("elsewhere"):   # an option of another command
        return elsewhere(tr, error.option_name, error.ctx.command_path if error.ctx else "expert",
                         vars(error)["elsewhere"])
    if isinstance(error, click.NoSuchOption):
        return (_("No such option '%(name)s'.") % {"name": quoted(error.option_name)}
                + tr.did_you_mean(quoted(p) for p in possibilities))
    if type(error).__name__ == "NoSuchCommand":         # click 8.4 and later
        return (_("No such command '%(name)s'.") % {"name": quoted(getattr(error, "command_name", ""))}
                + tr.did_you_mean(quoted(p) for p in possibilities))
    if isinstance(error, click.BadOptionUsage) and " requires " in error.message:
        return _("Option '%(name)s' requires a value.") % {"name": quoted(error.option_name)}
    if isinstance(error, click.BadParameter) and not isinstance(error, click.MissingParameter):
        return bad_value(error, tr)
    extra = _EXTRA.match(error.message)
    if extra is not None:
        words = extra.group("args").split()
        return tr.ngettext("Unexpected extra argument: %(args)s.", "Unexpected extra arguments: %(args)s.",
                           len(words)) % {"args": quoted(extra.group("args"), most=80)}
    return error.message


def elsewhere(tr: Localizer, option: str, command: str, others: Sequence[str]) -> str:
    """An option this command does not take and others do, said so instead of a near name of its own
    (`expert advise --offload` was "Did you mean '--color'?"; estimate takes it)."""
    return tr.gettext("No such option '%(name)s' in %(command)s: it is an option of %(others)s.") % {
        "name": quoted(option), "command": command, "others": tr.list(list(others), style="or")}


def _value(written: str) -> str:
    """A value as the person typed it, from click's quoting of it ('abc', or 0 as it is)."""
    try:
        value = ast.literal_eval(written)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return written
    return value if isinstance(value, str) else written


def _accepted_number(kind: click.ParamType, tr: Localizer) -> str:
    """What a number type takes: "a whole number from 1 to 65535", "a number greater than 0" ..."""
    _ = tr.gettext
    whole = isinstance(kind, click.IntRange) or kind is click.INT
    what = _("a whole number") if whole else _("a number")
    low, high = getattr(kind, "min", None), getattr(kind, "max", None)
    low_open, high_open = getattr(kind, "min_open", False), getattr(kind, "max_open", False)

    def shown(bound: float) -> str:
        # a whole bound as it is typed (a port is 65535, not "65,535"); a decimal one as the language writes it
        return str(int(bound)) if whole else tr.number(bound, 3)

    if low is not None and high is not None and not low_open and not high_open:
        return what + " " + _("from %(min)s to %(max)s") % {"min": shown(low), "max": shown(high)}
    bounds = ([(_("greater than %(min)s") if low_open else _("of at least %(min)s")) % {"min": shown(low)}]
              if low is not None else [])
    bounds += ([(_("less than %(max)s") if high_open else _("of at most %(max)s")) % {"max": shown(high)}]
               if high is not None else [])
    return what + (" " + tr.list(bounds) if bounds else "")


def bad_value(error: click.BadParameter, tr: Localizer) -> str:
    """A value click's type refused, said again from what the error carries: the option (as the person
    can type it), the value, and what the type accepts."""
    _ = tr.gettext
    param = error.param
    if error.param_hint is not None:
        hints = [error.param_hint] if isinstance(error.param_hint, str) else list(error.param_hint)
    else:
        hints = list(param.opts) if param is not None and param.opts else [param.name or ""] if param else []
    option = " / ".join(hints)
    kind = param.type if param is not None else None
    if isinstance(kind, (click.IntRange, click.FloatRange)) or kind in (click.INT, click.FLOAT):
        assert kind is not None
        accepted = _accepted_number(kind, tr)
        if (found := _NOT_A_NUMBER.match(error.message)) is not None:
            return _("%(option)s: '%(value)s' is not a number; give %(accepted)s.") % {
                "option": option, "value": quoted(_value(found.group("value"))), "accepted": accepted}
        if (found := _OUT_OF_RANGE.match(error.message)) is not None:     # the value click read: "-1.0" for -1
            try:
                number = float(found.group("value"))
                value = str(int(number)) if number == int(number) else tr.number(number, 3)
            except (ValueError, OverflowError):
                value = found.group("value")
            return _("%(option)s: '%(value)s' is not accepted; give %(accepted)s.") % {
                "option": option, "value": quoted(value), "accepted": accepted}
    if isinstance(kind, click.Choice) and (found := _NOT_A_CHOICE.match(error.message)) is not None:
        return _("%(option)s: '%(value)s' is not accepted; choose %(accepted)s.") % {
            "option": option, "value": quoted(_value(found.group("value"))),
            "accepted": tr.list([str(choice) for choice in kind.choices], style="or")}
    if isinstance(kind, (click.Path, click.File)) and (found := _BAD_PATH.match(error.message)) is not None:
        wrong = {"does not exist": _("%(option)s: '%(value)s' does not exist."),
                 "is a file": _("%(option)s: '%(value)s' is a file; give a directory."),
                 "is a directory": _("%(option)s: '%(value)s' is a directory; give a file."),
                 "is not readable": _("%(option)s: '%(value)s' cannot be read."),
                 "is not writable": _("%(option)s: '%(value)s' cannot be written."),
                 "is not executable": _("%(option)s: '%(value)s' cannot be run.")}[found.group("wrong")]
        return wrong % {"option": option, "value": quoted(_value(found.group("value")), most=80)}
    # a type whose refusals are not said again here: click's sentence, after the option in our words
    return _("%(option)s: %(message)s") % {"option": option, "message": error.message} if option else error.message


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

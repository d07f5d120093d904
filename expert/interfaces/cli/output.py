"""How the command line writes: output in the stream's encoding, bold headings
when colour is on, errors as messages on stderr and exit statuses, never a
traceback (:func:`standalone` runs the group; :func:`run_action` runs one
command's library call). Whatever an error message quotes is made safe for
the terminal (:mod:`expert.escape`).

Exit codes: 0 the consultation was answered (even if nothing fits); 2 invalid
input (a flag value, a language, a knowledge base); 1 anything else, such as
output that cannot be written (a full disk, a closed pipe).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Callable
from typing import Any

import click

from ...escape import terminal


def terminal_width() -> int:
    """The terminal's width, at most 100 columns (80 when unknown)."""
    return min(shutil.get_terminal_size((80, 24)).columns, 100)


def use_color() -> bool:
    """Whether to write bold headings: the command's --color/--no-color, else
    the one given before the command, else NO_COLOR (set and not empty: never), else FORCE_COLOR (set,
    not empty and not 0: even when piped), else TERM=dumb (never), else
    whether stdout is a terminal."""
    context = click.get_current_context(silent=True)
    when = None
    while context is not None and when is None:
        when = "never" if context.params.get("no_color") else context.params.get("color")
        context = context.parent
    if when in ("always", "never"):
        return when == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout is not None and sys.stdout.isatty()


class OutputError(Exception):
    """Writing to stdout or stderr failed (a full disk, a closed pipe)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


# What stands for a character the output's encoding cannot show (a Windows
# console, PYTHONIOENCODING=cp1252): ASCII that reads the same.
ASCII = {"≈": "~", "×": "x", "→": "->", "←": "<-", "≥": ">=", "≤": "<=", "…": "...", "«": "'", "»": "'",
          "—": "-", "–": "-", "█": "#", "·": "-", "•": "*", "✓": "v", "’": "'", "‘": "'", "“": "'", "”": "'",
          "\u00a0": " ", "\u202f": " ", "¿": "?", "¡": "!"}


def showable(text: str, stream: Any) -> str:
    """``text`` as the stream's encoding can write it: each character it
    cannot, as ASCII that reads the same (≈ as ~, × as x, a bar as #), else
    without its accent, else '?'."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
        return text
    except (UnicodeEncodeError, LookupError):
        pass
    if text.lstrip().startswith(("{", "[")):    # JSON keeps its values: \u escapes, not look-alikes
        import json

        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=True) + ("\n" if text.endswith("\n") else "")
        except ValueError:
            pass
    import unicodedata

    def one(char: str) -> str:
        try:
            char.encode(encoding)
            return char
        except (UnicodeEncodeError, LookupError):
            pass
        if char in ASCII:
            return ASCII[char]
        plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode("ascii")
        return plain or "?"

    return "".join(one(char) for char in text)


def echo(message: Any = None, nl: bool = True, err: bool = False) -> None:
    """click.echo, with a failed write as an OutputError (reported by run());
    what the output's encoding cannot show is written in ASCII (showable)."""
    try:
        stream = sys.stderr if err else sys.stdout
        if stream is None:   # started with the stream closed (>&-)
            import errno

            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        if isinstance(message, str):
            message = showable(message, stream)
        # click strips escape sequences when the stream is not a terminal; keep them if colour was asked for.
        click.echo(message, nl=nl, err=err, color=True if not err and use_color() else None)
    except OSError as error:
        raise OutputError(error) from None


def fail(message: str, code: int) -> None:
    """An error message on stderr (what it quotes made safe), and exit."""
    echo(terminal(message, newlines=True), err=True)
    sys.exit(code)


def render_kb_error(error: Any, lang: str | None) -> str:
    """A knowledge base or catalog refused, a line per problem, each an "Error: " as every other error is."""
    from ...errors import InputError
    from ...i18n import CatalogMissing, Localizer, resolve_lang

    try:
        gettext = Localizer(resolve_lang(lang)).gettext
    except (InputError, CatalogMissing):
        gettext = _untranslated
    return "\n".join(f"Error: {line}" for line in str(error.render(gettext)).splitlines())


def _untranslated(message: str) -> str:
    return message


def run_action(action: Callable[[], str], lang: str | None) -> None:
    """Run a library call, print its output, turn known errors into exit codes."""
    from ...errors import InputError, KnowledgeBaseError
    from ...i18n import CatalogMissing

    try:
        output = action()
    except InputError as error:
        fail(f"Error: {error}", 2)
    except KnowledgeBaseError as error:
        fail(render_kb_error(error, lang), 2)
    except CatalogMissing as error:
        fail(f"Error: {error}", 1)
    except Exception as error:
        fail(f"Internal error ({type(error).__name__}: {str(error)[:200]}); please report it.", 1)
    else:
        echo(output, nl=False)


# The command's --lang, for the messages of run() (written after the command ended).
_COMMAND_LANG: list[str | None] = [None]


def command_lang(lang: str | None) -> str | None:
    """A command's --lang, else the one given before the command (`expert --lang es advise`)."""
    if lang is None:
        root = click.get_current_context(silent=True)
        lang = root.find_root().params.get("lang") if root is not None else None
    _COMMAND_LANG[0] = lang
    return lang


def command_gettext() -> Callable[[str], str]:
    """gettext in the language of the command that ran (English when it has none)."""
    from ...i18n import Localizer, resolve_lang

    try:
        return Localizer(resolve_lang(_COMMAND_LANG[0])).gettext
    except Exception:
        return str


def to_stderr(message: str) -> None:
    """A last message on stderr, if stderr can still be written."""
    with contextlib.suppress(OSError, ValueError):
        click.echo(terminal(message, newlines=True), err=True)


def output_failed(error: OSError) -> int:
    """Report output that could not be written; stop writing it. Exit status 1.
    A closed pipe (`expert rules | head`) is quiet: the reader wanted no more."""
    import errno

    _ = command_gettext()
    reason = terminal(error.strerror or type(error).__name__)
    if error.errno != errno.EPIPE:
        to_stderr(_("Error: the output could not be written (%(reason)s).") % {"reason": reason})
    # What is still buffered goes nowhere, instead of failing again at exit.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, stream.fileno())
            except (OSError, ValueError, AttributeError):
                pass
    return 1


def standalone(call: Callable[[], Any], args: list[str] | None = None) -> None:
    """Run the group: every error is a message on stderr and an exit status, never a traceback; click's
    usage errors in the language ``args`` ask for (:mod:`.usage`)."""
    code: Any = 0
    try:
        try:
            code = call()
        except SystemExit as done:
            code = done.code
        if type(sys.stdout).__name__ == "_PacifyFlushWrapper":   # click met a closed pipe and said nothing
            import errno

            raise OSError(errno.EPIPE, os.strerror(errno.EPIPE))
        if sys.stdout is not None:
            sys.stdout.flush()
    except OutputError as error:
        code = output_failed(error.error)
    except click.ClickException as error:   # a usage error: click's message quotes what was typed
        # click types message Final; show() prints it, so what was typed is made safe for the terminal first
        error.message = terminal(error.message, newlines=True)  # type: ignore[misc]
        from . import usage

        tr = usage.localizer(sys.argv[1:] if args is None else args) if isinstance(error, click.UsageError) else None
        if tr is None and isinstance(error, click.BadParameter) and not isinstance(error, click.MissingParameter):
            from ...i18n import Localizer

            tr = Localizer("en")        # a value click's type refused: said in our words in English too
        try:
            if tr is not None and isinstance(error, click.UsageError):
                usage.show(error, tr)
            else:
                error.show()
        except OSError as failed:
            output_failed(failed)
        code = error.exit_code
    except click.Abort:
        to_stderr("Aborted!")
        code = 1
    except KeyboardInterrupt:
        code = 130
    except OSError as error:                 # click's own output (help, version) could not be written
        code = output_failed(error)
    except Exception as error:
        to_stderr(f"Internal error ({type(error).__name__}: {str(error)[:200]}); please report it.")
        code = 1
    sys.exit(code)

"""``expert ask``: a consultation as questions at the terminal, or answers
piped in one per line (also what ``expert`` without a command runs).
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any, cast

import click

from ...escape import terminal
from .options import (
    CATALOG_OPTION,
    COLOR_OPTION,
    OUTPUT_OPTIONS,
    PROFILE_OPTIONS,
    VERBOSE_OPTION,
    Command,
    given_catalogs,
    options,
    own_gpu_auto,
)
from .output import OutputError, command_lang, echo, fail, render_kb_error, terminal_width, use_color

if TYPE_CHECKING:     # the library is imported when a command runs (``expert --help`` stays fast)
    from ...i18n import Lang

WHY_WORDS = {"?", "why", "por qué", "por que", "porqué", "porque", "¿por qué?", "¿por qué"}


BACK_WORDS = {"back", "atrás", "atras", "volver"}


QUIT_WORDS = {"quit", "exit", "q", "salir", "terminar"}   # end the consultation, exit status 130 like Ctrl-C


YES_WORDS = {"y", "yes", "s", "sí", "si"}


NO_WORDS = {"", "n", "no"}


# Piped answers are read once: a bad or missing one ends the consultation
# (exit 2) instead of asking again, and so many lines at most (`yes '?' | expert`).
MAX_PIPED_LINES = 200


class _Unreadable(Exception):
    """Piped answers that are not text in the input's encoding."""

    def __init__(self, encoding: str) -> None:
        super().__init__(encoding)
        self.encoding = encoding


class _Quit(KeyboardInterrupt):
    """Ctrl-\\ (SIGQUIT) at a question: ends the consultation as Ctrl-C does
    (the terminal restored), with exit status 131."""


class _Input:
    """Where answers come from: a person at a terminal (line editing and
    history through the standard library's readline, where the platform has
    it) or piped lines, read once and echoed. At a terminal its modes are
    restored by :meth:`close`, however the consultation ends."""

    def __init__(self) -> None:
        stdin, stdout = sys.stdin, sys.stdout
        self.interactive = bool(stdin is not None and stdin.isatty() and stdout is not None and stdout.isatty())
        self.lines = 0
        self.modes: Any = None
        self.on_quit: Any = None
        if self.interactive:
            # input() edits lines and keeps history once readline is imported;
            # Windows without pyreadline has plain input().
            with contextlib.suppress(ImportError):
                import readline  # noqa: F401 - imported for its effect on input()
            try:
                import termios

                self.modes = termios.tcgetattr(stdin.fileno())
            except (ImportError, OSError, ValueError):   # no termios (Windows)
                pass
            import signal

            if hasattr(signal, "SIGQUIT"):    # by default it would end the process with the modes changed

                def quit_(signum: int, frame: Any) -> None:
                    raise _Quit()

                self.on_quit = signal.signal(signal.SIGQUIT, quit_)

    def close(self) -> None:
        """The terminal's modes and the SIGQUIT handler as they were."""
        if self.modes is not None:
            try:
                import termios

                termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, self.modes)
            except (OSError, ValueError, AttributeError):
                pass
        if self.on_quit is not None:
            import signal

            signal.signal(signal.SIGQUIT, self.on_quit)

    def read(self, prompt: str) -> str:
        """One line of input; EOFError at the end of input."""
        if self.interactive:
            try:
                return input(prompt)
            except OSError as error:
                raise OutputError(error) from None
        echo(prompt, nl=False)
        sys.stdout.flush()
        self.lines += 1
        if sys.stdin is None or self.lines > MAX_PIPED_LINES:    # started with stdin closed (<&-)
            raise EOFError
        try:
            line = sys.stdin.readline(4096)
        except (OSError, ValueError):           # closed, or not readable: the input has ended
            raise EOFError from None
        except UnicodeDecodeError as error:
            raise _Unreadable(error.encoding) from None
        if not line:
            raise EOFError
        echo(terminal(line.rstrip("\n")))
        return line.rstrip("\n")


@click.command(cls=Command)
@options(PROFILE_OPTIONS + [CATALOG_OPTION, OUTPUT_OPTIONS[1], VERBOSE_OPTION, COLOR_OPTION])
def ask(lang: str | None, catalog: tuple[str, ...], verbose: bool = False, color: str | None = None,
        no_color: bool | None = None, **known: Any) -> None:
    """Answer a few questions and get a recommendation (interactive).

    At any question: ? or why (por qué) says why it is asked, back (atrás)
    returns to the previous one, quit (exit, salir) or Ctrl-C ends the
    consultation, Enter takes the default. Flags given on the command line
    are not asked. Answers can be piped in, one per line.
    Exit status: 0 done, 2 invalid flag, 130 ended by quit or Ctrl-C,
    1 input ended early (Ctrl-D).
    """
    from ...i18n import WAY_IN

    # what an answer says to do names what a person can do here: this command's flags, or the command that
    # takes a setting it does not ask (`expert advise --price`), named with it (labels.toml [how_ask])
    way_in = WAY_IN.set("ask")
    try:
        _consult(lang, catalog, verbose, known)
    finally:
        WAY_IN.reset(way_in)


def _consult(lang: str | None, catalog: tuple[str, ...], verbose: bool, known: dict[str, Any]) -> None:
    """The consultation of :func:`ask`, question by question, then its answer."""
    from ...errors import InputError, KnowledgeBaseError
    from ..consultation import AnswerError, Consultation

    try:
        own_gpu_auto(known, command_lang(lang), given_catalogs(catalog))     # --own-gpu auto
        # --lang as typed: the library is its one reader, and refuses what its type does not name
        consultation = Consultation(lang=cast("Lang | None", command_lang(lang)), catalog=given_catalogs(catalog), **known)
    except InputError as error:
        fail(f"Error: {error}", 2)
    except KnowledgeBaseError as error:
        fail(render_kb_error(error, lang), 2)
    from ...i18n import Localizer

    _ = Localizer(consultation.lang).gettext
    from ...explanation.templating import wrap as _wrap

    colored = use_color()
    bold = (lambda s: click.style(s, bold=True)) if colored else (lambda s: s)
    width = terminal_width()
    source = _Input()
    question = None
    try:
        echo(_wrap(_("Answer a few questions (? or why: why it is asked; back: previous question; "
                      "Enter: the default in brackets; quit or Ctrl-C: stop)."), width))
        while (question := consultation.next_question()) is not None:
            echo()
            echo(bold(_wrap(question.text, width)))
            if question.hint:
                echo(_wrap(f"({question.hint})", width))
            if question.choices:
                echo("  " + "   ".join(f"{n}) {c['label']}" for n, c in enumerate(question.choices, 1)))
            line = source.read(f"[{question.default_label}] > ")
            word = " ".join(line.strip().lower().split())
            if word in WHY_WORDS:
                echo(_wrap(question.why, width, "  ", "  "))
                continue
            if word in QUIT_WORDS:
                raise KeyboardInterrupt
            if word in BACK_WORDS:
                if consultation.back() is None:
                    echo(_("This is the first question."))
                continue
            try:
                if word == "auto" and question.id == "vram_gb":     # this machine's cards, as --own-gpu auto
                    answers = {"vram_gb": word}
                    own_gpu_auto(answers, consultation.lang, given_catalogs(catalog))
                    line = answers["vram_gb"]
                consultation.answer(question.id, line if word else (
                    "no" if question.default is None else question.default))
            except (AnswerError, InputError) as error:
                sys.stdout.flush()
                if not source.interactive:   # asking again would read the next answer as this one's
                    fail(_("Error: %(error)s (the question: %(question)s)") % {
                        "error": error, "question": question.text}, 2)
                echo(_wrap(str(error), width), err=True)     # (wrap keeps no escape sequence)
        echo()
        echo(consultation.result().render("text", width=width, verbose=verbose))
        reply = ""
        while True:
            try:
                reply = " ".join(source.read(_("Show the full reasoning? (yes/no) [no] > ")).strip().lower().split())
            except EOFError:
                reply = ""
            if reply in QUIT_WORDS:
                raise KeyboardInterrupt
            if reply in YES_WORDS or reply in NO_WORDS:
                break
            echo(terminal(_("Please answer yes or no (Enter: no).")), err=True)
        if reply in YES_WORDS:
            from ...application import explain as run_explain

            explanation = run_explain(lang=consultation.lang, catalog=consultation.catalog, **consultation.facts())
            echo(explanation.render("text", width=width, color=colored))
    except KeyboardInterrupt as interrupted:
        source.close()     # before anything is written: the modes readline changed
        echo()
        sys.exit(131 if isinstance(interrupted, _Quit) else 130)
    except _Unreadable as error:
        fail(_("Error: the input is not text in %(encoding)s.") % {"encoding": error.encoding}, 2)
    except EOFError:
        echo()
        if not source.interactive and question is not None:
            fail(_("Error: the input ended before an answer to the question: %(question)s") % {
                "question": question.text}, 2)
        echo(_("Input ended before the consultation was complete."), err=True)
        sys.exit(1)
    finally:
        source.close()

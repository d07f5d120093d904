"""The command line: parses flags, prints, maps errors to exit codes.

Exit codes: 0 the consultation was answered (even if nothing fits); 2 invalid
input (a flag value, a language, a knowledge base); 1 anything else, such as
output that cannot be written (a full disk, a closed pipe). Never a
traceback. Whatever an error message quotes (a value, a file name) is
stripped of escape sequences, control and format characters
(:mod:`expert.escape`).
All the work is done by the library (:mod:`expert.interfaces.api`); this module only
imports it when a command runs, so ``expert --help`` stays fast.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import shutil
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import click

from ..escape import quoted, terminal
from . import completion as complete

if TYPE_CHECKING:     # the library is imported when a command runs (``expert --help`` stays fast)
    from .api import Basis, Lang

LANGS = complete.names_in("i18n", "SUPPORTED")
# When the command's process ends, its memory goes with it; Python's last
# garbage collection would first walk every object left (the knowledge base,
# experta's network: a tenth of `expert advise`). Frozen at exit, they are
# not walked. (The library does not touch the garbage collector.)
atexit.register(gc.freeze)
PROFILE_OPTIONS = [
    click.option("-s", "--model-size", "-m", "--model", "model_size_b", metavar="SIZE",
                 help="Parameters in billions, or the model's name: 7, 70B, Llama-3.1-8B, Mixtral-8x7B "
                      "(expert models lists the names known)."),
    click.option("-M", "--method", metavar="METHOD", help="full, lora or qlora.", shell_complete=complete.field_choices("method")),
    click.option("--budget", metavar="BUDGET", help="low, medium or high.",
                 shell_complete=complete.field_choices("budget")),
    click.option("--rocm-ok/--no-rocm", "rocm_ok", default=None,
                 help="Willing (or not) to set up and debug ROCm for AMD cards."),
    click.option("--deadline", "deadline_h", metavar="HOURS", help="Time available for training: 8, 8h, 2 days."),
    click.option("--vram", "--own-gpu", "vram_gb", metavar="GB", help="A GPU you already have: its VRAM (24, 24 GB) or its name (RTX 3090, a 3090); no for none.",
                 shell_complete=complete.own_cards),
    click.option("--dataset", "dataset_examples", metavar="N", help="Training examples: 10000, 10k."),
    click.option("--tokens-per-example", "--seq-len", "tokens_per_example", metavar="N",
                 help="Tokens in one training example (default 1024): 512, 4k."),
    click.option("--epochs", metavar="N", help="Passes over the dataset (default 1): 1, 3, 0.5."),
    click.option("--purpose", metavar="PURPOSE", help="experiment or production.",
                 shell_complete=complete.field_choices("purpose")),
    click.option("--interruptible/--no-interruptible", "interruptible", default=None,
                 help="Whether training tolerates interruptions (spot instances)."),
    click.option("--stack", metavar="STACK", help="typical or tuned: the software the training time assumes.",
                 shell_complete=complete.field_choices("stack")),
]
MODEL_CONFIG_OPTION = click.option(
    "--model-config", "model_config", metavar="FILE",
    help="A local Hugging Face config.json: the model's architecture is read from it (instead of --model-size).")
BASIS_OPTION = click.option(
    "--basis", metavar="BASIS", default="checked", show_default=True, shell_complete=complete.names_in("api", "BASES"),
    help="checked (size by each recipe's need), estimate (also state the estimate), or guide (the guide's figure).")
CATALOG_OPTION = click.option(
    "--catalog", "catalog", metavar="FILE", multiple=True, shell_complete=complete.catalogs,
    help="A TOML file of [[gpu]] cards to add to the guide's, or a shipped catalog by name (current); repeatable.")
PRICE_OPTION = click.option(
    "--price", "prices", metavar="CARD=USD", multiple=True,
    help="What you pay per card-hour for a catalog card (its id, =, USD), instead of its indicative price; repeatable.")
COLOR_WHEN = ("auto", "always", "never")
_COLOR_OPTIONS = [
    click.option("--color", "color", type=click.Choice(COLOR_WHEN), is_flag=False, flag_value="always", default=None,
                 metavar="[auto|always|never]",
                 help="Bold headings: always (--color alone), never, or auto: on a terminal, unless NO_COLOR or "
                      "TERM=dumb; FORCE_COLOR even when piped (the default)."),
    click.option("--no-color", "no_color", is_flag=True, default=None, help="The same as --color=never."),
]


def COLOR_OPTION(function: Callable[..., Any]) -> Callable[..., Any]:
    return _options(_COLOR_OPTIONS)(function)
OUTPUT_OPTIONS = [
    click.option("-f", "--format", "fmt", metavar="FORMAT", default="text", show_default=True,
                 help="text, markdown or json.", shell_complete=complete.names_in("templating", "FORMATS")),
    click.option("-l", "--lang", metavar="LANG", help="es or en (default: EXPERT_LANG, then LC_ALL/LANG, then en).",
                 shell_complete=LANGS),
]


def _options(options: list[Callable[..., Any]]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


def _width() -> int:
    """The terminal's width, at most 100 columns (80 when unknown)."""
    return min(shutil.get_terminal_size((80, 24)).columns, 100)


def _color() -> bool:
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


class _OutputError(Exception):
    """Writing to stdout or stderr failed (a full disk, a closed pipe)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


# What stands for a character the output's encoding cannot show (a Windows
# console, PYTHONIOENCODING=cp1252): ASCII that reads the same.
_ASCII = {"≈": "~", "×": "x", "→": "->", "←": "<-", "≥": ">=", "≤": "<=", "…": "...", "«": "'", "»": "'",
          "—": "-", "–": "-", "█": "#", "·": "-", "•": "*", "✓": "v", "’": "'", "‘": "'", "“": "'", "”": "'",
          "\u00a0": " ", "\u202f": " ", "¿": "?", "¡": "!"}


def _showable(text: str, stream: Any) -> str:
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
        if char in _ASCII:
            return _ASCII[char]
        plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode("ascii")
        return plain or "?"

    return "".join(one(char) for char in text)


def _echo(message: Any = None, nl: bool = True, err: bool = False) -> None:
    """click.echo, with a failed write as an _OutputError (reported by run());
    what the output's encoding cannot show is written in ASCII (_showable)."""
    try:
        stream = sys.stderr if err else sys.stdout
        if stream is None:   # started with the stream closed (>&-)
            import errno

            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        if isinstance(message, str):
            message = _showable(message, stream)
        # click strips escape sequences when the stream is not a terminal; keep them if colour was asked for.
        click.echo(message, nl=nl, err=err, color=True if not err and _color() else None)
    except OSError as error:
        raise _OutputError(error) from None


def _fail(message: str, code: int) -> None:
    """An error message on stderr (what it quotes made safe), and exit."""
    _echo(terminal(message, newlines=True), err=True)
    sys.exit(code)


def _render_kb_error(error: Any, lang: str | None) -> str:
    from ..errors import InputError
    from ..i18n import CatalogMissing, Localizer, resolve_lang

    try:
        gettext = Localizer(resolve_lang(lang)).gettext
    except (InputError, CatalogMissing):
        gettext = _untranslated
    return str(error.render(gettext))


def _untranslated(message: str) -> str:
    return message


def _run(action: Callable[[], str], lang: str | None) -> None:
    """Run a library call, print its output, turn known errors into exit codes."""
    from ..errors import InputError, KnowledgeBaseError
    from ..i18n import CatalogMissing

    try:
        output = action()
    except InputError as error:
        _fail(f"Error: {error}", 2)
    except KnowledgeBaseError as error:
        _fail(_render_kb_error(error, lang), 2)
    except CatalogMissing as error:
        _fail(f"Error: {error}", 1)
    except Exception as error:
        _fail(f"Internal error ({type(error).__name__}: {str(error)[:200]}); please report it.", 1)
    else:
        _echo(output, nl=False)


# The command's --lang, for the messages of run() (written after the command ended).
_COMMAND_LANG: list[str | None] = [None]


def _lang(lang: str | None) -> str | None:
    """A command's --lang, else the one given before the command (`expert --lang es advise`)."""
    if lang is None:
        root = click.get_current_context(silent=True)
        lang = root.find_root().params.get("lang") if root is not None else None
    _COMMAND_LANG[0] = lang
    return lang


class _Command(click.Command):
    """A command that takes the other names of its options declared in
    rules/vocabulary.toml ([aliases.arguments]: `--gpu` for `--vram`,
    `--model-name` for `--model-size`) and reads the values of `--format` and
    `--detail` as the value reader does (`MARKDOWN`, `md`, `resumen`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not any(arg.startswith("--") for arg in args) or any(arg in ("--help", "-h") for arg in args):
            return super().parse_args(ctx, args)
        known = {opt for param in self.params for opt in getattr(param, "opts", [])}
        if all(arg.partition("=")[0] in known for arg in args if arg.startswith("--")) and not any(
                arg.partition("=")[0] in ("--format", "--detail") for arg in args):
            return super().parse_args(ctx, args)     # nothing to rename: the knowledge base is not loaded for it
        from ..input.values import argument, read_choice
        from ..knowledge.bases import knowledge_base
        from ..knowledge.vocabulary import vocabulary

        vocab = vocabulary(knowledge_base())
        options = {opt: param for param in self.params for opt in getattr(param, "opts", [])}
        by_name = {param.name: param.opts[0] for param in self.params
                   if isinstance(param, click.Option) and param.name}
        rewritten, at = [], 0
        while at < len(args):
            arg = args[at]
            name, sep, value = arg.partition("=")
            if arg == "--":
                rewritten += args[at:]
                break
            if name.startswith("--") and name not in options:
                target = argument(name[2:], by_name, vocab)
                if target in by_name:
                    name = by_name[target]
            if name in ("--format", "--detail") and name in options:
                if not sep and at + 1 < len(args):
                    at += 1
                    value, sep = args[at], "="
                words = {v: v for v in (("text", "markdown", "json") if name == "--format" else ("full", "summary"))}
                words.update({w: v for v, ws in vocab.value_aliases.get(name[2:], {}).items() for w in ws})
                value = read_choice(value, words) or value
            rewritten.append(name + sep + value if sep else name)
            at += 1
        return super().parse_args(ctx, rewritten)
def _catalogs(catalog: tuple[str, ...]) -> list[str]:
    """The --catalog files given before the command (`expert --catalog current advise`), then the command's."""
    context = click.get_current_context(silent=True)
    root = context.find_root() if context is not None else None
    before = root.params.get("catalog") or () if root is not None and root is not context else ()
    return [*before, *catalog]


class _Group(click.Group):
    """The `expert` group, which is also the console script (so sphinx-click
    and click-man find it): run standalone, every error is a message and an
    exit status, never a traceback (:func:`_standalone`). `--color` before a
    command takes no value unless one follows (`expert --color explain` is
    `--color=always`)."""

    command_class = _Command

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        # prog_name "expert" names _EXPERT_COMPLETE, also for python -m expert
        _standalone(lambda: super(_Group, self).main(args, prog_name or "expert", complete_var,
                                                     standalone_mode=False, **extra))

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args = list(args)
        for at, arg in enumerate(args):
            if not arg.startswith("-"):
                break
            if arg == "--color" and (at + 1 == len(args) or args[at + 1] not in COLOR_WHEN):
                args[at] = "--color=always"
        return super().parse_args(ctx, args)


@click.group(cls=_Group, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(None, "-V", "--version", package_name="expert")
@click.option("-l", "--lang", metavar="LANG", help="es or en, for every command (default: EXPERT_LANG, then LC_ALL/LANG).",
              shell_complete=LANGS)
@COLOR_OPTION
@CATALOG_OPTION
@click.pass_context
def main(ctx: click.Context, lang: str | None, color: str | None, no_color: bool | None,
         catalog: tuple[str, ...]) -> None:
    """Which GPU (or GPUs) to fine-tune a large language model on, and why.

    Without a command, `expert` asks you a few questions (the same as
    `expert ask`).

    \b
    Examples:
      expert
      expert advise --model-size 8 --method lora
      expert advise --model-size 70 --method lora --deadline 8 --lang es
      expert advise --model-size Llama-3-8B --vram 24 --format json
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(ask, lang=lang)


DETAIL_OPTION = click.option(
    "--detail", metavar="DETAIL", default="full", show_default=True,
    help="full, or summary (the pick, alternatives, advice and warnings; no trace, no reasons): for chat.")


LAUNCH_OPTIONS = [
    click.option("--launch", "launch_dir", metavar="DIR",
                 help="Also write the files that run the recommended configuration into DIR (docs/launch.md)."),
    click.option("--launch-option", metavar="N", help="With --launch: the rank of the option to write (default 1, the pick)."),
    click.option("--launch-model", metavar="MODEL",
                 help="With --launch: the model's local path or Hugging Face id the files load."),
    click.option("--force", is_flag=True, default=False, help="With --launch: write into a directory that is not empty."),
]


@main.command()
@_options(PROFILE_OPTIONS + [MODEL_CONFIG_OPTION, CATALOG_OPTION, BASIS_OPTION, PRICE_OPTION] + OUTPUT_OPTIONS
          + [DETAIL_OPTION, COLOR_OPTION] + LAUNCH_OPTIONS)
def advise(fmt: str, lang: str | None, catalog: tuple[str, ...], basis: str, model_config: str | None,
           prices: tuple[str, ...], detail: str, launch_dir: str | None, launch_option: str | None,
           launch_model: str | None, force: bool, color: str | None = None, no_color: bool | None = None,
           **profile: Any) -> None:
    """Recommend GPUs for a fine-tuning run, with the reasons.

    Every flag is optional; what is not given takes a default that the
    answer lists as assumed. Exit status: 0 answered (even when nothing fits),
    2 invalid input, 1 anything else.

    \b
    Examples:
      expert advise --model-size 7 --method qlora --budget low
      expert advise --model-size 13 --method full --vram 24 --lang es
      expert advise --model-size 70 --method lora --format markdown
      expert advise --model "Mixtral 8x7B" --method qlora
      expert advise --model-config ./my-model/config.json --method lora
      expert advise --model-size 8 --format json --detail summary
    """

    lang = _lang(lang)

    def action() -> str:
        from .api import advise as run_advise

        # --lang and --basis as typed: the library is their one reader, and refuses what its types do not name
        result = run_advise(lang=cast("Lang | None", lang), catalog=_catalogs(catalog), basis=cast("Basis", basis),
                            model_config=model_config,
                            prices=_prices(prices), **profile)
        output = result.render(fmt, width=_width(), detail=detail)
        if launch_dir is not None:
            _write_launch(result, launch_dir, launch_option, launch_model, force)
        elif launch_option is not None or launch_model is not None or force:
            from ..errors import InputError

            _ = _command_gettext()
            raise InputError("launch", _("--launch-option, --launch-model and --force go with --launch DIR."))
        return output

    _run(action, lang)


EXPLAIN_DETAIL_OPTION = click.option(
    "--detail", metavar="DETAIL", default="full", show_default=True,
    help="full, or summary (under 4 KB: the answer, how, why not and what if in a sentence each): for chat.")


def _write_launch(result: Any, directory: str, option: str | None, model: str | None, force: bool) -> None:
    """--launch: the library writes the files; a line on stderr says where (stdout keeps the answer)."""
    from .launch import launch

    rank: Any = 1 if option is None else (int(option) if option.strip().isdigit() and len(option) < 6 else option)
    files = launch(result, rank, model=model, directory=directory, overwrite=force)
    _ = _command_gettext()
    _echo(terminal(_("Launch files for option %(rank)s written to %(dir)s: %(files)s. Start with: %(command)s")
          % {"rank": files.option, "dir": quoted(directory, 200), "files": ", ".join(files.files),
             "command": files.command}), err=True)


# --what-if accepts a profile field name or its flag's name.
WHAT_IF_NAMES = {
    "model-size": "model_size_b", "method": "method", "budget": "budget", "rocm-ok": "rocm_ok",
    "deadline": "deadline_h", "vram": "vram_gb", "dataset": "dataset_examples",
    "tokens-per-example": "tokens_per_example", "epochs": "epochs",
    "purpose": "purpose", "interruptible": "interruptible", "stack": "stack",
}


def _prices(pairs: tuple[str, ...]) -> dict[str, str]:
    """--price CARD=USD pairs as a mapping; the library checks the cards and the numbers."""
    from ..errors import InputError

    _ = _command_gettext()
    prices = {}
    for pair in pairs:
        card, sep, value = pair.partition("=")
        if not sep or not card.strip():
            raise InputError("prices", _("--price: '%(pair)s' is not CARD=USD: a catalog id, an equals sign and "
                                         "the price per card-hour")
                             % {"pair": quoted(pair)})
        prices[card.strip().lower()] = value.strip()
    return prices


def _what_if(pairs: tuple[str, ...]) -> dict[str, str]:
    from ..errors import InputError, nearest

    changes = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        key = name.strip().lstrip("-")
        field = WHAT_IF_NAMES.get(key, key if key in WHAT_IF_NAMES.values() else None)
        if not sep or field is None:
            close = nearest(key, WHAT_IF_NAMES) if sep else []
            raise InputError("what_if", "--what-if: '%s' is not FIELD=VALUE with FIELD one of %s.%s" % (
                quoted(pair), ", ".join(WHAT_IF_NAMES), " Did you mean %s?" % " or ".join(close) if close else ""),
                close)
        changes[field] = value
    return changes


@main.command(short_help="Answer and show the reasoning: how, why not, what if.")
@_options(PROFILE_OPTIONS + [MODEL_CONFIG_OPTION, CATALOG_OPTION, BASIS_OPTION, PRICE_OPTION] + OUTPUT_OPTIONS
          + [COLOR_OPTION, EXPLAIN_DETAIL_OPTION])
@click.option("--why-not", "why_not", metavar="GPU", help="Explain why a card (a catalog id, or 'own') is not the answer.",
              shell_complete=complete.catalog_cards)
@click.option("--what-if", "what_if", metavar="FIELD=VALUE", multiple=True, shell_complete=complete.what_if,
              help="Re-run with a changed answer and show what changes (repeatable): deadline=24, method=qlora.")
def explain(fmt: str, lang: str | None, why_not: str | None, what_if: tuple[str, ...], catalog: tuple[str, ...],
            basis: str, prices: tuple[str, ...], color: str | None, no_color: bool | None, model_config: str | None,
            detail: str, **profile: Any) -> None:
    """Answer a consultation and show the reasoning: how, why not, what if.

    HOW: the chain of rules from your answers to each recommendation, each
    step citing its rule and the guide's section. WHY NOT: what ruled each
    other card out and the smallest change that would make it the answer.
    WHAT IF: what changes when an answer changes, and which rules say so.

    \b
    Examples:
      expert explain --model-size 70 --method lora --deadline 8 --lang es
      expert explain --model-size 13 --method lora --vram 16 --why-not own
      expert explain --model-size 13 --method full --what-if method=qlora
    """

    lang = _lang(lang)

    def action() -> str:
        from ..explanation.explain import explain as run_explain

        # --lang and --basis as typed: the library is their one reader, and refuses what its types do not name
        explanation = run_explain(lang=cast("Lang | None", lang), why_not=why_not, what_if=_what_if(what_if),
                                  catalog=_catalogs(catalog), basis=cast("Basis", basis), model_config=model_config, prices=_prices(prices), detail=detail,
                                  **profile)
        return explanation.render(fmt, width=_width(), color=_color())

    _run(action, lang)


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
                raise _OutputError(error) from None
        _echo(prompt, nl=False)
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
        _echo(terminal(line.rstrip("\n")))
        return line.rstrip("\n")


@main.command()
@_options(PROFILE_OPTIONS + [CATALOG_OPTION, OUTPUT_OPTIONS[1], COLOR_OPTION])
def ask(lang: str | None, catalog: tuple[str, ...], color: str | None = None, no_color: bool | None = None,
        **known: Any) -> None:
    """Answer a few questions and get a recommendation (interactive).

    At any question: ? or why (por qué) says why it is asked, back (atrás)
    returns to the previous one, quit (exit, salir) or Ctrl-C ends the
    consultation, Enter takes the default. Flags given on the command line
    are not asked. Answers can be piped in, one per line.
    Exit status: 0 done, 2 invalid flag, 130 ended by quit or Ctrl-C,
    1 input ended early (Ctrl-D).
    """
    from ..errors import InputError, KnowledgeBaseError
    from .consultation import AnswerError, Consultation

    try:
        # --lang as typed: the library is its one reader, and refuses what its type does not name
        consultation = Consultation(lang=cast("Lang | None", _lang(lang)), catalog=_catalogs(catalog), **known)
    except InputError as error:
        _fail(f"Error: {error}", 2)
    except KnowledgeBaseError as error:
        _fail(_render_kb_error(error, lang), 2)
    from ..i18n import Localizer

    _ = Localizer(consultation.lang).gettext
    from ..explanation.templating import wrap as _wrap

    use_color = _color()
    bold = (lambda s: click.style(s, bold=True)) if use_color else (lambda s: s)
    width = _width()
    source = _Input()
    question = None
    try:
        _echo(_wrap(_("Answer a few questions (? or why: why it is asked; back: previous question; "
                      "Enter: the default in brackets; quit or Ctrl-C: stop)."), width))
        while (question := consultation.next_question()) is not None:
            _echo()
            _echo(bold(_wrap(question.text, width)))
            if question.hint:
                _echo(_wrap(f"({question.hint})", width))
            if question.choices:
                _echo("  " + "   ".join(f"{n}) {c['label']}" for n, c in enumerate(question.choices, 1)))
            line = source.read(f"[{question.default_label}] > ")
            word = " ".join(line.strip().lower().split())
            if word in WHY_WORDS:
                _echo(_wrap(question.why, width, "  ", "  "))
                continue
            if word in QUIT_WORDS:
                raise KeyboardInterrupt
            if word in BACK_WORDS:
                if consultation.back() is None:
                    _echo(_("This is the first question."))
                continue
            try:
                consultation.answer(question.id, line if word else (
                    "no" if question.default is None else question.default))
            except AnswerError as error:
                sys.stdout.flush()
                if not source.interactive:   # asking again would read the next answer as this one's
                    _fail(_("Error: %(error)s (the question: %(question)s)") % {
                        "error": error, "question": question.text}, 2)
                _echo(terminal(str(error)), err=True)
        _echo()
        _echo(consultation.result().render("text", width=width))
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
            _echo(terminal(_("Please answer yes or no (Enter: no).")), err=True)
        if reply in YES_WORDS:
            from ..explanation.explain import explain as run_explain

            explanation = run_explain(lang=consultation.lang, catalog=consultation.catalog, **consultation.facts())
            _echo(explanation.render("text", width=width, color=use_color))
    except KeyboardInterrupt as interrupted:
        source.close()     # before anything is written: the modes readline changed
        _echo()
        sys.exit(131 if isinstance(interrupted, _Quit) else 130)
    except _Unreadable as error:
        _fail(_("Error: the input is not text in %(encoding)s.") % {"encoding": error.encoding}, 2)
    except EOFError:
        _echo()
        if not source.interactive and question is not None:
            _fail(_("Error: the input ended before an answer to the question: %(question)s") % {
                "question": question.text}, 2)
        _echo(_("Input ended before the consultation was complete."), err=True)
        sys.exit(1)
    finally:
        source.close()


@main.command(short_help="List the models the knowledge base knows by name.")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("-f", "--format", "fmt", metavar="FORMAT", default="text", show_default=True, help="text, markdown or json.")
@click.option("-l", "--lang", metavar="LANG", help="es or en.")
@click.option("-w", "--wide", is_flag=True, help="Every column (hidden size, MLP, vocabulary, family), however wide.")
@COLOR_OPTION
def models(names: tuple[str, ...], fmt: str, lang: str | None, wide: bool = False, color: str | None = None,
           no_color: bool | None = None) -> None:
    """List the model table: total and active parameters and architecture of
    each model, with its source (markdown and json name the published
    config.json). Any of these names, written as you like (case, spaces,
    dashes, the organisation and suffixes such as -Instruct do not matter),
    is accepted by --model-size. NAME keeps the models whose name or family
    begins with it (qwen3, "llama 3.1", mixtral).

    \b
    Examples:
      expert models
      expert models qwen3 mixtral
      expert models --wide
      expert models --format markdown --lang es
      expert models --format json
    """
    lang = _lang(lang)

    def action() -> str:
        from ..explanation.render import render_models
        from ..i18n import resolve_lang
        from ..knowledge.bases import knowledge_base

        return render_models(knowledge_base(), fmt, resolve_lang(lang), _width(), names, wide=wide)

    _run(action, lang)


@main.command(short_help="List the knowledge base's rules, with their citations.")
@click.argument("ids", nargs=-1, metavar="[ID]...", shell_complete=complete.rule_ids)
@click.option("-f", "--format", "fmt", metavar="FORMAT", default="text", show_default=True, help="text, markdown or json.",
              shell_complete=complete.names_in("templating", "FORMATS"))
@click.option("-l", "--lang", metavar="LANG", help="es or en.", shell_complete=LANGS)
@click.option("--rules", "rules_dir", metavar="DIR", help="A knowledge base other than the shipped one.",
              shell_complete=complete.directories)
@COLOR_OPTION
def rules(ids: tuple[str, ...], fmt: str, lang: str | None, rules_dir: str | None, color: str | None = None,
          no_color: bool | None = None) -> None:
    """List the rules of the knowledge base: id, guide section, conclusion, explanation.

    \b
    Examples:
      expert rules
      expert rules --lang es misses-deadline amd-needs-rocm
      expert rules --format markdown > docs/rules.md
    """
    lang = _lang(lang)

    def action() -> str:
        from ..explanation import rulebook
        from ..i18n import Localizer, resolve_lang
        from ..knowledge.bases import knowledge_base

        tr = Localizer(resolve_lang(lang))
        kb = knowledge_base(rules_dir)
        return rulebook.render(kb, rulebook.describe(kb, tr, ids), fmt, tr, _width())

    _run(action, lang)


@main.command(short_help="List the cards: the guide's, the shipped catalogs, the cards you can name.")
@click.option("-f", "--format", "fmt", metavar="FORMAT", default="text", show_default=True, help="text or json.",
              shell_complete=complete.words("text", "json"))
@click.option("-l", "--lang", metavar="LANG", help="es or en.", shell_complete=LANGS)
@COLOR_OPTION
def catalogs(fmt: str, lang: str | None, color: str | None = None, no_color: bool | None = None) -> None:
    """List the cards the knowledge base knows.

    The guide's cards (always considered), the catalogs that ship with
    expert, used by name from any directory (--catalog current), and the
    cards you can name as your own GPU (--vram "RTX 3090"), with the names
    people write for them.

    \b
    Examples:
      expert catalogs
      expert catalogs --format json
    """
    lang = _lang(lang)

    def action() -> str:
        from ..i18n import Localizer, resolve_lang
        from ..knowledge.bases import knowledge_base, shipped_catalogs
        from . import listing

        tr = Localizer(resolve_lang(lang))
        return listing.render(listing.describe(knowledge_base(), shipped_catalogs()), fmt, tr)

    _run(action, lang)


@main.command(short_help="Validate a knowledge base and user catalogs.")
@click.option("--rules", "rules_dir", metavar="DIR", help="The knowledge base to check (default: the shipped one).",
              shell_complete=complete.directories)
@CATALOG_OPTION
@click.option("-l", "--lang", metavar="LANG", help="es or en.", shell_complete=LANGS)
@COLOR_OPTION
def check(rules_dir: str | None, catalog: tuple[str, ...], lang: str | None, color: str | None = None,
          no_color: bool | None = None) -> None:
    """Validate a knowledge base and user catalogs before they ship.

    Prints one line per problem (file:line: what is wrong) and exits 1, or
    says it is sound and exits 0. Besides malformed files, unknown fields,
    wrong types and duplicate ids, it finds rules that can never fire,
    opposing rules that can fire together, redundant rules, references to
    undefined cards, and messages missing from the Spanish catalog.

    \b
    Examples:
      expert check
      expert check --rules my-rules/ --catalog current
    """
    from ..errors import InputError
    from ..i18n import CatalogMissing, Localizer, resolve_lang
    from ..knowledge.check import check as run_check

    try:
        tr = Localizer(resolve_lang(_lang(lang)))
    except (InputError, CatalogMissing) as error:
        _fail(f"Error: {error}", 2)
    from ..knowledge.bases import shipped_catalogs

    shipped = shipped_catalogs()      # `--catalog current`: the shipped catalog of that name, as advise reads it
    problems = run_check(rules_dir, [str(shipped[c]) if c in shipped else c for c in _catalogs(catalog)])
    for problem in problems:
        _echo(terminal(problem.render(tr.gettext), newlines=True))
    if problems:
        sys.exit(1)
    from ..knowledge.bases import knowledge_base

    kb = knowledge_base(rules_dir, _catalogs(catalog))
    _echo(tr.gettext("The knowledge base is sound: %(rules)s rules, %(cards)s cards, no problems found.")
          % {"rules": len(kb.rules), "cards": len(kb.catalog)})


@main.command(short_help="Estimate a run's GPU memory from first principles.")
@click.option("-s", "--model-size", "-m", "--model", "model_size_b", metavar="SIZE",
              help="Parameters in billions, or the model's name: 7, 70B, Llama-3.1-8B, Mixtral-8x7B.")
@MODEL_CONFIG_OPTION
@click.option("-M", "--method", metavar="METHOD", help="full, lora or qlora.", shell_complete=complete.field_choices("method"))
@click.option("--gpus", metavar="N", help="How many GPUs share the run (default 1).")
@click.option("--strategy", metavar="STRATEGY", help="single, ddp, zero1, zero2, zero3 or fsdp (default: zero3 with several GPUs).",
              shell_complete=complete.names_in("estimate", "STRATEGIES"))
@click.option("--offload/--no-offload", default=None, help="Offload gradients and optimizer state to CPU memory.")
@click.option("--seq-len", "seq_len", metavar="TOKENS", help="Sequence length (default 1024).")
@click.option("--batch", metavar="N", help="Micro-batch per GPU (default 1).")
@click.option("--checkpointing/--no-checkpointing", default=None, help="Activation checkpointing (default on).")
@click.option("--optimizer", metavar="NAME", help="adamw, adamw8bit, paged-adamw8bit or sgd.")
@click.option("--precision", metavar="PRECISION", help="mixed (bf16 + fp32 master), bf16 (pure) or fp16 (fp32 master, loss scaling).",
              shell_complete=complete.names_in("estimate", "PRECISIONS"))
@click.option("--base-bits", "base_bits", metavar="BITS", help="Frozen weights of LoRA: 16, 8 or 4.")
@click.option("--lora-rank", "lora_rank", metavar="R", help="LoRA rank (default 16).")
@click.option("--gpu", metavar="ID", shell_complete=complete.catalog_cards,
              help="The card, for the training time: a catalog id or a card you own (expert catalogs lists them; "
                   "default: timing.toml's reference card).")
@click.option("--dataset", "dataset_examples", metavar="N", help="Training examples, for the time (default 10000).")
@click.option("--tokens-per-example", "tokens_per_example", metavar="N",
              help="Tokens in one example, for the time (default: the sequence length).")
@click.option("--epochs", metavar="N", help="Passes over the dataset, for the time (default 1).")
@click.option("--stack", metavar="STACK", help="typical or tuned: the software the time assumes (default typical).",
              shell_complete=complete.field_choices("stack"))
@click.option("-f", "--format", "fmt", metavar="FORMAT", default="text", show_default=True, help="text or json.",
              shell_complete=complete.words("text", "json"))
@click.option("-l", "--lang", metavar="LANG", help="es or en.", shell_complete=LANGS)
@CATALOG_OPTION
@COLOR_OPTION
def estimate(fmt: str, lang: str | None, catalog: tuple[str, ...], color: str | None = None,
             no_color: bool | None = None, **raw: Any) -> None:
    """Estimate from first principles the GPU memory a fine-tuning run needs.

    Weights, gradients, optimizer state, activations and framework overhead,
    per GPU and in all, drawn as bars, and the catalog cards that hold it;
    then how long the run takes on --gpu (rules/timing.toml). Every constant
    is in rules/ with its source.

    \b
    Examples:
      expert estimate --model-size 7 --method full
      expert estimate --model-size 70 --method lora --gpus 4 --strategy zero3
      expert estimate --model-size 8 --method lora --dataset 50k --epochs 3
      expert estimate --model-size 65 --method qlora --lora-rank 64 --format json
    """
    lang = _lang(lang)

    def action() -> str:
        from ..explanation.render import render_estimate
        from ..i18n import Localizer, resolve_lang
        from ..inference import estimate as estimator
        from ..inference.estimate_input import from_input
        from ..knowledge.bases import knowledge_base

        tr = Localizer(resolve_lang(lang))
        kb = knowledge_base(None, _catalogs(catalog))
        setup, run = from_input(kb, tr, **raw)
        return render_estimate(kb, estimator.estimate(kb, setup), fmt, tr.lang, _width(), run)

    _run(action, lang)


@main.command(short_help="Print JSON Schemas of the input and output, or tool definitions.")
@click.option("--what", metavar="WHAT", default="input", show_default=True,
              help="input, output, or tools (the tools of `expert mcp`).")
@click.option("--shape", metavar="SHAPE", default="mcp", show_default=True,
              help="With --what tools: mcp (name, description, inputSchema), openai (function calling) or "
                   "anthropic (input_schema).")
@click.option("-l", "--lang", metavar="LANG", help="es or en, for error messages.")
@COLOR_OPTION
def schema(what: str, shape: str, lang: str | None, color: str | None = None, no_color: bool | None = None) -> None:
    """Print a JSON Schema (draft 2020-12) or tool definitions, as JSON.

    The input schema and the tools' parameters come from the profile
    definition (rules/profile.toml); the output schema is the JSON of
    `expert advise --format json` (either --detail).

    \b
    Examples:
      expert schema --what input
      expert schema --what output
      expert schema --what tools --shape openai
      expert schema --what tools --shape anthropic
    """
    lang = _lang(lang)

    def action() -> str:
        import json

        from ..errors import InputError
        from ..i18n import Localizer, resolve_lang
        from ..knowledge.bases import knowledge_base
        from . import schema as schemas

        tr = Localizer(resolve_lang(lang))
        for name, value, accepted in (("what", what, ("input", "output", "tools")), ("shape", shape, schemas.SHAPES)):
            if value not in accepted:
                raise InputError(name, tr.gettext("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
                    "field": "--" + name, "value": quoted(value),
                    "accepted": tr.gettext("choose %(accepted)s") % {"accepted": tr.list(accepted, style="or")}})
        kb = knowledge_base()
        data: Any = (schemas.input_schema(kb) if what == "input" else schemas.output_schema(kb) if what == "output"
                     else schemas.tools(kb, shape))
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    _run(action, lang)


@main.command(short_help="Serve the tools over MCP (stdio, or streamable HTTP).")
@click.option("--transport", metavar="TRANSPORT", default="stdio", show_default=True,
              help="stdio, or streamable-http (on --host and --port).")
@click.option("--host", default="127.0.0.1", show_default=True, help="With streamable-http: the address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535),
              help="With streamable-http: the port.")
@click.option("--allow-remote", is_flag=True,
              help="With streamable-http: allow a --host beyond this machine (0.0.0.0, a LAN address).")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME[:PORT]",
              help="With --allow-remote: a name clients use to reach the server (the Host header is checked); "
                   "repeat for each.")
def mcp(transport: str, host: str, port: int, allow_remote: bool, allowed_hosts: tuple[str, ...]) -> None:
    """Serve advise, explain, estimate and a consultation as MCP tools.

    Needs the mcp extra: pip install 'expert[mcp]'. Each tool answers in
    the language of its lang argument; a bad value is a tool error that
    names the field. A consultation's state stays in this process, keyed
    by an opaque id.

    \b
    Examples:
      expert mcp
      expert mcp --transport streamable-http --port 8000
      expert mcp --transport streamable-http --host 0.0.0.0 --allow-remote --allowed-host gpu.example.org

    Over HTTP the Host and Origin headers are always checked; each client
    session keeps its own consultations.
    """
    if transport not in ("stdio", "streamable-http"):
        _fail(f"Error: --transport: '{quoted(transport)}' is not accepted; choose stdio or streamable-http.", 2)
    try:
        from .mcp_server import serve
    except ImportError as error:
        _fail(f"Error: `expert mcp` needs the mcp package: pip install 'expert[mcp]' ({quoted(str(error))}).", 1)
    if transport == "streamable-http":
        from .mcp_server import transport_security

        try:
            transport_security(host, port, allow_remote, allowed_hosts)
        except ValueError as error:
            _fail(f"Error: {error}", 2)
    serve(transport, host=host, port=port, allow_remote=allow_remote, allowed_hosts=allowed_hosts)


def _command_gettext() -> Callable[[str], str]:
    """gettext in the language of the command that ran (English when it has none)."""
    from ..i18n import Localizer, resolve_lang

    try:
        return Localizer(resolve_lang(_COMMAND_LANG[0])).gettext
    except Exception:
        return str


def _to_stderr(message: str) -> None:
    """A last message on stderr, if stderr can still be written."""
    with contextlib.suppress(OSError, ValueError):
        click.echo(terminal(message, newlines=True), err=True)


def _output_failed(error: OSError) -> int:
    """Report output that could not be written; stop writing it. Exit status 1.
    A closed pipe (`expert rules | head`) is quiet: the reader wanted no more."""
    import errno

    _ = _command_gettext()
    reason = terminal(error.strerror or type(error).__name__)
    if error.errno != errno.EPIPE:
        _to_stderr(_("Error: the output could not be written (%(reason)s).") % {"reason": reason})
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


def run() -> None:
    """``python -m expert``: the same as the ``expert`` command (the group, run standalone)."""
    main.main()


def _standalone(call: Callable[[], Any]) -> None:
    """Run the group: every error is a message on stderr and an exit status, never a traceback."""
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
    except _OutputError as error:
        code = _output_failed(error.error)
    except click.ClickException as error:   # a usage error: click's message quotes what was typed
        # click types message Final; show() prints it, so what was typed is made safe for the terminal first
        error.message = terminal(error.message, newlines=True)  # type: ignore[misc]
        try:
            error.show()
        except OSError as failed:
            _output_failed(failed)
        code = error.exit_code
    except click.Abort:
        _to_stderr("Aborted!")
        code = 1
    except KeyboardInterrupt:
        code = 130
    except OSError as error:                 # click's own output (help, version) could not be written
        code = _output_failed(error)
    except Exception as error:
        _to_stderr(f"Internal error ({type(error).__name__}: {str(error)[:200]}); please report it.")
        code = 1
    sys.exit(code)

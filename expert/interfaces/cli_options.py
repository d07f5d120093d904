"""The command line's options and how their values are read before the
library reads them: the profile's flags (one per field of
``rules/profile.toml``), the shared ones (--catalog, --format, --lang,
--color ...), --price and --what-if pairs, and :class:`Command`, which takes
the other names of options declared in ``rules/vocabulary.toml``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..escape import quoted
from . import completion as complete
from .cli_output import command_gettext

LANGS = complete.names_in("i18n", "SUPPORTED")


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
    return options(_COLOR_OPTIONS)(function)


OUTPUT_OPTIONS = [
    click.option("-f", "--format", "fmt", metavar="FORMAT", default="text", show_default=True,
                 help="text, markdown or json.", shell_complete=complete.names_in("templating", "FORMATS")),
    click.option("-l", "--lang", metavar="LANG", help="es or en (default: EXPERT_LANG, then LC_ALL/LANG, then en).",
                 shell_complete=LANGS),
]


def options(options: list[Callable[..., Any]]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


class Command(click.Command):
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


def given_catalogs(catalog: tuple[str, ...]) -> list[str]:
    """The --catalog files given before the command (`expert --catalog current advise`), then the command's."""
    context = click.get_current_context(silent=True)
    root = context.find_root() if context is not None else None
    before = root.params.get("catalog") or () if root is not None and root is not context else ()
    return [*before, *catalog]


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


EXPLAIN_DETAIL_OPTION = click.option(
    "--detail", metavar="DETAIL", default="full", show_default=True,
    help="full, or summary (under 4 KB: the answer, how, why not and what if in a sentence each): for chat.")


# --what-if accepts a profile field name or its flag's name.
WHAT_IF_NAMES = {
    "model-size": "model_size_b", "method": "method", "budget": "budget", "rocm-ok": "rocm_ok",
    "deadline": "deadline_h", "vram": "vram_gb", "dataset": "dataset_examples",
    "tokens-per-example": "tokens_per_example", "epochs": "epochs",
    "purpose": "purpose", "interruptible": "interruptible", "stack": "stack",
}


def parse_prices(pairs: tuple[str, ...]) -> dict[str, str]:
    """--price CARD=USD pairs as a mapping; the library checks the cards and the numbers."""
    from ..errors import InputError

    _ = command_gettext()
    prices = {}
    for pair in pairs:
        card, sep, value = pair.partition("=")
        if not sep or not card.strip():
            raise InputError("prices", _("--price: '%(pair)s' is not CARD=USD: a catalog id, an equals sign and "
                                         "the price per card-hour")
                             % {"pair": quoted(pair)})
        prices[card.strip().lower()] = value.strip()
    return prices


def parse_what_if(pairs: tuple[str, ...]) -> dict[str, str]:
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

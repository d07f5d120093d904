"""The command line's options and how their values are read before the
library reads them: the profile's flags (one per field of
``rules/profile.toml``), the shared ones (--catalog, --format, --lang,
--color ...), --price and --what-if pairs, and :class:`Command`, which takes
the other names of options declared in ``rules/vocabulary.toml``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal, get_origin

import click

from ...escape import quoted
from ...input.profile_types import FIELD_TYPES
from . import completion as complete
from .output import command_gettext

LANGS = complete.names_in("i18n", "SUPPORTED")


# The profile's flags: one per field of the profile's one declaration (rules/profile.toml, in its order, as
# expert/input/profile_types.py has it), each with its command-line words: its flags (a yes-or-no field's
# pair), metavar and help, and what completes its value (a choice field's choices unless said). A field
# without words here is still a flag, named after it (--field-name, --field-name/--no-field-name).
PROFILE_FLAGS: dict[str, dict[str, Any]] = {
    "model_size_b": dict(flags=("-s", "--model-size", "-m", "--model"), metavar="SIZE",
                         help="Parameters in billions, or the model's name: 7, 70B, Llama-3.1-8B, Mixtral-8x7B "
                              "(expert models lists the names known), or its Hugging Face Hub id: openai/gpt-oss-20b."),
    "method": dict(flags=("-M", "--method"), metavar="METHOD", help="full, lora or qlora."),
    "budget": dict(flags=("--budget",), metavar="BUDGET", help="low, medium or high."),
    "rocm_ok": dict(flags=("--rocm-ok/--no-rocm",), help="Willing (or not) to set up and debug ROCm for AMD cards."),
    "deadline_h": dict(flags=("--deadline",), metavar="HOURS", help="Time available for training: 8, 8h, 2 days."),
    "vram_gb": dict(flags=("--vram", "--own-gpu"), metavar="GB", shell_complete=complete.own_cards,
                    help="A GPU you already have: its VRAM (24, 24 GB) or its name (RTX 3090, a 3090), several with "
                         "their count (2x RTX 3090); auto to read this machine's cards (nvidia-smi or rocm-smi); no "
                         "for none."),
    "dataset_examples": dict(flags=("--dataset",), metavar="N", help="Training examples: 10000, 10k, 50 thousand."),
    "tokens_per_example": dict(flags=("--tokens-per-example",), metavar="N",
                               help="Tokens in one training example (default 1024): 512, 4k."),
    "epochs": dict(flags=("--epochs",), metavar="N", help="Passes over the dataset (default 1): 1, 3, 0.5."),
    "purpose": dict(flags=("--purpose",), metavar="PURPOSE", help="experiment or production."),
    "interruptible": dict(flags=("--interruptible/--no-interruptible",),
                          help="Whether training tolerates interruptions (spot instances)."),
    "stack": dict(flags=("--stack",), metavar="STACK", help="typical or tuned: the software the training time assumes."),
    "provider": dict(flags=("--provider",), metavar="PROVIDER",
                     help="Whose prices: cheapest (each card's cheapest price basis, the default), akash, aws, "
                          "digitalocean, google-cloud, lambda, nebius, runpod or verda (rules/prices)."),
}


def profile_option(field: str, kind: Any) -> Callable[[Any], Any]:
    """The flag of one profile field of type ``kind`` (profile_types.FIELD_TYPES): a pair of flags for a
    yes-or-no field, the choices completed for a choice field."""
    name = field.replace("_", "-")
    words = {"flags": (f"--{name}/--no-{name}",) if kind is bool else (f"--{name}",), **PROFILE_FLAGS.get(field, {})}
    flags = words.pop("flags")
    if kind is bool:
        return click.option(*flags, field, default=None, **words)
    if get_origin(kind) is Literal:
        words.setdefault("shell_complete", complete.field_choices(field))
    return click.option(*flags, field, **words)


PROFILE_OPTIONS = [profile_option(field, kind) for field, kind in FIELD_TYPES.items()]


# The settings a person may fix instead of the rules (expert/input/settings.py), under `expert estimate`'s names.
SETTING_OPTIONS = [
    click.option("--seq-len", "seq_len", metavar="TOKENS",
                 help="The sequence length memory is sized for: 2048, 4k (default: the examples' length, --tokens-per-example)."),
    click.option("--batch", metavar="N", help="The micro-batch per device (default: the fastest that fits)."),
    click.option("--lora-rank", "lora_rank", metavar="R", help="The LoRA rank (default 16)."),
    click.option("--checkpointing/--no-checkpointing", default=None,
                 help="Activation checkpointing (default: the recipe's, on)."),
]


MODEL_CONFIG_OPTION = click.option(
    "--model-config", "model_config", metavar="FILE",
    help="A local Hugging Face config.json: the model's architecture is read from it (instead of --model-size).")


BASIS_OPTION = click.option(
    "--basis", metavar="BASIS", default="checked", show_default=True, shell_complete=complete.names_in("api", "BASES"),
    help="checked (size by what each recipe needs), estimate (the same, the requirement stated from the first-principles estimate), or guide (the guide's figures at their word).")


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
        try:
            return self.read_args(ctx, args)
        except click.NoSuchOption as error:
            # an option of another command (`expert advise --offload`: estimate's) is named with its command,
            # not answered with a near name of this one ("Did you mean '--color'?")
            group = ctx.parent.command if ctx.parent is not None else None
            others = [] if not isinstance(group, click.Group) else [
                f"{ctx.parent.command_path} {name}" for name, command in group.commands.items()  # type: ignore[union-attr]
                if command is not self and not command.hidden and error.option_name in {
                    opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}]
            if not others:
                raise
            from ...i18n import Localizer
            from .usage import elsewhere

            refused = click.NoSuchOption(error.option_name, elsewhere(Localizer("en"), error.option_name,
                                                                      ctx.command_path, others), ctx=ctx)
            vars(refused)["elsewhere"] = others
            raise refused from None

    def read_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """``args`` with the other names of options and values read as their own (:meth:`parse_args`)."""
        if not any(arg.startswith("--") for arg in args) or any(arg in ("--help", "-h") for arg in args):
            return super().parse_args(ctx, self.once_each(ctx, args))
        known = {opt for param in self.params for opt in getattr(param, "opts", [])}
        if all(arg.partition("=")[0] in known for arg in args if arg.startswith("--")) and not any(
                arg.partition("=")[0] in ("--format", "--detail") for arg in args):
            return super().parse_args(ctx, self.once_each(ctx, args))     # nothing to rename: no knowledge base loaded
        from ...input.values import argument, read_choice
        from ...knowledge.bases import knowledge_base
        from ...knowledge.vocabulary import vocabulary

        vocab = vocabulary(knowledge_base())
        options = {opt: param for param in self.params for opt in getattr(param, "opts", [])}
        by_name = {param.name: param.opts[0] for param in self.params
                   if isinstance(param, click.Option) and param.name}
        rewritten, at = [], 0
        renamed: dict[int, str] = {}
        while at < len(args):
            arg = args[at]
            name, sep, value = arg.partition("=")
            if arg == "--":
                rewritten += args[at:]
                break
            if name.startswith("--") and name not in options:
                target = argument(name[2:], by_name, vocab)
                if target in by_name:
                    renamed[len(rewritten)] = name
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
        return super().parse_args(ctx, self.once_each(ctx, rewritten, renamed))

    def once_each(self, ctx: click.Context, args: list[str], renamed: dict[int, str] | None = None) -> list[str]:
        """``args``, refused when an option that takes one value is given twice,
        under one name or two (`--model-size 8 --model 70`, `--vram 24 --gpu
        48`, `--rocm-ok --no-rocm`, `-m 8 -m70`): click would keep the last,
        silently. ``renamed``: the name as typed of an argument another name
        replaced. With --help, the help is what is asked for."""
        if any(arg in ("--help", "-h") for arg in args):
            return args
        options = {opt: param for param in self.params if isinstance(param, click.Option)
                   for opt in (*param.opts, *param.secondary_opts)}
        seen: dict[str, str] = {}
        at = 0
        while at < len(args):
            arg = args[at]
            if arg == "--":
                break
            name, sep, _value = arg.partition("=")
            if name not in options and not arg.startswith("--") and arg[:2] in options and len(arg) > 2:
                name, sep = arg[:2], "="        # a short option with its value attached: "-m70"
            param = options.get(name)
            if param is None:
                at += 1
                continue
            typed = (renamed or {}).get(at, name)
            if not param.multiple and not param.count:
                if param.name in seen:
                    self.refuse_twice(ctx, param, seen[str(param.name)], quoted(typed), args)
                seen[str(param.name)] = quoted(typed)
            value: str | None = _value if sep else None
            if not sep and not param.is_flag and at + 1 < len(args):
                following = args[at + 1]
                # an option whose value may be left out (--color) takes the next word only if it is one of its values
                optional = isinstance(param.flag_value, str)
                if not optional or (isinstance(param.type, click.Choice) and following in param.type.choices):
                    at += 1         # its value, whatever it looks like
                    value = following
            if value is not None and not value.strip() and param.name in NOT_GIVEN_WHEN_EMPTY:
                self.note_empty(ctx, typed, args)
            at += 1
        return args

    def note_empty(self, ctx: click.Context, typed: str, args: list[str]) -> None:
        """A profile field or setting given an empty value (`--model-size ""`, a shell variable left unset) is
        not given (docs/cli.md), and its default is assumed: said on stderr, never silently (a 7B answer
        to a question about 70B), while stdout keeps the answer a script reads."""
        gettext = _args_gettext(args, ctx.find_root().params.get("lang"))
        click.echo(gettext("Note: %(option)s is empty, so it is not given and its default is assumed; give it a "
                           "value, or leave it out.") % {"option": typed}, err=True)   # typed: one of its options' names

    def refuse_twice(self, ctx: click.Context, param: click.Option, first: str, second: str, args: list[str]) -> None:
        gettext = _args_gettext(args, ctx.find_root().params.get("lang"))
        long = next((opt for opt in param.opts if opt.startswith("--")), param.opts[0])
        raise click.UsageError(
            gettext("%(option)s is given twice; give it once.") % {"option": long} if first == second
            else gettext("%(option)s is given twice (as %(first)s and %(second)s); give it once.")
            % {"option": long, "first": first, "second": second}, ctx=ctx)


# The options an empty value leaves not given (the profile's fields and the settings); the others refuse it.
NOT_GIVEN_WHEN_EMPTY = frozenset([*FIELD_TYPES, "seq_len", "batch", "lora_rank"])


def _args_gettext(args: list[str], before: str | None = None) -> Callable[[str], str]:
    """gettext in the language the arguments ask for (--lang, -l; else the one
    given before the command, ``before``; else the environment's), before the
    command has run: English when it is not one."""
    from ...i18n import Localizer, resolve_lang
    from .usage import lang_asked

    try:
        return Localizer(resolve_lang(lang_asked(args, before))).gettext
    except Exception:
        return str


def given_catalogs(catalog: tuple[str, ...]) -> list[str]:
    """The --catalog files given before the command (`expert --catalog current advise`), then the command's."""
    context = click.get_current_context(silent=True)
    root = context.find_root() if context is not None else None
    before = root.params.get("catalog") or () if root is not None and root is not context else ()
    return [*before, *catalog]


def own_gpu_auto(profile: dict[str, Any], lang: str | None, catalog: list[str]) -> None:
    """``--own-gpu auto``: the library reads this machine's cards (``local_gpus()``) and its answer
    stands for the flag; a line on stderr says what was found (stdout keeps the answer)."""
    value = profile.get("vram_gb")
    if isinstance(value, str) and value.strip().casefold() == "auto":
        from ...escape import terminal
        from ..api import local_gpus

        found = local_gpus(lang=lang, catalog=catalog)   # type: ignore[arg-type]  # --lang as typed: the library reads it
        profile["vram_gb"] = found.answer
        click.echo(terminal(found.note), err=True)


DETAIL_OPTION = click.option(
    "--detail", metavar="DETAIL", default="full", show_default=True,
    help="full, or summary (the pick, alternatives, advice and warnings; no trace, no reasons): for chat.")


VERBOSE_OPTION = click.option(
    "--verbose", "-v", is_flag=True, default=False,
    help="Text and markdown: the full answer (each option in full, all the advice, why each card was left out, "
         "what was assumed) instead of the one-screen answer.")


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
    "purpose": "purpose", "interruptible": "interruptible", "stack": "stack", "provider": "provider",
}


def parse_prices(pairs: tuple[str, ...]) -> dict[str, str]:
    """--price CARD=USD pairs as a mapping; the library checks the cards and the numbers."""
    from ...errors import InputError

    _ = command_gettext()
    prices = {}
    for pair in pairs:
        card, sep, value = pair.partition("=")
        if not sep or not card.strip():
            raise InputError("prices", _("--price: '%(pair)s' is not CARD=USD: a catalog id, an equals sign and "
                                         "the price per card-hour")
                             % {"pair": quoted(pair)})
        if card.strip().lower() in prices:
            raise InputError("prices", _("--price: %(card)s is given twice; give one price a card.")
                             % {"card": quoted(card.strip())})
        prices[card.strip().lower()] = value.strip()
    return prices


def parse_what_if(pairs: tuple[str, ...]) -> dict[str, str]:
    """--what-if FIELD=VALUE pairs as a mapping: FIELD a profile field, its
    flag's name or another name of it (rules/vocabulary.toml: the library
    reads those, and refuses an unknown one or a field given twice)."""
    from ...errors import InputError

    _ = command_gettext()
    changes: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        key = name.strip().lstrip("-")
        if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,39}", key):     # a name, not a sequence
            raise InputError("what_if", _("--what-if: '%(pair)s' is not FIELD=VALUE, such as method=qlora or "
                                          "deadline=8.") % {"pair": quoted(pair)})
        field = WHAT_IF_NAMES.get(key, key.replace("-", "_"))
        if field in changes:
            raise InputError("what_if", _("--what-if: %(field)s is given twice; give it once.")
                             % {"field": quoted(key)})
        changes[field] = value
    return changes

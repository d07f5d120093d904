"""The commands about the knowledge base: ``expert models``, ``rules``,
``catalogs`` and ``check``.
"""

from __future__ import annotations

import sys

import click

from ...escape import terminal
from . import completion as complete
from .options import CATALOG_OPTION, COLOR_OPTION, LANGS, Command, given_catalogs
from .output import command_lang, echo, fail, run_action, terminal_width


@click.command(cls=Command, short_help="List the models the knowledge base knows by name.")
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
    lang = command_lang(lang)

    def action() -> str:
        from ...explanation.render import render_models
        from ...i18n import resolve_lang
        from ...knowledge.bases import knowledge_base

        return render_models(knowledge_base(), fmt, resolve_lang(lang), terminal_width(), names, wide=wide)

    run_action(action, lang)


@click.command(cls=Command, short_help="List the knowledge base's rules, with their citations.")
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
    lang = command_lang(lang)

    def action() -> str:
        from ...explanation import rulebook
        from ...i18n import Localizer, resolve_lang
        from ...knowledge.bases import knowledge_base

        tr = Localizer(resolve_lang(lang))
        kb = knowledge_base(rules_dir)
        return rulebook.render(kb, rulebook.describe(kb, tr, ids), fmt, tr, terminal_width())

    run_action(action, lang)


@click.command(cls=Command, short_help="List the cards: the guide's, today's market with prices, the cards you can name.")
@click.option("-f", "--format", "fmt", metavar="FORMAT", default="text", show_default=True, help="text or json.",
              shell_complete=complete.words("text", "json"))
@click.option("-l", "--lang", metavar="LANG", help="es or en.", shell_complete=LANGS)
@COLOR_OPTION
def catalogs(fmt: str, lang: str | None, color: str | None = None, no_color: bool | None = None) -> None:
    """List the cards the knowledge base knows.

    The guide's cards and today's market (the catalogs that ship with
    expert), all weighed by default (--catalog guide weighs the guide's
    alone), each with the providers that rent it, their prices and the
    dates they were read, or that nobody rents it; and the cards you can
    name as your own GPU (--vram "RTX 3090"), with the names people write
    for them.

    \b
    Examples:
      expert catalogs
      expert catalogs --format json
    """
    lang = command_lang(lang)

    def action() -> str:
        from ...i18n import Localizer, resolve_lang
        from ...knowledge.bases import knowledge_base, shipped_catalogs
        from . import listing

        tr = Localizer(resolve_lang(lang))
        return listing.render(listing.describe(knowledge_base(), shipped_catalogs()), fmt, tr)

    run_action(action, lang)


@click.command(cls=Command, short_help="Validate a knowledge base and user catalogs.")
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
    from ...errors import InputError
    from ...i18n import CatalogMissing, Localizer, resolve_lang
    from ...knowledge.check import check as run_check

    try:
        tr = Localizer(resolve_lang(command_lang(lang)))
    except (InputError, CatalogMissing) as error:
        fail(f"Error: {error}", 2)
    from ...knowledge.bases import shipped_catalogs

    shipped = shipped_catalogs()      # `--catalog current`: the shipped catalog of that name, as advise reads it
    problems = run_check(rules_dir, [str(shipped[c]) if c in shipped else c for c in given_catalogs(catalog)])
    for problem in problems:
        echo(terminal(problem.render(tr.gettext), newlines=True))
    if problems:
        sys.exit(1)
    from ...knowledge.bases import knowledge_base

    kb = knowledge_base(rules_dir, given_catalogs(catalog))
    echo(tr.gettext("The knowledge base is sound: %(rules)s rules, %(cards)s cards, no problems found.")
          % {"rules": len(kb.rules), "cards": len(kb.catalog)})

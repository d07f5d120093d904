"""Shell completion of flag VALUES for the command line (bash, zsh, fish):
methods, formats, budgets, card ids, rule ids, shipped catalogs and files.

Part of the CLI layer (it speaks click); the words come from the knowledge
base, so a new card or rule completes without a change here. Turn it on
with ``eval "$(_EXPERT_COMPLETE=bash_source expert)"`` (see docs/cli.md).
A completion never fails loudly: a broken knowledge base completes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from click.shell_completion import CompletionItem

Completer = Callable[[Any, Any, str], list[CompletionItem]]


def _matching(words: Iterable[str], incomplete: str, help_of: Callable[[str], str | None] | None = None
              ) -> list[CompletionItem]:
    return [CompletionItem(word, help=help_of(word) if help_of else None)
            for word in dict.fromkeys(words) if word.startswith(incomplete)]


def _kb(ctx: Any) -> Any:
    """The shipped knowledge base, with the catalogs already on the command line (if they load)."""
    from .api import knowledge_base

    catalogs = list(ctx.params.get("catalog") or ()) if ctx is not None else []
    try:
        return knowledge_base(None, catalogs)
    except Exception:
        return knowledge_base()


def words(*fixed: str) -> Completer:
    """Complete from a fixed list (formats, languages)."""
    return lambda ctx, param, incomplete: _matching(fixed, incomplete)


def field_choices(field: str) -> Completer:
    """Complete the choices of a profile field (method, budget, purpose)."""
    def complete(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
        try:
            spec = _kb(None).fields[field]
        except Exception:
            return []
        return _matching(spec.choices, incomplete, lambda c: spec.choice_labels.get(c))
    return complete


def catalog_cards(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """--why-not: the catalog's card ids (and those of --catalog given before it), and own."""
    try:
        kb = _kb(ctx)
    except Exception:
        return []
    names = {card.id: card.name for card in kb.catalog}
    return _matching([*names, "own"], incomplete, names.get)


def own_cards(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """--vram: the ids of the cards people own, then the catalog's."""
    try:
        kb = _kb(ctx)
    except Exception:
        return []
    names = {card.id: card.name for card in kb.owned}
    names.update({card.id: card.name for card in kb.catalog if card.id not in names})
    return _matching(names, incomplete, names.get)


def rule_ids(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """expert rules ID: the rule ids."""
    try:
        kb = _kb(None)
    except Exception:
        return []
    return _matching([rule.id for rule in kb.rules], incomplete, lambda r: kb.rule(r).kind)


def catalogs(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """--catalog: a shipped catalog by name, or a file (the shell completes paths)."""
    from .api import shipped_catalogs

    return _matching(shipped_catalogs(), incomplete) + [CompletionItem(incomplete, type="file")]


def directories(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(incomplete, type="dir")]


def what_if(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """--what-if: FIELD= with the flag names; after '=', the field's choices."""
    from .cli import WHAT_IF_NAMES

    name, sep, _value = incomplete.partition("=")
    if not sep:
        return _matching([f"{flag}=" for flag in WHAT_IF_NAMES], incomplete)
    field = WHAT_IF_NAMES.get(name.lstrip("-"))
    try:
        spec = _kb(None).fields[field] if field else None
    except Exception:
        return []
    choices = list(spec.choices) if spec is not None and spec.choices else (
        ["yes", "no"] if spec is not None and spec.type == "bool" else [])
    return _matching([f"{name}={choice}" for choice in choices], incomplete)


def names_in(module: str, attribute: str) -> Completer:
    """Complete from a tuple of the package (``templating.FORMATS``), imported only when completing."""
    def complete(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
        from importlib import import_module

        return _matching(getattr(import_module(f"expert.{module}"), attribute), incomplete)
    return complete

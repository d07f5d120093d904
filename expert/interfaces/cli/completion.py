"""Shell completion of flag VALUES for the command line (bash, zsh, fish):
methods, formats, budgets, card ids, rule ids, shipped catalogs and files.

Part of the CLI layer (it speaks click). A Tab press loads neither the
knowledge base nor experta, jinja2 or babel: the words come from a small
index generated from the knowledge base (``expert/interfaces/cli/completion.json``, written
by ``python scripts/update_completion_index.py``; a test fails when it is
stale), so a new card or rule completes once the index is regenerated. Only
a --catalog file given on the command line is read, for its card ids. Turn
completion on with ``eval "$(_EXPERT_COMPLETE=bash_source expert)"`` (see
docs/cli.md). A completion never fails loudly: a broken index completes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from click.shell_completion import CompletionItem

Completer = Callable[[Any, Any, str], list[CompletionItem]]
INDEX = Path(__file__).resolve().parent / "completion.json"


def build_index(kb: Any) -> dict[str, Any]:
    """The words completion offers, from a loaded knowledge base (what the index file holds)."""
    from ...application import BASES
    from ...explanation.templating import FORMATS
    from ...i18n import SUPPORTED
    from ...inference.estimate import PRECISIONS, STRATEGIES
    from ...knowledge.bases import shipped_catalogs

    return {
        "fields": {name: {"choices": list(spec.choices), "labels": dict(spec.choice_labels), "type": spec.type}
                   for name, spec in kb.fields.items()},
        "catalog": {card.id: card.name for card in kb.catalog},
        "owned": {card.id: card.name for card in kb.owned},
        "rules": {rule.id: rule.kind for rule in kb.rules},
        "catalogs": list(shipped_catalogs()),
        "names": {"templating.FORMATS": list(FORMATS), "api.BASES": list(BASES), "i18n.SUPPORTED": list(SUPPORTED),
                  "estimate.STRATEGIES": list(STRATEGIES), "estimate.PRECISIONS": list(PRECISIONS)},
    }


def index_text(kb: Any) -> str:
    return json.dumps(build_index(kb), ensure_ascii=False, indent=1, sort_keys=True) + "\n"


@lru_cache(maxsize=1)
def _index() -> dict[str, Any]:
    try:
        data = json.loads(INDEX.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _matching(words: Iterable[str], incomplete: str, help_of: Callable[[str], str | None] | None = None
              ) -> list[CompletionItem]:
    return [CompletionItem(word, help=help_of(word) if help_of else None)
            for word in dict.fromkeys(words) if word.startswith(incomplete)]


def _catalog_cards(ctx: Any) -> dict[str, str]:
    """The cards a consultation weighs (id: name): the default's, or those of the --catalog names and files
    already on the command line, which replace them (`--catalog guide` weighs the guide's six cards, and
    `--why-not` refuses any other; completion offered the market's 23 beside them until 2026-12-08)."""
    files = list(ctx.params.get("catalog") or ()) if ctx is not None else []
    if files:
        try:
            from ...knowledge.bases import knowledge_base

            return dict(sorted((card.id, card.name) for card in knowledge_base(None, files).catalog))
        except Exception:      # a file that does not load: the default's cards (the command will say why)
            pass
    return dict(_index().get("catalog", {}))


def words(*fixed: str) -> Completer:
    """Complete from a fixed list (formats, languages)."""
    return lambda ctx, param, incomplete: _matching(fixed, incomplete)


def field_choices(field: str) -> Completer:
    """Complete the choices of a profile field (method, budget, purpose)."""
    def complete(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
        spec = _index().get("fields", {}).get(field, {})
        labels = spec.get("labels", {})
        return _matching(spec.get("choices", []), incomplete, labels.get)
    return complete


def catalog_cards(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """--why-not: the catalog's card ids (and those of --catalog given before it), and own."""
    names = _catalog_cards(ctx)
    return _matching([*names, "own"], incomplete, names.get)


def own_cards(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """--vram: auto (this machine's cards), then the ids of the cards people own and of the catalog's, in
    order (a catalog's card is not in owned.toml: two cards of one name may come from two files)."""
    # one's own card is read from every shipped catalog, whatever --catalog weighs (`--catalog guide --vram
    # "RTX 3090"`): the default's cards stay beside those of --catalog
    cards = {**_index().get("catalog", {}), **_catalog_cards(ctx), **_index().get("owned", {})}
    names = {"auto": "this machine's cards (nvidia-smi or rocm-smi)", **dict(sorted(cards.items()))}
    return _matching(names, incomplete, names.get)


def rule_ids(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """expert rules ID: the rule ids."""
    rules = _index().get("rules", {})
    return _matching(rules, incomplete, rules.get)


def catalogs(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """--catalog: a shipped catalog by name, or a file (the shell completes paths)."""
    return _matching(_index().get("catalogs", []), incomplete) + [CompletionItem(incomplete, type="file")]


def directories(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(incomplete, type="dir")]


def what_if(names: Mapping[str, str]) -> Completer:
    """--what-if: FIELD= with the flag names (``names``: a flag's name to its
    field); after '=', the field's choices."""
    def complete(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
        name, sep, _value = incomplete.partition("=")
        if not sep:
            return _matching([f"{flag}=" for flag in names], incomplete)
        field = names.get(name.lstrip("-"))
        spec = _index().get("fields", {}).get(field) if field else None
        choices = list(spec.get("choices") or []) if spec else []
        if spec and not choices and spec.get("type") == "bool":
            choices = ["yes", "no"]
        return _matching([f"{name}={choice}" for choice in choices], incomplete)

    return complete


def names_in(module: str, attribute: str) -> Completer:
    """Complete from a tuple of the package (``templating.FORMATS``), as the index records it."""
    def complete(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
        return _matching(_index().get("names", {}).get(f"{module}.{attribute}", []), incomplete)
    return complete

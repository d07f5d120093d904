"""`expert rules`: the knowledge base, rule by rule, in the reader's language.

docs/rules.md is this module's markdown output (`expert rules --format
markdown --lang en`); a test fails when the two drift apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ..errors import InputError, nearest
from ..i18n import Localizer
from ..knowledge import KnowledgeBase, RuleDef

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def concludes(rule: RuleDef, tr: Localizer) -> str:
    """What a rule concludes, in words: what its action does (rules.toml
    ``then``), or the verdict or note of its kind."""
    _ = tr.gettext
    if rule.then is not None:
        does = {
            "requirement": _("declares the VRAM requirement"),
            "own-card": _("declares your own GPU as a card"),
            "first-step": _("proposes a first configuration for every card (step %(step)s)"),
            "next-step": _("proposes the next configuration of the ladder (step %(step)s)"),
            "next-count-to-fit": _("tries the same step on the next count of cards"),
            "step-settled": _("settles the count of cards a step takes"),
            "step-impossible": _("marks a step that would need more cards without a fast link than one node holds "
                                 "as impossible"),
            "shard-over-pcie": _("settles the count of cards a step takes over PCIe, timed from the link and "
                                 "compared with NVLink"),
            "larger-micro-batch": _("proposes the same configuration with a larger micro-batch, when memory "
                                    "allows and it is faster"),
            "first-speed-trial": _("proposes a faster recipe on more cards, when it costs no more"),
            "next-speed-trial": _("tries a faster recipe on the next count of cards"),
            "faster-recipe-found": _("settles whether a faster recipe on more cards pays"),
            "slower-recipe-stands": _("settles whether a faster recipe on more cards pays"),
            "first-precision-trial": _("proposes mixed precision on more cards of one node"),
            "leaner-recipe-kept": _("keeps the leaner recipe, mixed precision weighed"),
            "next-precision-trial": _("tries mixed precision on the next count of cards"),
            "mixed-precision-found": _("settles whether mixed precision fits on one node"),
            "leaner-recipe-stands": _("settles whether mixed precision fits on one node"),
            "first-scale-trial": _("proposes the same configuration on more cards"),
            "next-scale-trial": _("tries the next count of cards for the deadline"),
            "deadline-met": _("settles the count of cards that scaling out takes"),
            "fastest-tried-stands": _("settles the count of cards that scaling out takes"),
            "option": _("declares the configuration that stands for the card"),
            "standing": _("declares an option no rule ruled out, to weigh against the others"),
            "market": _("declares the cheapest rented option, the mark a low budget holds the others to "
                        "(once, over every option in its order)"),
            "beaten": _("marks each option another beats on both money and time (one sweep from the cheapest)"),
            "rank": _("declares what the ranking compares of an option, once every verdict is on it"),
            "order": _("puts the weighed options in one order, by its keys (once, over every option)"),
            "pick": _("declares the first in the ranking the pick"),
            "no-pick": _("declares that there is no pick"),
        }
        return does[rule.then] % {"step": rule.step} if "%(step)s" in does[rule.then] else does[rule.then]
    if rule.kind == "prefer":
        factor = tr.number(rule.factor or 0, 2)
        if rule.factor == 0:
            return _("puts the option first")
        if (rule.factor or 0) < 1:
            return _("favours the option (score × %(factor)s)") % {"factor": factor}
        return _("penalises the option (score × %(factor)s)") % {"factor": factor}
    return {
        "reject": _("rules the card out"),
        "demote": _("ranks the option after every option that is not demoted"),
        "advice": _("adds advice"),
        "warning": _("adds a warning"),
    }[rule.kind]


def describe(kb: KnowledgeBase, tr: Localizer, ids: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Every rule (or those in ``ids``, in knowledge-base order) as a dict."""
    wanted = list(ids)
    known = [rule.id for rule in kb.rules]
    for rule_id in wanted:
        if rule_id not in known:
            close = nearest(rule_id, known)
            raise InputError("rule", tr.gettext("unknown rule '%(rule)s' (`expert rules` lists them).") % {
                "rule": str(rule_id)[:40]} + tr.did_you_mean(close), close)
    sections = list(kb.sections)
    entries = []
    for rule in kb.rules:
        if wanted and rule.id not in wanted:
            continue
        section = kb.sections[rule.section]
        entries.append({
            "id": rule.id,
            "kind": rule.kind,
            "concludes": concludes(rule, tr),
            "stage": rule.stage,
            "then": rule.then,
            "cites": section.cited(f"S{sections.index(rule.section) + 1}", tr.gettext),
            "heuristics": list(rule.heuristics),
            "gaps": list(rule.gaps),
            "when": rule.condition.source if rule.condition.source != "true" else None,
            "factor": rule.factor,
            "opposes": list(rule.opposes),
            "overrides": list(rule.overrides),
            "explanation": _PLACEHOLDER.sub(r"{\1}", tr.gettext(rule.message)),
            "file": rule.file.rsplit("/", 1)[-1],
            "line": rule.line,
        })
    return entries


def heuristic_map(kb: KnowledgeBase) -> list[tuple[str, list[str]]]:
    found: dict[str, list[str]] = {}
    for rule in kb.rules:
        for h in rule.heuristics:
            found.setdefault(h, []).append(f"`{rule.id}`")
    for card in kb.catalog:
        for h in card.heuristics:
            found.setdefault(h, []).append(f"catalog `{card.id}`")
    return [(f"H{n}", found.get(f"H{n}", [])) for n in range(1, 40)]


def render(kb: KnowledgeBase, entries: list[dict[str, Any]], fmt: str, tr: Localizer, width: int = 80) -> str:
    from .templating import check_format

    check_format(fmt, tr.lang)
    if fmt == "json":
        return json.dumps(entries, ensure_ascii=False, indent=2) + "\n"
    from .templating import environment

    template = environment(tr.lang).get_template(f"rules.{'md' if fmt == 'markdown' else 'txt'}.j2")
    return template.render(entries=entries, width=width, hmap=heuristic_map(kb),
                           complete=len(entries) == len(kb.rules))

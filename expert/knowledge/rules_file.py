"""``rules.toml`` checked beyond its shape: each rule's id, kind, step,
citations, condition (compiled, against the fields its scope may read) and
message placeholders, made into :class:`~expert.knowledge.records.RuleDef` records.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .conditions import FIELDS, TRUE, ConditionError, Key, compile_condition, compile_key
from .records import (
    COLLECTS,
    DERIVES,
    EXTRA_PLACEHOLDERS,
    H_RE,
    HELPERS,
    ID_RE,
    KINDS,
    OFF_LADDER,
    PLACEHOLDER_RE,
    SCOPES,
    RuleDef,
    Section,
    scope_key,
)
from .source import Problems, is_number, line_at

G_RE = re.compile(r"^G[1-9]\Z")


_RULE_KEYS = ("id", "kind", "derive", "step", "section", "heuristics", "gaps", "when", "by", "message", "factor",
              "opposes", "overrides", "summary")


def checked_rules(path: Path, doc: dict[str, Any], text: str, sections: dict[str, Section], recipes: dict[str, Any],
           problems: Problems) -> tuple[RuleDef, ...]:
    rules: list[RuleDef] = []
    seen: set[str] = set()
    ladders = recipes.get("ladder", {})
    steps = {entry["step"] for ladder in ladders.values() for entry in ladder} | set(OFF_LADDER)
    first_steps = {ladder[0]["step"] for ladder in ladders.values() if ladder}
    for index, entry in enumerate(doc.get("rule", [])):
        line = line_at(text, f"rule[{index + 1}]")
        rule_id = entry.get("id")
        where = rule_id if isinstance(rule_id, str) else f"#{index + 1}"

        def bad(at: str, template: str, index: int = index, where: str = where, **params: Any) -> None:
            problems.add(str(path), line_at(text, f"rule[{index + 1}].{at}"), template, rule=where, **params)

        for key in entry:
            if key not in _RULE_KEYS:
                bad(key, "unknown key '%(key)s' (known: %(known)s)", key=key, known=", ".join(_RULE_KEYS))
        if not isinstance(rule_id, str) or not ID_RE.match(rule_id):
            bad("id", "id must be kebab-case")
        elif rule_id in seen:
            bad("id", "duplicate id")
        seen.add(str(rule_id))
        kind = entry.get("kind")
        if kind not in KINDS:
            bad("kind", "kind must be one of %(known)s", known=", ".join(KINDS))
            continue
        derive = entry.get("derive")
        if (kind == "derive") != (derive is not None) or (derive is not None and derive not in HELPERS):
            bad("derive", "a derive rule names one helper of %(known)s; other kinds name none", known=", ".join(HELPERS))
            continue
        step = entry.get("step")
        if (kind == "configure") != (step is not None) or (step is not None and step not in steps):
            bad("step", "a configure rule names one step of %(known)s (recipes.toml); other kinds name none",
                known=", ".join(sorted(steps)))
            continue
        proposes = step in first_steps
        factor = entry.get("factor")
        if (kind == "prefer") != (factor is not None) or (factor is not None and not (is_number(factor) and factor >= 0)):
            bad("factor", "a prefer rule needs a factor >= 0; other kinds have none")
            factor = None
        section = entry.get("section")
        if section not in sections:
            bad("section", "cites unknown section '%(section)s' (known: %(known)s)", section=section,
                known=", ".join(sections))
        heuristics = entry.get("heuristics", [])
        gaps = entry.get("gaps", [])
        if not heuristics or not all(isinstance(h, str) and H_RE.match(h) for h in heuristics):
            bad("heuristics", "heuristics must list H-ids from H1 to H39")
        if not all(isinstance(g, str) and G_RE.match(g) for g in gaps):
            bad("gaps", "gaps must list G-ids")
        scope = SCOPES[scope_key(kind, derive, proposes, step)]
        condition = TRUE
        if "when" in entry:
            try:
                condition = compile_condition(str(entry["when"]), {ns: FIELDS[ns] for ns in scope})
            except ConditionError as error:
                bad("when", "%(error)s", error=str(error))
        by: list[Key] = []
        if (derive in COLLECTS) != ("by" in entry):
            bad("by", "a rule that collects (derive = %(known)s) sorts what it collects by its `by` keys; "
                "other rules have none", known=", ".join(COLLECTS))
        for key_source in entry.get("by", []) if derive in COLLECTS else []:
            try:
                by.append(compile_key(str(key_source), {ns: FIELDS[ns] for ns in scope}))
            except ConditionError as error:
                bad("by", "%(error)s", error=str(error))
        message = entry.get("message")
        if not isinstance(message, str) or not message.strip():
            bad("message", "message is missing")
            continue
        visible = scope + ((DERIVES[derive],) if derive in DERIVES else ()) + (
            ("proposal",) if kind == "configure" else ())
        for name in PLACEHOLDER_RE.findall(message):
            namespace, _, attr = name.partition("_")
            allowed = set(FIELDS.get(namespace, {})) | EXTRA_PLACEHOLDERS.get(namespace, set())
            if namespace not in visible or attr not in allowed:
                bad("message", "placeholder '%(name)s' is not a field this rule can see", name=name)
        links = {}
        for key in ("opposes", "overrides"):
            value = entry.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                bad(key, "%(key)s must list rule ids", key=key)
                value = []
            links[key] = tuple(value)
        in_summary = entry.get("summary", True)
        if not isinstance(in_summary, bool) or (not in_summary and kind not in ("advice", "warning")):
            bad("summary", "summary = false is for advice and warnings only (their note is left out of the summary form)")
            in_summary = True
        rules.append(RuleDef(str(rule_id), kind, str(section), tuple(heuristics), tuple(gaps), condition,
                             message, None if factor is None else float(factor), derive, index, str(path), line,
                             links["opposes"], links["overrides"], step, proposes, in_summary, tuple(by)))
    if not rules:
        problems.add(str(path), line_at(text, "rule"), "no [[rule]] tables")
    ids = {rule.id for rule in rules}
    taken = [rule.step for rule in rules if rule.step]
    for step in sorted(steps):
        if taken.count(step) != 1:
            # at the second rule that takes it; a step no rule takes is the file's problem
            second = [rule for rule in rules if rule.step == step][1:2]
            problems.add(str(path), line_at(text, f"rule[{second[0].index + 1}].step") if second else 0,
                         "step '%(step)s' of recipes.toml needs exactly one configure rule", step=step)
    kinds = {rule.id: rule.kind for rule in rules}
    for rule in rules:
        for key in ("opposes", "overrides"):
            for other in getattr(rule, key):
                if other not in ids:
                    problems.add(str(path), line_at(text, f"rule[{rule.index + 1}].{key}"),
                                 "rule '%(rule)s': refers to undefined rule '%(other)s'", rule=rule.id, other=other)
                elif key == "overrides" and kinds[other] == "reject" and rule.kind != "reject":
                    # (an option would stand after the sweeps over the standing options)
                    problems.add(str(path), line_at(text, f"rule[{rule.index + 1}].{key}"),
                                 "rule '%(rule)s': only a reject rule may override a reject rule ('%(other)s')",
                                 rule=rule.id, other=other)
    return tuple(rules)

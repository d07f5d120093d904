"""``rules.toml`` checked beyond its shape: the stages, in order, and each
rule's id, kind, stage, action, step, citations, condition (compiled, against
the fields its stage may see) and message placeholders, made into
:class:`~expert.knowledge.records.StageDef` and
:class:`~expert.knowledge.records.RuleDef` records.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .conditions import FIELDS, TRUE, ConditionError, Key, compile_condition, compile_key
from .records import (
    ACTING,
    ACTIONS,
    COLLECTS,
    EXTRA_PLACEHOLDERS,
    H_RE,
    ID_RE,
    KINDS,
    NAMESPACES,
    OFF_LADDER,
    PLACEHOLDER_RE,
    TRIAL_KINDS,
    RuleDef,
    Section,
    StageDef,
)
from .source import Problems, is_number, line_at

G_RE = re.compile(r"^G[1-9]\Z")


_RULE_KEYS = ("id", "kind", "stage", "then", "step", "section", "heuristics", "gaps", "when", "by", "message",
              "factor", "opposes", "overrides", "summary", "brief", "together", "names_closest")


def checked_stages(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, StageDef]:
    """The [[stage]] list, in firing order, by id."""
    stages: dict[str, StageDef] = {}
    for index, entry in enumerate(doc.get("stage", [])):
        line = line_at(text, f"stage[{index + 1}]")
        stage_id = entry["id"]
        if not ID_RE.match(stage_id) or stage_id in stages:
            problems.add(str(path), line, "stage '%(stage)s': id must be kebab-case and unique", stage=stage_id)
            continue
        unknown = [ns for ns in entry["sees"] if ns not in NAMESPACES]
        if unknown or not entry["sees"]:
            problems.add(str(path), line_at(text, f"stage[{index + 1}].sees"),
                         "stage '%(stage)s': sees must list facts of %(known)s", stage=stage_id,
                         known=", ".join(NAMESPACES))
        trials = entry.get("trials")
        if (trials is not None) != ("trial" in entry["sees"]) or (trials is not None and trials not in TRIAL_KINDS):
            problems.add(str(path), line_at(text, f"stage[{index + 1}].trials"),
                         "stage '%(stage)s': a stage that sees trials settles one kind of them (trials = one of "
                         "%(known)s); other stages name none", stage=stage_id, known=", ".join(TRIAL_KINDS))
            trials = None
        sees = tuple(ns for ns in entry["sees"] if ns in NAMESPACES)
        stages[stage_id] = StageDef(stage_id, len(stages), sees, trials, line)
    if not stages:
        problems.add(str(path), line_at(text, "stage"), "no [[stage]] tables")
    return stages


def checked_rules(path: Path, doc: dict[str, Any], text: str, sections: dict[str, Section], recipes: dict[str, Any],
           problems: Problems, hows: frozenset[str] = frozenset()) -> tuple[tuple[StageDef, ...], tuple[RuleDef, ...]]:
    """The rules; ``hows``, the settings a message may name as %(how_<key>)s (labels.toml [how_cli])."""
    stages = checked_stages(path, doc, text, problems)
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
        stage = stages.get(str(entry.get("stage")))
        if stage is None:
            bad("stage", "stage '%(stage)s' is not a [[stage]] of this file (known: %(known)s)",
                stage=entry.get("stage"), known=", ".join(stages))
            continue
        then = entry.get("then")
        if (kind in ACTING) != (then is not None):
            bad("then", "a %(kind)s rule names its action (then = one of %(known)s); a rule of another kind names "
                "none: its verdict or note is its conclusion", kind=kind, known=", ".join(ACTIONS))
            continue
        if then is not None and then not in ACTIONS:
            bad("then", "then = '%(then)s' is not an action (known: %(known)s)", then=then, known=", ".join(ACTIONS))
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
        scope = stage.sees
        condition = TRUE
        if "when" in entry:
            try:
                condition = compile_condition(str(entry["when"]), {ns: FIELDS[ns] for ns in scope})
            except ConditionError as error:
                bad("when", "%(error)s", error=str(error))
        by: list[Key] = []
        if (then in COLLECTS) != ("by" in entry):
            bad("by", "a rule that collects (then = %(known)s) sorts what it collects by its `by` keys; "
                "other rules have none", known=", ".join(COLLECTS))
        for key_source in entry.get("by", []) if then in COLLECTS else []:
            try:
                by.append(compile_key(str(key_source), {ns: FIELDS[ns] for ns in scope}))
            except ConditionError as error:
                bad("by", "%(error)s", error=str(error))
        message = entry.get("message")
        if not isinstance(message, str) or not message.strip():
            bad("message", "message is missing")
            continue
        visible = scope + (ACTIONS[then] if kind == "derive" and then else ()) + (
            ("proposal",) if kind == "configure" else ())
        for name in PLACEHOLDER_RE.findall(message):
            namespace, _, attr = name.partition("_")
            if namespace == "how":      # how a setting is given on the way in that asked (labels.toml [how_*])
                if attr not in hows:
                    bad("message", "placeholder '%(name)s' names no setting of labels.toml [how_cli]", name=name)
                continue
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
        in_brief = entry.get("brief", kind == "warning")
        if not isinstance(in_brief, bool) or (in_brief and kind not in ("advice", "warning")):
            bad("brief", "brief = true is for advice and warnings only (their note is in the one-screen answer)")
            in_brief = False
        together = entry.get("together", False)
        if not isinstance(together, bool) or (together and (kind != "reject" or "card_name" not in
                                                             PLACEHOLDER_RE.findall(message))):
            bad("together", "together = true is for reject rules whose message names the card (%(placeholder)s)",
                placeholder="%(card_name)s")
            together = False
        names_closest = entry.get("names_closest", False)
        if not isinstance(names_closest, bool) or (names_closest and (kind != "reject" or "option_summary" not in
                                                                       PLACEHOLDER_RE.findall(message))):
            bad("names_closest", "names_closest = true is for reject rules whose message names the last setup "
                "tried (%(placeholder)s)", placeholder="%(option_summary)s")
            names_closest = False
        rules.append(RuleDef(str(rule_id), kind, str(section), tuple(heuristics), tuple(gaps), condition,
                             message, None if factor is None else float(factor), then, index, str(path), line,
                             links["opposes"], links["overrides"], step, proposes, in_summary, tuple(by),
                             stage.id, stage.rank, stage.sees, stage.trials, in_brief, together, names_closest))
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
    named = {rule.then for rule in rules}
    for action in ACTIONS:
        if action not in named:
            problems.add(str(path), 0, "action '%(action)s' is named by no rule (then = '%(action)s')", action=action)
    for stage in stages.values():
        if not any(rule.stage == stage.id for rule in rules):
            problems.add(str(path), stage.line, "stage '%(stage)s': no rule runs in it", stage=stage.id)
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
    return tuple(stages.values()), tuple(rules)

"""The files about the person and the words shown to them, each checked beyond
its shape: ``profile.toml`` (the fields), ``questions.toml``, ``explain.toml``
(the changes WHY NOT tries), ``sections.toml`` (the guide's sections) and
``labels.toml``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..i18n import WAYS_IN
from .conditions import FIELDS, TRUE, ConditionError, compile_condition
from .records import (
    FIELD_TYPES,
    PROFILE_FIELDS,
    ProfileField,
    QuestionDef,
    Section,
)
from .source import Problems, is_number, line_at

_QUESTION_KEYS = ("field", "ask_if", "text", "hint", "why", "which_text", "which_hint")


def checked_questions(path: Path, doc: dict[str, Any], text: str, fields: dict[str, ProfileField],
               problems: Problems) -> tuple[QuestionDef, ...]:
    questions: list[QuestionDef] = []
    for index, entry in enumerate(doc.get("question", [])):
        line = line_at(text, f"question[{index + 1}]")
        for key in entry:
            if key not in _QUESTION_KEYS:
                problems.add(str(path), line_at(text, f"question[{index + 1}].{key}"),
                             "unknown key '%(key)s' (known: %(known)s)", key=key, known=", ".join(_QUESTION_KEYS))
        name = entry.get("field")
        if name not in fields or name in [q.field for q in questions]:
            problems.add(str(path), line_at(text, f"question[{index + 1}].field"),
                         "question %(index)s: field '%(name)s' is unknown or asked twice", index=index + 1, name=name)
            continue
        if not isinstance(entry.get("text"), str) or not isinstance(entry.get("why"), str):
            problems.add(str(path), line, "question '%(name)s' needs a text and a why", name=name)
            continue
        condition = TRUE
        if "ask_if" in entry:
            try:
                condition = compile_condition(str(entry["ask_if"]), {ns: FIELDS[ns] for ns in ("profile", "req", "pick")})
            except ConditionError as error:
                problems.add(str(path), line_at(text, f"question[{index + 1}].ask_if"), "%(error)s", error=str(error))
                continue
        if ("which_text" in entry or "which_hint" in entry) and not fields[name].cards:
            problems.add(str(path), line, "question '%(name)s': which_text and which_hint are for a field that "
                                          "takes a card's name (cards = true)", name=name)
        questions.append(QuestionDef(name, condition, entry["text"], entry.get("hint"), entry["why"], line,
                                     entry.get("which_text"), entry.get("which_hint")))
    missing = [name for name in fields if name not in [q.field for q in questions]]
    if missing:
        problems.add(str(path), 0, "no question for %(fields)s", fields=", ".join(missing))
    return tuple(questions)


def checked_changes(path: Path, doc: dict[str, Any], text: str, fields: dict[str, ProfileField],
             problems: Problems) -> tuple[tuple[str, Any], ...]:
    changes = []
    for index, entry in enumerate(doc.get("change", [])):
        name, value = entry.get("field"), entry.get("value")
        spec = fields.get(name) if isinstance(name, str) else None
        if spec is None:
            problems.add(str(path), line_at(text, f"change[{index + 1}].field"),
                         "unknown field '%(name)s' (known: %(known)s)", name=name, known=", ".join(fields))
            continue
        ok = (value == "none" or (value == "needed" and name == "deadline_h")
              or (spec.type == "bool" and isinstance(value, bool)) or value in spec.choices)
        if not ok:
            problems.add(str(path), line_at(text, f"change[{index + 1}].value"),
                         "change of '%(name)s': value %(value)s is not accepted", name=name, value=repr(value))
            continue
        changes.append((name, value))
    return tuple(changes)


def checked_sections(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, Section]:
    sections = {}
    for key, table in doc.get("section", {}).items():
        heading = table.get("heading") if isinstance(table, dict) else None
        if not isinstance(heading, str) or not heading:
            problems.add(str(path), line_at(text, f"section.{key}.heading"), "section '%(key)s' needs a heading", key=key)
            continue
        sections[key] = Section(key, heading, tuple(table.get("heuristics", ())), str(table.get("title") or ""))
    if not sections:
        problems.add(str(path), line_at(text, "section"), "no [section.KEY] tables")
    return sections


def checked_fields(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, ProfileField]:
    fields = {}
    tables = doc.get("field", {})
    for name in PROFILE_FIELDS:
        if name not in tables:
            problems.add(str(path), line_at(text, "field"), "field '%(name)s' is missing", name=name)
    for name, spec in tables.items():
        line = line_at(text, f"field.{name}")
        if name not in PROFILE_FIELDS:
            problems.add(str(path), line, "unknown field '%(name)s' (known: %(known)s)", name=name,
                         known=", ".join(PROFILE_FIELDS))
            continue
        kind = spec.get("type")
        if kind not in FIELD_TYPES:
            problems.add(str(path), line_at(text, f"field.{name}.type"),
                         "field '%(name)s': type must be one of %(known)s", name=name, known=", ".join(FIELD_TYPES))
            continue
        choices = tuple(spec.get("choices", ()))
        labels = dict(spec.get("choice_labels", {}))
        if kind == "choice" and (not choices or set(labels) != set(choices)):
            problems.add(str(path), line_at(text, f"field.{name}.choice_labels" if choices else f"field.{name}.choices"),
                         "field '%(name)s': every choice needs a label", name=name)
        for bound in ("min", "min_exclusive", "max"):
            if bound in spec and not is_number(spec[bound]):
                problems.add(str(path), line_at(text, f"field.{name}.{bound}"),
                             "field '%(name)s': %(bound)s must be a number", name=name, bound=bound)
        default = spec.get("default")
        if default is not None and not _valid_default(kind, default, choices, spec):
            problems.add(str(path), line_at(text, f"field.{name}.default"),
                         "field '%(name)s': the default %(value)s is not a valid value", name=name, value=repr(default))
        fields[name] = ProfileField(name, kind, str(spec.get("label", name)), spec.get("default"), choices, labels,
                                    spec.get("min"), spec.get("min_exclusive"), spec.get("max"),
                                    spec.get("none_label"), bool(spec.get("cards", False)))
        if spec.get("cards") and kind != "number":
            problems.add(str(path), line_at(text, f"field.{name}.cards"),
                         "field '%(name)s': only a number field may take a card's name (its VRAM)", name=name)
    return fields


def _valid_default(kind: str, value: Any, choices: tuple[str, ...], spec: dict[str, Any]) -> bool:
    if kind == "choice":
        return value in choices
    if kind == "bool":
        return isinstance(value, bool)
    if not is_number(value) or (kind == "integer" and value != int(value)):
        return False
    return not ((spec.get("min") is not None and value < spec["min"])
                or (spec.get("min_exclusive") is not None and value <= spec["min_exclusive"])
                or (spec.get("max") is not None and value > spec["max"]))


def _placeholders(text: Any) -> set[str]:
    return set(re.findall(r"%\((\w+)\)s", str(text)))


def how_in_rules(labels: dict[str, dict[str, str]]) -> frozenset[str]:
    """The settings a rule's message may name as %(how_<key>)s: those whose words hold no placeholder of their
    own (a rule's message has no value to fill it with)."""
    return frozenset(key for key, words in labels.get("how_cli", {}).items() if not _placeholders(words))


def checked_labels(path: Path, doc: dict[str, Any], text: str, problems: Problems) -> dict[str, dict[str, str]]:
    for table in ("basis", "strategy", "where", "pricing", "cost", "vendor"):
        if not isinstance(doc.get(table), dict):
            problems.add(str(path), line_at(text, table), "[%(table)s] is missing", table=table)
    # How an answer names a setting on each way in: a table per way, the same keys in each.
    keys = set(doc["how_cli"]) if isinstance(doc.get("how_cli"), dict) else set()
    for way in WAYS_IN:
        table = f"how_{way}"
        if not isinstance(doc.get(table), dict):
            problems.add(str(path), line_at(text, table), "[%(table)s] is missing", table=table)
        elif set(doc[table]) != keys:
            problems.add(str(path), line_at(text, table), "[%(table)s] names %(keys)s: every [how_*] table "
                         "names the same settings as [how_cli]", table=table, keys=", ".join(sorted(doc[table])))
        else:   # an entry's own placeholders (own_gpu_named's %(example)s) are the same on every way in
            for key in sorted(keys):
                if _placeholders(doc[table][key]) != _placeholders(doc["how_cli"][key]):
                    problems.add(str(path), line_at(text, table), "[%(table)s] %(key)s holds placeholders other than "
                                 "[how_cli]'s", table=table, key=key)
    return {name: {k: str(v) for k, v in table.items()} for name, table in doc.items() if isinstance(table, dict)}

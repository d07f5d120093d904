"""Load and validate a knowledge base: the TOML files of ``rules/``.

Each file is first checked against its schema (:mod:`.shapes`), then by its
own validator, which builds the records of :mod:`.records` (:mod:`.figures`,
:mod:`.profile_files`, :mod:`.rules_file`, :mod:`.catalog`, :mod:`.owned`);
what holds across files is checked here. Nothing in this package knows a GPU, a threshold or a piece
of advice; it knows the *shape* of the knowledge and refuses, with the file
and line of each problem, a knowledge base that does not have it. A
knowledge base is loaded whole or not at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import paths
from ..errors import KnowledgeBaseError
from .catalog import catalog_cards, market_cards
from .figures import (
    checked_estimator,
    checked_models,
    checked_ranking,
    checked_recipes,
    checked_requirements,
    checked_timing,
)
from .owned import owned_cards, unsupported_devices
from .prices import checked_bases, priced
from .profile_files import (
    checked_changes,
    checked_fields,
    checked_labels,
    checked_questions,
    checked_sections,
    how_in_rules,
)
from .records import (
    OPTIONAL_FIELDS,
    KnowledgeBase,
    ModelDef,
    ProfileField,
    RuleDef,
)
from .rules_file import checked_rules
from .shapes import SCHEMAS, check_shape
from .source import Problems, is_number, line_at, read_toml, shown

# --- the shape of every file -------------------------------------------------
# A schema is a type (str, int, float = any number, bool), ANY, a list
# [schema], a table {key: schema} whose keys ending in "?" are optional, or an
# open table {"*": schema}. Each file is checked against its schema before
# anything reads it, so a value of the wrong type is a message, not a crash.


def load(root: Path | str | None = None) -> KnowledgeBase:
    """Load the knowledge base in ``root`` (the shipped one by default)."""
    base = Path(root) if root is not None else paths.RULES
    problems = Problems()
    data = {name: read_toml(base / f"{name}.toml", problems) for name in
            ("sections", "profile", "catalog", "requirements", "timing", "ranking", "labels", "rules", "explain",
             "questions", "estimator", "recipes", "models", "owned")}
    if problems.items:
        raise KnowledgeBaseError(problems.items)
    for name, (doc, text) in data.items():
        check_shape(doc, SCHEMAS[name], "", base / f"{name}.toml", text, problems)
    if problems.items:
        raise KnowledgeBaseError(problems.items)

    sections = checked_sections(base / "sections.toml", *data["sections"], problems)
    fields = checked_fields(base / "profile.toml", *data["profile"], problems)
    requirements = checked_requirements(base / "requirements.toml", *data["requirements"], problems)
    timing = checked_timing(base / "timing.toml", *data["timing"], problems)
    ranking = checked_ranking(base / "ranking.toml", *data["ranking"], problems)
    catalog = catalog_cards(base / "catalog.toml", *data["catalog"], problems, class_prices=ranking["class_price"])
    catalog += market_cards(base / "catalogs", catalog, timing, ranking, problems)
    if timing["own"]["as_fast_as"] not in {card.id for card in catalog}:
        problems.add(str(base / "timing.toml"), line_at(data["timing"][1], "own.as_fast_as"),
                     "[own] as_fast_as must be a card id of catalog.toml")
    labels = checked_labels(base / "labels.toml", *data["labels"], problems)
    estimator_doc = data["estimator"][0]
    recipes = checked_recipes(base / "recipes.toml", *data["recipes"], estimator_doc, tuple(timing["stack"]), problems)
    stages, rules = checked_rules(base / "rules.toml", *data["rules"], sections, recipes, problems,
                                   how_in_rules(labels))
    _reject_labels(base / "labels.toml", data["labels"][1], labels, rules, problems)
    if not problems.items:
        _consistency(base, {name: text for name, (_, text) in data.items()}, fields, requirements, timing, ranking,
                     problems)
    changes = checked_changes(base / "explain.toml", *data["explain"], fields, problems)
    questions = checked_questions(base / "questions.toml", *data["questions"], fields, problems)
    owned_reader, owned_examples, owned = owned_cards(base / "owned.toml", *data["owned"], catalog, problems)
    unsupported = unsupported_devices(base / "owned.toml", *data["owned"], problems)
    if problems.items:
        raise KnowledgeBaseError(problems.items)
    estimator = checked_estimator(base / "estimator.toml", *data["estimator"], problems)
    models = checked_models(base / "models.toml", *data["models"], problems)
    _calibration_models(base / "timing.toml", data["timing"][1], timing["calibration"], models, problems)
    _published_timing(base, data["timing"][1], data["estimator"][1], timing, estimator,
                      {card.id for card in catalog} | {card.id for card in owned}, problems)
    if problems.items:
        raise KnowledgeBaseError(problems.items)
    bases = checked_bases(base / "prices", problems)
    if problems.items:
        raise KnowledgeBaseError(problems.items)
    # Each card priced by its cheapest basis; --provider prices them by one (prices.for_provider).
    catalog = priced(catalog, bases, shipped=base / "catalogs")
    models_doc = data["models"][0]
    return KnowledgeBase(base, sections, fields, catalog, requirements, timing, ranking, labels, rules, changes,
                         questions, estimator, recipes, models=models, model_names=models_doc["names"],
                         model_config=models_doc["config"], owned=owned, owned_ignore=owned_reader.ignore,
                         owned_forms=owned_reader.forms,
                         owned_examples=owned_examples, unsupported=unsupported, prices=bases, stages=stages,
                         shipped=catalog)


def _calibration_models(path: Path, text: str, calibration: dict[str, Any], models: tuple[ModelDef, ...],
                        problems: Problems) -> None:
    """The models timing.toml's [calibration] rows are measured on are models of models.toml,
    and a mixture's row gives its total size or its model."""
    known = {model.id for model in models}
    for kind in ("measurement", "moe"):
        for n, entry in enumerate(calibration.get(kind, [])):
            where = f"calibration.{kind}[{n + 1}]"
            for key in ("model", "dense"):
                if key in entry and entry[key] not in known:
                    problems.add(str(path), line_at(text, f"{where}.{key}"), "calibration '%(id)s': '%(model)s' is "
                                 "not a model of models.toml", id=entry["id"], model=shown(entry[key]))
            if kind == "moe" and "size_b" not in entry and "model" not in entry:
                problems.add(str(path), line_at(text, where), "calibration '%(id)s': a mixture of experts needs "
                             "size_b or model", id=entry["id"])


def _published_timing(base: Path, timing_text: str, estimator_text: str, timing: dict[str, Any],
                      estimator: dict[str, Any], cards: set[str], problems: Problems) -> None:
    """What times the published runs, across timing.toml and estimator.toml:
    each [card_class] names cards of the catalogs or of owned.toml, no card
    in two classes, and the timed runs of [[published]] that fix its share,
    each on a card of the class; every precision and optimizer of
    estimator.toml [optimizer] has its [optimizer_step] bytes; a run's
    tokens per example and a [[published_machine]]'s link are positive, a
    run's sequences per step whole micro-batches, and a machine names runs
    of [[published]]."""
    runs = {entry["id"]: entry for entry in estimator.get("published", ())}
    classed: dict[str, str] = {}
    path = str(base / "timing.toml")
    for name, spec in timing["card_class"].items():
        where = line_at(timing_text, f"card_class.{name}")
        for card in spec["cards"]:
            if card not in cards:
                problems.add(path, where, "card class '%(id)s': '%(card)s' is not a card of the catalogs or of "
                             "owned.toml", id=name, card=shown(card))
            elif card in classed:
                problems.add(path, where, "card class '%(id)s': '%(card)s' is already in the class '%(other)s'",
                             id=name, card=card, other=classed[card])
            else:
                classed[card] = name
        for run in spec["runs"]:
            entry = runs.get(run)
            if entry is None or "seconds" not in entry:
                problems.add(path, where, "card class '%(id)s': '%(run)s' is not a timed run of estimator.toml "
                             "[[published]]", id=name, run=shown(run))
            elif entry["gpu"] not in spec["cards"]:
                problems.add(path, where, "card class '%(id)s': the run '%(run)s' is not on a card of the class",
                             id=name, run=run)
    # Every precision and optimizer a setup may name has the bytes its optimizer step moves.
    steps = timing["optimizer_step"]["bytes"]
    for precision, table in estimator["optimizer"].items():
        for optimizer in table:
            if optimizer not in steps.get(precision, {}):
                where, name = line_at(timing_text, "optimizer_step.bytes." + precision), precision + "." + optimizer
                problems.add(path, where, "[optimizer_step] bytes needs '%(key)s' (estimator.toml "
                             "[optimizer.%(precision)s])", key=name, precision=precision)
    path = str(base / "estimator.toml")
    for index, entry in enumerate(estimator.get("published", ())):
        if "tokens_per_example" in entry and not 0 < entry["tokens_per_example"] <= 1_000_000:
            problems.add(path, line_at(estimator_text, f"published[{index + 1}].tokens_per_example"),
                         "'%(key)s' must be a number above 0 and at most %(max)s", key="tokens_per_example",
                         max=1_000_000)
        # the sequences of one optimizer step: whole micro-batches of every device
        if "sequences_per_step" in entry and not (
                0 < entry["sequences_per_step"] <= 1_000_000
                and entry["sequences_per_step"] % (entry["batch"] * entry["count"]) == 0):
            problems.add(path, line_at(estimator_text, f"published[{index + 1}].sequences_per_step"),
                         "published run '%(id)s': '%(key)s' must be a whole number of micro-batches of every "
                         "GPU (a multiple of %(unit)s), above 0 and at most %(max)s", id=entry["id"],
                         key="sequences_per_step", unit=entry["batch"] * entry["count"], max=1_000_000)
    for index, machine in enumerate(estimator.get("published_machine", ())):
        where = line_at(estimator_text, f"published_machine[{index + 1}]")
        if not (is_number(machine["link_gbs"]) and 0 < machine["link_gbs"] <= 100_000):
            problems.add(path, where, "'%(key)s' must be a number above 0 and at most %(max)s", key="link_gbs",
                         max=100_000)
        for run in machine["runs"]:
            if run not in runs:
                problems.add(path, where, "machine '%(id)s': '%(run)s' is not a run of [[published]]",
                             id=machine["id"], run=shown(run))


def _reject_labels(path: Path, text: str, labels: dict[str, dict[str, str]], rules: tuple[RuleDef, ...],
                   problems: Problems) -> None:
    """labels.toml [reject]: a few words for each reject rule that names its
    cards one by one (not ``together``), and for no other rule: the
    one-screen answer groups the cards it leaves out by them."""
    wanted = {rule.id for rule in rules if rule.kind == "reject" and not rule.together}
    given = labels.get("reject", {})
    for rule_id in sorted(wanted - given.keys()):
        problems.add(str(path), line_at(text, "reject"),
                     "[reject] needs a few words for the reject rule '%(rule)s' of rules.toml", rule=rule_id)
    for rule_id in sorted(given.keys() - wanted):
        problems.add(str(path), line_at(text, f"reject.{rule_id}"),
                     "[reject] '%(rule)s' is not a reject rule of rules.toml that names its cards one by one",
                     rule=rule_id)


def _consistency(base: Path, texts: dict[str, str], fields: dict[str, ProfileField], requirements: dict[str, Any],
                 timing: dict[str, Any], ranking: dict[str, Any], problems: Problems) -> None:
    """Every method and budget the profile accepts has its figures in the other files.

    ``texts`` holds the text of each file by name ("requirements"), for the lines.
    """
    def file(name: str) -> str:
        return str(base / f"{name}.toml")

    methods = fields["method"].choices if "method" in fields else ()
    for method in methods:
        if method not in requirements["table"] and method != "qlora":
            problems.add(file("requirements"), line_at(texts["requirements"], "table"), "table '%(method)s' is missing",
                         method=method)
        tables = [("floor_bytes_per_param", requirements["floor"], "requirements")] + [
            (f"stack.{stack}.utilization", spec["utilization"], "timing") for stack, spec in timing["stack"].items()]
        for key, table, name in tables:
            if method not in table:
                problems.add(file(name), line_at(texts[name], key), "[%(key)s] needs a number for '%(method)s'", key=key,
                             method=method)
    for stack in fields["stack"].choices if "stack" in fields else ():
        if stack not in timing["stack"]:
            problems.add(file("timing"), line_at(texts["timing"], "stack"), "[stack.%(stack)s] is missing",
                         stack=stack)
    for budget in fields["budget"].choices if "budget" in fields else ():
        if budget not in ranking["budget_weights"]:
            problems.add(file("ranking"), line_at(texts["ranking"], "budget_weights"),
                         "[budget_weights] '%(budget)s' needs numbers cost and time", budget=budget)
    profile = texts["profile"]
    for name in ("method", "budget", "purpose"):
        if name in fields and fields[name].type != "choice":
            problems.add(file("profile"), line_at(profile, f"field.{name}.type"),
                         "field '%(name)s': type must be one of %(known)s", name=name, known="choice")
    for name, spec in fields.items():
        if name not in OPTIONAL_FIELDS and spec.default is None:
            problems.add(file("profile"), line_at(profile, f"field.{name}"), "field '%(name)s' needs a default", name=name)
    for name in ("rocm_ok", "interruptible"):
        if name in fields and fields[name].type != "bool":
            problems.add(file("profile"), line_at(profile, f"field.{name}.type"),
                         "field '%(name)s': type must be one of %(known)s", name=name, known="bool")



"""`expert check`: validate a knowledge base before it ships.

Loading already refuses malformed files, unknown or missing fields, wrong
types, duplicate ids, undefined facts, sections and placeholders (file and
line each). On a loaded knowledge base this module adds what needs analysis:

- messages missing from the Spanish catalog, or untranslated;
- references to cards that are not in the catalog;
- rules that can never fire given the fact domains (unreachable);
- opposing rules (``opposes``) that can fire on the same facts with no
  declared precedence (``overrides``): a conflict;
- rules subsumed by another with the same conclusion (redundant);
- prices that contradict each other: a spot price above the on-demand one,
  or, within one chip (a catalog card's ``chip``), a card with more memory
  that costs less than one with less.

The analysis is static: each condition is turned into disjunctive normal form
over comparisons of a field with a constant, and each conjunction is checked
against the domain of every field it constrains (choices, booleans, numeric
bounds from ``profile.toml``, codes from the catalog and ``labels.toml``).
Comparisons it cannot read (field with field, arithmetic) are assumed
satisfiable, so the check never reports a rule that could fire.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import knowledge as kb_module
from .. import paths
from ..errors import KnowledgeBaseError
from . import COSTS, LARGER_BATCH, SCALE_OUT, SEGMENTS, SPEED_UP, VENDORS, KnowledgeBase, RuleDef
from .conditions import BOOL, COMPARED, FIELDS
from .records import PRECISION_KEPT, PRECISION_UP

Atom = tuple[str, str, Any]          # (namespace.field, op, constant)
Conjunction = tuple[Atom, ...]
UNKNOWN = None


@dataclass(frozen=True)
class Problem:
    """One finding of ``expert check``: where it is and what is wrong."""

    file: str
    line: int
    template: str
    params: dict[str, Any]

    def render(self, gettext: Any) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        prefix = gettext("rule '%(rule)s': ") % self.params if "rule" in self.params else ""
        return f"{where}: {prefix}{gettext(self.template) % self.params}"


def check(rules_dir: str | Path | None = None, catalogs: Iterable[str | Path] = ()) -> list[Problem]:
    """Every problem of the knowledge base in ``rules_dir`` with ``catalogs``; [] when sound."""
    catalogs = list(catalogs)
    try:
        kb = kb_module.load(rules_dir)
        kb = kb_module.with_catalogs(kb, catalogs) if catalogs else kb
        from .vocabulary import vocabulary

        vocabulary(kb)        # the words of free text (rules/vocabulary.toml)
    except KnowledgeBaseError as error:
        return [Problem(*problem) for problem in error.problems]
    except Exception as error:
        where = ", ".join(str(path) for path in catalogs) or str(rules_dir or paths.RULES)
        return [Problem(where, 0, "cannot be checked (%(error)s); please report it",
                        {"error": f"{type(error).__name__}: {str(error)[:200]}"})]
    return _Checker(kb).run()


class _Checker:
    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.problems: list[Problem] = []
        self.domains = _domains(kb)

    def add(self, rule: RuleDef, template: str, **params: Any) -> None:
        self.problems.append(Problem(rule.file, rule.line, template, {"rule": rule.id, **params}))

    def run(self) -> list[Problem]:
        self.translations()
        self.prices()
        dnf: dict[str, list[Conjunction]] = {
            rule.id: _dnf(rule.condition.tree) if rule.condition.tree is not None else [()] for rule in self.kb.rules}
        for rule in self.kb.rules:
            self.card_references(rule, dnf[rule.id])
            if not any(self.satisfiable(conj) for conj in dnf[rule.id]):
                self.add(rule, "can never fire: its condition contradicts the domains of its facts (unreachable)")
        by_id = {rule.id: rule for rule in self.kb.rules}
        for rule in self.kb.rules:
            for other_id in rule.opposes:
                other = by_id[other_id]
                if other_id in rule.overrides or rule.id in other.overrides:
                    continue
                if any(self.satisfiable(a + b) for a in dnf[rule.id] for b in dnf[other_id]):
                    self.add(rule, "conflicts with '%(other)s': both can fire on the same facts and neither "
                                   "overrides the other", other=other_id)
        for a, b in itertools.permutations(self.kb.rules, 2):
            if self.subsumes(b, a, dnf) and (a.index > b.index or not self.subsumes(a, b, dnf)):
                    self.add(a, "is redundant: '%(other)s' reaches the same conclusion whenever it fires",
                             other=b.id)
        return self.problems

    # --- prices -------------------------------------------------------------

    def prices(self) -> None:
        """Per provider (rules/prices) and for the prices a catalog gives
        itself: spot never dearer than on demand; within one chip, more memory
        never costs less (on demand, and on spot where both have a spot
        price). Every price is of a card of the catalogs, and the profile's
        provider choices are the bases."""
        from .catalog import catalog_cards
        from .source import Problems, read_toml

        known = {card.id: card for card in self.kb.catalog}
        problems = Problems()
        for path in sorted((self.kb.root / "catalogs").glob("*.toml")):
            doc, text = read_toml(path, problems)
            for card in catalog_cards(path, doc, text, problems, user=True, shipped=True,
                                      class_prices=self.kb.ranking["class_price"]) if doc else ():
                known.setdefault(card.id, card)
        # a shipped catalog's card without its figures (memory_mib ...) is refused
        self.problems += [Problem(*problem) for problem in problems.items]
        # (rows per provider, "" for the prices cards bring themselves: where, line, card, on demand, spot)
        groups: dict[str, list[tuple[str, int, Any, float, float | None]]] = {}
        for basis in self.kb.prices:
            for price in basis.prices:
                of = known.get(price.card)
                if of is None:
                    self.problems.append(Problem(basis.path, price.line, "provider '%(provider)s': '%(card)s' is not "
                                                 "a card of the catalogs", {"provider": basis.id, "card": price.card}))
                    continue
                groups.setdefault(basis.id, []).append((basis.path, price.line, of, price.on_demand, price.spot))
        for card in self.kb.catalog:
            if card.priced and not card.price_assumed and not card.price_provider:
                groups.setdefault("", []).append((card.source, 0, card, card.price_on_demand,
                                                  card.price_spot if card.spot_market else None))
        for rows in groups.values():
            for where, line, card, on_demand, spot in rows:
                if spot is not None and spot > on_demand:
                    self.problems.append(Problem(where, line, "card '%(card)s': its spot price (%(spot)s) is above "
                                                 "its on-demand price (%(on_demand)s)",
                                                 {"card": card.id, "spot": spot, "on_demand": on_demand}))
            for (where, line, big, big_od, big_spot), (_, _, small, small_od, small_spot) in itertools.permutations(
                    rows, 2):
                if not big.chip or big.chip != small.chip or big.vram_gb <= small.vram_gb:
                    continue
                for kind, theirs, ours in (("on-demand", big_od, small_od), ("spot", big_spot, small_spot)):
                    if theirs is not None and ours is not None and theirs < ours:
                        self.problems.append(Problem(where, line, "card '%(card)s' (%(vram)s GB) costs less "
                                                     "%(kind)s (%(price)s) than '%(other)s' (%(other_vram)s GB, "
                                                     "%(other_price)s), the same chip with less memory",
                                                     {"card": big.id, "vram": big.vram_gb, "kind": kind,
                                                      "price": theirs, "other": small.id,
                                                      "other_vram": small.vram_gb, "other_price": ours}))
        field = self.kb.fields.get("provider")
        if field is not None:
            wanted = ("cheapest", *(basis.id for basis in self.kb.prices))
            if tuple(field.choices) != wanted:
                self.problems.append(Problem(str(self.kb.root / "profile.toml"), 0, "field 'provider': its choices "
                                             "must be %(wanted)s, the price bases of rules/prices",
                                             {"wanted": ", ".join(wanted)}))

    # --- translations -------------------------------------------------------

    def translations(self) -> None:
        for po_path in sorted(paths.LOCALES.glob("*/LC_MESSAGES/messages.po")):
            lang = po_path.parent.parent.name
            translated = _translated(lang, po_path.read_bytes())
            for rule in self.kb.rules:
                if rule.message not in translated:
                    self.add(rule, "its message is missing from the %(lang)s catalog (%(po)s)", lang=lang,
                             po=str(po_path))
                elif not translated[rule.message]:
                    self.add(rule, "its message is not translated in the %(lang)s catalog (%(po)s)", lang=lang,
                             po=str(po_path))

    # --- references -----------------------------------------------------------

    def card_references(self, rule: RuleDef, dnf: list[Conjunction]) -> None:
        ids = {card.id for card in self.kb.catalog} | {"own"}
        for conj in dnf:
            for field, op, value in conj:
                if field in ("card.id", "option.gpu", "pick.gpu") and op in ("==", "!=", "in", "not in"):
                    for card in value if isinstance(value, tuple) else (value,):
                        if card not in ids and not isinstance(card, Ref):     # another field's card: any
                            self.add(rule, "refers to card '%(card)s', which is not in the catalog", card=card)

    # --- satisfiability -------------------------------------------------------

    def satisfiable(self, conj: Conjunction) -> bool:
        by_field: dict[str, list[tuple[str, Any]]] = {}
        relations: dict[tuple[str, str], set[str]] = {}
        for field, op, value in conj:
            if field == "?":
                continue
            if isinstance(value, Ref):
                allowed = relations.setdefault((field, value.field), {"<", "==", ">"})
                allowed &= _ORDERINGS[op]
                if not allowed:
                    return False
                if op in _ORDERING_OPS:  # an ordering holds only between two values
                    for side in (field, value.field):
                        by_field.setdefault(side, []).append(("is not", None))
                continue
            by_field.setdefault(field, []).append((op, value))
        for field, constraints in by_field.items():
            domain = self.domains.get(field)
            if domain is None:
                continue
            if isinstance(domain, Interval):
                if not domain.admits(constraints):
                    return False
            elif not any(all(_holds(v, op, c) for op, c in constraints) for v in domain):
                return False
        return True

    def subsumes(self, general: RuleDef, specific: RuleDef, dnf: dict[str, list[Conjunction]]) -> bool:
        """Whenever ``specific`` fires, ``general`` fires with the same conclusion."""
        if general.kind != specific.kind or general.kind == "derive":
            return False
        same = (general.kind in ("reject", "demote")
                or (general.message == specific.message and general.factor == specific.factor))
        if not same or len(dnf[general.id]) != 1 or len(dnf[specific.id]) != 1:
            return False
        return set(dnf[general.id][0]) <= set(dnf[specific.id][0])


# --- domains ------------------------------------------------------------------

@dataclass(frozen=True)
class Interval:
    """The values a numeric field may take under a conjunction of comparisons."""

    low: float
    low_open: bool
    high: float
    high_open: bool
    none: bool = False      # the field may also be missing (None)

    def admits(self, constraints: list[tuple[str, Any]]) -> bool:
        """Whether one value of the interval (or a missing value, when the field
        may be missing) satisfies every constraint."""
        if any(op == "is" and c is None for op, c in constraints):
            return self.none and all(_holds(None, op, c) for op, c in constraints)
        low, low_open, high, high_open = self.low, self.low_open, self.high, self.high_open
        points: set[float] | None = None
        for op, c in constraints:
            if op in ("is not", "truthy", "!=", "not in"):
                continue  # each excludes at most one point of an interval
            if op == "in":
                found = {v for v in c if isinstance(v, (int, float))}
                points = found if points is None else points & found
            elif not isinstance(c, (int, float)):
                return False
            elif op == "==":
                points = {c} if points is None else points & {c}
            elif op in (">", ">=") and (c > low or (c == low and op == ">")):
                low, low_open = c, op == ">"
            elif op in ("<", "<=") and (c < high or (c == high and op == "<")):
                high, high_open = c, op == "<"
        if low > high or (low == high and (low_open or high_open)):
            return False
        if points is not None:
            return any((low < p or (p == low and not low_open)) and (p < high or (p == high and not high_open))
                       for p in points)
        return True


def _domains(kb: KnowledgeBase) -> dict[str, Any]:
    inf = math.inf
    positive = Interval(0, True, inf, False)
    domains: dict[str, Any] = {}
    for name, spec in kb.fields.items():
        key = f"profile.{name}"
        if spec.type == "bool":
            domains[key] = {True, False}
        elif spec.type == "choice":
            domains[key] = set(spec.choices)
        else:
            low, low_open = (spec.min_exclusive, True) if spec.min_exclusive is not None else (
                (spec.min, False) if spec.min is not None else (-inf, False))
            domains[key] = Interval(low, low_open, spec.max if spec.max is not None else inf, False,
                                    spec.default is None)
    counts = set(kb.ranking["counts"])
    recipes = kb.recipes.get("recipe", {})
    strategies = set(kb.ranking["strategy"].values()) | {r["sharded_as"] for r in recipes.values() if "sharded_as" in r}
    steps = {entry["step"] for ladder in kb.recipes.get("ladder", {}).values() for entry in ladder}
    option = {
        "gpu": {card.id for card in kb.catalog} | {"own"}, "vendor": set(VENDORS) | {"unknown"},
        "cost": set(COSTS) | {"own"}, "segment": set(SEGMENTS) | {"own"}, "count": counts, "min_count": counts,
        "strategy": strategies, "where": {"own", "cloud"}, "pricing": {"spot", "on-demand", None},
        "step": steps | {LARGER_BATCH, SCALE_OUT, SPEED_UP, PRECISION_UP, PRECISION_KEPT}, "time_factor": positive, "sped_up": {True, False},
        "precision_weighed": {True, False}, "next_step": steps | {None}, "recipe": set(recipes),
        "fits": {True, False}, "possible": {True, False}, "can_scale": {True, False},
        "card_devices": {card.devices for card in kb.catalog} | {1}, "devices": Interval(1, False, inf, False),
        "headroom": Interval(-inf, False, 1, True), "hours": positive, "min_count_hours": positive,
        "vram_gb": positive, "device_vram_gb": positive, "total_vram_gb": positive, "per_device_gb": positive,
        "device_memory_gib": positive, "per_device_gib": positive,
        "host_ram_gb": Interval(0, True, inf, False, True), "host_ram_gib": Interval(0, True, inf, False, True), "nodes": Interval(1, False, inf, False),
        "flops_per_token": positive, "tokens_per_second": positive, "speed_assumed": {True, False},
        "price_assumed": {True, False}, "per_hour": Interval(0, False, inf, False),
        "billed_hours": Interval(0, False, inf, False), "min_count_cost": Interval(0, False, inf, False),
        "total_cost": Interval(0, False, inf, False), "on_demand_cost": Interval(0, False, inf, False),
        "spot_cost": Interval(0, False, inf, False, True), "elapsed_hours": positive,
        "precision": {recipe["precision"] for recipe in recipes.values()},
        "micro_batch": Interval(1, False, inf, False), "gradient_accumulation_steps": Interval(1, False, inf, False),
        "global_batch": Interval(1, False, inf, False), "batch_settled": {True, False}, "sharded": {True, False},
        "stack": set(kb.timing["stack"]),
        "other_stack_hours": Interval(0, False, inf, False, True),
        "host_traffic_gb": Interval(0, True, inf, False), "host_traffic_s": Interval(0, True, inf, False),
        "host_link_gbs": Interval(0, True, inf, False),
        "network_gbs": Interval(0, False, inf, False, True), "communication_share": Interval(0, True, 1, False), "optimizer_share": Interval(0, True, 1, False),
        "nvlink_hours": Interval(0, False, inf, False, True),
        "price_age_days": Interval(0, True, inf, False, True),
    }
    for namespace in ("option", "pick", "candidate", "proposal", "trial"):
        for name, domain in option.items():
            domains[f"{namespace}.{name}"] = domain
    domains["trial.next_count"] = counts | {None}
    domains["pick.found"] = {True, False}
    for which in COMPARED:  # the options the pick is weighed against; None when there is none
        for name in ("count", "hours", "per_hour", "total_cost"):
            domains[f"pick.{which}_{name}"] = Interval(0, False, inf, False, True)
        domains[f"pick.{which}_gpu"] = {card.id for card in kb.catalog} | {None}
    domains["pick.others_cheapest_cost"] = Interval(0, False, inf, False, True)
    for name in ("vram_gb", "table_gb", "weights_gb", "qlora_vram_gb", "first_principles_gb", "first_principles_gib",
                 "ref_hours", "tokens",
                 "flops_per_token", "active_b"):
        domains[f"req.{name}"] = positive
    domains["req.basis"] = set(kb.labels.get("basis", {}))
    domains["req.source"] = set(kb.labels.get("basis", {}))
    domains["req.guide_holds_with"] = {setup["id"] for setup in kb.estimator.get("setup", [])} | {None}
    domains["req.floor_binds"] = {True, False}
    domains["req.own_qlora_fits"] = {True, False, None}
    domains["req.sized_by"] = {"checked", "estimate", "guide"}
    domains["req.own_tuned_fits"] = {True, False, None}
    domains["req.own_fit_recipe"] = set(recipes) | {None}
    domains["req.own_fit_strategy"] = strategies | {None}
    domains["req.own_short_seq"] = set(kb.recipes.get("own_fit", {}).get("sequences", [])) | {None}
    for name in ("own_qlora_gb", "own_qlora_hours", "own_qlora_host_gib", "cheap_qlora_gb", "cheap_qlora_hours", "cheap_qlora_cost",
                 "own_fit_gb", "own_usable_gb", "own_tuned_gb", "own_short_gb", "own_qlora_gib", "cheap_qlora_gib",
                 "own_fit_gib", "own_usable_gib", "own_tuned_gib", "own_short_gib"):
        domains[f"req.{name}"] = Interval(0, False, inf, False, True)
    domains["req.cheap_qlora_gpu"] = {card.id for card in kb.catalog} | {None}
    domains["market.cheapest_total_cost"] = Interval(0, False, inf, False, True)
    domains["market.cheapest_gpu"] = {card.id for card in kb.catalog} | {None}
    for name in ("id", "vendor", "cost", "segment", "fast_interconnect", "devices"):
        domains[f"card.{name}"] = {getattr(card, name) for card in kb.catalog} | (
            {"own", "unknown", False, 1} if name in ("id", "vendor", "cost", "segment", "fast_interconnect", "devices")
            else set())
    return domains


# --- conditions as disjunctive normal form ------------------------------------------

_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
        ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _field(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def _constant(node: ast.AST) -> tuple[bool, Any]:
    if isinstance(node, ast.Constant):
        return True, node.value
    if isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in node.elts):
        return True, tuple(e.value for e in node.elts if isinstance(e, ast.Constant))
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, (int, float))):    # the compiler negates numbers only
        return True, -node.operand.value
    return False, None


@dataclass(frozen=True)
class Ref:
    """The other side of a comparison between two fields."""

    field: str


def _atoms(node: ast.AST) -> Conjunction:
    """The atoms of one comparison or truth test. What cannot be read becomes an
    opaque atom: ignored when deciding satisfiability, kept when comparing rules."""
    opaque = (("?", ast.unparse(node), None),)
    field = _field(node)
    if field is not None:
        return ((field, "==", True),) if field.split(".")[1] in _BOOLS else ((field, "truthy", None),)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _field(node.operand)
        if inner is not None and inner.split(".")[1] in _BOOLS:
            return ((inner, "==", False),)
        return opaque
    if isinstance(node, ast.Compare):
        operands = [node.left] + list(node.comparators)
        atoms = []
        for op_node, (left, right) in zip(node.ops, itertools.pairwise(operands), strict=True):
            op = _OPS[type(op_node)]
            lf, rf = _field(left), _field(right)
            lc, rc = _constant(left), _constant(right)
            if lf and rc[0]:
                atoms.append((lf, op, rc[1]))
            elif rf and lc[0] and op in _FLIP:
                atoms.append((rf, _FLIP[op], lc[1]))
            elif lf and rf and op in _FLIP:
                atoms.append((lf, op, Ref(rf)) if lf < rf else (rf, _FLIP[op], Ref(lf)))
            else:
                atoms.append(opaque[0])
        return tuple(atoms)
    return opaque


_ORDERINGS = {"<": {"<"}, "<=": {"<", "=="}, ">": {">"}, ">=": {">", "=="}, "==": {"=="}, "!=": {"<", ">"}}
_BOOLS = {name for fields in FIELDS.values() for name, kind in fields.items() if kind == BOOL}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<", "in": "not in", "not in": "in",
            "is": "is not", "is not": "is"}


def _dnf(node: ast.AST, negated: bool = False) -> list[Conjunction]:
    """``node`` (or its negation) in disjunctive normal form, negations
    pushed down to the comparisons (De Morgan)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _dnf(node.operand, not negated)
    if isinstance(node, ast.BoolOp):
        conjunctive = isinstance(node.op, ast.And) != negated
        parts = [_dnf(value, negated) for value in node.values]
        if conjunctive:
            return [tuple(itertools.chain.from_iterable(combo)) for combo in itertools.product(*parts)]
        return [conj for part in parts for conj in part]
    atoms = _atoms(node)
    if not negated:
        return [atoms]
    if len(atoms) != 1 or atoms[0][0] == "?":
        return [(("?", "not " + ast.unparse(node), None),)]
    field, op, value = atoms[0]
    if op == "truthy":
        return [((field, "==", None),), ((field, "==", False),), ((field, "==", 0),)]
    if op in _ORDERING_OPS:
        # An ordering with a missing value is false, so its negation also
        # holds when either side is missing.
        missing: list[Conjunction] = [((field, "is", None),)]
        if isinstance(value, Ref):
            missing.append(((value.field, "is", None),))
        return [((field, _NEGATED[op], value),)] + missing
    return [((field, _NEGATED[op], value),)]


_ORDERING_OPS = ("<", "<=", ">", ">=")


def _holds(value: Any, op: str, constant: Any) -> bool:
    if op == "truthy":
        return bool(value)
    if op in ("in", "not in"):
        inside = value in (constant if isinstance(constant, tuple) else (constant,))
        return inside if op == "in" else not inside
    if op == "is":
        return value is constant
    if op == "is not":
        return value is not constant
    if value is None or constant is None:
        return op == "!=" if (value is None) != (constant is None) else op == "=="
    try:
        return {"==": value == constant, "!=": value != constant, "<": value < constant, "<=": value <= constant,
                ">": value > constant, ">=": value >= constant}[op]
    except TypeError:
        return op == "!="


# The messages of a .po file by its language and bytes: is each translated
# (a string, not fuzzy)? Parsing a catalog costs more than the rest of a check
# of the rules does; a process that checks again (the MCP server, a script
# checking several folders) reads an unchanged catalog once.
_TRANSLATED: dict[tuple[str, bytes], dict[str, bool]] = {}


def _translated(lang: str, data: bytes) -> dict[str, bool]:
    key = (lang, data)
    translated = _TRANSLATED.get(key)
    if translated is None:
        import io

        from babel.messages.pofile import read_po

        catalog = read_po(io.BytesIO(data), locale=lang)
        translated = {message.id: bool(message.string) and not message.fuzzy
                      for message in catalog if isinstance(message.id, str) and message.context is None}
        if len(_TRANSLATED) >= 8:
            _TRANSLATED.clear()
        _TRANSLATED[key] = translated
    return translated

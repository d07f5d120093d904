"""The condition language of the knowledge base.

A rule's ``when`` is a short expression over the facts, parsed with
:mod:`ast` against a whitelist of node types and compiled to plain closures
(never ``eval``)::

    card.vendor == 'amd' and not profile.rocm_ok
    option.count > 1 and option.hours <= 4
    card.ideal_min_b <= profile.model_size_b <= card.ideal_max_b

Names are fact namespaces (``profile``, ``req``, ``option``, ``card``,
``pick``); attributes are their fields, checked against :data:`FIELDS` when
the knowledge base loads, so that a misspelt field is an error with its file
and line instead of a silent ``None``. An ordering comparison with a missing
value (``None``) is false.
"""

from __future__ import annotations

import ast
import itertools
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Env = Mapping[str, Mapping[str, Any]]
Evaluator = Callable[[Env], Any]

NUM, STR, BOOL, LIST = "number", "text", "bool", "list"

# The fields of each fact namespace and their types: the schema rules are
# checked against. A field may be None where noted in docs/knowledge-base.md.
# The profile fields the resolver derives from model_size_b (not input fields).
DERIVED_PROFILE_FIELDS = ("model_name", "model_id", "model_label", "model_read_as", "model_active_b",
                          "model_experts", "model_experts_per_token")
# "profile" is the one declaration of the profile's fields and their order:
# rules/profile.toml must define exactly these, and expert.knowledge.PROFILE_FIELDS
# (what advise(), explain and the consultation take) is derived from it.
FIELDS: dict[str, dict[str, str]] = {
    "profile": {
        "model_size_b": NUM,
        "method": STR,
        "budget": STR,
        "rocm_ok": BOOL,
        "deadline_h": NUM,
        "vram_gb": NUM,
        "dataset_examples": NUM,
        "tokens_per_example": NUM,
        "epochs": NUM,
        "purpose": STR,
        "interruptible": BOOL,
        "stack": STR,
        # Derived from model_size_b by the model resolver (expert/knowledge/models.py),
        # not answered: the model as named, its id and name in the model
        # table (or the name a config.json gives), how its size was read, its
        # parameters active per token (the total for a dense model) and, for
        # a mixture of experts, its experts.
        "model_name": STR,
        "model_id": STR,
        "model_label": STR,
        "model_read_as": STR,
        "model_active_b": NUM,
        "model_experts": NUM,
        "model_experts_per_token": NUM,
    },
    "req": {
        "vram_gb": NUM,
        "table_gb": NUM,
        "weights_gb": NUM,
        "floor_binds": BOOL,
        "basis": STR,
        "source": STR,
        "qlora_vram_gb": NUM,
        "first_principles_gb": NUM,
        "guide_holds_with": STR,
        "ref_hours": NUM,
        "tokens": NUM,
        "flops_per_token": NUM,
        "active_b": NUM,
        "seq_len": NUM,
        "sized_by": STR,
        # The person's own GPU running the same model with QLoRA (a 4-bit base,
        # recipes.toml qlora-4bit): whether it fits, what it needs, how long.
        "own_qlora_fits": BOOL,
        "own_qlora_gb": NUM,
        "own_qlora_hours": NUM,
    },
    # One configuration of one card, as the configuration rules propose it
    # (candidate) and as it stands once chosen (option): the same fields.
    "candidate": {
        "gpu": STR,
        "vendor": STR,
        "cost": STR,
        "segment": STR,
        "where": STR,
        "step": STR,
        "next_step": STR,
        "possible": BOOL,
        "recipe": STR,
        "precision": STR,
        "strategy": STR,
        "count": NUM,
        "card_devices": NUM,
        "devices": NUM,
        "vram_gb": NUM,
        "device_vram_gb": NUM,
        "total_vram_gb": NUM,
        "per_device_gb": NUM,
        "fits": BOOL,
        "headroom": NUM,
        "host_ram_gb": NUM,
        "hours": NUM,
        "min_count": NUM,
        "min_count_hours": NUM,
        "min_count_cost": NUM,
        "time_factor": NUM,
        "sped_up": BOOL,
        "can_scale": BOOL,
        "flops_per_token": NUM,
        "tokens_per_second": NUM,
        "speed_assumed": BOOL,
        "price_assumed": BOOL,
        "pricing": STR,
        "per_hour": NUM,
        "billed_hours": NUM,
        "elapsed_hours": NUM,
        "total_cost": NUM,
        "on_demand_cost": NUM,
        "spot_cost": NUM,
        "nodes": NUM,
        "micro_batch": NUM,
        "gradient_accumulation_steps": NUM,
        "global_batch": NUM,
        "batch_settled": BOOL,
        "sharded": BOOL,
        "stack": STR,
        "other_stack_hours": NUM,
    },
    "card": {
        "id": STR,
        "name": STR,
        "vendor": STR,
        "vram_gb": NUM,
        "devices": NUM,
        "cost": STR,
        "segment": STR,
        "fast_interconnect": BOOL,
        "bf16_tflops": NUM,
        "memory_bandwidth_gbs": NUM,
        "interconnect": STR,
        "link_gbs": NUM,
        "per_node": NUM,
        "price_on_demand": NUM,
        "price_spot": NUM,
        "speed_assumed": BOOL,
        "price_assumed": BOOL,
        "bf16": BOOL,
        "priced": BOOL,
        "spot_market": BOOL,
        "ideal_methods": LIST,
        "ideal_min_b": NUM,
        "ideal_max_b": NUM,
    },
}
FIELDS["option"] = dict(FIELDS["candidate"])
# A configuration tried on one count of cards while a ladder step settles how
# many it takes: a candidate's fields, and the next count of ranking.toml
# (None after the last).
FIELDS["trial"] = {**FIELDS["candidate"], "next_count": NUM}
# The options that stand (fit, not ruled out) weighed against each other
# before the ranking: the cheapest rented one that meets the deadline (of all
# rented ones when none does) and the cards whose option another beats on
# both money and time.
FIELDS["market"] = {"cheapest_gpu": STR, "cheapest_total_cost": NUM, "beaten": LIST}
# What a configuration rule proposes (its messages may name it).
FIELDS["proposal"] = dict(FIELDS["candidate"])
# The chosen option: every option field, and whether there is one at all.
# Besides, the rented options it is weighed against (none when there is no
# other): the next in the ranking, the fastest and the cheapest per hour,
# each as <which>_gpu, _count, _hours, _per_hour and _total_cost.
COMPARED = ("next", "fastest", "cheap")
COMPARED_FIELDS = {"gpu": STR, "count": NUM, "hours": NUM, "per_hour": NUM, "total_cost": NUM}
FIELDS["pick"] = {**FIELDS["option"], "found": BOOL,
                  **{f"{which}_{name}": kind for which in COMPARED for name, kind in COMPARED_FIELDS.items()}}


class ConditionError(ValueError):
    """A condition that is not valid; ``column`` points into its source."""

    def __init__(self, message: str, column: int = 0) -> None:
        super().__init__(message)
        self.column = column


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: b is not None and a in b,
    ast.NotIn: lambda a, b: b is not None and a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


@dataclass(frozen=True)
class Leaf:
    """One comparison of a condition, evaluated: what it says, the values it
    compared, and whether it held."""

    source: str
    operands: tuple[tuple[str | None, Any], ...]   # (namespace.field or None for a constant, value)
    op: str
    holds: bool


@dataclass(frozen=True)
class Condition:
    """A compiled condition: call it with the facts, read what it uses."""

    source: str
    evaluate: Evaluator
    namespaces: frozenset[str]
    fields: frozenset[tuple[str, str]]
    tree: ast.expr | None = None

    def __call__(self, env: Env) -> bool:
        return bool(self.evaluate(env))

    def leaves(self, env: Env) -> list[Leaf]:
        """The condition's comparisons and truth tests, each evaluated in ``env``."""
        return [] if self.tree is None else _leaves(self.tree, env)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its source (the knowledge-base cache, expert.knowledge.cache) and
        # compiled again when read: a compiled condition is a closure.
        return (_restore, (self.source,))


TRUE = Condition("true", lambda env: True, frozenset(), frozenset())


def _restore(source: str) -> Condition:
    """A pickled condition: TRUE, or its source compiled again (it was checked when the file was loaded)."""
    return TRUE if source == TRUE.source else compile_condition(source)


_OP_TEXT = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
            ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


def _operand(node: ast.expr, env: Env) -> tuple[str | None, Any]:
    value = compile_condition_node(node)(env)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}", value
    return (None if isinstance(node, (ast.Constant, ast.List, ast.Tuple)) else ast.unparse(node)), value


def _leaves(node: ast.expr, env: Env) -> list[Leaf]:
    if isinstance(node, ast.BoolOp):
        return [leaf for value in node.values for leaf in _leaves(value, env)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return [Leaf(ast.unparse(node), (_operand(node.operand, env),), "not",
                     not compile_condition_node(node.operand)(env))]
    if isinstance(node, ast.Compare):
        operands = [node.left] + list(node.comparators)
        evaluated = tuple(_operand(operand, env) for operand in operands)
        ops = " ".join(_OP_TEXT[type(op)] for op in node.ops)
        return [Leaf(ast.unparse(node), evaluated, ops, bool(compile_condition_node(node)(env)))]
    return [Leaf(ast.unparse(node), (_operand(node, env),), "", bool(compile_condition_node(node)(env)))]


def compile_condition_node(node: ast.expr) -> Evaluator:
    """Compile one node of an already validated condition."""
    return _Compiler(FIELDS).compile(node)[0]


def compile_condition(source: str, namespaces: Mapping[str, Mapping[str, str]] = FIELDS) -> Condition:
    """Parse and type-check ``source``; raise :class:`ConditionError` if invalid."""
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as error:
        raise ConditionError(f"syntax error: {error.msg}", (error.offset or 1) - 1) from None
    compiler = _Compiler(namespaces)
    evaluate, kind = compiler.compile(tree.body)
    if kind not in (BOOL, None):
        raise ConditionError(f"a condition must be true or false, not a {kind}")
    used = frozenset(ns for ns, _ in compiler.used)
    return Condition(source.strip(), evaluate, used, frozenset(compiler.used), tree.body)


class _Compiler:
    def __init__(self, namespaces: Mapping[str, Mapping[str, str]]) -> None:
        self.namespaces = namespaces
        self.used: set[tuple[str, str]] = set()

    def fail(self, node: ast.AST, message: str) -> ConditionError:
        return ConditionError(message, getattr(node, "col_offset", 0))

    def compile(self, node: ast.AST) -> tuple[Evaluator, str | None]:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.fail(node, f"'{ast.unparse(node)}' is not allowed in a condition")
        return method(node)

    def _BoolOp(self, node: ast.BoolOp) -> tuple[Evaluator, str]:
        parts = [self.compile(value)[0] for value in node.values]
        if isinstance(node.op, ast.And):
            return (lambda env: all(part(env) for part in parts)), BOOL
        return (lambda env: any(part(env) for part in parts)), BOOL

    def _UnaryOp(self, node: ast.UnaryOp) -> tuple[Evaluator, str | None]:
        inner, kind = self.compile(node.operand)
        if isinstance(node.op, ast.Not):
            return (lambda env: not inner(env)), BOOL
        if isinstance(node.op, ast.USub) and kind == NUM:
            return (lambda env: _neg(inner(env))), NUM
        raise self.fail(node, f"'{ast.unparse(node)}' is not allowed in a condition")

    def _BinOp(self, node: ast.BinOp) -> tuple[Evaluator, str]:
        op = _ARITHMETIC.get(type(node.op))
        left, lkind = self.compile(node.left)
        right, rkind = self.compile(node.right)
        if op is None or lkind not in (NUM, None) or rkind not in (NUM, None):
            raise self.fail(node, f"'{ast.unparse(node)}': arithmetic is +, -, *, / on numbers")

        def evaluate(env: Env) -> Any:
            a, b = left(env), right(env)
            if a is None or b is None or (op is operator.truediv and b == 0):
                return None
            return op(a, b)

        return evaluate, NUM

    def _Compare(self, node: ast.Compare) -> tuple[Evaluator, str]:
        operands = [self.compile(node.left)] + [self.compile(c) for c in node.comparators]
        steps = []
        for op_node, ((a, akind), (b, bkind)) in zip(node.ops, itertools.pairwise(operands), strict=True):
            op = _COMPARE[type(op_node)]
            if isinstance(op_node, (ast.In, ast.NotIn)):
                if bkind != LIST:
                    raise self.fail(node, f"'{ast.unparse(node)}': 'in' needs a list on its right")
            elif not isinstance(op_node, (ast.Is, ast.IsNot)) and None not in (akind, bkind) and akind != bkind:
                raise self.fail(node, f"'{ast.unparse(node)}' compares a {akind} with a {bkind}")
            steps.append((op, isinstance(op_node, _ORDERING), a, b))

        def evaluate(env: Env) -> bool:
            for op, ordering, a, b in steps:
                x, y = a(env), b(env)
                if ordering and (x is None or y is None):
                    return False
                if not op(x, y):
                    return False
            return True

        return evaluate, BOOL

    def _Attribute(self, node: ast.Attribute) -> tuple[Evaluator, str]:
        if not isinstance(node.value, ast.Name):
            raise self.fail(node, f"'{ast.unparse(node)}': write namespace.field")
        namespace, field = node.value.id, node.attr
        if namespace not in self.namespaces:
            known = ", ".join(sorted(self.namespaces))
            raise self.fail(node, f"unknown fact '{namespace}' (known: {known})")
        kind = self.namespaces[namespace].get(field)
        if kind is None:
            known = ", ".join(sorted(self.namespaces[namespace]))
            raise self.fail(node, f"unknown field '{namespace}.{field}' (known: {known})")
        self.used.add((namespace, field))
        return (lambda env: env[namespace].get(field)), kind

    def _Name(self, node: ast.Name) -> tuple[Evaluator, str]:
        raise self.fail(node, f"'{node.id}' alone means nothing here: write namespace.field, e.g. profile.method")

    def _Constant(self, node: ast.Constant) -> tuple[Evaluator, str | None]:
        value = node.value
        if value is None:
            return (lambda env: None), None
        if isinstance(value, bool):
            return (lambda env: value), BOOL
        if isinstance(value, (int, float)):
            return (lambda env: value), NUM
        if isinstance(value, str):
            return (lambda env: value), STR
        raise self.fail(node, f"constant {value!r} is not allowed")

    def _List(self, node: ast.List | ast.Tuple) -> tuple[Evaluator, str]:
        items = []
        for element in node.elts:
            if not isinstance(element, ast.Constant):
                raise self.fail(element, "a list in a condition holds constants only")
            items.append(element.value)
        frozen = tuple(items)
        return (lambda env: frozen), LIST

    _Tuple = _List


def _neg(value: Any) -> Any:
    return None if value is None else -value

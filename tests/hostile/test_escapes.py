"""Nothing but an input error escapes the library (issue 26, item 4): any
value of any type, for any argument of a public function, a consultation's
methods or an MCP tool, is either accepted or refused with an
:class:`InputError` naming the argument — never an OverflowError from a
number too large for a float, a ValueError from Python's limit on the
digits of an integer, or a TypeError from a container where a value was
expected (over MCP those became "Internal error")."""

from __future__ import annotations

import inspect
import os
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from expert import Consultation, InputError, KnowledgeBaseError, advise
from expert.interfaces.api import estimate
from expert.application import explain


# As in tests/test_properties.py: the same examples every run; EXPERT_FUZZ=N explores N fresh ones.
EXPLORE = "EXPERT_FUZZ" in os.environ
SETTINGS = settings(max_examples=int(os.environ.get("EXPERT_FUZZ", "30")), derandomize=not EXPLORE, deadline=None,
                    suppress_health_check=list(HealthCheck), database=None)

HUGE = [10**400, -10**400, 10**5000, 2**64]


def _power(exponent: int) -> int:      # drawn by exponent: hypothesis cannot show 10**5000 (nor can repr())
    return 10**exponent if exponent > 0 else -10**-exponent


LARGE = st.one_of(st.sampled_from([400, -400, 5000, 19]).map(_power), st.sampled_from([1e308, float("inf"),
                                                                                      float("nan"), 2.0**64]))
WORDS = ["70B", "8", "rtx-4090", "own", "current", "½ day", "1e400", "10⁴", "\ufdfa", "lora", "yes", "no", "24",
         "-1", "nan", "Llama-3-8B", "", " ", "\x1b[31m", "9" * 5000]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), LARGE, st.floats(),
                    st.text(max_size=20), st.sampled_from(WORDS), st.binary(max_size=4), st.just(object()))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner), st.frozensets(st.integers(), max_size=2),
    st.dictionaries(st.one_of(st.text(max_size=12), st.sampled_from(["rtx-4090", "method", "deadline_h"]),
                              st.integers(), LARGE), inner, max_size=3)), max_leaves=5)


def arguments(call: Callable[..., Any], skip: tuple[str, ...] = ()) -> st.SearchStrategy[dict[str, Any]]:
    """Some of ``call``'s keyword arguments, each any value."""
    names = [p.name for p in inspect.signature(call).parameters.values()
             if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in ("self",) + skip]
    return st.dictionaries(st.sampled_from(names), VALUES, min_size=1, max_size=3)


def refused_or_accepted(call: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Run ``call``: it answers, or raises InputError naming an argument
    (KnowledgeBaseError only for a catalog or rules folder given as a path)."""
    try:
        return call(**kwargs)
    except InputError as error:
        assert isinstance(error.field, str) and error.field and str(error)
    except KnowledgeBaseError:
        assert {"catalog", "rules_dir"} & set(kwargs), kwargs
    return None


# A consultation's catalogs and folders are paths; the file system is not fuzzed here.
PATHS = ("rules_dir",)


@SETTINGS
@given(arguments(advise, PATHS))
def test_advise(kwargs: dict[str, Any]) -> None:
    refused_or_accepted(advise, kwargs)


@SETTINGS
@given(arguments(explain, PATHS + ("why_not",)), VALUES)
def test_explain(kwargs: dict[str, Any], why_not: Any) -> None:
    # why_not always given: an explanation of every card ruled out is slow to fuzz
    refused_or_accepted(explain, {**kwargs, "why_not": why_not if why_not is not None else "nothing"})


@SETTINGS
@given(arguments(estimate, PATHS))
def test_estimate(kwargs: dict[str, Any]) -> None:
    refused_or_accepted(estimate, kwargs)


@SETTINGS
@given(arguments(Consultation.__init__, PATHS))
def test_consultation(kwargs: dict[str, Any]) -> None:
    refused_or_accepted(Consultation, kwargs)


@SETTINGS
@given(VALUES, VALUES, VALUES)
def test_consultation_methods(question: Any, answer: Any, text: Any) -> None:
    consultation = Consultation(lang="en")
    refused_or_accepted(consultation.answer, {"question_id": question, "raw": answer})
    refused_or_accepted(consultation.answer, {"question_id": "deadline_h", "raw": answer})
    refused_or_accepted(consultation.tell, {"text": text})
    refused_or_accepted(Consultation.from_dict, {"state": {**consultation.to_dict(), "answers": {"epochs": answer}}})
    refused_or_accepted(Consultation.from_dict, {"state": answer})


@pytest.mark.parametrize("value", HUGE[:4], ids=["1e400", "-1e400", "1e5000", "2**64"])
def test_numbers_too_large_for_any_answer_are_refused_naming_the_argument(value: int) -> None:
    for call, name in ((advise, "model_size_b"), (advise, "deadline_h"), (advise, "prices"), (explain, "what_if"),
                       (estimate, "seq_len"), (Consultation, "epochs")):
        argument = {"prices": {"rtx-4090": value}, "what_if": {"epochs": value}}.get(name, value)
        with pytest.raises(InputError) as error:
            call(**{name: argument, "lang": "es"})
        assert error.value.field == name or (name, error.value.field) == ("what_if", "epochs")
        assert "cifras" in str(error.value) if value.bit_length() > 1000 else "2**64" not in str(error.value)


@pytest.mark.parametrize("why_not, what_if", [({"a": 1}, None), (["own"], None), (None, 5), (None, ["epochs"]),
                                              (None, {("epochs",): 1})])
def test_explain_refuses_containers_where_a_card_or_changes_are_expected(why_not: Any, what_if: Any) -> None:
    with pytest.raises(InputError) as error:
        explain(why_not=why_not, what_if=what_if, lang="en")
    assert error.value.field == ("why_not" if why_not is not None else "what_if")


def test_every_mcp_tool_refuses_or_answers() -> None:
    pytest.importorskip("mcp")
    from hypothesis import given as given_
    from expert.interfaces.mcp.server import ConsultationStore, handlers
    from expert.interfaces.schema import tool_specs
    from expert.interfaces.api import knowledge_base

    from expert.i18n import Localizer
    from expert.interfaces.schema import check_arguments

    kb = knowledge_base()
    work = handlers(ConsultationStore())
    specs = {spec["name"]: spec for spec in tool_specs(kb)}
    names = {name: list(spec["parameters"]["properties"]) for name, spec in specs.items()}
    started = work["consultation_start"]({"lang": "en"})[0]["consultation_id"]   # (JSON, markdown)

    @SETTINGS
    @given_(st.sampled_from(sorted(names)), st.data())
    def call(tool: str, data: st.DataObject) -> None:
        chosen = data.draw(st.dictionaries(st.sampled_from(names[tool]), VALUES, max_size=3))
        if tool.startswith("consultation_") and tool != "consultation_start" and data.draw(st.booleans()):
            chosen["consultation_id"] = started
        if tool == "explain":
            chosen.setdefault("why_not", "nothing")
        # as the server calls it: the arguments checked against the tool's schema, then the handler
        refused_or_accepted(lambda **a: work[tool](check_arguments(specs[tool], a, kb, Localizer("en"))), chosen)

    call()


@SETTINGS
@given(VALUES, VALUES)
def test_a_result_rendered_in_a_format_or_detail_that_is_not_one(fmt: Any, detail: Any) -> None:
    result = advise(model_size_b=8, lang="en")
    refused_or_accepted(result.render, {"fmt": fmt})
    refused_or_accepted(result.to_dict, {"detail": detail})


def test_a_model_name_no_row_matches_is_quoted_as_markdown_text() -> None:
    from expert.explanation.render import render_models
    from expert.interfaces.api import knowledge_base

    shown = render_models(knowledge_base(), "markdown", "en", names=["[evil](http://x.example)"])
    assert "[evil](" not in shown and "\\[evil\\]" in shown
    assert "[evil](http://x.example)" in render_models(knowledge_base(), "text", "en", names=["[evil](http://x.example)"])

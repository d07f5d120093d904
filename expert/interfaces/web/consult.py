"""What the page and the API ask the library, and nothing else: advise(),
explain(), estimate() and launch() with the arguments the form reader made
(:mod:`.form`). Every call is a function of the request alone: nothing is
kept between requests.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from typing import Any

from ...application import explain
from ...errors import InputError
from ...i18n import Localizer
from ..api import advise, estimate, knowledge_base
from ..launch.make import launch
from . import form as reader
from .pictures import MemoryBar, TimeAndCost, memory_bars, time_cost

# The estimate's keys (the long options of `expert estimate`) and its arguments.
ESTIMATE_KEYS = {
    "model-size": "model_size_b", "model": "model_size_b", "method": "method", "gpus": "gpus",
    "strategy": "strategy", "offload": "offload", "offload-params": "offload_params",
    "seq-len": "seq_len", "batch": "batch",
    "checkpointing": "checkpointing", "optimizer": "optimizer", "precision": "precision", "base-bits": "base_bits",
    "lora-rank": "lora_rank", "gpu": "gpu", "dataset": "dataset_examples",
    "tokens-per-example": "tokens_per_example", "epochs": "epochs", "stack": "stack", "lang": "lang",
}


def estimate_key(field: str | None) -> str:
    """The key of /api/estimate's address for a field the estimate's InputError names (its own keys: gpus,
    strategy, seq-len ...; an unknown key is named as given)."""
    keys = {argument: key for key, argument in reversed(ESTIMATE_KEYS.items())}
    return keys.get(field or "", field or reader.FORM_ERROR)


@dataclass
class Page:
    """A consultation as the page shows it."""

    explanation: Any                      # expert.explanation.explain.Explanation
    data: dict[str, Any]                  # explanation.to_dict(): the JSON the page reads its texts from
    memory: list[MemoryBar]
    chart: TimeAndCost | None
    what_if: dict[str, Any] | None        # WHAT IF's changes and what changed, after a smallest change was applied
    values: dict[str, str]                # the form's values to show (the change applied)


def page(form: reader.Form) -> Page:
    """The consultation of ``form`` (raises InputError naming the field)."""
    tr = Localizer(form.lang)
    args = form.arguments()
    changes = reader.what_if(form.what_if, tr) if form.what_if else None
    values = form.values
    what_if = None
    if changes:
        before = explain(**args, what_if=changes)
        assert before.what_if is not None
        # as the text says it: the shown cards' rows and rules, the others counted in a sentence
        what_if = {"changed": before.what_if.changed_shown(),
                   "why": before.what_if.because_shown() + before.what_if.notes(),
                   "others": before.what_if_others()}
        values = reader.applied(form, changes)
        args = reader.Form(form.lang, values).arguments()
    why_not = form.values.get("why-not")
    explanation = explain(**args, why_not=why_not)
    kb = explanation.result.kb or knowledge_base()
    return Page(explanation, explanation.to_dict(), memory_bars(explanation.result, kb, tr),
                time_cost(explanation.result, kb, tr), what_if, values)


def advise_json(form: reader.Form) -> str:
    return str(advise(**form.arguments()).render("json", detail=form.values.get("detail", "full")))


def explain_json(form: reader.Form) -> str:
    tr = Localizer(form.lang)
    changes = reader.what_if(form.what_if, tr) if form.what_if else None
    return str(explain(**form.arguments(), why_not=form.values.get("why-not"), what_if=changes,
                       detail=form.values.get("detail", "full")).render("json"))


def estimate_json(pairs: list[tuple[str, str]], lang: str) -> str:
    """`expert estimate --format json` for the query's pairs (keys: the estimate's long options)."""
    from ...explanation.render import render_estimate

    tr = Localizer(lang)
    args: dict[str, Any] = {}
    for key, value in pairs:
        if key not in ESTIMATE_KEYS:
            raise InputError(key[:40], tr.gettext("%(key)s: not a field of this page; the fields are "
                                                  "%(accepted)s.") % {"key": key[:40],
                                                                       "accepted": ", ".join(ESTIMATE_KEYS)})
        if ESTIMATE_KEYS[key] in args:
            raise InputError(key, tr.gettext("%(option)s is given twice; give it once.") % {"option": key})
        if value.strip():
            args[ESTIMATE_KEYS[key]] = value.strip()
    args["lang"] = lang
    result = estimate(**args)
    return str(render_estimate(knowledge_base(), result, "json", lang, 80))


def launch_zip(form: reader.Form) -> tuple[str, bytes]:
    """The launch files of the option ``form.values["option"]`` (default 1), as a .zip made in memory."""
    option: Any = form.values.get("option", "1")
    # a rank in ASCII digits ("²", "7⁰", "①" are digits to str.isdigit but not to int): else launch() reads it
    option = int(option) if option.isascii() and option.isdigit() and len(option) < 4 else option
    files = launch(advise(**form.arguments()), option)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.files.items():
            info = zipfile.ZipInfo(f"expert-launch-{files.option}/{name}", date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text)
    return f"expert-launch-{files.option}.zip", buffer.getvalue()

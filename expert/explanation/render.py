"""Render an :class:`~expert.explanation.explain.Explanation` or a memory estimate
with the jinja2 templates in ``expert/explanation/templates`` (text for a terminal,
markdown for a chat message) or as JSON. A :class:`~expert.explanation.result.Result`
renders itself (``Result.render``) with the same environment
(:mod:`expert.explanation.templating`). JSON keeps the data as given, its control and
format characters escaped (:func:`expert.escape.json_text`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..escape import json_text, markdown, one_line
from ..i18n import Localizer
from .templating import FORMATS, check_format, environment

__all__ = ["FORMATS", "check_format", "environment", "render_estimate", "render_explanation", "render_models"]


def render_explanation(explanation: Any, fmt: str, width: int = 80, color: bool = False) -> str:
    check_format(fmt, explanation.lang)
    if fmt == "json":
        return json_text(explanation.to_dict())
    env = environment(explanation.lang)
    if explanation.detail == "summary":
        return env.get_template("explain.summary.j2").render(
            s=explanation.summary(), md=fmt == "markdown",
            bold=(lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s)).strip() + "\n"
    template = env.get_template(f"explain.{'md' if fmt == 'markdown' else 'txt'}.j2")
    return template.render(x=explanation, r=explanation.result, width=width,
                           bold=(lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s))


def render_estimate(kb: Any, result: Any, fmt: str, lang: str, width: int = 80,
                    run: dict[str, Any] | None = None) -> str:
    """The estimate as a breakdown with a horizontal bar per component, or
    JSON; with ``run`` (from ``estimate_input.from_input``), how long it trains."""
    from ..inference.estimate import COMPONENTS, device_memory_gib, fitting_cards, holds
    from ..inference.requirement import estimate_time, named_card

    check_format(fmt, lang, ("text", "json"))
    fits = fitting_cards(kb, result)
    time = result.time
    if run is not None:
        time = estimate_time(kb, result.setup, run)
    if time is not None and time["gpu"] is not None:   # can the card named hold it at all?
        named = named_card(kb, time["gpu"])
        time = {**time, "fits": bool(named and holds(kb, result.per_gpu_gib, device_memory_gib(
            named.vram_gb, named.memory_mib, named.devices)))}
    if fmt == "json":
        data = result.to_dict()
        data["fits"] = fits
        if time is not None:
            data["time"] = time
        return json_text(data)
    tr = Localizer(lang)
    _ = tr.gettext
    setup = result.setup
    labels = {"weights": _("weights"), "gradients": _("gradients"), "optimizer": _("optimizer state"),
              "activations": _("activations"), "overhead": _("framework overhead")}
    label_width = max(len(label) for label in list(labels.values()) + [_("per GPU")])
    values = {name: tr.gib(round(result.breakdown_gib[name], 1)) for name in COMPONENTS}
    value_width = max(len(v) for v in list(values.values()) + [tr.gib(round(result.per_gpu_gib, 1))])
    bar_width = max(10, min(40, width - label_width - value_width - 8))
    largest = max(result.breakdown_gib.values()) or 1
    rows = [{"label": labels[name].ljust(label_width), "value": values[name].rjust(value_width),
             "bar": "█" * max(0, round(result.breakdown_gib[name] / largest * bar_width))} for name in COMPONENTS]
    method = tr.gettext(kb.fields["method"].choice_labels[setup.method])
    details = [
        _("mixed precision (bf16 with an fp32 master copy)") if setup.precision == "mixed" else _("pure bf16"),
        _("optimizer %(name)s") % {"name": setup.optimizer},
    ]
    if setup.method != "full":
        details.append(_("%(bits)s-bit frozen weights, LoRA rank %(rank)s") % {"bits": setup.base_bits,
                                                                               "rank": setup.lora_rank})
    details.append(_("%(tokens)s tokens × micro-batch %(batch)s") % {"tokens": tr.number(setup.seq_len, 0),
                                                                     "batch": setup.batch})
    if run is not None and int(run["tokens_per_example"]) > setup.seq_len:
        # longer than the model's context (or --seq-len): as advise, memory at that length, every token timed
        details.append(_("examples of %(given)s tokens counted as sequences of %(tokens)s") % {
            "given": tr.number(int(run["tokens_per_example"]), 0), "tokens": tr.number(setup.seq_len, 0)})
    details.append(_("activation checkpointing") if setup.checkpointing else _("no activation checkpointing"))
    details.append(tr.ngettext("%(n)s GPU", "%(n)s GPUs, %(strategy)s", setup.gpus) % {
        "n": setup.gpus, "strategy": setup.strategy})
    if setup.offload_params:
        details.append(_("weights, gradients and optimizer state offloaded to CPU"))
    elif setup.offload:
        details.append(_("gradients and optimizer state offloaded to CPU"))
    names = [one_line(next(card.shown_name for card in kb.catalog if card.id == gpu)) for gpu in fits]
    fit_line = (_("Cards of the catalog with enough memory per GPU: %(cards)s.") % {"cards": tr.list(names)}
                if names else _("No card of the catalog has enough memory per GPU for this setup."))
    x: dict[str, Any] = {
        "size": tr.billions(setup.model_size_b), "method": method, "details": "; ".join(details) + ".",
        "rows": rows,
        "per_gpu_row": f"{_('per GPU').ljust(label_width)}  {tr.gib(round(result.per_gpu_gib, 1)).rjust(value_width)}",
        "total_line": (_("In all, across %(n)s GPUs: %(total)s.") % {"n": setup.gpus, "total": tr.gib(
            round(result.total_gib, 1))}) if setup.gpus > 1 else "",
        "cpu_line": (_("In CPU memory: %(cpu)s.") % {"cpu": tr.gib(round(result.cpu_gib, 1))}) if result.cpu_gib else "",
        "fit_line": fit_line,
        "time_line": _time_line(kb, tr, time, fits) if time else "",
    }
    x["own_shape"] = setup.shape is not None
    return environment(lang).get_template("estimate.txt.j2").render(x=x, e=result, width=width)


def stack_sentence(tr: Localizer, time: Mapping[str, Any]) -> str:
    """Which software stack the time assumes, and the time on the other one."""
    _ = tr.gettext
    other = {"other": tr.hours(time["other_stack"]["hours"])}
    if time["stack"] == "tuned":
        return _("The time assumes a tuned stack (packed sequences, compiled kernels); about %(other)s on a typical "
                 "one.") % other
    return _("The time assumes a typical stack (Hugging Face Trainer and PEFT, padded batches); about %(other)s on "
             "a tuned one.") % other


def optimizer_sentence(kb: Any, tr: Localizer, time: Mapping[str, Any]) -> str:
    """The optimizer step's part of the time (timing.toml [optimizer_step]),
    when it is at least ``shown_from`` of it: LoRA's adapters step in a
    blink and are not said."""
    _ = tr.gettext
    step = time.get("optimizer_step")
    spec = kb.timing["optimizer_step"]
    if not step or not time["hours"] or step["hours"] < float(spec["shown_from"]) * time["hours"]:
        return ""
    params = {"hours": tr.hours(step["hours"]), "steps": tr.number(step["steps"], 0),
              "seconds": tr.number(step["seconds_per_step"], 2), "params": tr.billions(step["params_b"]),
              "share": tr.number(step["hours"] / time["hours"] * 100, 0) + " %"}
    if step["on"] == "cpu":
        params["rate"] = tr.number(float(spec["cpu_params_per_s"]) / 1e9, 1)
        return _("Of that, the optimizer steps take about %(hours)s (%(share)s): %(steps)s steps of %(seconds)s s, "
                 "each run by the CPU over the %(params)s parameters it keeps (DeepSpeed's CPU Adam, about "
                 "%(rate)s billion a second).") % params
    params["bytes"] = tr.number(step["bytes_per_parameter"], 0)
    params["bandwidth"] = tr.number(step["bandwidth_share"] * 100, 0) + " %"
    return _("Of that, the optimizer steps take about %(hours)s (%(share)s): %(steps)s steps of %(seconds)s s, each "
             "reading and writing %(bytes)s bytes for every one of the %(params)s parameters a GPU steps, at "
             "%(bandwidth)s of its memory bandwidth.") % params


def _with_optimizer(kb: Any, tr: Localizer, time: Mapping[str, Any], text: str) -> str:
    """``text`` and, where it is said, the optimizer steps' part of the time after it."""
    stepping = optimizer_sentence(kb, tr, time)
    return f"{text} {stepping}" if stepping else text


def _time_line(kb: Any, tr: Localizer, time: dict[str, Any], fits: Sequence[str] = ()) -> str:
    """The estimate's training time in a sentence: on which cards, how many tokens, how fast; ``fits``, the
    cards that hold the setup, tells whether the card the time assumes when none is named holds it."""
    _ = tr.gettext
    params = {"hours": tr.hours(time["hours"]), "tokens": tr.number(time["tokens"], 0),
              "rate": tr.number(time["tokens_per_second"], 0),
              "flops": tr.number(time["flops_per_token"] / 1e9, 1)}
    if time["gpu"] is None:
        from ..inference.requirement import reference_card

        params["card"] = one_line(reference_card(kb).shown_name)
        params["how_gpu"] = kb.how(tr, "gpu")
        if time["count"] > 1:
            params["gpus"] = tr.number(time["count"], 0)
            text = (_("Training time: about %(hours)s for %(tokens)s tokens at %(rate)s tokens/s (%(flops)s GFLOPs a "
                      "token), on %(gpus)s GPUs as fast as the %(card)s and linked as it is: assumed, name a card "
                      "with %(how_gpu)s.") % params + " " + stack_sentence(tr, time))
        else:
            text = (_("Training time: about %(hours)s for %(tokens)s tokens at %(rate)s tokens/s (%(flops)s GFLOPs a "
                      "token), at the speed of one %(card)s: assumed, name a card with %(how_gpu)s.") % params
                    + " " + stack_sentence(tr, time))
        text = _with_optimizer(kb, tr, time, text)
        if reference_card(kb).id not in fits:
            # 70B LoRA over 4 GPUs needs 56.1 GiB of each: timed on the reference card, which holds 24, the
            # hours were said of cards that cannot run it, and nothing said so
            text += " " + _("But the %(card)s does not hold this setup: those hours only measure its speed.") % params
        return text
    from ..inference.estimate import device_memory_gib, usable_gib
    from ..inference.requirement import named_card

    card = named_card(kb, time["gpu"])
    assert card is not None, "the estimate's time names a card estimate_input.from_input checked"
    params["cards"] = "%s × %s" % (time["count"], one_line(card.shown_name))
    text = _("Training time on %(cards)s: about %(hours)s for %(tokens)s tokens at %(rate)s tokens/s (%(flops)s "
             "GFLOPs a token).") % params
    text = _with_optimizer(kb, tr, time, text + " " + stack_sentence(tr, time))
    if not time.get("fits", True):
        memory = device_memory_gib(card.vram_gb, card.memory_mib, card.devices)
        text += " " + _("But %(card)s does not hold this setup: each of its devices has %(vram)s, of which "
                        "%(usable)s may be used (%(margin)s kept free).") % {
            "card": one_line(card.shown_name), "vram": tr.gib(memory),
            "usable": tr.gib(usable_gib(kb, memory)), "margin": tr.number(kb.recipes["margin"] * 100, 0) + " %"}
    return text


# The text table's columns without --wide: what fits 80 columns.
NARROW = ("name", "total", "active", "layers", "heads", "context", "experts")


def render_models(kb: Any, fmt: str, lang: str, width: int = 80, names: Any = (), wide: bool = False) -> str:
    """The model table (rules/models.toml): one row per model, as text,
    markdown (with each row's sources) or JSON; with ``names``, the models
    whose name, alias or family begins with one of them (case, spaces, dashes
    and dots ignored). As text, the columns of :data:`NARROW` (fewer when
    even those overflow ``width``), or every column with ``wide``."""
    from ..knowledge.records import name_key

    check_format(fmt, lang)
    keys = [name_key(str(name)) for name in names]
    chosen = [model for model in kb.models
              if not keys or any(key and name_key(text).startswith(key) for key in keys
                                 for text in (model.id, model.name, model.family, *model.aliases))]
    if fmt == "json":
        return json_text({"models": [model.to_dict() for model in chosen]})
    tr = Localizer(lang)
    _ = tr.gettext
    if not chosen:
        return _("No model of the table matches %(names)s; expert models lists them all.") % {
            "names": tr.list([(markdown if fmt == "markdown" else one_line)(str(name)) for name in names],
                             style="or")} + "\n"     # a line, as the table's templates end
    rows = []
    for model in chosen:
        experts = (_("%(experts)s, %(per_token)s per token") % {"experts": model.experts,
                                                                 "per_token": model.experts_per_token}
                   if model.moe else "")
        rows.append({
            "name": one_line(model.name), "family": one_line(model.family),
            "total": tr.billions(model.params_b), "active": tr.billions(model.active_b) if model.moe else "",
            "layers": tr.number(model.layers, 0), "hidden": tr.number(model.hidden, 0),
            "heads": f"{model.heads}/{model.kv_heads}", "ffn": tr.number(model.expert_ffn if model.moe else model.ffn, 0),
            "vocab": tr.number(model.vocab, 0), "context": tr.number(model.context, 0), "experts": experts,
            "config": one_line(model.config), "source": one_line(model.params_source),
        })
    header = {"name": _("model"), "family": _("family"), "total": _("parameters"), "active": _("active"),
              "layers": _("layers"), "hidden": _("hidden"), "heads": _("heads/KV"), "ffn": _("MLP"),
              "vocab": _("vocabulary"), "context": _("context"), "experts": _("experts")}
    if fmt == "markdown":
        return environment(lang).get_template("models.md.j2").render(rows=rows, header=header, count=len(rows))
    widths = {c: max(len(header[c]), *(len(row[c]) for row in rows)) for c in header}
    columns = list(header) if wide else [c for c in NARROW if any(row[c] for row in rows)]
    while not wide and len(columns) > 2 and sum(widths[c] for c in columns) + 2 * (len(columns) - 1) > width:
        columns.pop()
    numeric = {"total", "active", "layers", "hidden", "ffn", "vocab", "context"}

    def line(row: dict[str, str]) -> str:
        cells = [row[c].rjust(widths[c]) if c in numeric else row[c].ljust(widths[c]) for c in columns]
        return "  ".join(cells).rstrip()

    table = [line(header), *(line(row) for row in rows)]
    return environment(lang).get_template("models.txt.j2").render(table=table, count=len(rows), width=width,
                                                                  hidden=[header[c] for c in header if c not in columns])

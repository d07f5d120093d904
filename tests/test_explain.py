"""expert explain: HOW, WHY NOT and WHAT IF, built from the recorded trace."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from conftest import priced_once
from expert import InputError
from expert import advise as advise_any
from expert.interfaces.cli.main import main
from expert.application import explain as explain_any


# The explanations here are of the guide's cards (--catalog guide), with the
# catalogs a test gives beside them; today's market is tests/test_market.py's.
def guide(catalog: object = None) -> list[object]:
    return ["guide", *([] if catalog is None else catalog if isinstance(catalog, list) else [catalog])]


def advise(*args: object, catalog: object = None, **kwargs: object):  # type: ignore[no-untyped-def]
    return advise_any(*args, catalog=guide(catalog), **kwargs)  # type: ignore[arg-type]


def explain(*args: object, catalog: object = None, **kwargs: object):  # type: ignore[no-untyped-def]
    return explain_any(*args, catalog=guide(catalog), **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module", autouse=True)
def one_run_per_consultation() -> Iterator[None]:
    """The explanations read the engine's runs, which the suite shares
    (conftest.SharedRuns), a priced case's too (priced_once); the
    consultations an explanation asks for are still counted, by consult()."""
    with priced_once():
        yield


def test_how_chains_from_the_answers_to_the_pick_citing_rules_and_sections() -> None:
    x = explain(model_size_b=8, method="lora", deadline_h=0.8, lang="en")
    top = x.how[0]
    assert (top.gpu, top.rank) == (x.result.recommendations[0].gpu, 1)
    rules = [step.rule for step in top.steps]
    # The configuration, rule by rule: one card, a larger micro-batch, more cards for the deadline
    # (two meet it), settled.
    assert rules[:6] == ["vram-requirement", "propose-one-card", "larger-micro-batch", "scale-out-for-the-deadline",
                         "fewest-cards-meeting-the-deadline", "configuration-chosen"]
    assert "rank-options" in rules and {"fast-interconnect", "one-gpu-would-do"} <= set(rules)
    first = top.steps[0]
    assert first.cites["heading"] == "Requisitos de GPU para ajuste fino de LLM: la VRAM manda"
    assert "model size: 8B" in first.sources and "training examples: 10,000 (assumed)" in first.sources
    assert top.steps[1].builds_on == ["vram-requirement"]
    assert top.steps[2].builds_on == ["vram-requirement", "propose-one-card"]
    assert top.steps[3].builds_on == ["vram-requirement", "larger-micro-batch"]
    assert top.steps[4].builds_on == ["scale-out-for-the-deadline"]
    assert top.steps[5].builds_on == ["fewest-cards-meeting-the-deadline"]
    assert "Memory is left over at a micro-batch of 1" in top.steps[2].text
    assert ("about 52 min with the setup, more than your deadline of 48 min, so add cards, the fewest first: 2 × "
            "H100"
            in top.steps[3].text)
    assert len(x.how) == len(x.result.recommendations)


# On main c111501 HOW read a card's configuration steps in the rules' order, not in the order its ladder was
# climbed: 70B QLoRA on two RTX 3090s of one's own read "the fewest that hold it" (after offload-parameters,
# which fits) and then "that step does not fit on any count" (the shard tried before it), as if the cards
# were refused; 13B LoRA on one's own RTX 4090 read the 8-bit base that fits before the shard it replaced.
@pytest.mark.parametrize("given, ladder", [
    (dict(model_size_b="Llama-2-70B", method="qlora", vram_gb="2x RTX 3090", tokens_per_example=2048),
     ["propose-one-card", "paged-optimizer-for-adapters", "shard-when-weights-do-not-fit", "no-count-fits",
      "offload-parameters", "fewest-cards-that-fit", "larger-micro-batch", "configuration-chosen"]),
    (dict(model_size_b=13, method="lora", vram_gb="RTX 4090"),
     ["propose-one-card", "shard-when-weights-do-not-fit", "own-cards-are-all-there-are",
      "eight-bit-base-for-lora", "configuration-chosen"]),
])
def test_how_reads_a_cards_ladder_in_the_order_it_was_climbed(given: dict[str, object], ladder: list[str]) -> None:
    x = explain(**given, lang="en")
    steps = [step.rule for step in x.how[0].steps]
    assert [rule for rule in steps if rule in ladder] == ladder
    # the JSON trace too: the own card's ladder, in the same order
    own = [step.rule for step in x.result.trace if any(d["values"].get("gpu") == "own" for d in step.derived)]
    assert [rule for rule in own if rule in ladder] == ladder


def test_a_step_that_tries_more_own_cards_than_one_has_names_how_many() -> None:
    """One own RTX 4090 and 13B LoRA: the shard step tries two of them before the fast-link rule says one
    machine of one card cannot spread. Until 2026-12-08 it read "your RTX 4090 (24 GiB) ... over 2 devices
    ... fits", one's one card holding a run over two devices; it names the two it tried."""
    for lang, tried in (("en", "2 × your RTX 4090 (24 GiB) with a 16-bit base"),
                        ("es", "2 × tu RTX 4090 (24 GiB) con una base de 16 bits")):
        x = explain(model_size_b=13, method="lora", vram_gb="RTX 4090", lang=lang)
        shard = next(step for step in x.how[0].steps if step.rule == "shard-when-weights-do-not-fit")
        assert tried in shard.text, shard.text
        chosen = next(step for step in x.how[0].steps if step.rule == "configuration-chosen")
        assert "2 ×" not in chosen.text       # the card that runs it is one's one card


def test_every_step_is_a_recorded_firing() -> None:
    x = explain(model_size_b=13, method="full", vram_gb=16, lang="es")
    fired = {step.rule for step in x.result.trace}
    for how in x.how:
        assert {step.rule for step in how.steps} <= fired


def test_why_not_by_default_covers_every_rejected_card_with_its_failed_conditions() -> None:
    # RunPod's basis: it rents no 40 GB A100 (Lambda does)
    x = explain(model_size_b=70, method="lora", deadline_h=8, provider="runpod", lang="en")
    assert [w.gpu for w in x.why_not] == [r.gpu for r in x.result.rejected] == ["rtx-4090", "a100-40gb", "mi210",
                                                                                "mi250"]
    rtx = x.why_not[0]
    assert rtx.status == "rejected"
    # eight RTX 4090s over PCIe, one machine, do not hold it; LoRA's last step, an 8-bit base, not on one either
    assert rtx.reasons[0].rule == "does-not-fit"
    assert [c["text"] for c in rtx.reasons[0].conditions] == [
        "it does not fit", "the last setup tried can be built from these cards"]
    # with a 4-bit base, four of them hold it sharded over PCIe (issue 47, shard-over-pcie)
    assert rtx.change is not None and rtx.change["fields"] == {"method": "qlora"} and rtx.change["count"] == 4
    mi250 = x.why_not[3]
    # The price basis has no MI250: accepting ROCm alone does not let it in.
    assert "no-rental-price" in {r.rule for r in mi250.reasons} and mi250.change is None


def test_listing_every_card_says_what_rules_out_several_cards_once() -> None:
    # issue 47, item 6: a card no provider rents is named once, in one line, not a paragraph per card
    x = explain(model_size_b=70, method="lora", deadline_h=8, provider="runpod", lang="en")
    text = x.render("text", width=200)
    why_not = text.split("Why not")[1].split("Guide sections cited")[0]
    assert why_not.count("No provider of the price bases") == 1
    assert "rents A100 40 GB, AMD MI210, and AMD MI250 by the hour" in " ".join(why_not.split())
    # each card keeps its own reasons and the change the search found (none here)
    mi250 = next(line for line in why_not.splitlines() if line.startswith("  x AMD MI250:"))
    assert "It needs ROCm" in mi250 and "No single change would make it the answer" in mi250
    assert "No provider" not in mi250
    markdown = x.render("markdown").split("### Why not")[1]
    assert markdown.count("No provider of the price bases") == 1 and markdown.count("`no-rental-price`") == 0
    # the JSON keeps each card's whole text and its reasons, the rule's conditions with them
    data = x.to_dict()
    assert all("No provider of the price bases" in w["text"] for w in data["why_not"] if w["gpu"].startswith("mi"))
    # asked about one card, its whole text: nothing is said before it
    asked = explain(model_size_b=70, method="lora", deadline_h=8, provider="runpod", lang="en", why_not="mi250")
    assert asked.together == [] and asked.render("text", width=200).count("No provider of the price bases") == 1


def test_a_card_that_fits_no_setup_tried_names_the_one_that_came_closest() -> None:
    # 70B LoRA: the RTX 4090's last step is an 8-bit base on one card (73.3 GiB), but the 16-bit base sharded
    # over eight of them came closest (26.3 GiB of each 24), as the trace's configurations of the card say
    x = explain(model_size_b=70, method="lora", deadline_h=8, provider="runpod", lang="en")
    rtx = x.why_not[0]
    assert "the last one: 1 × RTX 4090 with an 8-bit base" in rtx.text
    assert ("The closest setup tried: 8 × RTX 4090 with a 16-bit base, DeepSpeed ZeRO-3 or FSDP over 8 devices, "
            "about 26.3 GiB of each one's 24 GiB — does not fit.") in rtx.text
    assert [r.rule for r in rtx.reasons] == ["does-not-fit"]       # the JSON's reasons: the rule that fired
    assert x.to_dict()["why_not"][0]["closest"].startswith("The closest setup tried: 8 × RTX 4090")
    # advise's "Not recommended" says it too, right after the rule's message
    rejected = next(r for r in x.result.rejected if r.gpu == "rtx-4090")
    assert "— does not fit. The closest setup tried: 8 × RTX 4090" in rejected.text
    assert "The closest setup tried" in x.render("text", width=300).split("Why not")[1]
    # only setups that ran out of memory count, and one's own card as many as one has: a single own 24 GiB card
    # for 120B QLoRA was tried as two, offloaded (10 GiB each, it would fit), which one card cannot be
    own = next(r for r in advise_any(model_size_b=120, method="qlora", vram_gb=24, lang="en", catalog="guide").rejected
               if r.gpu == "own")
    assert "the last one: your GPU (24 GiB)" in own.text and "closest" not in own.text
    # where the last setup tried came closest, nothing is added: 2,000B, 64 A100s with everything offloaded
    last = explain(model_size_b=2000, method="full", lang="en")
    a100 = next(w for w in last.why_not if w.gpu == "a100-80gb")
    assert "the last one: 64 ×" in a100.text and "closest" not in a100.text and a100.closest is None


def test_a_card_that_cannot_spread_past_one_machine_names_the_most_cards_tried() -> None:
    """405B QLoRA: an RTX 4090 (no NVLink) stays at its setup before sharding (one card, 211.5 GiB), which
    no-scale-out-without-fast-link names; the eight of one machine came closest (44.1 GiB of each 24) and
    follow it (rules.toml names_closest), in advise's "Not recommended" and in WHY NOT, in both languages."""
    english = explain(model="Llama-3.1-405B", method="qlora", lang="en", why_not="rtx-4090")
    rtx = english.why_not[0]
    assert [r.rule for r in rtx.reasons] == ["no-scale-out-without-fast-link"]
    assert ("it cannot be spread over more cards. The closest setup tried: 8 × RTX 4090 with a 4-bit base, "
            "DeepSpeed ZeRO-3 or FSDP over 8 devices, about 44.1 GiB of each one's 24 GiB — does not fit") in rtx.text
    rejected = {r.gpu: r for r in english.result.rejected}
    assert "The closest setup tried: 8 × RTX 4090" in rejected["rtx-4090"].text
    spanish = explain(model="Llama-3.1-405B", method="qlora", lang="es", why_not="rtx-4090").why_not[0]
    assert "La configuración probada que más se acercó: 8 × RTX 4090" in spanish.text
    # a rule that does not name the last setup tried adds nothing: an AMD card needs ROCm
    assert rejected["mi250"].rules == ["no-rental-price", "amd-needs-rocm"] and "closest" not in rejected["mi250"].text


def test_the_one_screen_answer_groups_the_cards_left_out_by_their_reason() -> None:
    """The brief answer names the cards ruled out under a few words of their
    first reason (labels.toml [reject]), in the answer's order; the full
    reason is --verbose's (render(verbose=True) in the library). A rule said of several cards together (no price)
    keeps its own line."""
    def brief(lang: str, **profile: object) -> str:
        text = " ".join(advise(model="Llama-3.1-405B", method="qlora", lang=lang, **profile).render("text").split())
        return text.split("render(verbose=True)")[0]
    assert ("Not recommended — too big for one machine of these cards, with no NVLink to go further: RTX 4090; "
            "ROCm needed, which you did not accept: AMD MI210 and AMD MI250.") in brief("en")
    assert ("Descartadas — demasiado grande para una máquina de estas tarjetas, sin NVLink para ir más allá: "
            "RTX 4090; AMD, que la guía deja fuera del trabajo de producción: AMD MI210 y "
            "AMD MI250.") in brief("es", rocm_ok=True, purpose="production")
    # nothing ruled out for a reason of its own: no such line
    assert "Not recommended" not in advise(model_size_b=8, method="lora", rocm_ok=True, lang="en").render("text")


def test_a_card_whose_only_reason_is_said_for_several_is_named_there_alone() -> None:
    # on today's market the RTX 6000 Ada has no rental price and nothing else against it (Spanish: the same)
    x = explain_any(model_size_b=70, method="lora", budget="low", lang="es")
    ada = next(w for w in x.why_not if w.gpu == "rtx-6000-ada")
    assert [r.rule for r in ada.reasons] == ["no-rental-price"] and ada.change is None
    why_not = " ".join(x.render("text").split("Por qué no")[1].split())
    assert "RTX 6000 Ada por horas" in why_not and "x RTX 6000 Ada:" not in why_not
    assert x.listed["rtx-6000-ada"] is None


# A field's dotted name (option.gpu) or a comparison's operator is the rule's source, not a person's words.
RAW = re.compile(r"\b[a-z_]+\.[a-z_]+\b|==|!=|<|>")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_why_not_words_every_condition_of_every_reject_and_demote_rule(lang: str) -> None:
    """Each condition of the rules that rule a card out or rank it lower, worded as WHY NOT words it (held or
    not), with the facts of a consultation where each of them is declared: a low budget and a deadline (the
    market fact), an own card and AMD cards (vendor, where), an option beaten on money and time."""
    from expert.application import consult
    from expert.explanation.why_not import WhyNotSearch, joins
    from expert.explanation.wording import Writer
    from expert.i18n import Localizer
    from expert.knowledge import PROFILE_FIELDS
    from expert.knowledge.bases import knowledge_base

    kb, tr = knowledge_base(), Localizer(lang)
    given = {"model_size_b": "70B", "method": "qlora", "budget": "low", "deadline_h": 5, "own_gpu": "2x RTX 3090"}
    run, result = consult(kb, {name: given.get(name) for name in PROFILE_FIELDS}, tr)
    facts: dict[str, dict[str, object]] = {}
    for firing in run.firings:
        for namespace, values in firing.env.items():
            facts.setdefault(namespace, values)
    search = WhyNotSearch(kb, run, result, Writer(kb, run, tr), given, None, 0)  # type: ignore[arg-type]
    rules = [rule for rule in kb.rules if rule.kind in ("reject", "demote")]
    assert {"does-not-fit", "dearer-than-the-cheapest", "beaten-on-money-and-time"} <= {r.id for r in rules}
    worded, left_out = [], []
    for rule in rules:
        for leaf in rule.condition.leaves({namespace: facts[namespace] for namespace in rule.condition.namespaces}):
            if joins(leaf):     # two facts of one card joined: not shown (why_not.joins)
                left_out.append(leaf.source)
                continue
            text = search.leaf_text(leaf)
            worded.append(text)
            assert not RAW.search(text), f"{rule.id}: {leaf.source} -> {text}"
            # a field that is true or false reads as a sentence, either way (rules/labels.toml [yes], [no]),
            # never "fits: no" ("cabe: no"); a field compared or shown with its value is named with its
            # article (labels.toml [conditions]: "the deadline", "el plazo")
            sources = [source for source, _value in leaf.operands if source]
            if leaf.op in ("not", ""):
                assert all(source in kb.labels["yes"] and source in kb.labels["no"] for source in sources), leaf.source
                assert not re.search(r": (yes|no|sí)$", text), text
            else:
                assert all(_SCALED_FIELD.sub("", source) in kb.labels["conditions"] for source in sources), leaf.source
    assert left_out == ["beaten.gpu == option.gpu"]
    assert len(worded) >= 18
    if lang == "en":
        assert ("the cost in all ($14) is more than 1.1 × the cost of the cheapest option that meets the deadline "
                "($10)" in worded)
        assert {"it fits", "the cards have no fast link between them", "you do not accept ROCm (AMD)"} <= set(worded)
    else:
        assert ("el tiempo hasta el resultado, con la puesta en marcha (4,6 h) es mayor que el plazo (5 h)"
                in worded)
        assert {"cabe", "las tarjetas no tienen un enlace rápido entre sí", "no aceptas ROCm (AMD)",
                "el fabricante de la tarjeta: AMD", "tu presupuesto: bajo"} <= set(worded)


_SCALED_FIELD = re.compile(r" \* [0-9.]+$")


def test_every_true_or_false_condition_reads_both_ways_in_both_languages() -> None:
    """[yes] and [no] of rules/labels.toml name the same fields, each sentence translated, none ending
    in a bare yes or no."""
    from expert.i18n import Localizer
    from expert.knowledge.bases import knowledge_base

    labels = knowledge_base().labels
    assert set(labels["yes"]) == set(labels["no"]) and labels["yes"]
    es = Localizer("es").gettext
    for table in ("yes", "no", "conditions"):
        for source, text in labels[table].items():
            assert es(text) != text, (table, source)


def test_why_not_beaten_names_the_option_that_beats_the_card() -> None:
    """The review's case: 70B QLoRA, the L40S ranked lower. Its WHY NOT named no option ("Another option ...")
    and showed the join "beaten.gpu l40s-48gb == card l40s-48gb"."""
    for lang, beater in (("en", "1 × B200 ($9.48 in all, about 1.4 hr) costs no more and finishes "
                                "no later than 1 × L40S"),
                         ("es", "1 × B200 (9,48\xa0US$ en total, unas 1,4 h) no cuesta más ni termina "
                                "más tarde que 1 × L40S")):
        w = explain_any(model="Llama-3.1-70B", method="qlora", why_not="l40s-48gb", lang=lang).why_not[0]
        beaten = next(r for r in w.reasons if r.rule == "beaten-on-money-and-time")
        assert beater in beaten.text and beaten.conditions == []
        assert not RAW.search(" ".join(c["text"] for r in w.reasons for c in r.conditions))


def test_why_not_one_h100_says_which_deadline_would_do() -> None:
    w = explain(model_size_b=8, method="lora", deadline_h=0.8, why_not="a100-80gb", lang="en").why_not[0]
    assert w.status == "more-cards"
    # one card takes about 0.8 hr of training and half an hour of setup the bill counts
    assert w.change["fields"] == {"deadline_h": 1.4} and w.change["count"] == 1
    assert "deadline: 48 min → 1.4 hr" in w.text
    # The conditions of the rule that added the cards, as they held.
    assert w.reasons[0].rule == "scale-out-for-the-deadline"
    assert [c["text"] for c in w.reasons[0].conditions] == [
        "the configuration before this step fits", "the micro-batch is already the fastest that fits",
        "it can take more cards", "the time until the result, setup included (1.3 hr) is more than the deadline "
        "(48 min)", "the slowdown of its recipe (1) is at most 1",
        "mixed precision on more cards was weighed, or there is none to weigh"]


def test_why_not_a_card_that_needs_more_vram_than_one_has() -> None:
    # 70B full fine-tuning does not fit eight RTX 4090s, one machine's worth over PCIe (issue 47); 13B now does
    w = explain(model_size_b=70, method="full", why_not="rtx-4090", lang="en").why_not[0]
    assert w.status == "rejected"
    # LoRA in 16 bits does not fit them either (no 8-bit base on the ladder); QLoRA does, on four
    assert w.change["fields"] == {"method": "qlora"} and w.change["count"] == 4


def test_why_not_a_lower_ranked_card_contrasts_it_with_the_pick() -> None:
    w = explain(model_size_b=8, method="lora", why_not="h100-80gb", lang="en").why_not[0]
    assert w.status == "ranked-lower"
    # The numbers of both, in hours and money.
    assert w.reasons[0].rule == "rank-options" and w.reasons[0].text == (
        "1 × RTX 4090: about 1.5 hr, $0.69 in all; 1 × H100 80 GB: about 22 min, $2.32 in all.")
    assert {"cheap-card-for-short-experiments", "table-ideal-use"} <= {r.rule for r in w.reasons}
    # For a high budget time weighs more than money, and the H100's 23 minutes win.
    assert w.change["fields"] == {"budget": "high"} and w.change["rank"] == 1


def test_why_not_a_card_that_misses_the_deadline_finds_the_deadline_it_needs() -> None:
    w = explain(model_size_b=7, method="full", deadline_h=1.5, why_not="rtx-4090", lang="en").why_not[0]
    assert w.status == "ranked-lower"
    demoted = next(r for r in w.reasons if r.rule == "misses-deadline")
    # torchtune's single-device recipe, timed on torchtune's (tuned) stack: about
    # 1.6 hr of training, the paged 8-bit states that do not fit beside the
    # weights crossing PCIe 4.0 at every step (issue 39), and half an hour of setup
    assert [c["text"] for c in demoted.conditions] == [
        "the time until the result, setup included (2 hr) is more than the deadline (1.5 hr)"]
    # the deadline tried is the first configuration's (a micro-batch of one, the 8-bit states of all 7B
    # parameters stepped after every sequence: timing.toml [optimizer_step]), 2.6 hr before the step was timed
    assert w.change["fields"] == {"deadline_h": 2.9} and w.change["rank"] == 1


def test_why_not_the_pick_itself() -> None:
    w = explain(model_size_b=8, why_not="rtx-4090", lang="en").why_not[0]
    assert (w.status, w.change, w.text) == ("recommended", None, "It is the recommendation.")


def test_why_not_an_unknown_card_is_an_input_error() -> None:
    with pytest.raises(InputError) as caught:
        explain(why_not="h200", lang="es")
    # which card, and what is accepted: a card the consultation weighed (how many), the nearest suggested
    result = explain(lang="es").result
    weighed = len(result.recommendations) + len(result.rejected)
    assert caught.value.field == "why_not" and str(caught.value).startswith(
        f"why-not: «h200» no es una tarjeta de esta consulta; elige una de las {weighed} tarjetas que ha sopesado")
    assert caught.value.suggestions == ("h100-80gb",) and str(caught.value).endswith("¿Quisiste decir h100-80gb?")


def test_why_not_ones_own_several_cards_keeps_how_many_there_are() -> None:
    # 70B LoRA on one's own four RTX 4090s: with QLoRA the 4-bit base sharded over the four fits. WHY NOT
    # reran with "24" (the VRAM per card) and one card, and found no change (the reviewer's finding)
    x = explain(model_size_b="Llama-3.1-70B", method="lora", vram_gb="4x RTX 4090", why_not="own", lang="en")
    (entry,) = x.why_not
    assert entry.change is not None and entry.change["fields"] == {"method": "qlora"}
    assert "then your 4 × RTX 4090 (24 GiB each) would be recommended" in " ".join(entry.text.split())
    assert "qlora-sharded-fits-own-gpus" in {note.id for note in x.result.advice}


def test_what_if_reports_what_changed_and_which_rules_account_for_it() -> None:
    # 70B: eight RTX 4090s over PCIe do not hold it in full (issue 47); four do with QLoRA
    x = explain(model_size_b=70, method="full", what_if={"method": "qlora"}, lang="en")
    changed = {c["what"]: (c["before"], c["after"]) for c in x.what_if.changed}
    assert changed["fine-tuning method"] == ("full fine-tuning", "QLoRA (4-bit)")
    # the figure the requirement's sentence leads with: the usual recipe on one GPU, not the guide's 140 and 40
    after = x.what_if.after["requirement"]
    assert changed["VRAM needed on one GPU with the usual recipe"] == (
        f"{x.result.requirement['first_principles_gib']:,.1f} GiB", f"{after['first_principles_gib']:,.1f} GiB")
    assert x.result.requirement["vram_gb"] == 140 and f"{after['first_principles_gib']:,.1f} GiB" in after["text"]
    # the guide's six cards: every card that changes is shown, no sentence counts others
    assert x.what_if.changed_shown() == x.what_if.changed and x.what_if.others() == 0
    assert "Outside the first" not in x.render("text")
    assert changed["RTX 4090"][0] == "ruled out" and "4 cards" in changed["RTX 4090"][1]
    why = {(w["rule"], w["gpu"], w["fires"]) for w in x.what_if.why}
    assert ("qlora-tradeoffs", None, "now") in why
    assert ("no-scale-out-without-fast-link", "rtx-4090", "no longer") in why
    assert not any(rule == "offload-as-last-resort" for rule, _, _ in why)  # ladder steps: in the cards' states
    assert x.what_if.after["requirement"]["vram_gb"] == 40


def test_what_if_shows_the_first_options_and_counts_the_other_cards() -> None:
    # the market (issue 47): accepting ROCm rules the MI300X in at rank 4 and moves eleven more cards by a rank
    x = explain_any(model_size_b=8, method="lora", what_if={"rocm_ok": True}, lang="en")
    w = x.what_if
    assert w is not None
    cards = [c for c in w.changed if "gpu" in c]
    first = {r.gpu for r in x.result.recommendations[:4]} | {r["gpu"] for r in w.after["recommendations"][:4]}
    ruled_in = {c["gpu"] for c in cards if c["before"] == "ruled out"}
    assert ruled_in == {"mi300x"}
    assert w.shown == [c["gpu"] for c in w.changed_shown() if "gpu" in c]
    assert set(w.shown) == ({c["gpu"] for c in cards} & first) | ruled_in
    # in the order of the answer after the change: the MI300X (rank 4) before the H100 NVL (now rank 8)
    assert w.shown == ["mi300x", "h100-nvl"]
    assert w.others() == len(cards) - len(w.shown) == 11
    text = x.render("text")
    section = " ".join(text[text.index("What if"):text.index("Guide sections cited")].split())   # unwrapped
    assert "- Outside the first 4 options, 11 more cards change rank, time or cost; the explanation's JSON" in section
    hidden = [c["what"] for c in cards if c["gpu"] not in w.shown]
    assert not [name for name in hidden if f"- {name}: " in section]
    assert all(why["gpu"] in (None, *w.shown) for why in w.because_shown())
    # the JSON keeps every card's row, with its gpu, and every rule
    data = x.to_dict()["what_if"]
    assert [c["gpu"] for c in data["changed"] if "gpu" in c] == [c["gpu"] for c in cards]
    assert data["why"] == w.why and data["shown"] == w.shown
    spanish = " ".join(explain_any(model_size_b=8, method="lora", what_if={"rocm_ok": True}, lang="es").render(
        "markdown").split())
    assert "- Fuera de las 4 primeras opciones, 11 tarjetas más cambian de puesto, tiempo o coste; el JSON" in spanish


def test_what_if_without_a_change_says_nothing_changes() -> None:
    x = explain(model_size_b=8, method="lora", what_if={"method": "lora"}, lang="en")
    assert x.what_if is not None and x.what_if.changed == [] and x.what_if.why == []
    for fmt in ("text", "markdown"):
        text = x.render(fmt)
        assert "Nothing changes: the consultation answers the same." in text[text.index("What if"):]
    changed = explain(model_size_b=8, method="lora", what_if={"method": "qlora"}, lang="en")
    assert "Nothing changes" not in changed.render("text")


def test_what_if_puts_the_rules_about_cards_before_advice_and_warnings() -> None:
    x = explain(model_size_b=70, method="full", what_if={"method": "qlora"}, lang="en")
    kinds = [w["kind"] for w in x.what_if.why]
    first_note = next(i for i, kind in enumerate(kinds) if kind in ("advice", "warning"))
    assert set(kinds[:first_note]) <= {"reject", "demote", "prefer"} and first_note > 0
    assert set(kinds[first_note:]) <= {"advice", "warning"}
    assert x.what_if.because() + x.what_if.notes() == x.what_if.why
    # the card recommended before and after (the H100: eight cards, then one) leads
    leading = [w["gpu"] for w in x.what_if.because()[:3]]
    assert leading[:2] == ["h100-80gb", "h100-80gb"]
    text = x.render("text")
    text = text[text.index("What if"):]
    assert text.index("Because:") < text.index("[one-gpu-if-it-fits") < text.index(
        "Advice and warnings that change:") < text.index("[qlora-tradeoffs]")


def test_what_if_validates_its_values_and_fields() -> None:
    with pytest.raises(InputError) as caught:
        explain(what_if={"method": "sft"}, lang="en")
    assert caught.value.field == "method"
    with pytest.raises(InputError) as caught:
        explain(what_if={"colour": "red"}, lang="en")
    assert caught.value.field == "colour"


def test_plural_forms_follow_the_count() -> None:
    x = explain(model_size_b=70, method="full", what_if={"method": "qlora"}, lang="es")
    changed = {c["what"]: (c["before"], c["after"]) for c in x.what_if.changed}
    # rank 3 after since the units merge (issue 47): four RTX 4090s over PCIe take a micro-batch of 2 in
    # GiB (21.3 of each one's 24), half the weights' crossings of the link a sequence: 6.4 hr and $9.38
    # (10.2 hr and $15 at a micro-batch of 1), ahead of the A100 80 GB's $11
    assert changed["A100 80 GB"] == ("puesto 2 (8 tarjetas, en torno a 1,2 h, ≈ 19\xa0US$)",
                                            "puesto 3 (1 tarjeta, en torno a 7,1 h, ≈ 11\xa0US$)")


@pytest.fixture(scope="module")
def explained_7b():  # type: ignore[no-untyped-def]
    """One explanation rendered by the two tests below."""
    return explain(model_size_b=7, lang="en")


def test_color_only_when_asked(explained_7b) -> None:  # type: ignore[no-untyped-def]
    x = explained_7b
    assert "\x1b[1m" in x.render("text", color=True)
    assert "\x1b" not in x.render("text") and "\x1b" not in x.render("markdown")


def test_json_is_the_structured_explanation(explained_7b) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(explained_7b.render("json"))
    assert {"how", "why_not", "what_if", "trace", "recommendations", "requirement"} <= set(data)
    assert data["how"][0]["steps"][0]["rule"] == "vram-requirement"


def invoke(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    extra = ["--catalog", "guide"] if args and args[0] in ("advise", "explain") else []
    return CliRunner().invoke(main, [*args, *extra], env={"EXPERT_LANG": "", "LC_ALL": "", "LANG": "", **(env or {})})


def test_cli_explain_text_and_flags() -> None:
    done = invoke("explain", "--model-size", "70", "--method", "lora", "--deadline", "8", "--why-not", "h100-80gb",
                  "--what-if", "deadline=24", "--what-if", "--budget=low", "--lang", "es")
    assert done.exit_code == 0, done.output
    assert "Cambio mínimo:" in " ".join(done.stdout.split())
    assert "Qué pasaría si" in done.stdout and "\x1b" not in done.stdout


@pytest.mark.parametrize("args, field", [
    (["--why-not", "h200"], "why_not"), (["--what-if", "deadline"], "what_if"),
    (["--what-if", "speed=3"], "what_if"), (["--what-if", "deadline=-1"], "deadline:"),
    (["--format", "pdf"], "format"),
])
def test_cli_explain_bad_input_exits_2(args: list[str], field: str) -> None:
    done = invoke("explain", *args)
    assert done.exit_code == 2 and done.stdout == ""
    assert "Traceback" not in done.stderr
    assert field.replace("_", "-") in done.stderr or field in done.stderr


# Identical whatever the hash seed: tests/test_embedding.py
# (test_the_firing_order_and_the_json_are_the_same_under_any_hash_seed explains
# these too).


# --- WHY NOT with a large catalog: bounded ------------------------------------

def _catalog(tmp_path, n: int) -> str:  # type: ignore[no-untyped-def]
    """A user catalog of ``n`` cards of every vendor, size and link."""
    sizes, links = [16, 24, 32, 48, 80, 141], ["pcie", "nvlink"]
    cards = [f'[[gpu]]\nid = "card-{i}"\nname = "Card {i}"\nvendor = "{("nvidia", "amd")[i % 2]}"\n'
             f'vram_gb = {sizes[i % len(sizes)]}\ncost = "{("low", "medium", "high")[i % 3]}"\n'
             f'interconnect = "{links[i // 2 % 2] if i % 2 == 0 else ("pcie", "infinity-fabric")[i // 2 % 2]}"\n'
             for i in range(n)]
    path = tmp_path / "many.toml"
    path.write_text("\n".join(cards), encoding="utf-8")
    return str(path)


def test_why_not_for_every_card_covers_the_first_cards_and_names_the_others(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from expert import application as explanation

    consulted = []
    real = explanation.consult
    monkeypatch.setattr(explanation, "consult", lambda *a, **k: consulted.append(1) or real(*a, **k))
    x = explain(model_size_b=70, method="lora", deadline_h=24, catalog=_catalog(tmp_path, 24), lang="en")
    rejected = [r.gpu for r in x.result.rejected]
    assert len(rejected) > explanation.MAX_WHY_NOT
    assert [w.gpu for w in x.why_not] == rejected[:explanation.MAX_WHY_NOT]
    assert [m["gpu"] for m in x.more] == rejected[explanation.MAX_WHY_NOT:]
    # the consultation itself, then one whole consultation per change that works, shared by the cards
    assert len(consulted) <= 1 + explanation.MAX_WHY_NOT
    found = {tuple(sorted(w.change["fields"].items())) for w in x.why_not if w.change}
    assert len(consulted) - 1 <= len(found) + 1
    text = x.render("text", width=200)
    assert f"And {len(x.more)} more cards ruled out: Card " in text and "(why not, why_not=)" in text     # the library's keyword
    assert x.to_dict()["why_not_more"] == x.more
    # asked about alone, a card past the first ones gets its smallest change
    one = explain(model_size_b=70, method="lora", deadline_h=24, catalog=_catalog(tmp_path, 24), lang="es",
                  why_not=x.more[0]["gpu"])
    assert [w.gpu for w in one.why_not] == [x.more[0]["gpu"]] and one.more == []


@pytest.mark.parametrize("profile, catalog, why_not", [
    # the price basis lists no MI250: priced here, so that accepting ROCm is the change that lets it in
    (dict(model_size_b=405, method="full", rocm_ok=False, purpose="production", prices={"mi250": 1.35}), None,
     "mi250"),
    (dict(model_size_b=13, method="full", budget="low", deadline_h=2, vram_gb=24), "current", "b200-180gb"),
    (dict(model_size_b=70, method="lora", deadline_h=24), "current", "h100-80gb"),
    (dict(model_size_b=8, method="lora", deadline_h=0.3), None, "h100-80gb"),
    # no rental price on the basis: no answer brings it back, which the bounded search knows without a run
    (dict(model_size_b=70, method="lora", deadline_h=8, provider="runpod"), None, "a100-40gb"),
])
def test_the_bounded_search_finds_the_change_the_exhaustive_one_finds(profile, catalog, why_not,
                                                                         monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Trying only the answers the failing rules read, each on the card alone
    first, finds the same smallest change as a whole consultation for every
    change of rules/explain.toml."""
    from expert import application as explanation

    def search():  # type: ignore[no-untyped-def]
        x = explain(catalog=catalog, lang="en", why_not=why_not, **profile)
        return [(w.gpu, w.status, w.change and (w.change["fields"], w.change["rank"], w.change["count"]))
                for w in x.why_not]

    bounded = search()
    assert {status for _, status, _ in bounded} <= {"rejected", "ranked-lower", "more-cards"}
    monkeypatch.setattr(explanation, "MAX_CONSULTATIONS", 1000)
    monkeypatch.setattr(explanation.Explainer, "read_by", lambda self, firings: None)
    monkeypatch.setattr(explanation.Explainer, "card_alone", lambda self, gpu, change, most: True)
    assert bounded == search()
    assert any(change for *_, change in bounded) == (why_not != "a100-40gb")


def test_a_card_ranked_lower_is_searched_within_a_bounded_number_of_consultations(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from expert import application as explanation

    catalog = _catalog(tmp_path, 24)
    recommended = advise(model_size_b=8, method="lora", deadline_h=2, catalog=catalog).recommendations
    last = next(r.gpu for r in reversed(recommended) if r.count == 1 and r.rank > 1)
    consulted = []
    real = explanation.consult
    monkeypatch.setattr(explanation, "consult", lambda *a, **k: consulted.append(1) or real(*a, **k))
    monkeypatch.setattr(explanation, "MAX_CONSULTATIONS", 3)
    x = explain(model_size_b=8, method="lora", deadline_h=2, catalog=catalog, why_not=last, lang="en")
    (w,) = x.why_not
    assert w.status == "ranked-lower" and len(consulted) <= 1 + 3
    assert w.change or "No change was found within the 3 consultations an explanation may run." in w.text


def test_why_not_a_card_behind_an_answer_of_as_many_cards_gives_the_ranking() -> None:
    """4 × A100 ranks behind 4 × H100: the cards are not why (the answer takes as
    many), the ranking is; and a change that makes it the answer says so without
    a rank that contradicts it."""
    w = explain(model_size_b=70, method="lora", deadline_h=8, why_not="a100-80gb", lang="en").why_not[0]
    assert w.status == "ranked-lower"
    assert w.reasons[0].rule == "rank-options" and "4 × H100 80 GB: about" in w.text
    assert w.change is not None and w.change["rank"] == 1
    assert w.text.endswith("would be recommended.") and "ranked" not in w.text


def test_why_not_tries_no_answer_on_what_only_the_card_decides(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A card ruled out for what its card alone decides (no rental price, an
    AMD card) is tried with the answers that rule reads (accepting ROCm),
    not with every answer the sizing of its configuration read: one card's
    runs, not dozens, and the same answer (the test above)."""
    from expert import application as explanation

    tried: list[tuple[str, dict]] = []
    real = explanation.Explainer.card_alone
    monkeypatch.setattr(explanation.Explainer, "card_alone",
                        lambda self, gpu, change, most: tried.append((gpu, change)) or real(self, gpu, change, most))
    x = explain(model_size_b=70, method="lora", deadline_h=8, provider="runpod", lang="en")
    rules = {r.gpu: r.rules for r in x.result.rejected}
    assert rules["a100-40gb"] == ["no-rental-price"] and rules["mi210"] == ["no-rental-price", "amd-needs-rocm"]
    assert not [change for gpu, change in tried if gpu == "a100-40gb"]
    assert [change for gpu, change in tried if gpu == "mi210"] == [{"rocm_ok": True}]
    assert all(w.change is None for w in x.why_not if w.gpu in ("a100-40gb", "mi210"))


def test_why_not_consults_again_only_the_cards_a_change_may_bring_back(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A whole consultation WHY NOT runs with a change leaves out the cards
    still ruled out by rules that read none of the answers it changes: at
    RunPod, the A100 40 GB (no rental price, whatever the answers) and the
    AMD cards (ROCm not accepted, no price either); the RTX 4090, which the
    70B model does not fit even eight of over PCIe (issue 47; 13B, its case
    before, now fits them), is configured again for QLoRA. The answers are
    those a consultation of every card gives
    (test_the_bounded_search_finds_the_change_the_exhaustive_one_finds)."""
    from expert import application as explanation

    runs: list[tuple[dict, list[str] | None]] = []
    real = explanation.consult

    def consult(kb, given, tr, basis, model_config=None, only=None):  # type: ignore[no-untyped-def]
        runs.append((given, only))
        return real(kb, given, tr, basis, model_config, only)

    monkeypatch.setattr(explanation, "consult", consult)
    x = explain(model_size_b=70, method="full", deadline_h=2, provider="runpod", lang="en")
    assert {r.gpu: r.rules for r in x.result.rejected} == {
        "rtx-4090": ["no-scale-out-without-fast-link"], "a100-40gb": ["no-rental-price"],
        "mi210": ["no-rental-price", "amd-needs-rocm"], "mi250": ["no-rental-price", "amd-needs-rocm"]}
    assert runs[0][1] is None                       # the consultation asked about: every card
    (given, only), = runs[1:]
    assert given["method"] == "qlora" and only == ["rtx-4090", "a100-80gb", "h100-80gb"]
    rtx = next(w for w in x.why_not if w.gpu == "rtx-4090")
    assert rtx.change is not None and rtx.change["fields"] == {"method": "qlora"}


def test_what_a_card_decides_of_a_configuration_no_answer_changes(kb) -> None:  # type: ignore[no-untyped-def]
    """conditions.FROM_CARD, which WHY NOT relies on: a catalog card's
    configurations agree on those fields whatever the answers, the count,
    the recipe or the micro-batch."""
    from expert.i18n import Localizer
    from expert.inference import engine
    from expert.input.profile import build
    from expert.knowledge.conditions import FIELDS, FROM_CARD

    assert FROM_CARD <= FIELDS["candidate"].keys()
    seen: dict[str, set[tuple]] = {}
    for given in (dict(model_size_b=8, method="lora"), dict(model_size_b=70, method="full", budget="high"),
                  dict(model_size_b=13, method="full", deadline_h=2, interruptible=True, stack="tuned"),
                  dict(model_size_b=405, method="qlora", rocm_ok=True, purpose="production")):
        run = engine.infer(kb, build(kb, given, Localizer("en"))[0])
        for gpu, candidates in run.candidates.items():
            if gpu != "own":        # one's own card is made from the answers
                seen.setdefault(gpu, set()).update(
                    tuple(sorted((k, v) for k, v in c.items() if k in FROM_CARD)) for c in candidates)
    assert len(seen) >= 6 and all(len(values) == 1 for values in seen.values()), seen


def test_why_not_the_answer_itself_says_it_is_the_answer_first() -> None:
    asked = explain(model_size_b=70, method="lora", deadline_h=8, why_not="h100-80gb")
    assert asked.result.recommendations[0].gpu == "h100-80gb" and asked.result.recommendations[0].count == 4
    why = asked.why_not[0]
    assert why.status == "more-cards" and why.text.startswith("It is the recommendation, on 4 cards rather than one.")
    # which step a rule is not about keeps the rules apart; it is no reason to show
    shown = [c["condition"] for reason in why.reasons for c in reason.conditions]
    assert shown and not any(".step !=" in c or ".step not in" in c for c in shown), shown
    other = explain(model_size_b=70, method="lora", deadline_h=8, why_not="a100-80gb").why_not[0]
    assert not other.text.startswith("It is the recommendation")


def test_an_explanation_words_its_citations_with_its_own_knowledge_base(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Explanation.kb is the result's knowledge base, typed as never None (application.explain() alone
    # makes explanations, from a Result that carries it). The guide's section titles came from the
    # shipped rules/ until 2026-12-07, whatever rules_dir the explanation was reasoned with.
    from conftest import edited_rules
    from expert.knowledge.bases import knowledge_base

    base = edited_rules(tmp_path, ("sections.toml", 'title = "GPU requirements for fine-tuning an LLM: VRAM comes first"',
                                   'title = "VRAM first, as this knowledge base says"'))
    explanation = explain_any(rules_dir=base, catalog="guide", model_size_b=8, method="lora", lang="en")
    assert explanation.kb is explanation.result.kb is knowledge_base(base, "guide")
    assert explanation.cited[0]["title"] == "VRAM first, as this knowledge base says"


def test_ones_own_card_ruled_out_starts_its_line_with_a_capital() -> None:
    # the bullet read "x your RTX 4090: None of the setups tried fits it", beside "x AMD MI210: ..."
    for lang, name in (("en", "Your RTX 4090"), ("es", "Tu RTX 4090")):
        x = explain(model_size_b=70, method="qlora", vram_gb="4090", lang=lang)
        assert f"\n  x {name}: " in x.render("text", width=200)
        assert f"\n- **{name}**: " in x.render("markdown")

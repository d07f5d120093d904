""""Did you mean": one function (expert.errors.nearest) behind every error
whose accepted values are known; at most three names, in both languages,
from the library, the CLI and the consultation alike."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from expert import advise, explain
from expert.interfaces.api import estimate
from expert.interfaces.cli.main import main
from expert.interfaces.consultation import AnswerError, Consultation
from expert.errors import SUGGESTIONS, InputError, nearest


def test_nearest_ignores_case_and_separators_and_keeps_three() -> None:
    assert nearest("QLROA", ["full", "lora", "qlora"])[0] == "qlora"
    assert nearest("Zero", ["single", "ddp", "zero1", "zero2", "zero3", "fsdp"]) == ["zero1", "zero2", "zero3"]
    assert nearest("x" * 10_000, ["full"]) == [] and nearest("", ["full"]) == [] and nearest("--", ["full"]) == []
    assert len(nearest("rtx", [f"rtx-{n}" for n in range(3000, 3100)])) == SUGGESTIONS
    assert nearest("3090 card", {"rtx-3090": ()}, keys={"rtx-3090": ("3090",)}) == ["rtx-3090"]


@pytest.mark.parametrize("call, field, suggestion", [
    (lambda lang: advise(method="qlroa", lang=lang), "method", "qlora"),
    (lambda lang: advise(budget="lwo", lang=lang), "budget", "low"),
    (lambda lang: advise(purpose="experimnt", lang=lang), "purpose", "experiment"),
    (lambda lang: advise(vram_gb="rtx 4099", lang=lang), "vram_gb", "rtx-4090"),
    (lambda lang: advise(model_size_b="quen3", lang=lang), "model_size_b", "Qwen3-8B"),
    (lambda lang: advise(basis="gide", lang=lang), "basis", "guide"),
    (lambda lang: advise(prices={"h100": "2"}, lang=lang), "prices", "h100-80gb"),
    (lambda lang: advise(lang=lang).render("jsno"), "format", "json"),
    (lambda lang: explain(why_not="h1000", lang=lang), "why_not", "h100-80gb"),   # ("h200" is the H200's name)
    (lambda lang: estimate(model_size_b=8, strategy="zero4", lang=lang), "strategy", "zero3"),
    (lambda lang: estimate(model_size_b=8, gpu="4090", lang=lang), "gpu", "rtx-4090"),
])
@pytest.mark.parametrize("lang, says", [("en", "Did you mean"), ("es", "¿Quisiste decir")])
def test_library_errors_suggest_the_nearest(call, field: str, suggestion: str, lang: str, says: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as caught:
        call(lang)
    error = caught.value
    assert error.field == field and suggestion in error.suggestions and len(error.suggestions) <= SUGGESTIONS
    assert suggestion in str(error) and (says in str(error) or says.lower() in str(error))


def test_a_rule_id_typo_is_suggested() -> None:
    done = CliRunner().invoke(main, ["rules", "misses-dedline", "-l", "es"])
    assert done.exit_code == 2
    assert done.stderr.strip() == ("Error: regla desconocida «misses-dedline» (`expert rules` las enumera). "
                                   "¿Quisiste decir misses-deadline?")


@pytest.mark.parametrize("args, says", [
    (["advise", "--vram", "rtx 3070x"], "Did you mean rtx-3070"),
    (["advise", "-M", "qlroa"], "Did you mean qlora"),
    (["advise", "-f", "jsn"], "Did you mean json?"),
    (["models", "-f", "jsn"], "Did you mean json?"),
    (["explain", "--why-not", "h300"], "Did you mean h100-80gb, h200-141gb, or h100-pcie?"),
])
def test_the_cli_prints_the_suggestion(args: list[str], says: str) -> None:
    done = CliRunner().invoke(main, args, env={"EXPERT_LANG": "", "LC_ALL": "", "LANG": ""})
    assert done.exit_code == 2 and says in done.stderr
    assert done.stderr.count(",") <= 3   # never the whole list of cards


def test_the_consultation_suggests_too() -> None:
    consultation = Consultation(lang="es")
    with pytest.raises(AnswerError) as caught:
        consultation.answer("model_size_b", "quen3")
    assert "¿quisiste decir Qwen3-8B" in str(caught.value)
    consultation.answer("model_size_b", "8")
    with pytest.raises(AnswerError) as caught:
        consultation.answer("method", "qlroa")
    assert "¿Quisiste decir qlora" in str(caught.value)

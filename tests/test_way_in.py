"""An answer names a setting as the way in that asked gives it (expert.i18n.WAY_IN, labels.toml
[how_*]): the command line its flag (`--model-config`), the library its keyword (`model_config=`), an
assistant over MCP the tool's argument, a visitor of `expert serve` the page's field; never a flag
where there are none."""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

import pytest
from click.testing import CliRunner

from expert import advise
from expert.i18n import WAY_IN, WAYS_IN
from expert.interfaces.cli.main import main

# A model the table does not know: its size is read from the name, and the warning says how to give it
# (model-size-read-from-name, rules.toml), on the guide's six cards (the warning reads the profile alone).
UNKNOWN = {"model_size_b": "MyModel-13B-Instruct", "method": "lora"}
SAID = {  # what the warning says in its parenthesis, by way in and language
    ("cli", "en"): "(--model-config)", ("cli", "es"): "(--model-config)",
    ("library", "en"): "(model_config=)", ("library", "es"): "(model_config=)",
    ("tools", "en"): "(model_size_b: the model's Hugging Face id)",
    ("tools", "es"): "(model_size_b: el identificador del modelo en Hugging Face)",
    ("web", "en"): "(the field “model size”: the model's Hugging Face id)",
    ("web", "es"): "(el campo «tamaño del modelo»: el identificador del modelo en Hugging Face)",
}
# A flag of the command line, as an answer would name it ("--stack tuned", "--price CARD=USD").
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def options_of(command: str | None) -> set[str]:
    """The flags `expert COMMAND` takes (`expert` itself, with None)."""
    taken = main if command is None else main.commands.get(command)
    return {flag for param in (taken.params if taken else []) for flag in [*param.opts, *param.secondary_opts]}


def flags_ask_does_not_take(text: str) -> list[str]:
    """The flags ``text`` names that `expert ask` does not take, unless it names the command that takes them
    with them ("re-run with expert advise --price CARD=USD", "expert advise --launch-model ID --launch DIR":
    the command's flags and their values, up to a word that ends a clause)."""
    wrong: list[str] = []
    command: str | None = None
    for word in text.split():       # (a flag the terminal's width split from its command)
        if command == "":
            command = word if re.fullmatch(r"[a-z]+", word) else None
            continue
        taken = options_of(command) if command else options_of("ask") | options_of(None)
        flags = re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", word)
        wrong += [flag for flag in flags if flag not in taken]
        if word.lstrip("(«“") == "expert":
            command = ""
        elif command and (re.search(r"[.,;:)»]$", word) or not (flags or re.fullmatch(r"[A-Z][A-Z=]*", word))):
            command = None
    return wrong


def texts(value: Any) -> list[str]:
    """Every string of a JSON value (the answer's advice, warnings, rejections, summary, explain's text)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in texts(item)]
    return []


def test_every_way_in_names_every_setting(kb) -> None:  # type: ignore[no-untyped-def]
    tables = {way: kb.labels[f"how_{way}"] for way in WAYS_IN}
    assert all(set(table) == set(tables["cli"]) for table in tables.values())
    # (but the words that say to leave the flag out, and the subject of the own GPU's refusals of `auto`)
    assert all(flag.startswith(("--", "expert ")) for key, flag in tables["cli"].items()
               if key not in ("own_gpu_none", "own_gpu_auto_refused"))
    assert not [(way, text) for way in ("library", "tools", "web") for text in tables[way].values()
                if FLAG.search(text)]
    # `expert ask` names its own flags, or the command that takes one it does not, with it
    assert not [(key, text) for key, text in tables["ask"].items() if flags_ask_does_not_take(text)]
    assert WAY_IN.get() == "library"        # the library's callers pass keywords


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_command_line_and_the_library_name_their_own(lang: str) -> None:
    done = CliRunner().invoke(main, ["--lang", lang, "advise", "--model-size", UNKNOWN["model_size_b"],
                                     "--method", "lora", "--catalog", "guide"])
    assert done.exit_code == 0, done.output
    assert SAID["cli", lang] in " ".join(done.output.split())
    assert ("expert explain" in done.output) and ("--verbose" in done.output)      # the brief answer's last line
    result = advise(**UNKNOWN, catalog="guide", lang=lang)
    warning = next(w["text"] for w in result.to_dict()["warnings"] if w["id"] == "model-size-read-from-name")
    assert SAID["library", lang] in warning and "--" not in warning
    brief = " ".join(result.render("text").split())
    assert ("render(verbose=True) adds" if lang == "en" else "render(verbose=True) añade") in brief
    assert "explain() " in brief and not FLAG.search(brief)
    assert WAY_IN.get() == "library"        # the command line's way in ended with its command


def mcp_calls(*calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """The tools' answers (structured content and text) from the server `expert mcp` serves, in this process."""
    pytest.importorskip("mcp")
    from mcp import Client

    from expert.interfaces.mcp.server import build_server

    async def main() -> list[Any]:
        async with Client(build_server(), mode="legacy") as client:
            answers = []
            for name, arguments in calls:
                got = await client.call_tool(name, arguments)
                assert not got.is_error, got.content
                answers.append([got.structured_content, [part.text for part in got.content]])
            return answers

    return asyncio.run(asyncio.wait_for(main(), timeout=120))


@pytest.fixture(scope="module")
def web() -> Any:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from expert.interfaces.web.app import create_app

    return TestClient(create_app(), base_url="http://127.0.0.1:8000")


def page_text(web: Any, **query: Any) -> str:
    """The page's answer as a person reads it: its text, the tags left out."""
    flags = {"model_size_b": "model-size", "vram_gb": "vram"}    # the address's keys: the CLI's long option names
    got = web.get("/", params={flags.get(key, key): str(value) for key, value in query.items()})
    assert got.status_code == 200, got.text
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", got.text)).split())


@pytest.mark.parametrize("lang", ["en", "es"])
def test_an_assistant_and_a_visitor_are_told_their_own(lang: str, web: Any) -> None:
    (data, _), = mcp_calls(("advise", {**UNKNOWN, "lang": lang, "detail": "full"}))
    warning = next(w["text"] for w in data["warnings"] if w["id"] == "model-size-read-from-name")
    assert SAID["tools", lang] in warning
    shown = page_text(web, **UNKNOWN, lang=lang)
    assert SAID["web", lang] in shown
    assert SAID["cli", lang] not in shown and SAID["library", lang] not in shown


# Profiles whose answers told how to give a setting (rules.toml): the stack (own-gpu-fits-on-a-tuned-stack),
# a price (amd-on-a-tight-budget), the model's size (model-size-read-from-name).
NAMING = [dict(model_size_b=9, method="qlora", vram_gb="RTX 4060"), dict(model_size_b=8, method="lora", budget="low"),
          UNKNOWN]


def test_no_answer_over_mcp_or_the_web_names_a_flag(web: Any) -> None:
    calls = [("advise", {**profile, "lang": lang, "detail": "full"}) for profile in NAMING for lang in ("en", "es")]
    calls += [("explain", {**NAMING[0], "lang": "en", "detail": "full"}),
              ("estimate", {"model_size_b": 8, "method": "lora", "gpus": 4, "strategy": "zero3", "lang": "es"})]
    answers = mcp_calls(*calls)
    said = {entry["id"] for (data, _), (name, _) in zip(answers, calls, strict=True) if name == "advise"
            for entry in data["advice"] + data["warnings"]}
    # the answers reach the sentences that named a flag
    assert {"own-gpu-fits-on-a-tuned-stack", "amd-on-a-tight-budget", "model-size-read-from-name"} <= said
    estimate = " ".join(answers[-1][1])
    assert "es una suposición; nombra una tarjeta con gpu." in " ".join(estimate.split())
    flags = [(name, found) for (data, text), (name, _) in zip(answers, calls, strict=True)
             for found in FLAG.findall(" ".join(texts(data) + text))]
    assert not flags
    for profile, lang, said in ((NAMING[0], "en", "ask again with the field “software stack” set to “tuned”."),
                                (NAMING[1], "es", "(indícalo con el campo «tus precios» donde"),
                                (NAMING[0], "es",
                                 "vuelve a preguntar con el campo «stack de software» en «optimizado».")):
        shown = page_text(web, **profile, lang=lang)     # the answer, the form and its hints
        assert said in shown and not FLAG.findall(shown), (profile, lang)


def test_the_loader_holds_the_table_and_the_placeholders(tmp_path: Any) -> None:
    """A way in that lacks a setting, or a message that names a setting no table has, is a problem of the
    knowledge base, found when it loads, not a KeyError in the middle of an answer."""
    from conftest import edited_rules

    from expert import KnowledgeBaseError
    from expert.knowledge import load

    base = edited_rules(tmp_path, ("labels.toml", 'why_not = "why_not"\n', ""),
                        ("labels.toml", "“VRAM of your own GPU”: %(example)s, or 24", "“VRAM of your own GPU”"),
                        ("rules.toml", "ask again with %(how_stack_tuned)s.", "ask again with %(how_stack)s."),
                        ("rules.toml", "(%(how_model_config)s)", "(%(how_own_gpu_named)s)"))
    with pytest.raises(KnowledgeBaseError) as caught:
        load(base)
    problems = str(caught.value)
    assert "[how_tools] names" in problems and "every [how_*] table names the same settings" in problems
    assert "placeholder 'how_stack' names no setting of labels.toml [how_cli]" in problems
    # an entry's own placeholder (the card of the example) is on every way in, and no rule names such an entry
    assert "[how_web] own_gpu_named holds placeholders other than [how_cli]'s" in problems
    assert "placeholder 'how_own_gpu_named' names no setting of labels.toml [how_cli]" in problems


# --- refusals: a value that cannot be used says how else to give it, in the words of the way in that asked

# The Hub's refusals, by way in and language: how to give a config.json instead. The page and MCP take no
# file (and the cache and the token are the server's): they are not offered one.
HUB_SAID = {
    ("cli", "en"): "Check the id, give its config.json (--model-config FILE), or give the size in billions",
    ("cli", "es"): "Revisa el identificador, indica su config.json (--model-config FICHERO) o da el tamaño",
    ("library", "en"): "Check the id, give its config.json (model_config=PATH), or give the size in billions",
    ("library", "es"): "Revisa el identificador, indica su config.json (model_config=RUTA) o da el tamaño",
    ("web", "en"): "(the server's HF_TOKEN cannot read it). Check the id, or give the size in billions (7, 70B).",
    ("web", "es"): "(el HF_TOKEN del servidor no puede leerlo). Revisa el identificador o da el tamaño en miles",
}


@pytest.fixture
def no_hub_model(monkeypatch: Any) -> None:
    """The Hugging Face Hub has no model of that id (the reader's answer, without a network)."""
    from expert.knowledge import hub

    def missing(repo_id: str, most: int) -> bytes:
        raise hub.HubUnreadable("missing", repo_id)

    monkeypatch.setattr(hub, "read_config_bytes", missing)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_hub_refusal_names_the_setting_as_its_way_in_gives_it(lang: str, web: Any, no_hub_model: None) -> None:
    done = CliRunner().invoke(main, ["--lang", lang, "advise", "--model", "nobody/nothing", "--catalog", "guide"])
    assert done.exit_code == 2 and HUB_SAID["cli", lang] in " ".join(done.stderr.split())
    from expert import InputError
    with pytest.raises(InputError) as refused:
        advise(model="nobody/nothing", lang=lang, catalog="guide")
    assert refused.value.field == "model_size_b"
    assert HUB_SAID["library", lang] in str(refused.value) and not FLAG.search(str(refused.value))
    page = web.get("/", params={"model-size": "nobody/nothing", "lang": lang})
    shown = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.text)).split())
    api = web.get("/api/advise", params={"model-size": "nobody/nothing", "lang": lang})
    assert api.status_code == 400 and api.json()["error"]["field"] == "model-size"      # the address's key
    for text in (shown, api.json()["error"]["message"]):
        assert HUB_SAID["web", lang] in text and "config.json (" not in text and not FLAG.findall(text)


# `--own-gpu auto` (the command line) and local_gpus() (the library) on a machine without nvidia-smi or
# rocm-smi. The page and MCP never read the machine they run on ('auto' is no card there): their words are
# the table's, checked with WAY_IN set as their apps set it.
OWN_SAID = {
    ("cli", "en"): '(--own-gpu "RTX 3090", --own-gpu 24), or leave the flag out for no GPU of your own.',
    ("cli", "es"): '(--own-gpu "RTX 3090", --own-gpu 24), o quita la opción si no tienes GPU propia.',
    ("library", "en"): '(vram_gb="RTX 3090", vram_gb=24), or leave vram_gb out for no GPU of your own.',
    ("library", "es"): '(vram_gb="RTX 3090", vram_gb=24), o deja vram_gb sin dar si no tienes GPU propia.',
    ("tools", "en"): '(vram_gb: "RTX 3090", vram_gb: 24), or leave vram_gb out for no GPU of your own.',
    ("tools", "es"): '(vram_gb: "RTX 3090", vram_gb: 24), o deja vram_gb sin dar si no tienes GPU propia.',
    ("web", "en"): "(the field “VRAM of your own GPU”: RTX 3090, or 24), or leave the field “VRAM of your own GPU” "
                   "empty for no GPU of your own.",
    ("web", "es"): "(el campo «VRAM de tu GPU»: RTX 3090, o 24), o deja vacío el campo «VRAM de tu GPU» si no "
                   "tienes GPU propia.",
}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_local_gpus_refusal_names_the_setting_as_its_way_in_gives_it(lang: str, tmp_path: Any,
                                                                       monkeypatch: Any) -> None:
    from expert import InputError
    from expert.i18n import Localizer
    from expert.input import local_gpus as local
    from expert.interfaces.api import knowledge_base, local_gpus

    monkeypatch.setenv("PATH", str(tmp_path))       # no nvidia-smi, no rocm-smi
    done = CliRunner().invoke(main, ["--lang", lang, "advise", "--own-gpu", "auto", "--model", "8"])
    assert done.exit_code == 2 and OWN_SAID["cli", lang] in " ".join(done.stderr.split())
    with pytest.raises(InputError) as refused:
        local_gpus(lang=lang)
    assert refused.value.field == "vram_gb" and OWN_SAID["library", lang] in str(refused.value)
    for way in ("tools", "web"):
        way_in = WAY_IN.set(way)
        try:
            with pytest.raises(InputError) as refused:
                local.detect(knowledge_base(), Localizer(lang), path=str(tmp_path))
        finally:
            WAY_IN.reset(way_in)
        assert OWN_SAID[way, lang] in str(refused.value) and not FLAG.search(str(refused.value))


# The launch files of a torchtune option for a model given by its size alone: torchtune has configs per
# model, so the refusal says how to name the model, and which options TRL writes instead (the guide's cards).
LAUNCH = {"model_size_b": "8B", "method": "full", "vram_gb": 24, "catalog": "guide"}
LAUNCH_SAID = {
    ("cli", "en"): ("(--model Llama-3.1-8B in the command line, model= in advise())",
                    "write their files with --launch-option (option= in launch())."),
    ("cli", "es"): ("(--model Llama-3.1-8B en la línea de órdenes, model= en advise())",
                    "escribe sus archivos con --launch-option (option= en launch())."),
    ("library", "en"): ('(model="Llama-3.1-8B" in advise())', "write their files with option= in launch()."),
    ("library", "es"): ('(model="Llama-3.1-8B" en advise())', "escribe sus archivos con option= en launch()."),
    ("web", "en"): ("(the field “model size”: Llama-3.1-8B)",
                    "write their files with the link “Launch files of option … (.zip)”."),
    ("web", "es"): ("(el campo «tamaño del modelo»: Llama-3.1-8B)",
                    "escribe sus archivos con el enlace «Archivos de lanzamiento de la opción … (.zip)»."),
}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_launch_refusal_names_the_setting_as_its_way_in_gives_it(lang: str, web: Any, tmp_path: Any) -> None:
    from expert import InputError, launch

    done = CliRunner().invoke(main, ["--lang", lang, "advise", "--model", "8B", "--method", "full", "--own-gpu",
                                     "24", "--catalog", "guide", "--launch", str(tmp_path / "files")])
    said = " ".join(done.stderr.split())
    assert done.exit_code == 2 and all(words in said for words in LAUNCH_SAID["cli", lang]), said
    with pytest.raises(InputError) as refused:
        launch(advise(**LAUNCH, lang=lang))
    said = str(refused.value)
    assert all(words in said for words in LAUNCH_SAID["library", lang]) and not FLAG.search(said), said
    got = web.get("/launch.zip", params={"model-size": "8B", "method": "full", "vram": "24", "catalog": "guide",
                                         "lang": lang, "option": "1"})
    assert got.status_code == 400
    assert all(words in got.text for words in LAUNCH_SAID["web", lang]) and not FLAG.search(got.text), got.text


def test_no_message_outside_the_command_line_names_a_flag(kb) -> None:  # type: ignore[no-untyped-def]
    """Every message of the code that names a flag is the command line's own (expert/interfaces/cli/, or a
    text only `expert models` and `expert rules` write): a refusal or an answer the library, the page or
    MCP may say names a setting through labels.toml [how_*], never as a flag."""
    from expert.explanation.sources import written_in_code

    cli_only = ("expert/interfaces/cli/", "expert/explanation/templates/models.txt.j2",
                "expert/explanation/templates/rules.md.j2")
    flagged = {message: [where for where in places if not where.startswith(cli_only)]
               for message, places in written_in_code().items() if FLAG.search(message)}
    assert not {message: places for message, places in flagged.items() if places}
    assert not [(rule.id, rule.message) for rule in kb.rules if FLAG.search(rule.message or "")]


# `expert ask` takes fewer flags than `expert advise`: what its answers say to do is what a person can do
# there (labels.toml [how_ask]): its own flags, or `expert advise` named with one it does not take.
ASK_SAID = {
    ("hub", "en"): "give its config.json (expert advise --model-config FILE), or give the size in billions (7, 70B).",
    ("hub", "es"): "indica su config.json (expert advise --model-config FICHERO) o da el tamaño en miles de millones",
    ("price", "en"): "Lambda does not rent RTX 4090 and A100 80 GB; give your price (expert advise --price CARD=USD) "
                     "and they are ranked.",
    ("price", "es"): "Lambda no alquila RTX 4090 y A100 80 GB; indica tu precio (expert advise --price "
                     "TARJETA=USD) y entrarán en la clasificación.",
    ("more", "en"): "“yes” to the next question shows the reasoning.",
    ("more", "es"): "«sí» a la pregunta siguiente muestra el razonamiento.",
}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_expert_ask_names_only_what_it_takes(lang: str, monkeypatch: Any) -> None:
    from expert.knowledge import hub

    def offline(repo_id: str, most: int) -> bytes:      # not cached, and the Hub cannot be reached
        raise hub.HubUnreadable("offline", repo_id)

    monkeypatch.setattr(hub, "read_config_bytes", offline)
    runner = CliRunner()
    # a Hub id the Hub cannot give, as the answer to the model's question and as the flag
    for args, answers in ((["ask"], "acme/SuperLM\n"), (["ask", "--model", "acme/SuperLM"], "")):
        done = runner.invoke(main, ["--lang", lang, *args, "--catalog", "guide"], input=answers)
        said = " ".join(done.output.split())
        assert done.exit_code == 2 and ASK_SAID["hub", lang] in said, done.output
        assert not flags_ask_does_not_take(done.output), done.output
    # cards Lambda does not rent, then the whole reasoning ("yes" after the seven questions left)
    done = runner.invoke(main, ["--lang", lang, "ask", "--model", "7", "--provider", "lambda", "--catalog", "guide"],
                         input="\n" * 7 + ("yes" if lang == "en" else "sí") + "\n")
    said = " ".join(done.output.split())
    assert done.exit_code == 0 and ASK_SAID["price", lang] in said and ASK_SAID["more", lang] in said, done.output
    assert ("How the answer was reached" if lang == "en" else "Cómo se llegó a la respuesta") in said
    assert not flags_ask_does_not_take(done.output), done.output
    assert "--verbose" in said and "--verbose" in options_of("ask")
    assert WAY_IN.get() == "library"        # the consultation's way in ended with it

"""Any model by its Hugging Face Hub id (issue 49, item 3): `--model org/name`
(and the library's, the page's and MCP's model field, through the one reader
of model sizes) reads the model's config.json through huggingface_hub and
counts it. The Hub here is a loopback HTTP server that answers as the Hub
does (HF_ENDPOINT points at it); no test touches the network: without the
server, tests/conftest.py points HF_ENDPOINT at a closed loopback port."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("huggingface_hub")

from expert import InputError, advise  # noqa: E402
from expert.i18n import Localizer  # noqa: E402
from expert.interfaces.api import knowledge_base  # noqa: E402
from expert.interfaces.cli.main import main  # noqa: E402
from expert.knowledge import hub, models  # noqa: E402
from expert.knowledge.models import count_params  # noqa: E402

# openai/gpt-oss-20b's config.json (https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json), the
# keys the count reads: 24 layers of 32 experts, 4 of them active per token. OpenAI's gpt-oss model card
# (arXiv:2508.10925) gives 20.9B parameters in all and 3.6B active (docs/models.md: the count, layer by layer).
GPT_OSS_20B = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 24,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880,
    "vocab_size": 201088, "num_local_experts": 32, "num_experts_per_tok": 4, "experts_per_token": 4,
    "tie_word_embeddings": False, "max_position_embeddings": 131072, "sliding_window": 128,
}
QWEN3_8B = {"model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32,
            "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288, "vocab_size": 151936,
            "tie_word_embeddings": False, "max_position_embeddings": 40960}


class LoopbackHub:
    """What the Hub answers for /{org}/{name}/resolve/{revision}/config.json
    (HEAD, then GET), from ``repos``: a body, or (status, X-Error-Code) for
    an error; ``gated`` repos answer 401 GatedRepo without ``Bearer TOKEN``.
    Every request is recorded (method, repo, authorization)."""

    TOKEN = "hf_test_token"

    def __init__(self) -> None:
        self.repos: dict[str, Any] = {}
        self.gated: set[str] = set()
        self.requests: list[tuple[str, str, str | None]] = []
        hub_ = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def answer(self, body_too: bool) -> None:
                repo, _, rest = self.path.lstrip("/").partition("/resolve/")
                hub_.requests.append((self.command, repo, self.headers.get("Authorization")))
                found = hub_.repos.get(repo)
                if repo in hub_.gated and self.headers.get("Authorization") != f"Bearer {hub_.TOKEN}":
                    found = (401, "GatedRepo")
                if found is None:
                    found = (404, "RepoNotFound")
                if not rest.endswith("/config.json"):
                    found = (404, "EntryNotFound")
                if isinstance(found, tuple):
                    self.send_response(found[0])
                    if found[1]:
                        self.send_header("X-Error-Code", found[1])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = found if isinstance(found, bytes) else json.dumps(found).encode()
                self.send_response(200)
                self.send_header("X-Repo-Commit", hashlib.sha1(repo.encode()).hexdigest())
                self.send_header("ETag", '"%s"' % hashlib.sha1(body).hexdigest())
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if body_too:
                    self.wfile.write(body)

            def do_HEAD(self) -> None:
                self.answer(False)

            def do_GET(self) -> None:
                self.answer(True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = "http://127.0.0.1:%d" % self.server.server_address[1]

    def asked(self, repo: str, method: str = "GET") -> int:
        return sum(1 for m, r, _ in self.requests if r == repo and m == method)


@pytest.fixture(scope="module")
def loopback() -> Iterator[LoopbackHub]:
    served = LoopbackHub()
    served.repos.update({"openai/gpt-oss-20b": GPT_OSS_20B, "someone/qwen3-8b-copy": QWEN3_8B})
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    before = os.environ.get("HF_ENDPOINT")
    os.environ["HF_ENDPOINT"] = served.endpoint
    hub.forget()
    yield served
    hub.forget()
    os.environ["HF_ENDPOINT"] = before or "http://127.0.0.1:9"
    served.server.shutdown()
    served.server.server_close()


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_gpt_oss_20b_is_counted_as_the_mixture_of_experts_it_is(loopback: LoopbackHub) -> None:
    result = advise(model="openai/gpt-oss-20b", method="lora", lang="en")
    profile = result.profile
    assert profile["model_read_as"] == "hub" and profile["model_name"] == "openai/gpt-oss-20b"
    # 20.9B in all (the model card), not a dense 20B read from the name
    assert profile["model_size_b"] == pytest.approx(20.9, rel=0.01)
    assert (profile["model_experts"], profile["model_experts_per_token"]) == (32, 4)
    # active: the card's 3.6B plus the input embedding (0.58B), which this count includes as the table's
    # published MoE counts do (Mixtral's 12.9B counts both embedding matrices)
    assert profile["model_active_b"] == pytest.approx(3.6 + 201088 * 2880 / 1e9, rel=0.01)
    assert profile["model_shape"]["experts"] == 32
    fired = {firing["rule"] for firing in result.to_dict()["trace"]}
    assert {"model-read-from-hub", "mixture-of-experts-memory"} <= fired
    assert "model-size-read-from-name" not in fired


def test_the_hub_rule_fires_for_a_hub_id_and_not_for_a_table_name(loopback: LoopbackHub) -> None:
    dense = advise(model="someone/qwen3-8b-copy", method="qlora", lang="es")
    named = advise(model="Qwen/Qwen3-8B", method="qlora", lang="es")      # the table's row, no Hub
    assert [f["rule"] for f in dense.to_dict()["trace"]].count("model-read-from-hub") == 1
    assert "model-read-from-hub" not in {f["rule"] for f in named.to_dict()["trace"]}
    said = " ".join(a["text"] for a in dense.to_dict()["advice"])
    assert "se ha leído del Hugging Face Hub" in said and "someone/qwen3-8b-copy" in said
    assert dense.profile["model_size_b"] == pytest.approx(named.profile["model_size_b"], rel=0.01)
    assert loopback.asked("Qwen/Qwen3-8B", "HEAD") == 0


def config_of(model: Any) -> dict[str, Any]:
    """A config.json with the keys of rules/models.toml [config.keys] for a table row's architecture."""
    config: dict[str, Any] = {
        "model_type": "llama" if model.gated else "gpt2", "hidden_size": model.hidden,
        "num_hidden_layers": model.layers, "num_attention_heads": model.heads,
        "num_key_value_heads": model.kv_heads, "head_dim": model.head_dim, "intermediate_size": model.ffn,
        "vocab_size": model.vocab, "tie_word_embeddings": model.tied, "max_position_embeddings": model.context,
    }
    if model.experts:
        config.update(num_local_experts=model.experts, num_experts_per_tok=model.experts_per_token,
                      moe_intermediate_size=model.expert_ffn, n_shared_experts=model.shared_experts or None)
        if model.moe_layers and model.moe_layers != model.layers:
            if model.layers % model.moe_layers == 0:
                config["interleave_moe_layer_step"] = model.layers // model.moe_layers
            else:
                config["first_k_dense_replace"] = model.layers - model.moe_layers
    if model.mla:
        config.update(model.mla)
    return config


def test_the_hub_count_agrees_with_every_model_of_the_table(loopback: LoopbackHub) -> None:
    """Each of the table's models as its config.json: counted as a Hub config is
    (models.config_model, the count behind read_hub), the table's own count to
    the million, so the published one within 2 % (less a vision encoder, which a
    language model's config does not describe: ``other_b``). Three of them,
    the MoE shapes of each kind, go through the loopback Hub end to end."""
    from pathlib import Path

    kb = knowledge_base()
    tr = Localizer("en")
    assert len(kb.models) >= 68
    through_hub = {"deepseek-v3", "llama-4-maverick", "mixtral-8x7b"}
    assert through_hub <= {model.id for model in kb.models}
    for model in kb.models:
        if model.id in through_hub:
            loopback.repos[f"table/{model.id}"] = config_of(model)
            read = models.read_hub(kb, f"table/{model.id}", tr)
        else:
            read = models.config_model(kb, config_of(model), Path("config.json"), tr, hub_id=f"table/{model.id}")
        assert read.read_as == "hub"
        # the table's own count of the same architecture, to the million (tests/test_models.py holds that
        # count within 2 % of the published one), and so the published count within 2 % and the rounding
        total, active = count_params(model.shape())
        assert read.total_b == pytest.approx(total - model.other_b, abs=0.0006), model.id
        assert read.active_b == pytest.approx(active - model.other_b, abs=0.0006), model.id
        published = model.params_b - model.other_b
        assert abs(read.total_b - published) <= 0.02 * published + 0.0005, model.id
        assert read.experts == (model.experts if model.experts and model.experts > 1 else None), model.id
    assert all(loopback.asked(f"table/{name}") == 1 for name in through_hub)


def test_a_config_is_read_once_then_from_memory_and_the_hub_cache(loopback: LoopbackHub) -> None:
    loopback.repos["someone/once"] = QWEN3_8B
    kb, tr = knowledge_base(), Localizer("en")
    for _ in range(3):
        models.read_hub(kb, "someone/once", tr)
    assert loopback.asked("someone/once") == 1          # WHAT IF and WHY NOT ask again: answered from memory
    hub.forget()
    models.read_hub(kb, "someone/once", tr)
    # the Hub's cache: the file is not downloaded again (its ETag is the same)
    assert loopback.asked("someone/once") == 1 and loopback.asked("someone/once", "HEAD") >= 2


@pytest.mark.parametrize("repo, served, reason", [
    ("nobody/nothing", None, "has no model 'nobody/nothing', or it is private"),
    ("someone/gguf-only", (404, "EntryNotFound"), "has no config.json"),
    # (a 5xx is tried again by huggingface_hub, five times over 23 s: the same words after it)
    ("someone/broken", (400, ""), "could not be read from the Hugging Face Hub"),
    ("someone/not-json", b"{not json", "is not a JSON object in UTF-8"),
    ("someone/a-list", b"[1, 2]", "is not a JSON object in UTF-8"),
    ("someone/nan", b'{"hidden_size": NaN}', "is not a JSON object in UTF-8"),
    ("someone/bool-layers", {**QWEN3_8B, "num_hidden_layers": True}, "cannot be counted: 'num_hidden_layers' must"),
    ("someone/no-hidden", {"model_type": "llama"}, "cannot be counted: the file has no 'hidden_size'"),
    ("someone/huge", b" " * 300_000 + b"{}", "is larger than 262,144 bytes"),
], ids=["missing", "no-config", "server-error", "not-json", "not-an-object", "nan", "bool", "no-hidden", "too-large"])
def test_what_the_hub_cannot_give_is_said_naming_the_field(loopback: LoopbackHub, repo: str, served: Any,
                                                          reason: str) -> None:
    if served is not None:
        loopback.repos[repo] = served
    with pytest.raises(InputError) as error:
        advise(model=repo, lang="en")
    assert error.value.field == "model_size_b" and reason in str(error.value)
    assert str(error.value).startswith("model size: ")
    done = invoke("advise", "--model", repo)
    assert done.exit_code == 2 and reason in done.stderr and "Traceback" not in done.output


def test_a_config_larger_than_a_config_is_not_downloaded(loopback: LoopbackHub) -> None:
    loopback.repos["someone/larger"] = b" " * 300_000 + b"{}"
    with pytest.raises(InputError):
        advise(model="someone/larger")
    assert loopback.asked("someone/larger", "HEAD") >= 1 and loopback.asked("someone/larger") == 0


def test_a_gated_model_needs_a_token_and_reads_with_one(loopback: LoopbackHub, monkeypatch: Any) -> None:
    loopback.repos["meta-like/gated-8b"] = QWEN3_8B
    loopback.gated.add("meta-like/gated-8b")
    for lang, words in (("en", "is a gated model"), ("es", "es un modelo de acceso restringido")):
        with pytest.raises(InputError) as error:
            advise(model="meta-like/gated-8b", lang=lang)
        assert words in str(error.value) and "HF_TOKEN" in str(error.value)
        assert "model_config=" in str(error.value) and "--model-config" not in str(error.value)
    monkeypatch.setenv("HF_TOKEN", LoopbackHub.TOKEN)
    assert advise(model="meta-like/gated-8b").profile["model_read_as"] == "hub"
    assert ("GET", "meta-like/gated-8b", f"Bearer {LoopbackHub.TOKEN}") in loopback.requests


def test_the_messages_are_in_spanish_too(loopback: LoopbackHub) -> None:
    with pytest.raises(InputError) as error:
        advise(model="nobody/nada", lang="es")
    message = str(error.value)
    assert message.startswith("tamaño del modelo: el Hugging Face Hub no tiene ningún modelo «nobody/nada»")
    assert "(model_config=RUTA)" in message       # the library's keyword; the command line's flag is its own


def test_the_known_models_need_no_hub(monkeypatch: Any) -> None:
    """Without the Hub (a closed port) and without huggingface_hub at all, the
    table's models read as before; a Hub id says what it needs."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)      # import huggingface_hub fails
    hub.forget()
    profile = advise(model="meta-llama/Llama-3.1-70B-Instruct", method="lora").profile
    assert profile["model_read_as"] == "table" and profile["model_id"] == "llama-3.1-70b"
    assert advise(model="Mixtral-8x7B").profile["model_experts"] == 8
    with pytest.raises(InputError) as error:
        advise(model="openai/gpt-oss-20b")
    assert "pip install 'expert[hub]'" in str(error.value) and "(model_config=PATH)" in str(error.value)


@pytest.mark.parametrize("text, is_id", [
    ("openai/gpt-oss-20b", True), ("Qwen/Qwen2.5-7B-Instruct", True), ("a/b", True),
    ("gpt-oss-20b", False), ("../etc/passwd", False), ("org/../x", False), ("org/na me", False),
    ("org/name/extra", False), ("-org/name", False), ("org/.name", False), ("org--x/name", False),
    ("o" * 97 + "/name", False), ("https://huggingface.co/openai/gpt-oss-20b", False), ("7B/70B", True),
])
def test_only_the_shape_of_a_hub_id_is_sent_to_the_hub(text: str, is_id: bool) -> None:
    assert hub.is_hub_id(text) is is_id


def test_offline_reads_the_cache_and_says_what_it_cannot(loopback: LoopbackHub) -> None:
    """HF_HUB_OFFLINE=1 (read by huggingface_hub when it starts: one process):
    a config read before comes from the cache, another is refused clearly."""
    loopback.repos["someone/cached"] = GPT_OSS_20B
    models.read_hub(knowledge_base(), "someone/cached", Localizer("en"))       # into this run's HF_HOME cache
    # the guide's six cards: what is tested is the Hub's cache, not the market
    script = ("import sys, expert\n"
              "print(expert.advise(model='someone/cached', catalog='guide').profile['model_experts'])\n"
              "try:\n    expert.advise(model='someone/never-cached', lang='es', catalog='guide')\n"
              "except expert.InputError as error:\n    print(error.field, error)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "32"
    assert lines[1].startswith("model_size_b tamaño del modelo: el config.json de «someone/never-cached» no está "
                               "en la caché de Hugging Face")
    assert loopback.asked("someone/never-cached", "HEAD") == 0


def test_the_page_and_mcp_read_a_hub_id_through_the_same_reader(loopback: LoopbackHub) -> None:
    """One reader behind every entry point: the page's model field and MCP's model_size_b."""
    pytest.importorskip("starlette")
    pytest.importorskip("mcp")
    import asyncio

    from mcp import Client
    from starlette.testclient import TestClient

    from expert.interfaces.mcp.server import build_server
    from expert.interfaces.web import create_app

    client = TestClient(create_app(), base_url="http://127.0.0.1:8000")
    api = client.get("/api/advise", params={"model": "openai/gpt-oss-20b", "method": "lora"})
    assert api.status_code == 200 and api.json()["profile"]["model_read_as"] == "hub"
    refused = client.get("/api/advise", params={"model-size": "nobody/nothing", "lang": "es"})
    assert refused.status_code == 400 and "«nobody/nothing»" in refused.text
    page = client.get("/", params={"model-size": "nobody/nothing"})
    assert "the Hugging Face Hub has no model &#39;nobody/nothing&#39;" in page.text

    async def main() -> Any:
        async with Client(build_server(), mode="legacy") as mcp:
            return [await mcp.call_tool("advise", {"model_size_b": "openai/gpt-oss-20b", "detail": "full"}),
                    await mcp.call_tool("advise", {"model_size_b": "meta-like/absent", "lang": "es"})]

    found, absent = asyncio.run(asyncio.wait_for(main(), timeout=60))
    assert found.structured_content["profile"]["model_experts"] == 32
    assert absent.is_error and absent.structured_content["error"]["field"] == "model_size_b"
    assert "no tiene ningún modelo «meta-like/absent»" in absent.content[0].text
    # no tool takes a config.json (the command line's --model-config FILE): none is offered over MCP
    assert "config.json" not in absent.content[0].text and "--" not in absent.content[0].text
    assert absent.content[0].text.endswith("Revisa el identificador o da el tamaño en miles de millones (7, 70B). "
                                           "Con el tamaño, los archivos de lanzamiento siguen cargando "
                                           "«meta-like/absent» si lo nombras: el argumento model de la herramienta "
                                           "launch.")


def test_the_hub_example_of_docs_models_md_is_real_output(loopback: LoopbackHub) -> None:
    """docs/models.md's ```console block (not run by tests/test_docs.py, which has no Hub): what the
    command prints through the loopback Hub."""
    import re
    import shlex
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "models.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```console\n\$ (expert [^\n]*)\n(.*?)```", text, re.DOTALL)
    assert blocks
    for command, shown in blocks:
        done = CliRunner().invoke(main, shlex.split(command)[1:],
                                  env={"EXPERT_LANG": "en", "COLUMNS": "80", "NO_COLOR": "1"})
        actual = " ".join(done.output.split())
        for part in shown.split("\n...\n"):
            expected = " ".join(" ".join(line for line in part.splitlines() if line.strip() != "...").split())
            assert expected in actual, command


def test_a_consultation_keeps_the_hub_id_as_named(loopback: LoopbackHub) -> None:
    """Turn by turn (`expert ask`, chatbots): the id is the answer kept and saved, read again on resume."""
    from expert import Consultation

    consultation = Consultation(lang="en")
    consultation.answer("model_size_b", " openai/gpt-oss-20b ")
    state = consultation.to_dict()
    assert "openai/gpt-oss-20b" in json.dumps(state)
    resumed = Consultation.from_dict(state)
    assert resumed.result().profile["model_read_as"] == "hub"
    assert resumed.result().profile["model_experts"] == 32


class DroppingHub:
    """A port that accepts each connection and closes it at once, answering
    nothing: the Hub out of reach (a proxy gone, a firewall's reset). It
    counts the connections made to it."""

    def __init__(self) -> None:
        import socket
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = "http://127.0.0.1:%d" % self.listener.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self.drop, daemon=True)
        self.thread.start()

    def drop(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:         # closed: the test is over
                return
            self.connections += 1
            connection.close()


@pytest.fixture
def dropping(monkeypatch: Any) -> Iterator[DroppingHub]:
    served = DroppingHub()
    monkeypatch.setenv("HF_ENDPOINT", served.endpoint)
    hub.forget()
    yield served
    hub.forget()
    served.listener.close()


def test_a_hub_out_of_reach_is_said_after_one_try_not_six(dropping: DroppingHub) -> None:
    """huggingface_hub tries a download five more times, 1 to 8 s apart, when
    no server answers; a person would wait about 25 s to read the same
    sentence. One HEAD request, then the words."""
    with pytest.raises(InputError) as error:
        advise(model="someone/out-of-reach", lang="en")
    assert error.value.field == "model_size_b"
    assert "is not in the Hugging Face cache and the Hub cannot be" in str(error.value)
    assert dropping.connections == 1


def test_a_cached_config_is_read_when_the_hub_is_out_of_reach(loopback: LoopbackHub, monkeypatch: Any) -> None:
    loopback.repos["someone/cached-then-cut"] = QWEN3_8B
    reached = advise(model="someone/cached-then-cut", lang="en")          # read into the Hub's cache
    served = DroppingHub()
    monkeypatch.setenv("HF_ENDPOINT", served.endpoint)
    hub.forget()
    try:
        result = advise(model="someone/cached-then-cut", lang="en")
    finally:
        hub.forget()
        served.listener.close()
    assert result.profile["model_size_b"] == reached.profile["model_size_b"] > 8
    assert served.connections == 1


@pytest.mark.parametrize("way, lang, words", [
    ("cli", "en", "With the size, the launch files still load 'acme/SuperLM' if you name it: --launch-model ID "
                  "beside --launch DIR."),
    ("cli", "es", "Con el tamaño, los archivos de lanzamiento siguen cargando «acme/SuperLM» si lo nombras: "
                  "--launch-model ID junto a --launch DIRECTORIO."),
    # `expert advise --launch-model ID` alone is refused: "--launch-option, --launch-model and --force go
    # with --launch DIR"
    ("ask", "en", "if you name it: expert advise --launch-model ID --launch DIR."),
    ("ask", "es", "si lo nombras: expert advise --launch-model ID --launch DIRECTORIO."),
    ("library", "en", "if you name it: model= in launch()."),
    ("tools", "es", "si lo nombras: el argumento model de la herramienta launch."),
    ("web", "en", "if you name it: give it to train.py when you run the files (their README.md says how)."),
])
def test_a_hub_id_out_of_reach_says_how_the_launch_files_keep_it(way: str, lang: str, words: str,
                                                                  monkeypatch: Any) -> None:
    """The review's case: `expert advise --model acme/SuperLM --method lora` offline was answered "give the
    size in billions", and with --launch the files then lost the model id (train.py's MODEL was None). The
    advice now names how the launch files keep it, on each way in, in the person's language (labels.toml
    [how_*] launch_model); a size with --launch-model ID writes the id into train.py."""
    from expert.i18n import WAY_IN

    def unreachable(repo_id: str, most: int) -> bytes:
        raise hub.HubUnreadable("offline", repo_id)

    monkeypatch.setattr(hub, "read_config_bytes", unreachable)
    token = WAY_IN.set(way)  # type: ignore[arg-type]
    try:
        with pytest.raises(InputError) as error:
            models.read_hub(knowledge_base(), "acme/SuperLM", Localizer(lang))
    finally:
        WAY_IN.reset(token)
    assert error.value.field == "model_size_b"
    assert str(error.value).endswith(words), str(error.value)
    # (a config the Hub has no such file of is not loaded by the files either: not said there)
    monkeypatch.setattr(hub, "read_config_bytes", lambda repo_id, most: (_ for _ in ()).throw(
        hub.HubUnreadable("no-config", repo_id)))
    with pytest.raises(InputError) as gguf:
        models.read_hub(knowledge_base(), "acme/SuperLM-GGUF", Localizer(lang))
    assert "launch" not in str(gguf.value)
    if way == "cli" and lang == "en":     # what the sentence says holds: the size, and the id to the files
        from expert.interfaces.launch.make import launch

        files = launch(advise(model=7, method="lora", catalog="guide"), model="acme/SuperLM").files
        assert "MODEL = 'acme/SuperLM'" in files["train.py"]

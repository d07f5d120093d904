"""The hostile sweep: valid profiles drawn at random and run through every way in,
looking for what a person should never see.

    python scripts/sweep.py                      # 200 profiles, seed 5
    python scripts/sweep.py --n 50 --seed 7 --no-cli --no-mcp --no-web

Each profile is drawn within what the readers accept (rules/profile.toml's
bounds): every method, bare sizes and named models (docs/models.md), the
guide's catalog or the default market, own cards by memory or by name with a
count of 1 to 8, sequence lengths and examples longer than the model's
context, deadlines, budgets, ``--price CARD=USD``, spot, both languages, the
settings a person may fix. Each one is run through:

- the library: ``advise()`` (rendered as text, markdown and JSON) and
  ``explain()`` with WHY NOT of the pick, of a card ruled out and of ``own``,
  and a WHAT IF of one field (the fields taken in turn, so that every field
  is asked over a sweep);
- the CLI (in this process, click's runner): ``advise --format
  text|markdown|json`` by turns, ``explain`` with the same WHY NOT and WHAT IF,
  and ``--launch DIR`` on every fourth;
- the MCP tools (the SDK's in-memory client): advise, explain, launch;
- the web app (Starlette's test client): ``/api/advise``, ``/api/explain``,
  the page, ``/launch.zip``.

A finding is: an exception, a refusal (InputError, exit status 2, a 4xx, a
tool error) of a drawn profile, a traceback, ``None`` / ``nan`` / ``inf``, a
placeholder left unfilled, a dotted field name, a negative figure in the
text, a non-finite number in the JSON, or a pick (card, count, cost) that
differs between the entry points. Each finding is printed once per kind with
the first profile that showed it, as the CLI flags that reproduce it. Exit
status 1 when there is any finding, 0 when none.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import re
import sys
import tempfile
import traceback
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from expert import advise, explain
from expert.errors import InputError

MODELS = ["Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Llama-2-70B", "Llama-2-7B", "Mixtral-8x7B",
          "Mixtral-8x22B", "Qwen3-30B-A3B", "Qwen3-235B-A22B", "DeepSeek-V3", "Qwen2.5-0.5B", "Gemma-3-27B",
          "Phi-4", "Mistral-7B-v0.3", "openai/gpt-oss-20b"]
SIZES = ["0.5", "1", "3", "7", "8", "13", "14", "20", "32", "34", "70", "72", "123", "180", "405", "70B", "1.5b"]
OWN_NAMES = ["RTX 3090", "RTX 4090", "RTX 4060", "A6000", "A100 80GB", "H100", "L4", "RTX 5090", "3060",
             "A10G", "L40S", "MI300X", "RTX 6000 Ada"]
OWN_SIZES = ["8", "12", "16", "24", "24 GB", "40", "48", "80", "96", "141", "192"]
# A WHAT IF of each field, in turn: the CLI's name of the field and the values it is changed to.
WHAT_IF = {"model-size": ["8", "70", "Llama-3.1-405B"], "method": ["full", "lora", "qlora"],
           "budget": ["low", "medium", "high"], "rocm-ok": ["yes", "no"], "deadline": ["4", "2 days", "8760"],
           "vram": ["24", "2x RTX 3090", "no"], "dataset": ["1000", "1m"], "tokens-per-example": ["256", "32k"],
           "epochs": ["0.5", "3"], "purpose": ["experiment", "production"], "interruptible": ["yes", "no"],
           "stack": ["typical", "tuned"], "provider": ["cheapest", "runpod", "aws", "lambda"]}
ARGUMENT = {"model-size": "model_size_b", "method": "method", "budget": "budget", "rocm-ok": "rocm_ok",
            "deadline": "deadline_h", "vram": "vram_gb", "dataset": "dataset_examples",
            "tokens-per-example": "tokens_per_example", "epochs": "epochs", "purpose": "purpose",
            "interruptible": "interruptible", "stack": "stack", "provider": "provider", "seq-len": "seq_len",
            "batch": "batch", "lora-rank": "lora_rank", "checkpointing": "checkpointing", "catalog": "catalog",
            "lang": "lang"}
YESNO = ("rocm-ok", "interruptible", "checkpointing")
FLAGS = {"rocm-ok": ("--rocm-ok", "--no-rocm"), "interruptible": ("--interruptible", "--no-interruptible"),
         "checkpointing": ("--checkpointing", "--no-checkpointing")}


def cards() -> list[str]:
    from expert.interfaces.api import knowledge_base

    return sorted(card.id for card in knowledge_base(catalog="current").catalog)


def draw(rng: random.Random, ids: list[str]) -> dict[str, str]:
    """One valid profile, as the form's keys (the CLI's long option names) and their values as written."""
    p: dict[str, str] = {}
    p["model-size"] = rng.choice(MODELS) if rng.random() < 0.4 else rng.choice(SIZES)
    if rng.random() < 0.9:
        p["method"] = rng.choice(["full", "lora", "qlora"])
    if rng.random() < 0.7:
        p["budget"] = rng.choice(["low", "medium", "high"])
    if rng.random() < 0.4:
        p["deadline"] = rng.choice(["30 min", "1", "4", "8h", "24", "2 days", "72", "8760"])
    own = rng.random()
    if own < 0.2:
        p["vram"] = rng.choice(OWN_SIZES)
    elif own < 0.35:
        p["vram"] = f"{rng.randint(1, 8)}x {rng.choice(OWN_NAMES)}"
    elif own < 0.45:
        p["vram"] = f"{rng.randint(1, 8)}x {rng.choice(OWN_SIZES)}"
    elif own < 0.55:
        p["vram"] = rng.choice(OWN_NAMES)
    for key in ("rocm-ok", "interruptible"):
        if rng.random() < 0.4:
            p[key] = rng.choice(["yes", "no"])
    if rng.random() < 0.6:
        p["dataset"] = rng.choice(["100", "1000", "10k", "250000", "1m", "20m"])
    if rng.random() < 0.5:
        p["tokens-per-example"] = rng.choice(["64", "256", "512", "2048", "4k", "16384", "131072", "300000"])
    if rng.random() < 0.5:
        p["epochs"] = rng.choice(["0.5", "1", "3", "10"])
    if rng.random() < 0.3:
        p["purpose"] = rng.choice(["experiment", "production"])
    if rng.random() < 0.3:
        p["stack"] = rng.choice(["typical", "tuned"])
    if rng.random() < 0.3:
        p["provider"] = rng.choice(["cheapest", "akash", "aws", "digitalocean", "google-cloud", "lambda", "nebius",
                                    "runpod", "verda"])
    if rng.random() < 0.25:
        p["seq-len"] = rng.choice(["128", "512", "2048", "8192", "65536", "200000"])
    if rng.random() < 0.15:
        p["batch"] = rng.choice(["1", "2", "8"])
    if rng.random() < 0.15:
        p["lora-rank"] = rng.choice(["4", "16", "64", "256"])
    if rng.random() < 0.15:
        p["checkpointing"] = rng.choice(["yes", "no"])
    if rng.random() < 0.3:
        p["catalog"] = "guide"
    if rng.random() < 0.2:
        card = rng.choice(["rtx-4090", "a100-80gb", "h100-80gb"] if p.get("catalog") == "guide" else ids)
        p["price"] = f"{card}={rng.choice(['0.01', '0.5', '2', '12.75', '99'])}"
    p["lang"] = rng.choice(["en", "es"])
    return p


def library(p: dict[str, str]) -> dict[str, Any]:
    """The profile as the library's keyword arguments."""
    kwargs: dict[str, Any] = {}
    for key, value in p.items():
        if key == "price":
            card, usd = value.split("=")
            kwargs["prices"] = {card: usd}
        elif key in YESNO:
            kwargs[ARGUMENT[key]] = value == "yes"
        else:
            kwargs[ARGUMENT[key]] = value
    return kwargs


def argv(p: dict[str, str]) -> list[str]:
    """The profile as the CLI's flags."""
    out: list[str] = []
    for key, value in p.items():
        if key in YESNO:
            out.append(FLAGS[key][0 if value == "yes" else 1])
        else:
            out += [f"--{key}", value]
    return out


# --- what a person must never see ----------------------------------------------------------------

FILES = {"py", "json", "yaml", "yml", "sh", "md", "toml", "zip", "txt", "html", "css", "js", "po", "safetensors",
         "bin", "gguf", "csv", "jsonl", "parquet", "pt", "com", "org", "io", "ai", "cfg", "net", "dev"}
PATTERNS = {
    "traceback": re.compile(r"Traceback \(most recent call last\)"),
    "None": re.compile(r"\bNone\b(?!\s+(?:of|is|are|fits?|was|needed)\b|: no card)"),
    "nan/inf": re.compile(r"(?<![\w-])(?:nan|NaN|inf|Infinity)(?![\w-])"),
    "placeholder": re.compile(r"%\(\w+\)[sd]|\{\{|\}\}|\{[a-z_]+\}"),
    "dotted field": re.compile(r"(?<![\w./-])[a-z_]+(?:\.[a-z][a-z_]*)+(?![\w/-])"),
    "negative figure": re.compile(r"(?:[$≈]\s?|about |unas |unos |alrededor de )-\d|(?<![\w-])-\d[\d.,]*\s?"
                                  r"(?:GB|GiB|hr|h|min|%|USD|tokens)\b"),
}
ALLOWED_DOTTED = {"e.g", "i.e", "etc", "vs"}


def scan(where: str, text: str) -> Iterator[tuple[str, str]]:
    for kind, pattern in PATTERNS.items():
        for match in pattern.finditer(text):
            if kind == "dotted field" and (match.group(0).lower() in ALLOWED_DOTTED
                                           or match.group(0).rsplit(".", 1)[1] in FILES):
                continue
            start = max(0, match.start() - 60)
            yield f"{kind} in {where}", f"{match.group(0)!r}: " + text[start:match.end() + 60].replace("\n", " ")


# Keys of the JSON whose strings are for programs, not sentences: the engine's record, WHY NOT's
# conditions as the rules write them, where a figure was read (addresses, files), the launch command.
PROGRAM_KEYS = {"trace", "condition", "file", "url", "command", "content"}


def strings(data: Any) -> Iterator[str]:
    """The strings of a JSON answer that a program shows a person."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key not in PROGRAM_KEYS and not key.endswith("source"):
                yield from strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from strings(value)
    elif isinstance(data, str):
        yield data


def numbers(where: str, data: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Non-finite numbers anywhere in a JSON answer; negative ones outside the deltas of WHAT IF and the
    trace (the engine's record: a headroom below zero is how a card is ruled out)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if not path and key == "trace":
                continue
            yield from numbers(where, value, f"{path}.{key}")
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from numbers(where, value, f"{path}[{i}]")
    elif isinstance(data, float) and not math.isfinite(data):
        yield f"non-finite number in {where}", f"{path} = {data}"
    elif isinstance(data, (int, float)) and not isinstance(data, bool) and data < 0 \
            and not re.search(r"delta|change|diff|what_if", path):
        yield f"negative number in {where}", f"{path} = {data}"


def readable(text: str) -> str:
    """What a person reads of an output: a JSON answer's sentences (its strings, less PROGRAM_KEYS), else
    the text itself (text, markdown, HTML)."""
    try:
        return "\n".join(strings(json.loads(text)))
    except ValueError:
        return text


def pick(data: dict[str, Any]) -> tuple[Any, ...] | None:
    recs = data.get("recommendations") or []
    if not recs:
        return None
    first = recs[0]
    return first.get("gpu"), first.get("count"), first.get("cost"), first.get("hours")


# --- the ways in ---------------------------------------------------------------------------------

def said(field: str | None, message: str) -> str:
    """A refusal as the report shows it: its field, then its message, the field once where the message
    begins with it already (the launch files' "recipe.precision: ..." was "recipe.precision: recipe.precision: ...")."""
    if not field or message.startswith(f"{field}:"):
        return message
    return f"{field}: {message}"


class Sweep:
    def __init__(self, cli: bool, mcp: bool, web: bool) -> None:
        self.findings: dict[str, tuple[str, str]] = {}
        self.counts: Counter[str] = Counter()
        self.runs: Counter[str] = Counter()
        self.cli, self.mcp, self.web = cli, mcp, web
        self.turn = 0
        if cli:
            from click.testing import CliRunner

            from expert.interfaces.cli.main import main
            self.runner, self.main = CliRunner(), main
        if web:
            from starlette.testclient import TestClient

            from expert.interfaces.web.app import create_app
            self.client = TestClient(create_app(), base_url="http://127.0.0.1:8000")

    def find(self, kind: str, detail: str, p: dict[str, str]) -> None:
        self.counts[kind] += 1
        if kind not in self.findings:     # the command that shows it: a hostile input as typed, else advise's
            self.findings[kind] = (detail, p["hostile"] if "hostile" in p else
                                   "advise " + " ".join(_shell(a) for a in argv(p)))

    def look(self, where: str, text: str, p: dict[str, str]) -> None:
        for kind, detail in scan(where, text):
            self.find(kind, detail, p)

    def look_json(self, where: str, data: Any, p: dict[str, str]) -> None:
        for kind, detail in numbers(where, data):
            self.find(kind, detail, p)

    def guarded(self, where: str, p: dict[str, str], work: Any) -> Any:
        self.runs[where] += 1
        try:
            return work()
        except InputError as error:
            self.find(f"refusal in {where}", said(error.field, str(error)), p)
        except Exception:
            self.find(f"exception in {where}", traceback.format_exc(limit=-3), p)
        return None

    def one(self, p: dict[str, str]) -> None:
        self.turn += 1
        kwargs = library(p)
        result = self.guarded("advise()", p, lambda: advise(**kwargs))
        if result is None:
            return
        data = result.to_dict()
        self.look_json("advise() JSON", data, p)
        for fmt in ("text", "markdown"):
            self.look(f"advise() {fmt}", result.render(fmt), p)
        self.look("advise() JSON strings", "\n".join(strings(data)), p)
        picks = {"library": pick(data)}
        field = list(WHAT_IF)[self.turn % len(WHAT_IF)]
        what_if = {field: WHAT_IF[field][self.turn % len(WHAT_IF[field])]}
        asks: list[tuple[str, dict[str, Any]]] = [("what_if", {"what_if": {ARGUMENT[field]: what_if[field]}})]
        if data["recommendations"]:
            asks.append(("why_not pick", {"why_not": data["recommendations"][0]["gpu"]}))
        if data["rejected"]:
            asks.append(("why_not rejected", {"why_not": data["rejected"][-1]["gpu"]}))
        if "vram" in p and p["vram"] != "no":
            asks.append(("why_not own", {"why_not": "own"}))
        for name, extra in asks:
            explanation = self.guarded(f"explain({name})", p, lambda extra=extra: explain(**kwargs, **extra))
            if explanation is not None:
                self.look(f"explain({name}) text", explanation.render("text"), p)
                self.look(f"explain({name}) markdown", explanation.render("markdown"), p)
                self.look_json(f"explain({name}) JSON", explanation.to_dict(), p)
        if self.cli:
            self.through_cli(p, data, asks, what_if, picks)
        if self.mcp:
            self.through_mcp(p, what_if, picks, bool(data["recommendations"]))
        if self.web:
            self.through_web(p, what_if, picks, bool(data["recommendations"]))
        if len({json.dumps(v) for v in picks.values()}) > 1:
            self.find("entry points disagree", repr(picks), p)

    def through_cli(self, p: dict[str, str], data: dict[str, Any], asks: list[tuple[str, dict[str, Any]]],
                    what_if: dict[str, str], picks: dict[str, Any]) -> None:
        flags = argv(p)
        fmt = ("text", "markdown", "json")[self.turn % 3]
        for args in (["advise", *flags, "--format", "json"], ["advise", *flags, "--format", fmt]):
            out = self.cli_run(args, p)
            if out is not None and "json" in args[-1]:
                picks["cli"] = pick(json.loads(out))
        for _name, extra in asks:
            more = ["--why-not", extra["why_not"]] if "why_not" in extra else \
                ["--what-if", "=".join(next(iter(what_if.items())))]
            self.cli_run(["explain", *flags, *more, "--format", fmt], p)
        if self.turn % 4 == 0 and data["recommendations"]:
            with tempfile.TemporaryDirectory() as folder:
                self.cli_run(["advise", *flags, "--launch", str(Path(folder) / "run")], p)
                readme = Path(folder) / "run" / "README.md"          # the other files are code
                if readme.exists():
                    self.look("launch README.md", readme.read_text(encoding="utf-8"), p)

    def cli_run(self, args: list[str], p: dict[str, str]) -> str | None:
        where = f"CLI {args[0]} {' '.join(a for a in args if a.startswith('--format') or a in ('--launch',))}"
        self.runs[where] += 1
        outcome = self.runner.invoke(self.main, args, catch_exceptions=True)
        text = outcome.output
        if outcome.exception is not None and not isinstance(outcome.exception, SystemExit):
            self.find(f"exception in {where}", "".join(traceback.format_exception(outcome.exception))[-600:], p)
            return None
        if outcome.exit_code != 0:
            self.find(f"exit {outcome.exit_code} in {where}", text[-400:], p)
            return None
        self.look(where, readable(text), p)
        return text

    def through_mcp(self, p: dict[str, str], what_if: dict[str, str], picks: dict[str, Any],
                    recommends: bool) -> None:
        # the tools weigh the default market (no catalog), and take the settings as numbers
        arguments = {k: int(v) if k in ("seq_len", "batch", "lora_rank") else v
                     for k, v in library(p).items() if k != "catalog"}
        calls = [("advise", {**arguments, "detail": "full"}),
                 ("explain", {**arguments, "what_if": {ARGUMENT[k]: v for k, v in what_if.items()}}),
                 *([("launch", arguments)] if recommends else [])]
        for name, args in calls:
            self.runs[f"MCP {name}"] += 1
            try:
                answer = asyncio.run(self.mcp_call(name, args))
            except Exception:
                self.find(f"exception in MCP {name}", traceback.format_exc(limit=-3), p)
                continue
            if answer.is_error:
                error = (answer.structured_content or {}).get("error", {})
                self.find(f"tool error in MCP {name}", said(error.get("field"), str(error.get("message"))), p)
                continue
            for block in answer.content if name != "launch" else ():      # launch: file names and a command
                self.look(f"MCP {name} text", getattr(block, "text", ""), p)
            self.look_json(f"MCP {name} JSON", answer.structured_content, p)
            if name != "launch":
                self.look(f"MCP {name} JSON strings", "\n".join(strings(answer.structured_content)), p)
            if name == "advise" and "catalog" not in p:
                picks["mcp"] = pick(answer.structured_content or {})

    async def mcp_call(self, name: str, args: dict[str, Any]) -> Any:
        from mcp import Client

        from expert.interfaces.mcp.server import build_server

        if not hasattr(self, "server"):
            self.server = build_server()
        async with Client(self.server, mode="legacy") as client:
            return await client.call_tool(name, args)

    def through_web(self, p: dict[str, str], what_if: dict[str, str], picks: dict[str, Any],
                    recommends: bool) -> None:
        form = list(p.items())
        paths = [("/api/advise", [("detail", "full")]), ("/api/explain", [("what-if", "=".join(
            next(iter(what_if.items()))))]), ("/", [])]
        if recommends:      # a launch .zip of an answer that recommends nothing is refused, rightly
            paths.append(("/launch.zip", []))
        for path, extra in paths:
            where = f"web {path}"
            self.runs[where] += 1
            try:
                params: Any = form + extra
                answer = self.client.get(path, params=params)
            except Exception:
                self.find(f"exception in {where}", traceback.format_exc(limit=-3), p)
                continue
            if answer.status_code != 200:
                self.find(f"status {answer.status_code} in {where}", answer.text[:400], p)
                continue
            if path == "/launch.zip":
                continue
            self.look(where, readable(answer.text), p)
            if path == "/api/advise":
                picks["web"] = pick(answer.json())


# --- hostile input (--hostile): what a person should be refused, clearly -------------------------

ESC, OSC, RLO = "\x1b[31m", "\x1b]0;pwned\x07", "\u202e"
# (arguments after `expert`, the words the message must hold in English and in Spanish: the field as the
# person reads it, or the flag; None: answered, exit 0). Each is run with --lang en and --lang es.
HOSTILE: list[tuple[list[str], tuple[str, str] | None]] = [
    # huge numbers
    (["advise", "--model-size", "1e400"], ("model size", "tamaño del modelo")),
    (["advise", "--model-size", "99999999999999999999999"], ("model size", "tamaño del modelo")),
    (["advise", "--dataset", "1" + "0" * 40], ("training examples", "ejemplos de entrenamiento")),
    (["advise", "--deadline", "1e308"], ("deadline", "plazo")),
    (["advise", "--epochs", "1e9"], ("epochs", "épocas")),
    (["advise", "--tokens-per-example", str(2 ** 64)], ("tokens per example", "tokens por ejemplo")),
    (["advise", "--price", "h100-80gb=1e400"], ("price", "precio")),
    (["estimate", "--gpus", "1" + "0" * 30], ("GPUs", "GPU")),
    # NaN and infinities
    (["advise", "--model-size", "nan"], ("model size", "tamaño del modelo")),
    (["advise", "--deadline", "inf"], ("deadline", "plazo")),
    (["advise", "--epochs", "-inf"], ("epochs", "épocas")),
    (["advise", "--vram", "NaN"], ("VRAM", "VRAM")),
    (["explain", "--what-if", "deadline=nan"], ("deadline", "plazo")),
    # digits of other scripts: read as the number they write, or refused naming the field
    (["advise", "--model-size", "٧٠"], None),
    (["advise", "--dataset", "１０k"], None),
    (["advise", "--tokens-per-example", "10⁴⁰⁰"], ("tokens per example", "tokens por ejemplo")),
    # empty values: not given, and said so on stderr
    (["advise", "--model-size", ""], None),
    (["advise", "--own-gpu", " "], None),
    (["advise", "--catalog", ""], ("catalog", "catálogo")),
    (["explain", "--why-not", ""], ("why-not", "why-not")),
    # a flag twice, under one name or two
    (["advise", "--model-size", "8", "--model", "70"], ("--model-size", "--model-size")),
    (["advise", "--vram", "24", "--gpu", "48"], ("--vram", "--vram")),
    (["advise", "--rocm-ok", "--no-rocm"], ("--rocm-ok", "--rocm-ok")),
    # contradictory flags: refused, or answered with a warning
    (["estimate", "--method", "full", "--base-bits", "4"], ("base weight bits", "bits de los pesos base")),
    (["estimate", "--method", "qlora", "--base-bits", "16"], ("base weight bits", "bits de los pesos base")),
    (["advise", "--method", "full", "--lora-rank", "64"], None),
    (["advise", "--launch-option", "2"], ("--launch", "--launch")),
    (["estimate", "--gpus", "2", "--strategy", "single"], ("strategy", "estrategia")),
    # control characters and escape sequences in what is echoed back
    (["advise", "--model", f"{ESC}Llama{OSC}"], ("model size", "tamaño del modelo")),
    (["advise", "--own-gpu", f"RTX{OSC} 3090"], ("VRAM", "VRAM")),
    (["advise", "--method", f"lo{RLO}ra"], ("fine-tuning method", "método de ajuste")),
    (["explain", "--why-not", f"h100{ESC}"], ("why-not", "why-not")),
    (["advise", "--price", f"{ESC}h100=2"], ("price", "precio")),
    (["advise", "--catalog", f"/tmp/{OSC}.toml"], ("catalog", "catálogo")),
    (["advise", f"--bogus{ESC}"], ("--bogus", "--bogus")),
    (["advise", "--model-size"], ("--model-size", "--model-size")),
]
# English a Spanish error must not fall back to (click's own words, an untranslated message).
ENGLISH = re.compile(r"\b(?:is not|requires|No such|must be|accepted|Try '|Usage:|given twice)\b")


def hostile(sweep: Sweep) -> None:
    """Each HOSTILE input in both languages: no traceback, nothing a terminal acts on, the exit status
    its case says, the field named, and a Spanish message in Spanish."""
    for args, words in HOSTILE:
        for lang in ("en", "es"):
            p = {"hostile": " ".join(_shell(a) for a in args)}
            where = f"hostile {args[0]} --lang {lang}"
            sweep.runs[where] += 1
            outcome = sweep.runner.invoke(sweep.main, [*args, "--lang", lang, "--catalog", "guide"]
                                          if args[-1] != "--model-size" else ["--lang", lang, *args])
            err, out = outcome.stderr, outcome.stdout
            if outcome.exception is not None and not isinstance(outcome.exception, SystemExit):
                sweep.find(f"exception in {where}", repr(outcome.exception), p)
                continue
            unsafe = sorted({f"U+{ord(ch):04X}" for ch in out + err
                             if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf")})
            if unsafe or "Traceback" in out + err or "Internal error" in err:
                sweep.find(f"unsafe output in {where}", f"{unsafe} {err[-300:]}", p)
            expected = 0 if words is None else 2
            if outcome.exit_code != expected:
                sweep.find(f"exit {outcome.exit_code} (not {expected}) in {where}", (err or out)[-300:], p)
                continue
            if words is not None:
                line = err.strip().splitlines()[-1] if err.strip() else ""
                if not line.startswith("Error: ") or words[lang == "es"] not in line:
                    sweep.find(f"field not named in {where}", line[:300], p)
                if lang == "es" and ENGLISH.search(err):
                    sweep.find(f"English in a Spanish error ({where})", err[-300:], p)


def _shell(word: str) -> str:
    return word if re.fullmatch(r"[\w./=:-]+", word) else "'" + word.replace("'", "'\\''") + "'"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="profiles to draw (default 200)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--no-cli", action="store_true")
    parser.add_argument("--no-mcp", action="store_true")
    parser.add_argument("--no-web", action="store_true")
    parser.add_argument("--progress", action="store_true", help="a dot per profile on stderr")
    parser.add_argument("--hostile", action="store_true",
                        help="also the hostile inputs (HOSTILE: huge numbers, NaN, other digits, empty values, a flag "
                             "twice, contradictory flags, escape sequences), through the CLI in both languages")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    ids = cards()
    sweep = Sweep(cli=not options.no_cli or options.hostile, mcp=not options.no_mcp, web=not options.no_web)
    if options.hostile:
        hostile(sweep)
    for _ in range(options.n):
        sweep.one(draw(rng, ids))
        if options.progress:
            print(".", end="", file=sys.stderr, flush=True)
    print(f"{options.n} profiles (seed {options.seed}); calls: "
          + ", ".join(f"{where} {count}" for where, count in sorted(sweep.runs.items())))
    if not sweep.findings:
        print("no findings")
        return 0
    for kind, (detail, flags) in sorted(sweep.findings.items()):
        print(f"\n{kind} ({sweep.counts[kind]}x)\n  expert {flags}\n  {detail.strip()}")
    return 1


if __name__ == "__main__":
    sys.exit(main())

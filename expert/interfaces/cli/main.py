"""The command line: the group ``main`` (the ``expert`` console script) and
its consultation commands (advise, explain, estimate, schema, mcp, serve); the
others are added from :mod:`.ask` (ask) and :mod:`.knowledge`
(models, rules, catalogs, check). The options are in :mod:`.options`;
printing, errors and exit codes in :mod:`.output`.

Exit codes: 0 the consultation was answered (even if nothing fits); 2 invalid
input (a flag value, a language, a knowledge base); 1 anything else, such as
output that cannot be written (a full disk, a closed pipe). Never a
traceback. All the work is done by the library (:mod:`expert.interfaces.api`);
commands import it when they run, so ``expert --help`` stays fast.
"""

from __future__ import annotations

import atexit
import gc
from typing import TYPE_CHECKING, Any, cast

import click

from ...escape import quoted, terminal
from ...i18n import WAY_IN
from . import completion as complete
from .ask import ask
from .knowledge import catalogs, check, models, rules
from .options import (
    BASIS_OPTION,
    CATALOG_OPTION,
    COLOR_OPTION,
    COLOR_WHEN,
    DETAIL_OPTION,
    EXPLAIN_DETAIL_OPTION,
    LANGS,
    LAUNCH_OPTIONS,
    MODEL_CONFIG_OPTION,
    OUTPUT_OPTIONS,
    PRICE_OPTION,
    PROFILE_OPTIONS,
    SETTING_OPTIONS,
    VERBOSE_OPTION,
    WHAT_IF_NAMES,
    Command,
    given_catalogs,
    options,
    own_gpu_auto,
    parse_prices,
    parse_what_if,
)
from .output import command_gettext, command_lang, echo, fail, run_action, standalone, terminal_width, use_color

if TYPE_CHECKING:     # the library is imported when a command runs (``expert --help`` stays fast)
    from ...application import Basis
    from ...i18n import Lang

# When the command's process ends, its memory goes with it; Python's last
# garbage collection would first walk every object left (the knowledge base,
# experta's network: a tenth of `expert advise`). Frozen at exit, they are
# not walked. (The library does not touch the garbage collector.)
atexit.register(gc.freeze)


# Words people type for a command, in English and Spanish (accents aside): an unknown command that is one
# of them is answered "Did you mean ...?" with the commands it stands for, as one a letter off is.
_SAID_FOR: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("consult", "chat", "talk", "question", "questions", "interactive", "wizard",
                     "consultar", "consulta", "preguntar", "preguntas", "charlar", "chatear"), ("ask",)),
    **dict.fromkeys(("recommend", "recommendation", "suggest", "advice", "recomendar", "recomendacion",
                     "aconsejar", "consejo", "sugerir"), ("advise",)),
    **dict.fromkeys(("why", "reason", "reasons", "explicar", "explicacion", "porque"), ("explain",)),
    **dict.fromkeys(("memory", "vram", "estimar", "estimacion", "memoria"), ("estimate",)),
    **dict.fromkeys(("gpus", "cards", "list", "tarjetas", "catalogos", "listar"), ("catalogs",)),
    **dict.fromkeys(("modelos",), ("models",)),
    **dict.fromkeys(("reglas",), ("rules",)),
    **dict.fromkeys(("web", "server", "servir"), ("serve",)),
}


class _Group(click.Group):
    """The `expert` group, which is also the console script (so sphinx-click
    and click-man find it): run standalone, every error is a message and an
    exit status, never a traceback (:func:`standalone`). `--color` before a
    command takes no value unless one follows (`expert --color explain` is
    `--color=always`)."""

    command_class = Command

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        # prog_name "expert" names _EXPERT_COMPLETE, also for python -m expert
        standalone(lambda: super(_Group, self).main(args, prog_name or "expert", complete_var,
                                                     standalone_mode=False, **extra),
                   None if args is None else list(args))

    def invoke(self, ctx: click.Context) -> Any:
        """The command, its answers worded for the command line: a setting is named by its flag
        (``--stack tuned``; expert.i18n.WAY_IN, labels.toml [how_cli])."""
        way_in = WAY_IN.set("cli")
        try:
            return super().invoke(ctx)
        finally:
            WAY_IN.reset(way_in)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        """The command ``args`` name; an unknown one is refused with the commands a word people type
        for them names ("consult" is `expert ask`: :data:`_SAID_FOR`), else those it is close to."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as error:
            if type(error).__name__ == "NoSuchCommand" and args:
                from ...knowledge.vocabulary import fold

                said = [name for name in _SAID_FOR.get(fold(args[0]), ()) if name in self.commands]
                if said:        # before the names a few letters away ("chat" is not "schema")
                    vars(error)["possibilities"] = said    # (a Final attribute of click's)
            raise

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args = list(args)
        for at, arg in enumerate(args):
            if not arg.startswith("-"):
                break
            if arg == "--color" and (at + 1 == len(args) or args[at + 1] not in COLOR_WHEN):
                args[at] = "--color=always"
        return super().parse_args(ctx, args)


@click.group(cls=_Group, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(None, "-V", "--version", package_name="expert")
@click.option("-l", "--lang", metavar="LANG", help="es or en, for every command (default: EXPERT_LANG, then LC_ALL/LANG).",
              shell_complete=LANGS)
@COLOR_OPTION
@CATALOG_OPTION
@click.pass_context
def main(ctx: click.Context, lang: str | None, color: str | None, no_color: bool | None,
         catalog: tuple[str, ...]) -> None:
    """Which GPU (or GPUs) to fine-tune a large language model on, and why.

    Without a command, `expert` asks you a few questions (the same as
    `expert ask`).

    \b
    Examples:
      expert
      expert advise --model-size 8 --method lora
      expert advise --model-size 70 --method lora --deadline 8 --lang es
      expert advise --model-size Llama-3-8B --vram 24 --format json
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(ask, lang=lang)


for _command in (ask, models, rules, catalogs, check):    # the commands of ask.py and knowledge.py
    main.add_command(_command)


@main.command()
@options(PROFILE_OPTIONS + SETTING_OPTIONS + [MODEL_CONFIG_OPTION, CATALOG_OPTION, BASIS_OPTION, PRICE_OPTION]
          + OUTPUT_OPTIONS + [DETAIL_OPTION, VERBOSE_OPTION, COLOR_OPTION] + LAUNCH_OPTIONS)
def advise(fmt: str, lang: str | None, catalog: tuple[str, ...], basis: str, model_config: str | None,
           prices: tuple[str, ...], detail: str, verbose: bool, launch_dir: str | None, launch_option: str | None,
           launch_model: str | None, force: bool, color: str | None = None, no_color: bool | None = None,
           **profile: Any) -> None:
    """Recommend GPUs for a fine-tuning run, with the reasons.

    Every flag is optional; what is not given takes a default that the
    answer lists as assumed. Exit status: 0 answered (even when nothing fits),
    2 invalid input, 1 anything else.

    \b
    Examples:
      expert advise --model-size 7 --method qlora --budget low
      expert advise --model-size 13 --method full --vram 24 --lang es
      expert advise --model-size 70 --method lora --format markdown
      expert advise --model "Mixtral 8x7B" --method qlora
      expert advise --model-config ./my-model/config.json --method lora
      expert advise --model-size 8 --format json --detail summary
      expert advise --model-size 8 --method lora --verbose
      expert advise --model-size 70 --method lora --seq-len 4096 --batch 2
    """

    lang = command_lang(lang)

    def action() -> str:
        from ..api import advise as run_advise

        own_gpu_auto(profile, lang, given_catalogs(catalog))
        # --lang and --basis as typed: the library is their one reader, and refuses what its types do not name
        result = run_advise(lang=cast("Lang | None", lang), catalog=given_catalogs(catalog), basis=cast("Basis", basis),
                            model_config=model_config,
                            prices=parse_prices(prices), **profile)
        output = result.render(fmt, width=terminal_width(), detail=detail, verbose=verbose)
        if launch_dir is not None:
            _write_launch(result, launch_dir, launch_option, launch_model, force)
        elif launch_option is not None or launch_model is not None or force:
            from ...errors import InputError

            _ = command_gettext()
            raise InputError("launch", _("--launch-option, --launch-model and --force go with --launch DIR."))
        return output

    run_action(action, lang)


def _write_launch(result: Any, directory: str, option: str | None, model: str | None, force: bool) -> None:
    """--launch: the library writes the files; a line on stderr says where (stdout keeps the answer)."""
    from ...errors import InputError
    from ..launch.make import launch
    from ..launch.plan import NotEmpty

    rank: Any = 1 if option is None else (int(option) if option.strip().isdigit() and len(option) < 6 else option)
    _ = command_gettext()
    try:
        files = launch(result, rank, model=model, directory=directory, overwrite=force)
    except NotEmpty as error:    # the library's words name overwrite=True; a person here types --force
        raise InputError("launch", _("launch: the directory '%(path)s' is not empty; choose an empty one, or add "
                                     "--force to overwrite its files.") % {"path": quoted(error.path, 200)}) from None
    echo(terminal(_("Launch files for option %(rank)s written to %(dir)s: %(files)s. Start with: %(command)s")
          % {"rank": files.option, "dir": quoted(directory, 200), "files": ", ".join(files.files),
             "command": files.command}), err=True)


@main.command(short_help="Answer and show the reasoning: how, why not, what if.")
@options(PROFILE_OPTIONS + SETTING_OPTIONS + [MODEL_CONFIG_OPTION, CATALOG_OPTION, BASIS_OPTION, PRICE_OPTION] + OUTPUT_OPTIONS
          + [COLOR_OPTION, EXPLAIN_DETAIL_OPTION])
@click.option("--why-not", "why_not", metavar="GPU", help="Explain why a card (a catalog id, or 'own') is not the answer.",
              shell_complete=complete.catalog_cards)
@click.option("--what-if", "what_if", metavar="FIELD=VALUE", multiple=True, shell_complete=complete.what_if(WHAT_IF_NAMES),
              help="Re-run with a changed answer and show what changes (repeatable): deadline=24, method=qlora.")
def explain(fmt: str, lang: str | None, why_not: str | None, what_if: tuple[str, ...], catalog: tuple[str, ...],
            basis: str, prices: tuple[str, ...], color: str | None, no_color: bool | None, model_config: str | None,
            detail: str, **profile: Any) -> None:
    """Answer a consultation and show the reasoning: how, why not, what if.

    HOW: the chain of rules from your answers to each recommendation, each
    step citing its rule and the guide's section. WHY NOT: what ruled each
    other card out and the smallest change that would make it the answer.
    WHAT IF: what changes when an answer changes, and which rules say so.

    \b
    Examples:
      expert explain --model-size 70 --method lora --deadline 8 --lang es
      expert explain --model-size 13 --method lora --vram 16 --why-not own
      expert explain --model-size 13 --method full --what-if method=qlora
    """

    lang = command_lang(lang)

    def action() -> str:
        from ...application import explain as run_explain

        own_gpu_auto(profile, lang, given_catalogs(catalog))
        # --lang and --basis as typed: the library is their one reader, and refuses what its types do not name
        explanation = run_explain(lang=cast("Lang | None", lang), why_not=why_not, what_if=parse_what_if(what_if),
                                  catalog=given_catalogs(catalog), basis=cast("Basis", basis), model_config=model_config, prices=parse_prices(prices), detail=detail,
                                  **profile)
        return explanation.render(fmt, width=terminal_width(), color=use_color())

    run_action(action, lang)


@main.command(short_help="Estimate a run's GPU memory from first principles.")
@click.option("-s", "--model-size", "-m", "--model", "model_size_b", metavar="SIZE",
              help="Parameters in billions, or the model's name: 7, 70B, Llama-3.1-8B, Mixtral-8x7B.")
@MODEL_CONFIG_OPTION
@click.option("-M", "--method", metavar="METHOD", help="full, lora or qlora.", shell_complete=complete.field_choices("method"))
@click.option("--gpus", metavar="N", help="How many GPUs share the run (default 1).")
@click.option("--strategy", metavar="STRATEGY", help="single, ddp, zero1, zero2, zero3 or fsdp (default: zero3 with several GPUs).",
              shell_complete=complete.names_in("estimate", "STRATEGIES"))
@click.option("--offload/--no-offload", default=None, help="Offload gradients and optimizer state to CPU memory.")
@click.option("--offload-params/--no-offload-params", "offload_params", default=None,
              help="Offload the weights too (FSDP cpu_offload, ZeRO-3 offload_param): the GPU keeps the layers in use.")
@click.option("--seq-len", "seq_len", metavar="TOKENS", help="Sequence length: 2048, 4k (default: --tokens-per-example, else 1024).")
@click.option("--batch", metavar="N", help="Micro-batch per GPU (default 1).")
@click.option("--checkpointing/--no-checkpointing", default=None, help="Activation checkpointing (default on).")
@click.option("--optimizer", metavar="NAME", help="adamw, adamw8bit, paged-adamw8bit or sgd.")
@click.option("--precision", metavar="PRECISION", help="mixed (bf16 + fp32 master), bf16 (pure) or fp16 (fp32 master, loss scaling).",
              shell_complete=complete.names_in("estimate", "PRECISIONS"))
@click.option("--base-bits", "base_bits", metavar="BITS", help="Frozen weights of LoRA: 16, 8 or 4.")
@click.option("--lora-rank", "lora_rank", metavar="R", help="LoRA rank (default 16).")
@click.option("--gpu", metavar="ID", shell_complete=complete.catalog_cards,
              help="The card, for the training time: a catalog id or a card you own (expert catalogs lists them; "
                   "default: timing.toml's reference card).")
@click.option("--dataset", "dataset_examples", metavar="N", help="Training examples, for the time (default 10000).")
@click.option("--tokens-per-example", "tokens_per_example", metavar="N",
              help="Tokens in one example, for the time (default: the sequence length).")
@click.option("--epochs", metavar="N", help="Passes over the dataset, for the time (default 1).")
@click.option("--stack", metavar="STACK", help="typical or tuned: the software the time assumes (default typical).",
              shell_complete=complete.field_choices("stack"))
@click.option("-f", "--format", "fmt", metavar="FORMAT", default="text", show_default=True, help="text or json.",
              shell_complete=complete.words("text", "json"))
@click.option("-l", "--lang", metavar="LANG", help="es or en.", shell_complete=LANGS)
@CATALOG_OPTION
@COLOR_OPTION
def estimate(fmt: str, lang: str | None, catalog: tuple[str, ...], color: str | None = None,
             no_color: bool | None = None, **raw: Any) -> None:
    """Estimate from first principles the GPU memory a fine-tuning run needs.

    Weights, gradients, optimizer state, activations and framework overhead,
    per GPU and in all, drawn as bars, and the catalog cards that hold it;
    then how long the run takes on --gpu (rules/timing.toml). Every constant
    is in rules/ with its source.

    \b
    Examples:
      expert estimate --model-size 7 --method full
      expert estimate --model-size 70 --method lora --gpus 4 --strategy zero3
      expert estimate --model-size 8 --method lora --dataset 50k --epochs 3
      expert estimate --model-size 65 --method qlora --lora-rank 64 --format json
    """
    lang = command_lang(lang)

    def action() -> str:
        from ...explanation.render import render_estimate
        from ...i18n import Localizer, resolve_lang
        from ...inference import estimate as estimator
        from ...inference.estimate_input import from_input
        from ...knowledge.bases import knowledge_base

        tr = Localizer(resolve_lang(lang))
        kb = knowledge_base(None, given_catalogs(catalog))
        setup, run = from_input(kb, tr, **raw)
        return render_estimate(kb, estimator.estimate(kb, setup), fmt, tr.lang, terminal_width(), run)

    run_action(action, lang)


@main.command(short_help="Print JSON Schemas of the input and output, or tool definitions.")
@click.option("--what", metavar="WHAT", default="input", show_default=True,
              help="input, output, or tools (the tools of `expert mcp`).")
@click.option("--shape", metavar="SHAPE", default="mcp", show_default=True,
              help="With --what tools: mcp (name, description, inputSchema), openai (function calling) or "
                   "anthropic (input_schema).")
@click.option("-l", "--lang", metavar="LANG", help="es or en, for error messages.")
@COLOR_OPTION
def schema(what: str, shape: str, lang: str | None, color: str | None = None, no_color: bool | None = None) -> None:
    """Print a JSON Schema (draft 2020-12) or tool definitions, as JSON.

    The input schema and the tools' parameters come from the profile
    definition (rules/profile.toml); the output schema is the JSON of
    `expert advise --format json` (either --detail).

    \b
    Examples:
      expert schema --what input
      expert schema --what output
      expert schema --what tools --shape openai
      expert schema --what tools --shape anthropic
    """
    lang = command_lang(lang)

    def action() -> str:
        import json

        from ...errors import InputError
        from ...i18n import Localizer, resolve_lang
        from ...knowledge.bases import knowledge_base
        from .. import schema as schemas

        tr = Localizer(resolve_lang(lang))
        for name, value, accepted in (("what", what, ("input", "output", "tools")), ("shape", shape, schemas.SHAPES)):
            if value not in accepted:
                raise InputError(name, tr.gettext("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
                    "field": "--" + name, "value": quoted(value),
                    "accepted": tr.gettext("choose %(accepted)s") % {"accepted": tr.list(accepted, style="or")}})
        kb = knowledge_base()
        data: Any = (schemas.input_schema(kb) if what == "input" else schemas.output_schema(kb) if what == "output"
                     else schemas.tools(kb, shape))
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    run_action(action, lang)


@main.command(short_help="Serve the tools over MCP (stdio, or streamable HTTP).")
@click.option("--transport", metavar="TRANSPORT", default="stdio", show_default=True,
              help="stdio, or streamable-http (on --host and --port).")
@click.option("--host", default="127.0.0.1", show_default=True, help="With streamable-http: the address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535),
              help="With streamable-http: the port.")
@click.option("--allow-remote", is_flag=True,
              help="With streamable-http: allow a --host beyond this machine (0.0.0.0, a LAN address).")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME[:PORT]",
              help="With --allow-remote: a name clients use to reach the server (the Host header is checked); "
                   "repeat for each.")
def mcp(transport: str, host: str, port: int, allow_remote: bool, allowed_hosts: tuple[str, ...]) -> None:
    """Serve advise, explain, estimate and a consultation as MCP tools.

    Needs the mcp extra: pip install 'expert[mcp]'. Each tool answers in
    the language of its lang argument; a bad value is a tool error that
    names the field. A consultation's state stays in this process, keyed
    by an opaque id.

    \b
    Examples:
      expert mcp
      expert mcp --transport streamable-http --port 8000
      expert mcp --transport streamable-http --host 0.0.0.0 --allow-remote --allowed-host gpu.example.org

    Over HTTP the Host and Origin headers are always checked; each client
    session keeps its own consultations.
    """
    if transport not in ("stdio", "streamable-http"):
        fail(f"Error: --transport: '{quoted(transport)}' is not accepted; choose stdio or streamable-http.", 2)
    try:
        from ..mcp.server import serve
    except ImportError as error:
        fail(f"Error: `expert mcp` needs the mcp package: pip install 'expert[mcp]' ({quoted(str(error))}).", 1)
    if transport == "streamable-http":
        from ..mcp.server import transport_security

        try:
            from .. import serving  # noqa: F401 - hypercorn, which serves HTTP
        except ImportError as error:
            fail(f"Error: `expert mcp --transport streamable-http` needs hypercorn: pip install 'expert[mcp]' "
                 f"({quoted(str(error))}).", 1)

        try:
            transport_security(host, port, allow_remote, allowed_hosts)
        except ValueError as error:
            fail(f"Error: {error}", 2)
    serve(transport, host=host, port=port, allow_remote=allow_remote, allowed_hosts=allowed_hosts)


@main.command(short_help="Serve the consultation as a web page, with its JSON API.")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="The port.")
@click.option("--allow-remote", is_flag=True, help="Allow a --host beyond this machine (0.0.0.0, a LAN address).")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME[:PORT]",
              help="With --allow-remote: a name clients use to reach the server (the Host header is checked); "
                   "repeat for each.")
@click.option("--workers", type=click.IntRange(1, 256), default=None, metavar="N",
              help="Processes that answer requests, each computing one consultation at a time "
                   "[default: this machine's cores].")
def serve(host: str, port: int, allow_remote: bool, allowed_hosts: tuple[str, ...], workers: int | None) -> None:
    """Serve the consultation as a web page: the form, the answer with its
    pictures, the reasoning by click, and /api/advise, /api/explain and
    /api/estimate (the JSON of --format json). See docs/web.md.

    Needs the web extra: pip install 'expert[web]'. Listens on 127.0.0.1
    unless told otherwise; the Host header of every request is checked.
    Each worker holds at most 100 requests (503 beyond, with Retry-After),
    75 of one address (429); a request's head must arrive within 5 s.

    \b
    Examples:
      expert serve
      expert serve --port 8080 --workers 4
      expert serve --host 0.0.0.0 --allow-remote --allowed-host gpu.example.org
    """
    try:
        from ..hosts import allowed
        from ..web import serve as serve_web
    except ImportError as error:
        fail(f"Error: `expert serve` needs starlette and hypercorn: pip install 'expert[web]' ({quoted(str(error))}).", 1)
    try:
        allowed(host, port, allow_remote, allowed_hosts)
    except ValueError as error:
        fail(f"Error: {error}", 2)
    serve_web(host, port, allow_remote, allowed_hosts, workers)


def run() -> None:
    """``python -m expert``: the same as the ``expert`` command (the group, run standalone)."""
    main.main()



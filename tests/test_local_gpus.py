"""`--own-gpu auto` (issue 49, item 7): the cards of this machine read from
nvidia-smi or rocm-smi, matched to the knowledge base's cards through the
one reader of card names. The tools here are fake executables on a PATH of
the test's own: one card, several, mixed, names as the tools print them,
garbage, a tool that never ends or never stops printing, a failing one, and
none at all."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from expert import InputError, advise
from expert.i18n import Localizer
from expert.input import local_gpus
from expert.interfaces.api import knowledge_base
from expert.interfaces.api import local_gpus as read_local_gpus
from expert.interfaces.cli.main import main


def tool(folder: Path, name: str, script: str) -> Path:
    """A fake ``name`` in ``folder``: a shell script (``/bin/sh``, its builtins only)."""
    path = folder / name
    path.write_text("#!/bin/sh\n" + script + "\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def nvidia(folder: Path, *lines: str) -> Path:
    return tool(folder, "nvidia-smi", "printf '%s'" % "".join(line + "\\n" for line in lines))


def detect(folder: Path, lang: str = "en") -> local_gpus.LocalCards:
    return local_gpus.detect(knowledge_base(), Localizer(lang), path=str(folder))


@pytest.mark.parametrize("name, mib, card", [
    # names as nvidia-smi prints them (its --query-gpu=name,memory.total), memory in MiB
    ("NVIDIA GeForce RTX 4090", 24564, "rtx-4090"),
    ("NVIDIA GeForce RTX 3090", 24576, "rtx-3090"),
    ("NVIDIA GeForce RTX 3060", 12288, "rtx-3060-12gb"),
    ("NVIDIA GeForce RTX 3060", 8192, "rtx-3060-8gb"),       # the name alone says 12 GB: the memory decides
    ("NVIDIA A100-SXM4-80GB", 81920, "a100-80gb"),
    ("NVIDIA A100-PCIE-40GB", 40960, "a100-40gb"),
    ("NVIDIA A100 80GB PCIe", 81920, "a100-pcie-80gb"),   # the form factor names another card (owned.toml)
    ("NVIDIA H100 80GB HBM3", 81559, "h100-80gb"),
    ("NVIDIA H100 PCIe", 81559, "h100-pcie"),
    ("NVIDIA H100 NVL", 95830, "h100-nvl"),
    ("NVIDIA L4", 23034, "l4"),
    ("Tesla T4", 15360, "t4"),
    ("Tesla V100-SXM2-16GB", 16160, "v100-16gb"),
    ("Tesla V100-SXM2-32GB", 32768, "v100-32gb"),
    ("NVIDIA RTX A6000", 49140, "rtx-a6000"),
    ("NVIDIA RTX 6000 Ada Generation", 49140, "rtx-6000-ada"),
    ("NVIDIA GeForce RTX 4090", 8192, None),                 # a name whose memory is not that card's
    ("Some Future GPU", 98304, None),
])
def test_a_card_as_a_tool_prints_it_is_the_knowledge_base_card(name: str, mib: int, card: str | None) -> None:
    assert local_gpus.match(knowledge_base(), name, mib / 1024) == card


@pytest.mark.parametrize("name, mib, card", [
    ("NVIDIA H200", 143771, "h200-141gb"),        # the catalog's name with the memory near what was reported
    ("NVIDIA L40S", 46068, "l40s-48gb"),
    ("AMD Instinct MI300X", 196288, "mi300x"),
    ("NVIDIA B200", 183359, "b200-180gb"),
])
def test_the_cards_of_a_catalog_in_use_are_matched_too(name: str, mib: int, card: str) -> None:
    assert local_gpus.match(knowledge_base(None, "current"), name, mib / 1024) == card
    assert local_gpus.match(knowledge_base(), name, mib / 1024) == card        # today's market, weighed by default
    # one's own card is the card it is whatever is weighed: the guide's six alone too (until 2026-12-08 it
    # was None there, and --own-gpu auto on an H200 asked for the card's VRAM)
    assert local_gpus.match(knowledge_base(None, "guide"), name, mib / 1024) == card


def test_one_card(tmp_path: Path) -> None:
    nvidia(tmp_path, "NVIDIA GeForce RTX 4090, 24564 MiB")
    found = detect(tmp_path)
    assert (found.answer, found.tool, found.left_out) == ("rtx-4090", "nvidia-smi", ())
    # the library's caller called local_gpus(): the note names it, never the command line's flag
    assert found.note == "local_gpus(): nvidia-smi found 1 × NVIDIA GeForce RTX 4090 (rtx-4090)."


def test_several_cards_of_one_kind_are_counted(tmp_path: Path) -> None:
    nvidia(tmp_path, *["NVIDIA A100-SXM4-80GB, 81920 MiB"] * 4)
    found = detect(tmp_path)
    assert found.answer == "4x a100-80gb" and len(found.used) == 4
    profile = advise(model_size_b=70, method="lora", vram_gb=found.answer, lang="en").profile
    assert (profile["own_gpu"], profile["own_gpu_count"], profile["own_vram_gb"]) == ("a100-80gb", 4, 320)


def test_mixed_cards_weigh_the_kind_with_the_most_memory_and_say_what_is_left_out(tmp_path: Path) -> None:
    nvidia(tmp_path, "NVIDIA GeForce RTX 3060, 12288 MiB", "NVIDIA GeForce RTX 4090, 24564 MiB",
           "NVIDIA GeForce RTX 3060, 12288 MiB", "NVIDIA GeForce RTX 3060, 12288 MiB")
    found = detect(tmp_path)          # three 3060s hold 36 GB, one 4090 24 GB
    assert found.answer == "3x rtx-3060-12gb"
    assert [card.card for card in found.left_out] == ["rtx-4090"]
    assert "so these are left out: 1 × NVIDIA GeForce RTX 4090 (rtx-4090)" in found.note
    spanish = detect(tmp_path, "es").note
    assert "quedan fuera: 1 × NVIDIA GeForce RTX 4090 (rtx-4090)" in spanish


def test_a_card_the_knowledge_base_does_not_know_is_given_by_its_memory(tmp_path: Path) -> None:
    nvidia(tmp_path, "Some Future GPU, 98304 MiB", "Some Future GPU, 98304 MiB")
    found = detect(tmp_path)
    assert found.answer == "2x 96 GB"
    assert "(not a card the knowledge base knows: its 96 GB)" in found.note
    profile = advise(vram_gb=found.answer, lang="en").profile
    assert (profile["vram_gb"], profile["own_gpu_count"], profile["own_gpu"]) == (96, 2, None)


def test_rocm_smi_when_there_is_no_nvidia_smi(tmp_path: Path) -> None:
    cards = {f"card{i}": {"Card Series": "AMD Instinct MI300X", "Card Model": "0x74a1",
                          "VRAM Total Memory (B)": str(192 * 2**30)} for i in range(8)}
    tool(tmp_path, "rocm-smi", "cat <<'EOF'\n%s\nEOF" % json.dumps({**cards, "system": {"Driver version": "6.8"}}))
    found = local_gpus.detect(knowledge_base(None, "current"), Localizer("en"), path=str(tmp_path))
    assert (found.answer, found.tool) == ("8x mi300x", "rocm-smi")
    assert detect(tmp_path).answer == "8x mi300x"      # today's market, weighed by default, knows it
    guide = local_gpus.detect(knowledge_base(None, "guide"), Localizer("en"), path=str(tmp_path))
    assert guide.answer == "8x mi300x"      # the guide's six weighed alone: the market's card read all the same


@pytest.mark.parametrize("name, script, words", [
    ("nvidia-smi", "printf 'No devices were found\\n'", "what nvidia-smi printed could not be read (No devices were found)"),
    ("nvidia-smi", "printf 'NVIDIA GeForce RTX 4090, lots MiB\\n'", "could not be read"),
    ("nvidia-smi", "printf '\\377\\376, 1 MiB\\n'", "could not be read"),
    ("nvidia-smi", "printf ''", "nvidia-smi reported no GPU"),
    ("nvidia-smi", "printf 'NVIDIA-SMI has failed\\n'; exit 9", "nvidia-smi failed (exit status 9); is the driver"),
    ("rocm-smi", "printf '{\"card0\": {\"Card Series\": \"X\"}}'", "what rocm-smi printed could not be read"),
    ("rocm-smi", "printf '[1, 2]'", "what rocm-smi printed could not be read"),
], ids=["nvidia-words", "nvidia-no-number", "nvidia-not-utf8", "nvidia-nothing", "nvidia-fails",
        "rocm-no-memory", "rocm-not-an-object"])
def test_what_cannot_be_read_is_said_naming_the_field(tmp_path: Path, name: str, script: str, words: str) -> None:
    tool(tmp_path, name, script)
    with pytest.raises(InputError) as error:
        detect(tmp_path)
    assert error.value.field == "vram_gb" and words in str(error.value)
    assert str(error.value).startswith("VRAM of your own GPU: ")
    assert 'vram_gb="RTX 3090", vram_gb=24' in str(error.value) or "could not be started" in str(error.value)
    assert "--own-gpu" not in str(error.value)      # the library's keyword, not the command line's flag


def test_a_tool_that_never_ends_is_stopped(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(local_gpus, "TIMEOUT_S", 2.0)
    sleep = shutil.which("sleep")
    assert sleep is not None
    tool(tmp_path, "nvidia-smi", f"exec {sleep} 30")
    with pytest.raises(InputError) as error:
        detect(tmp_path)
    assert "nvidia-smi did not answer within 2 seconds" in str(error.value)


def test_a_tool_that_never_stops_printing_is_read_no_further_than_the_bound(tmp_path: Path) -> None:
    tool(tmp_path, "nvidia-smi", "while :; do printf 'NVIDIA GeForce RTX 4090, 24564 MiB\\n'; done")
    with pytest.raises(InputError) as error:
        detect(tmp_path)
    assert "printed more than 65,536 bytes; that is not a list of GPUs" in str(error.value)


def test_no_tool_says_so_in_the_persons_language(tmp_path: Path) -> None:
    for lang, words in (("en", "local_gpus() found no GPU: neither nvidia-smi nor rocm-smi is on PATH"),
                        ("es", "local_gpus() no ha encontrado ninguna GPU: ni nvidia-smi ni rocm-smi están en el PATH")):
        with pytest.raises(InputError) as error:
            detect(tmp_path, lang)
        assert error.value.field == "vram_gb" and words in str(error.value)


# On main c111501 every way in was told "VRAM of your own GPU: auto found no GPU", the command line's word
# where the library had called local_gpus() (labels.toml [how_*] own_gpu_auto_refused).
@pytest.mark.parametrize("way, lang, begins", [
    ("cli", "en", "VRAM of your own GPU: auto found no GPU: neither nvidia-smi nor rocm-smi is on PATH."),
    ("library", "en", "VRAM of your own GPU: local_gpus() found no GPU: neither nvidia-smi nor rocm-smi"),
    ("tools", "en", "VRAM of your own GPU: the machine that answers found no GPU: neither nvidia-smi"),
    ("web", "es", "VRAM de tu GPU: la máquina que responde no ha encontrado ninguna GPU: ni nvidia-smi"),
])
def test_a_refusal_of_auto_names_what_read_the_machine_on_each_way_in(tmp_path: Path, way: str, lang: str,
                                                                      begins: str) -> None:
    from expert.i18n import WAY_IN

    token = WAY_IN.set(way)  # type: ignore[arg-type]
    try:
        with pytest.raises(InputError) as error:
            detect(tmp_path, lang)
    finally:
        WAY_IN.reset(token)
    assert str(error.value).startswith(begins)


def test_the_command_line_reads_the_machine_and_says_what_it_found(tmp_path: Path, monkeypatch: Any) -> None:
    nvidia(tmp_path, "NVIDIA GeForce RTX 3090, 24576 MiB", "NVIDIA GeForce RTX 3090, 24576 MiB")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    done = CliRunner().invoke(main, ["advise", "--model", "8", "--method", "qlora", "--own-gpu", "auto",
                                     "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["profile"]["own_gpu_count"] == 2
    assert done.stderr.startswith("--own-gpu auto: nvidia-smi found 2 × NVIDIA GeForce RTX 3090 (rtx-3090).")
    explained = CliRunner().invoke(main, ["explain", "--model", "8", "--own-gpu", "AUTO", "--lang", "es"])
    assert explained.exit_code == 0 and "nvidia-smi ha encontrado 2 ×" in explained.stderr
    assert read_local_gpus(lang="en").answer == "2x rtx-3090"      # the library's call the command makes
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    refused = CliRunner().invoke(main, ["advise", "--own-gpu", "auto"])
    assert refused.exit_code == 2 and "auto found no GPU" in refused.stderr and "Traceback" not in refused.output


def test_auto_is_a_word_of_the_command_line_only() -> None:
    """The library, the page and MCP never read the machine they run on: 'auto' is not a card there."""
    with pytest.raises(InputError) as error:
        advise(vram_gb="auto", lang="en")
    assert error.value.field == "vram_gb"


def test_the_example_of_docs_cli_md_is_real_output(tmp_path: Path, monkeypatch: Any) -> None:
    """docs/cli.md's `--own-gpu auto` block (```console: tests/test_docs.py runs no machine's tools), on a
    machine whose nvidia-smi reports four 80 GB A100s."""
    import re
    import shlex

    text = (Path(__file__).parent.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    command, shown = re.findall(r"```console\n\$ (expert [^\n]*--own-gpu auto[^\n]*)\n(.*?)```", text, re.S)[0]
    nvidia(tmp_path, *["NVIDIA A100-SXM4-80GB, 81920 MiB"] * 4)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    done = CliRunner().invoke(main, shlex.split(command)[1:], env={"EXPERT_LANG": "en", "COLUMNS": "80"})
    assert done.exit_code == 0 and done.stderr.strip() == shown.strip()


def test_expert_ask_takes_auto_as_the_flag_and_as_the_answer(tmp_path: Path, monkeypatch: Any) -> None:
    nvidia(tmp_path, "NVIDIA GeForce RTX 3090, 24576 MiB")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    answers = "8\nqlora\nauto\n" + "\n" * 12 + "no\n"
    typed = CliRunner().invoke(main, ["ask", "--lang", "en"], input=answers)
    assert typed.exit_code == 0, typed.output
    assert "--own-gpu auto: nvidia-smi found 1 × NVIDIA GeForce RTX 3090 (rtx-3090)." in typed.stderr
    assert "Your RTX 3090" in typed.stdout
    flagged = CliRunner().invoke(main, ["ask", "--lang", "en", "--own-gpu", "auto", "--model", "8",
                                        "--method", "qlora"], input="\n" * 12 + "no\n")
    assert flagged.exit_code == 0 and "Your RTX 3090" in flagged.stdout
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    refused = CliRunner().invoke(main, ["ask", "--lang", "en"], input=answers)
    # piped answers: an answer that cannot be used ends the consultation, naming the question
    assert refused.exit_code == 2 and "auto found no GPU" in refused.stderr and "Traceback" not in refused.output

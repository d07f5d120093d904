"""Shell completion of values, driven as the shells drive it: click's
_EXPERT_COMPLETE protocol for bash, zsh and fish."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from expert.interfaces.cli.main import main


def complete(shell: str, line: str) -> list[tuple[str, str]]:
    """(type, value) pairs the shell would offer for ``line`` (the cursor at its end)."""
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    env = {"_EXPERT_COMPLETE": f"{shell}_complete", "COMP_WORDS": line,
           "COMP_CWORD": "" if shell == "fish" else str(cword)}
    if shell == "fish":   # fish passes the word being completed as COMP_CWORD
        env["COMP_CWORD"] = "" if line.endswith(" ") else words[-1]
    done = CliRunner().invoke(main, [], env=env, prog_name="expert")
    assert done.exit_code == 0, done.output
    out = done.output
    if shell == "zsh":
        lines = out.splitlines()
        return [(lines[i], lines[i + 1]) for i in range(0, len(lines), 3)]
    return [tuple(item.split("\t")[0].split(",", 1)) for item in out.splitlines()]  # type: ignore[misc]


def values(shell: str, line: str) -> list[str]:
    return [value for kind, value in complete(shell, line) if kind == "plain"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("line, expected", [
    ("expert advise --method ", ["full", "lora", "qlora"]),
    ("expert advise --budget ", ["low", "medium", "high"]),
    ("expert ask --purpose p", ["production"]),
    ("expert advise --format ", ["text", "markdown", "json"]),
    ("expert estimate --format ", ["text", "json"]),
    ("expert advise --basis ", ["checked", "guide", "estimate"]),
    ("expert --lang ", ["en", "es"]),
    ("expert explain --color ", ["auto", "always", "never"]),
    ("expert explain --why-not a100", ["a100-40gb", "a100-80gb", "a100-pcie-80gb"]),
    ("expert explain --why-not o", ["own"]),
    ("expert explain --catalog current --why-not h", ["h100-80gb", "h100-nvl", "h100-pcie", "h200-141gb"]),
    # --catalog guide weighs the guide's six cards, and --why-not refuses any other: the market's H100 NVL,
    # H100 PCIe and H200 were offered beside the guide's H100 (2026-12-08)
    ("expert explain --catalog guide --why-not h", ["h100-80gb"]),
    # one's own card is any shipped catalog's, whatever --catalog weighs
    ("expert advise --catalog guide --vram rtx-309", ["rtx-3090", "rtx-3090-ti"]),
    ("expert advise --vram rtx-308", ["rtx-3080", "rtx-3080-12gb", "rtx-3080-ti"]),
    ("expert advise --vram v", ["v100-16gb", "v100-32gb"]),
    ("expert advise --own-gpu au", ["auto"]),
    ("expert rules misses", ["misses-deadline"]),
    ("expert explain --what-if dead", ["deadline="]),
    ("expert explain --what-if method=q", ["method=qlora"]),
    ("expert estimate --strategy zero", ["zero1", "zero2", "zero3"]),
    ("expert advise --catalog cur", ["current"]),
])
def test_values_complete(shell: str, line: str, expected: list[str]) -> None:
    assert values(shell, line) == expected


def test_catalog_completes_shipped_names_and_files_and_rules_a_directory() -> None:
    assert complete("bash", "expert advise --catalog ") == [("plain", "guide"), ("plain", "current"), ("file", "")]
    assert complete("bash", "expert check --rules ") == [("dir", "")]


def test_zsh_and_fish_show_what_a_card_id_is() -> None:
    out = CliRunner().invoke(main, [], prog_name="expert", env={
        "_EXPERT_COMPLETE": "zsh_complete", "COMP_WORDS": "expert advise --vram rtx-309", "COMP_CWORD": "3"}).output
    assert out.splitlines() == ["plain", "rtx-3090", "NVIDIA GeForce RTX 3090 24 GB", "plain", "rtx-3090-ti",
                                "NVIDIA GeForce RTX 3090 Ti"]
    out = CliRunner().invoke(main, [], prog_name="expert", env={
        "_EXPERT_COMPLETE": "fish_complete", "COMP_WORDS": "expert explain --why-not mi2", "COMP_CWORD": "mi2"}).output
    assert out.splitlines() == ["plain,mi210\tAMD Instinct MI210", "plain,mi250\tAMD Instinct MI250"]


@pytest.mark.parametrize("shell, marker", [("bash", "complete -o nosort -F _expert_completion expert"),
                                           ("zsh", "compdef _expert_completion expert"),
                                           ("fish", "complete --no-files --command expert")])
def test_the_installed_command_prints_each_shells_script(shell: str, marker: str) -> None:
    """What docs/cli.md tells people to put in their shell's startup file, from the real command."""
    env = dict(os.environ, _EXPERT_COMPLETE=f"{shell}_source")
    done = subprocess.run([sys.executable, "-m", "expert"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and marker in done.stdout, done.stdout + done.stderr


def test_the_completion_index_is_current() -> None:
    from expert.interfaces.cli import completion
    from expert.interfaces.api import knowledge_base

    assert completion.INDEX.read_text(encoding="utf-8") == completion.index_text(knowledge_base()), \
        "run python scripts/update_completion_index.py"


@pytest.mark.parametrize("words", ["expert advise --vram rtx-30", "expert rules miss", "expert advise --method q",
                                   "expert explain --why-not h1", "expert estimate --strategy z"])
def test_a_tab_press_loads_neither_the_knowledge_base_nor_experta_jinja2_or_babel(words: str) -> None:
    import subprocess
    import sys

    code = ("import sys\nfrom expert.interfaces.cli.main import main\ntry:\n    main.main(prog_name='expert')\nexcept SystemExit:\n"
            "    pass\nheavy = [m for m in ('expert._vendor.experta', 'jinja2', 'babel', 'expert.interfaces.api', 'expert.knowledge')"
            " if m in sys.modules]\nprint('HEAVY', heavy, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={
        **__import__("os").environ, "_EXPERT_COMPLETE": "bash_complete", "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1)})
    assert "HEAVY []" in done.stderr, done.stderr
    assert done.stdout.strip(), words

"""The code examples in docs/ run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def python_blocks(name: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(encoding="utf-8"), flags=re.DOTALL)


def test_chatbot_example_runs(capsys) -> None:  # type: ignore[no-untyped-def]
    example = python_blocks("consultation.md")[-1]
    exec(compile(example, "docs/consultation.md", "exec"), {})
    assert "**Recomendación:**" in capsys.readouterr().out


CHECKED = re.compile(r"^(?P<expr>\S.*?)\s+# => (?P<shown>.+)$")


def python_examples() -> list[tuple[str, list[str]]]:
    """Every python block of README.md and docs/*.md, by file, in order (a block
    fenced with four backticks is a generated file shown, not an example)."""
    found = []
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        blocks = re.findall(r"^```python\n(.*?)^```$", path.read_text(encoding="utf-8"), flags=re.DOTALL | re.M)
        if blocks:
            found.append((path.name, blocks))
    return found


@pytest.mark.parametrize("name, blocks", python_examples(), ids=[name for name, _ in python_examples()])
def test_every_python_example_runs_and_shows_what_it_returns(name: str, blocks: list[str], capsys) -> None:  # type: ignore[no-untyped-def]
    """Every python block of the README and docs/ runs (the blocks of a file
    in one namespace, in order); a line `expression  # => value` is checked:
    the expression must equal the value shown. Other comments are prose."""
    import ast

    namespace: dict = {}
    checked = 0
    for block in blocks:
        lines = []
        for line in block.splitlines():
            match = CHECKED.match(line)
            if match:
                shown = ast.literal_eval(match.group("shown").strip())
                lines.append(f"assert ({match.group('expr')}) == {shown!r}, ({match.group('expr')!r}, "
                             f"{match.group('expr')})")
                checked += 1
            else:
                lines.append(line)
        exec(compile("\n".join(lines), name, "exec"), namespace)
    capsys.readouterr()
    assert checked or name not in ("README.md", "consultation.md")


def test_every_command_is_documented() -> None:
    from expert.interfaces.cli.main import main

    text = (DOCS / "cli.md").read_text(encoding="utf-8") + (DOCS / "consultation.md").read_text(encoding="utf-8")
    for name in main.commands:
        assert f"expert {name}" in text, name
        assert main.commands[name].help, name


def test_command_examples_in_the_docs_are_real_output(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every `$ expert ...` block shows what the command prints now. Run in
    this process through click's runner (the group run standalone, as the
    `expert` script runs it); the script itself is started as a process in
    tests/test_cli.py."""
    import shlex

    from click.testing import CliRunner

    from expert.interfaces.cli.main import main

    monkeypatch.chdir(DOCS.parent)
    block = re.compile(r"```\n\$ (expert [^\n]*)\n(.*?)```", re.DOTALL)
    checked = 0
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for command, shown in block.findall(path.read_text(encoding="utf-8")):
            args = shlex.split(command)[1:]
            if not {"advise", "explain", "estimate", "check", "rules"} & set(args):
                continue  # an interactive session: its answers are typed, not in the command
            done = CliRunner().invoke(main, args, env={"EXPERT_LANG": "en", "COLUMNS": "80", "NO_COLOR": "1"})
            actual = " ".join(done.output.split())
            for part in shown.split("\n...\n"):
                lines = [line for line in part.splitlines() if not line.startswith("$ ") and line.strip() != "..."]
                expected = " ".join(" ".join(lines).split())
                assert expected in actual, f"{path.name}: `{command}` no longer prints this excerpt " \
                                           "(python scripts/update_doc_examples.py)"
            checked += 1
    assert checked >= 8


def test_the_cli_reference_is_generated_from_the_click_group() -> None:
    """docs/cli-reference.md is what scripts/update_cli_reference.py writes now."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("update_cli_reference",
                                                  ROOT / "scripts" / "update_cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    current = (ROOT / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    assert current == module.reference(), "run python scripts/update_cli_reference.py"
    from expert.interfaces.cli.main import main

    for name in main.commands:
        assert f"## expert {name}\n" in current


def test_the_console_script_is_the_click_group() -> None:
    """click-man and sphinx-click load the console script's object: it must be the group."""
    import click

    from expert.interfaces.cli.main import main

    from importlib.metadata import entry_points

    assert 'expert = "expert.interfaces.cli.main:main"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert isinstance(main, click.Group)
    scripts = [ep for ep in entry_points(group="console_scripts") if ep.name == "expert"]
    assert scripts and scripts[0].load() is main


def test_the_man_page_is_generated_from_the_click_group() -> None:
    """man/expert.1 is what scripts/update_man_page.py writes now (every command and option)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("update_man_page", ROOT / "scripts" / "update_man_page.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    current = (ROOT / "man" / "expert.1").read_text(encoding="utf-8")
    assert current == module.page(), "run python scripts/update_man_page.py"
    for name in ("advise", "explain", "ask", "models", "rules", "catalogs", "check", "estimate", "schema", "mcp"):
        assert f".SS expert {name}" in current
    assert "\\fB\\-s, \\-m, \\-\\-model\\-size, \\-\\-model SIZE\\fR" in current


def test_the_docs_example_answers_fit_one_screen() -> None:
    """Issue 49: a simple question's answer, as the README and docs/cli.md show
    it, fits in 40 lines, in English and in Spanish; so do the issue's two
    questions, whose answers were 81 and 97 lines long."""
    from click.testing import CliRunner

    from expert.interfaces.cli.main import main

    block = re.compile(r"```\n\$ (expert advise [^\n]*)\n(.*?)```", re.DOTALL)
    shown = {command: output for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
             for command, output in block.findall(path.read_text(encoding="utf-8"))
             if "\n...\n" not in f"\n{output}" and "--verbose" not in command and "Error:" not in output}
    assert "expert advise --model-size 8 --method lora" in shown                       # the README's, English
    assert "expert advise --model-size 70 --method lora --deadline 8 --lang es" in shown  # docs/cli.md's, Spanish
    for command, output in shown.items():
        assert len(output.splitlines()) <= 40, command
    for args in (["--model-size", "8", "--method", "lora"], ["--model-size", "13", "--method", "full", "--budget", "low"]):
        for lang in ("en", "es"):
            done = CliRunner().invoke(main, ["advise", *args, "--lang", lang], env={"COLUMNS": "80", "NO_COLOR": "1"})
            assert done.exit_code == 0 and len(done.output.splitlines()) <= 40, (args, lang, done.output)
            verbose = CliRunner().invoke(main, ["advise", *args, "--lang", lang, "--verbose"],
                                         env={"COLUMNS": "80", "NO_COLOR": "1"})
            assert len(verbose.output.splitlines()) > 60       # everything else is one flag away

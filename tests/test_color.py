"""Colour (bold headings): --color[=auto|always|never]/--no-color, then NO_COLOR, FORCE_COLOR, TERM=dumb, then whether stdout is a terminal."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import made_once

from expert.interfaces.cli.main import main

BOLD = "\x1b[1m"
EXPLAIN = ["explain", "--model-size", "7", "--method", "lora"]
QUIET = {"EXPERT_LANG": "", "LC_ALL": "", "LANG": "", "NO_COLOR": None, "FORCE_COLOR": None, "TERM": None}


def output(args: list[str], input: str | None = None, **env: str | None) -> str:  # noqa: A002
    done = CliRunner().invoke(main, args, input=input, env={**QUIET, **env})
    assert done.exit_code == 0, done.output
    return done.output


@pytest.fixture(scope="module")
def explained_once() -> Iterator[dict[str, Any]]:
    """The explanation made once for the module: colour is decided by the
    command and applied when it renders, never by explain() (about 0.3 s of
    CPU each time it runs)."""
    from expert import application

    with made_once(application, "explain") as made:
        yield made
    assert made, "the command no longer calls expert.application.explain"


@pytest.mark.parametrize(("args", "env", "bold"), [
    (EXPLAIN, {}, False),                                             # piped: no colour
    (EXPLAIN, {"FORCE_COLOR": "1"}, True),                            # FORCE_COLOR: even when piped
    (EXPLAIN, {"FORCE_COLOR": "0"}, False),
    (EXPLAIN, {"FORCE_COLOR": ""}, False),
    (EXPLAIN, {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),          # NO_COLOR wins over FORCE_COLOR
    (EXPLAIN, {"FORCE_COLOR": "1", "NO_COLOR": ""}, True),            # an empty NO_COLOR is not set
    (EXPLAIN, {"FORCE_COLOR": "1", "TERM": "dumb"}, True),
    (["--color", *EXPLAIN], {}, True),
    ([*EXPLAIN, "--color"], {}, True),
    (["--color", *EXPLAIN], {"NO_COLOR": "1", "TERM": "dumb"}, True),  # the flag wins over the environment
    (["--no-color", *EXPLAIN], {"FORCE_COLOR": "1"}, False),
    ([*EXPLAIN, "--no-color"], {"FORCE_COLOR": "1"}, False),
    (["--no-color", *EXPLAIN, "--color"], {}, True),                   # the command's flag wins over the group's
    (["--color", *EXPLAIN, "--no-color"], {}, False),
    (["--color=always", *EXPLAIN], {}, True),
    ([*EXPLAIN, "--color", "always"], {"NO_COLOR": "1"}, True),
    ([*EXPLAIN, "--color=never"], {"FORCE_COLOR": "1"}, False),
    (["--color", "never", *EXPLAIN], {"FORCE_COLOR": "1"}, False),
    ([*EXPLAIN, "--color", "auto"], {}, False),                        # auto: piped, so none
    ([*EXPLAIN, "--color=auto"], {"FORCE_COLOR": "1"}, True),          # auto follows the environment
    (["--color=always", *EXPLAIN, "--color=auto"], {}, False),         # the command's auto wins too
])
def test_explain_is_bold_when_asked(explained_once: dict[str, Any], args: list[str], env: dict[str, str],
                                    bold: bool) -> None:
    text = output(args, **env)
    assert (BOLD in text) is bold
    assert "How the answer was reached" in text or "HOW" in text.upper()


def test_a_terminal_is_bold_unless_term_is_dumb_or_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    import expert.interfaces.cli.output as cli

    class Terminal:
        @staticmethod
        def isatty() -> bool:
            return True

    monkeypatch.setattr(cli.sys, "stdout", Terminal())
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert cli.use_color()
    monkeypatch.setenv("TERM", "dumb")
    assert not cli.use_color()
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not cli.use_color()


@pytest.mark.parametrize("args", [["--color"], ["ask", "--color"]])
def test_ask_questions_are_bold_with_color_even_when_piped(args: list[str]) -> None:
    text = output(args, input="\n" * 12)
    assert BOLD in text
    assert BOLD not in output(args[:-1] or ["ask"], input="\n" * 12)


def test_advise_and_errors_stay_plain() -> None:
    assert BOLD not in output(["advise", "--model-size", "7"], FORCE_COLOR="1")
    done = CliRunner().invoke(main, ["--color", "advise", "--model-size", "huge"], env=QUIET)
    assert done.exit_code == 2 and "\x1b" not in done.output


def test_help_documents_the_flag() -> None:
    for args in (["--help"], ["explain", "--help"], ["ask", "--help"]):
        text = output(args)
        assert "--color [auto|always|never]" in text and "--no-color" in text


def test_a_bad_color_value_is_a_usage_error() -> None:
    done = CliRunner().invoke(main, ["explain", "--color", "sometimes"], env=QUIET)
    assert done.exit_code == 2 and "--color: 'sometimes' is not accepted; choose auto, always, or never." in done.output

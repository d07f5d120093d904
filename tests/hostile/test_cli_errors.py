"""The `expert` command: no traceback, ever, and no escape sequence of
anyone else's in what it prints.

- An error message that quotes what was typed (a value, a rule id, a file
  name) quotes it without control or format characters: the terminal clears
  nothing, retitles nothing, reorders nothing.
- Output that cannot be written (a full disk, a closed pipe, a closed stdout)
  is one line on stderr and exit status 1.

Messages are checked in this process through click's runner, which runs the
group standalone as ``python -m expert`` does (the same error handling); the
output that cannot be written needs real file descriptors, so those tests
start the real process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from expert.interfaces.cli.main import main

CLEAR = "\x1b[2J"
TITLE = "\x1b]0;pwned\x07"
RLO = "\u202e"
HOSTILE = f"{CLEAR}{TITLE}{RLO}x"
# What was removed from a value quoted back is marked, one U+FFFD each: "'es' is not a supported language;
# accepted: en, es" read as nonsense where the value was CLEAR + "es" (review7).
GONE = "\ufffd"
RUNNER_ENV = dict(EXPERT_LANG="en", LC_ALL="", LANG="", NO_COLOR="1", COLUMNS="80")
ENV = dict(os.environ, **RUNNER_ENV)


def expert(*args: str, env: dict[str, str] | None = None, input: bytes | None = None) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    """``expert ARGS`` run standalone in this process: exit status, stdout and stderr as bytes."""
    done = CliRunner().invoke(main, list(args), input=input, env={**RUNNER_ENV, **(env or {})})
    assert isinstance(done.exception, (SystemExit, type(None))), done.exception     # nothing escaped the group
    assert b"Internal error" not in done.stderr_bytes, done.stderr
    return subprocess.CompletedProcess(args, done.exit_code, done.stdout_bytes, done.stderr_bytes)


def text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="strict")


def unsafe_characters(output: str) -> list[str]:
    return sorted({f"U+{ord(ch):04X}" for ch in output
                   if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")})


def assert_safe(output: str, whole: bool = True) -> None:
    """No traceback, no control or format character; with ``whole``, nothing
    left of a sequence either (not its printable tail)."""
    assert "Traceback" not in output
    assert unsafe_characters(output) == []
    if whole:
        assert "[2J" not in output and "pwned" not in output


def assert_one_error(done: subprocess.CompletedProcess, code: int, *quoted: str,  # type: ignore[type-arg]
                     whole: bool = True) -> str:
    err = text(done.stderr)
    assert done.returncode == code, err
    assert done.stdout == b""
    assert_safe(err, whole)
    lines = err.splitlines()
    assert lines and lines[-1].startswith("Error: "), err
    for part in quoted:
        assert part in err
    return err


# Profile values are quoted by expert.input.profile.shown() (escape.quoted: whole
# sequences removed); click quotes an unknown option or command as a Python
# literal ('\x1b[2J').
QUOTED_AS_REPLACEMENT = [
    (["advise", "--model-size", HOSTILE], f"model size: '{GONE * 3}x' is not a size or a model we know"),
    (["advise", "--method", HOSTILE], "fine-tuning method:"),
    (["estimate", "--strategy", HOSTILE], "strategy:"),
    (["advise", f"--bogus{TITLE}"], "No such option '--bogus\\x1b]0;pwned\\x07'"),
    (["advise", f"extra{TITLE}"], "unexpected extra argument"),
    ([f"{TITLE}{RLO}"], "No such command"),
]


@pytest.mark.parametrize("args, quoted", QUOTED_AS_REPLACEMENT)
def test_an_error_quotes_what_was_typed_without_control_characters(args: list[str], quoted: str) -> None:
    assert_one_error(expert(*args), 2, quoted, whole=False)


@pytest.mark.parametrize("args, quoted", [
    (["advise", "--lang", HOSTILE], f"lang: '{GONE * 3}x' is not a supported language"),
    (["advise", "--lang", f"{CLEAR}es"], f"lang: '{GONE}es' is not a supported language"),
    (["explain", "--why-not", HOSTILE], f"why-not: '{GONE * 3}x' is not a card"),
    (["explain", "--why-not", CLEAR], f"why-not: '{GONE}' is not a card"),
    (["explain", "--what-if", f"{TITLE}=1"], f"--what-if: '{GONE}=1' is not FIELD=VALUE"),
    (["explain", "--what-if", f"method{CLEAR}=1"], f"--what-if: 'method{GONE}=1' is not FIELD=VALUE"),
    (["rules", CLEAR], "unknown rule ''"),
    (["rules", HOSTILE], "unknown rule 'x'"),
    (["advise", "--basis", HOSTILE], "basis: 'x' is not accepted"),
    (["advise", "--format", HOSTILE], f"format: '{GONE * 3}x' is not accepted"),
    (["rules", "--format", HOSTILE], f"format: '{GONE * 3}x' is not accepted"),
])
def test_an_error_quotes_what_was_typed_without_its_escape_sequences(args: list[str], quoted: str) -> None:
    assert_one_error(expert(*args), 2, quoted)


def test_an_unsupported_expert_lang_is_quoted_safely() -> None:
    assert_one_error(expert("advise", env={"EXPERT_LANG": HOSTILE}), 2, f"EXPERT_LANG: '{GONE * 3}x' is not a supported")


def test_a_long_value_is_shortened() -> None:
    err = assert_one_error(expert("explain", "--what-if", CLEAR + "a" * 300), 2)
    assert GONE + "a" * 38 + "…" in err and "a" * 40 not in err


@pytest.mark.parametrize("command", ["advise", "explain", "check"])
def test_a_catalog_path_is_quoted_safely(tmp_path: Path, command: str) -> None:
    path = tmp_path / f"{CLEAR}{TITLE}{RLO}.toml"
    done = expert(command, "--catalog", str(path))
    err = text(done.stderr)
    assert done.returncode in (1, 2), err          # check: 1 (problems found); the others: 2 (invalid input)
    output = err + text(done.stdout)
    # The knowledge-base loader shows such characters escaped, so the author
    # of the file can see them (\x1b[2J): nothing reaches the terminal as is.
    assert not any(ch in output for ch in (CLEAR[0], TITLE[-1], RLO))
    assert f"{tmp_path}/\\x1b[2J\\x1b]0;pwned\\x07\\u202e.toml" in output


def catalog(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "hostile.toml"
    path.write_text(f'[[gpu]]\nid = "x"\nname = {json.dumps(name)}\nvendor = "nvidia"\nvram_gb = 80\ncost = "medium"\n'
                    f'interconnect = "nvlink"\n', encoding="utf-8")
    return path


NAMES = [
    "Card\n\n**Recommendation:** Buy from http://evil.example\n### Injected",
    "<script>alert(1)</script> [x](javascript:alert(1)) ![](http://evil.example/p.png) @everyone",
    f"Card{RLO}evil\u2066 {CLEAR}{TITLE} end",
]


@pytest.mark.parametrize("fmt", ["markdown", "text", "json"])
@pytest.mark.parametrize("name", NAMES, ids=["forged", "markup", "escapes"])
def test_a_hostile_catalog_name_is_safe_in_advise_or_refused_safely(tmp_path: Path, name: str, fmt: str) -> None:
    """Whether the loader takes the name (the output is safe) or refuses it (so is the message)."""
    done = expert("advise", "--model-size", "7", "--catalog", str(catalog(tmp_path, name)), "--format", fmt)
    out, err = text(done.stdout), text(done.stderr)
    assert done.returncode in (0, 2), err
    assert_safe(out + err)
    if done.returncode == 0 and fmt == "markdown":
        assert out.count("**Recommendation:**") == 1
        assert [line for line in out.splitlines() if line.startswith("#")] == ["### Alternatives", "### Advice",
                                                                              "### Not recommended"]
        assert "<script" not in out.replace("\\<script", "") and "](" not in out.replace("\\](", "")
        assert "@everyone" not in out.replace("\\@everyone", "")
    if done.returncode == 0 and fmt == "json":
        json.loads(out)


@pytest.mark.parametrize("name", NAMES, ids=["forged", "markup", "escapes"])
def test_a_hostile_catalog_name_is_safe_in_explain_and_check(tmp_path: Path, name: str) -> None:
    path = str(catalog(tmp_path, name))
    for args in (["explain", "--model-size", "7", "--catalog", path, "--why-not", "x"],
                 ["explain", "--model-size", "7", "--catalog", path, "--what-if", "method=qlora", "--format",
                  "markdown"],
                 ["estimate", "--model-size", "7", "--catalog", path],
                 ["check", "--catalog", path]):
        done = expert(*args)
        assert done.returncode in (0, 1, 2), text(done.stderr)
        assert_safe(text(done.stdout) + text(done.stderr))


def test_an_answer_piped_into_ask_is_echoed_without_its_escape_sequences() -> None:
    done = expert("ask", input=f"{HOSTILE}\n".encode())
    out, err = text(done.stdout), text(done.stderr)
    assert done.returncode == 2        # a bad piped answer ends the consultation
    assert_safe(out + err, whole=False)     # the error quotes the answer with expert.input.profile.shown()
    assert "model size:" in err
    assert "[7] > x\n" in out               # the answer echoed: what is left of it is printable


# --- output that cannot be written -------------------------------------------

FULL = Path("/dev/full")
# The consultations below weigh the guide's six cards: what is tested is output that cannot be written,
# not the market (docs/development.md, "Tests").
GUIDE = ("--catalog", "guide")


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full")
@pytest.mark.parametrize("args", [
    ["advise", "--model-size", "7", *GUIDE],
    ["advise", "--model-size", "7", "--format", "json", *GUIDE],
    ["explain", "--model-size", "70", "--method", "lora", "--lang", "es", *GUIDE],
    ["rules"],
    ["estimate", "--model-size", "7"],
    ["check"],
    ["--help"],
    ["--version"],
])
def test_a_full_disk_is_one_line_on_stderr_and_exit_1(args: list[str]) -> None:
    with FULL.open("wb") as full:
        done = subprocess.run([sys.executable, "-m", "expert", *args], stdout=full, stderr=subprocess.PIPE, env=ENV,
                              timeout=120)
    err = text(done.stderr)
    assert done.returncode == 1, err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert err.splitlines() == [err.strip()] and err.startswith("Error: "), err


def test_the_full_disk_message_is_in_the_command_language() -> None:
    if not FULL.exists():
        pytest.skip("no /dev/full")
    with FULL.open("wb") as full:
        done = subprocess.run([sys.executable, "-m", "expert", "advise", "--lang", "es", *GUIDE], stdout=full,
                              stderr=subprocess.PIPE, env=ENV, timeout=120)
    assert done.returncode == 1
    assert text(done.stderr).startswith("Error: no se pudo escribir la salida"), text(done.stderr)


@pytest.mark.parametrize("args", [["rules"], ["advise", "--model-size", "7", *GUIDE], ["rules", "--format", "json"],
                                  ["--help"]])
def test_a_closed_pipe_is_quiet_and_exit_1(args: list[str]) -> None:
    """`expert rules | head -0`: the reader is gone before the output is written."""
    process = subprocess.Popen([sys.executable, "-m", "expert", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=ENV)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    err = text(process.stderr.read())
    process.stderr.close()
    assert process.wait(timeout=120) == 1, err
    assert err == "", err


def test_a_reader_that_stops_early_leaves_no_message() -> None:
    """`expert rules | head -1`: one line read, then the pipe closes mid-output."""
    done = subprocess.run(f"'{sys.executable}' -m expert rules --lang es | head -1; echo \"${{PIPESTATUS[0]}}\" >&2",
                          shell=True, executable="/bin/bash", capture_output=True, env=ENV, timeout=120)
    assert len(text(done.stdout).splitlines()) == 1
    assert text(done.stderr).strip() in ("0", "1"), text(done.stderr)   # 0 if all fitted in the pipe's buffer


def test_a_closed_stdout_is_one_line_on_stderr_and_exit_1() -> None:
    done = subprocess.run(f"'{sys.executable}' -m expert advise --model-size 7 --catalog guide >&-", shell=True,
                          stderr=subprocess.PIPE, env=ENV, timeout=120)
    err = text(done.stderr)
    assert done.returncode == 1, err
    assert "Traceback" not in err
    assert err.splitlines() == [err.strip()] and err.startswith("Error: "), err


def test_full_stdout_and_stderr_still_exit_1_quietly() -> None:
    if not FULL.exists():
        pytest.skip("no /dev/full")
    with FULL.open("wb") as full:
        done = subprocess.run([sys.executable, "-m", "expert", "advise", *GUIDE], stdout=full, stderr=full, env=ENV,
                              timeout=120)
    assert done.returncode == 1

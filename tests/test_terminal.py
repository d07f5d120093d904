"""The real `expert` in a pseudo-terminal: why, a bad answer, back, Ctrl-C, in Spanish;
line editing and history (readline)."""

from __future__ import annotations

import os
import signal
import sys

import pytest

pexpect = pytest.importorskip("pexpect")


LEFT, RIGHT, UP = "\x1b[D", "\x1b[C", "\x1b[A"


def spawn(*args: str, lang: str = "es"):  # type: ignore[no-untyped-def]
    env = dict(os.environ, EXPERT_LANG=lang, NO_COLOR="1", COLUMNS="100", LINES="50", TERM="xterm",
               INPUTRC=os.devnull, HOME=os.devnull)
    # Ctrl-C as at a terminal: a runner started in the background (`pytest &`)
    # hands its children SIGINT ignored, and Python then installs no handler.
    child = pexpect.spawn(sys.executable, ["-m", "expert", *args], env=env, encoding="utf-8", timeout=30,
                          dimensions=(50, 100), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    child.delaybeforesend = None      # (pexpect's 50 ms before each send: every send here waits for its prompt)
    return child


def test_spanish_session_with_why_bad_answer_and_back() -> None:
    child = spawn()
    child.expect_exact("¿Qué tamaño tiene el modelo que quieres ajustar?")
    child.expect_exact("[7] > ")
    child.sendline("70B")
    child.expect_exact("¿Qué método de ajuste vas a usar?")
    child.sendline("por qué")
    child.expect_exact("El ajuste completo necesita mucha más memoria que LoRA")
    child.expect_exact("[LoRA] > ")
    child.sendline("sft")
    child.expect_exact("«sft» no es válido; elige ajuste completo (full), lora o qlora.")
    child.expect_exact("[LoRA] > ")
    child.sendline("atrás")
    child.expect_exact("¿Qué tamaño tiene el modelo que quieres ajustar?")
    child.sendline("13")
    child.expect_exact("[LoRA] > ")
    child.sendline("1")
    child.expect_exact("¿Tienes ya una GPU?")
    child.expect_exact("[ninguna GPU propia] > ")
    child.sendline("24")
    for _ in range(10):  # the defaults for the rest
        if child.expect([r"\[[^\]]*\] > ", "Recomendación"]) == 1:
            break
        child.sendline("")
    child.expect_exact("¿Mostrar el razonamiento completo? (sí/no) [no] > ")
    child.sendline("sí")
    child.expect_exact("Cómo se llegó a la respuesta")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_d_exits_1() -> None:
    child = spawn("ask", lang="en")
    child.expect_exact("[7] > ")
    child.sendeof()
    child.expect_exact("Input ended before the consultation was complete.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1


readline = pytest.importorskip("readline")


def test_arrow_keys_edit_the_answer() -> None:
    child = spawn(lang="en")
    child.expect_exact("[7] > ")
    child.send("3" + LEFT + "1\r")      # "3", back one, "1" before it: 13
    child.expect_exact("[LoRA] > ")
    child.send("lr" + LEFT + "o" + RIGHT + "a\r")   # lr -> lor -> lora
    child.expect_exact("Do you already have a GPU?")
    child.expect_exact("[no GPU of your own] > ")
    child.sendline("no")
    for _ in range(10):
        if child.expect([r"\[[^\]]*\] > ", "Recommendation"]) == 1:
            break
        child.sendline("")
    assert "A model of 13B with LoRA needs" in child.before   # 13 and lora, as edited
    child.expect_exact("(yes/no) [no] > ")
    child.sendline("no")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "^[[D" not in (child.before or "")


def test_up_arrow_recalls_an_earlier_answer_and_ctrl_c_exits_130_without_a_traceback() -> None:
    # One process for both (each `expert` started costs about a second of CPU):
    # Ctrl-C at a question, here the second one, as it ended the first.
    child = spawn(lang="es")
    child.expect_exact("[7] > ")
    child.sendline("70x")
    child.expect_exact("«70x» no es un tamaño")        # asked again at a terminal
    child.expect_exact("[7] > ")
    child.send(UP + "\x7f\r")                             # the last answer, its last character erased: 70
    child.expect_exact("[LoRA] > ")                       # 70 taken: the method is asked next
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "Traceback" not in (child.before or "")


def test_ctrl_backslash_restores_the_terminal_and_exits_131() -> None:
    """SIGQUIT (Ctrl-\\) at a question ends the consultation as Ctrl-C does:
    readline's modes undone (echo and line editing back), no core, no traceback."""
    import termios

    child = spawn("ask", lang="en")
    child.expect_exact("[7] > ")
    child.sendcontrol("\\")
    child.expect(pexpect.EOF)
    modes = termios.tcgetattr(child.child_fd)
    child.close()
    assert child.exitstatus == 131 and child.signalstatus is None
    assert modes[3] & termios.ECHO and modes[3] & termios.ICANON
    assert "Traceback" not in (child.before or "")


def test_back_keeps_the_earlier_answer_as_the_default() -> None:
    # issue 49: 50k examples, back at the next question, Enter: 50,000 is kept, and the
    # explanation lists it among the answers given, not the assumptions
    child = spawn("ask", "--model-size", "8", "--method", "lora", "--vram", "no", lang="en")
    child.expect_exact("How many training examples does your dataset have?")
    child.expect_exact("[10,000] > ")
    child.sendline("50k")
    # the next question: 8B LoRA trains in under 4 hours on today's cards, so the length of the examples is
    # not asked; what the ranking weighs is
    child.expect_exact("Is this a one-off experiment or a production job?")
    child.sendline("back")
    child.expect_exact("How many training examples does your dataset have?")
    child.expect_exact("[50,000] > ")
    child.sendline("")
    child.expect_exact("Is this a one-off experiment or a production job?")
    for _ in range(10):  # the defaults for the rest
        if child.expect([r"\[[^\]]*\] > ", "Show the full reasoning"]) == 1:
            break
        child.sendline("")
    child.sendline("yes")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    said = " ".join(child.before.split())
    given = said[said.index("Your answers:"):said.index("Assumed:")]
    assert "training examples: 50,000" in given
    assert "training examples" not in said[said.index("Assumed:"):said.index("Assumed:") + 400].split(".")[0]

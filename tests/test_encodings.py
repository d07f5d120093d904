"""Terminals and encodings (issue 26, item 7): output an encoding cannot
show falls back to ASCII that reads the same (JSON to \\u escapes); a
consultation whose input is closed ends as one whose input is empty; babel
is imported once for all threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def expert(*args: str, encoding: str = "utf-8", **extra: object) -> subprocess.CompletedProcess[bytes]:
    """`expert ARGS` on the guide's six cards (what is tested is the output's encoding, not the market)."""
    env = {**os.environ, "PYTHONIOENCODING": encoding, "NO_COLOR": "1", "COLUMNS": "100"}
    env.pop("EXPERT_LANG", None)
    return subprocess.run([sys.executable, "-m", "expert", *args, "--catalog", "guide"], capture_output=True,
                          env=env, timeout=120, **extra)  # type: ignore[call-overload]


@pytest.mark.parametrize("encoding, times", [("cp1252", "×"), ("ascii", "x")])
def test_output_falls_back_to_what_the_encoding_can_show(encoding: str, times: str) -> None:
    done = expert("advise", "--model-size", "8", "--lang", "es", "--verbose", encoding=encoding)
    assert done.returncode == 0 and b"Internal error" not in done.stderr
    text = done.stdout.decode(encoding)
    assert f"1 {times} RTX 4090" in text and "~ " in text and "≈" not in text
    assert "#####" in text           # the bars of "Time and cost"
    if encoding == "ascii":
        assert "metodo" in text or "recomendacion" in text.lower()
    explained = expert("explain", "--model-size", "70", "--why-not", "rtx-4090", "--lang", "es", encoding=encoding)
    assert explained.returncode == 0 and "Secciones de la gu" in explained.stdout.decode(encoding)


def test_json_keeps_its_values_whatever_the_encoding() -> None:
    ascii_ = expert("advise", "--model-size", "8", "--lang", "es", "--format", "json", encoding="ascii")
    utf8 = expert("advise", "--model-size", "8", "--lang", "es", "--format", "json")
    assert ascii_.returncode == 0 and json.loads(ascii_.stdout) == json.loads(utf8.stdout)


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell closes stdin")
def test_a_closed_stdin_ends_the_consultation_as_an_empty_one() -> None:
    env = {**os.environ, "EXPERT_LANG": "en"}
    closed = subprocess.run(["sh", "-c", f'exec "{sys.executable}" -m expert ask <&-'], capture_output=True,
                            text=True, env=env, timeout=120)
    empty = subprocess.run([sys.executable, "-m", "expert", "ask"], stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, env=env, timeout=120)
    assert closed.returncode == empty.returncode == 2
    assert closed.stderr == empty.stderr
    assert "the input ended before an answer to the question" in closed.stderr


def test_babel_is_imported_once_for_all_threads() -> None:
    code = ("import threading\nfrom expert.i18n import Localizer\nout = []\n"
            "def use():\n    tr = Localizer('es')\n    out.append((tr.money(2.5), tr.gib(24), tr.hours(2), tr.list(['a', 'b'])))\n"
            "threads = [threading.Thread(target=use) for _ in range(16)]\n"
            "[t.start() for t in threads]\n[t.join() for t in threads]\nprint(len(out), len(set(out)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["16", "1"], done.stderr

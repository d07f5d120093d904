"""Text not written by us, made safe for where it goes.

Card names and catalog file names come from user catalogs; values quoted in
error messages come from whoever typed them. Before such text reaches an
output it goes through one of these:

- :func:`terminal`: no escape sequence (CSI, OSC, DCS, …, whole, in their
  7-bit and 8-bit forms), no other C0/C1 control character and no format
  character (Unicode category Cf: bidi overrides and isolates, zero-width
  characters); line breaks become spaces unless ``newlines`` keeps them.
- :func:`one_line`: :func:`terminal`, with runs of white space made one space.
- :func:`markdown`: :func:`one_line`, with every character that could start
  markdown escaped, so that the text cannot add a heading, a list, a quote,
  emphasis, a code span, a link, an image, an autolink, HTML, an entity, a
  table cell or an @mention.
- :func:`quoted`: :func:`one_line`, shortened to 40 characters, for quoting a
  value of any type back in an error message; where it removed something,
  a U+FFFD says so.
- :func:`json_text`: JSON whose strings keep the data as given, with every
  character a terminal could act on written as a ``\\uXXXX`` escape.

This module imports nothing of the package.
"""

from __future__ import annotations

import json
import re
import reprlib
import unicodedata
from typing import Any

__all__ = ["json_text", "markdown", "one_line", "quoted", "terminal"]

# Escape sequences, whole: what a terminal would consume. A string (OSC, DCS,
# SOS, PM, APC) goes up to its terminator (BEL or ST); an unterminated one
# loses only its introducer (the rest is printable text).
_SEQUENCE = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x00-\x1f\x7f-\x9f]*(?:\x07|\x1b\\|\x9c)"  # OSC, DCS, SOS, PM, APC
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"                                                   # CSI
    r"|\x1b[ -/]*[0-~]?"                                                                    # any other ESC sequence
)
_LINE_BREAK = re.compile(r"[\n\r\t\v\f\x85\u2028\u2029]")
_LINE_BREAK_BUT_NEWLINE = re.compile(r"\r\n?|[\t\v\f\x85\u2028\u2029]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_BEYOND_ASCII = re.compile(r"[^\x00-\x7f]+")


def _keep(ch: str) -> str:
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf"):
        return ""
    if category == "Cs":       # a lone surrogate cannot even be encoded
        return "\ufffd"
    return ch


def terminal(text: Any, newlines: bool = False) -> str:
    """``text`` without escape sequences, control or format characters; line
    breaks (and tabs) become spaces, or newlines with ``newlines``."""
    text = text if isinstance(text, str) else str(text)
    text = _SEQUENCE.sub("", text)
    if newlines:
        text = _LINE_BREAK_BUT_NEWLINE.sub(lambda m: "\n" if m.group().startswith("\r") else " ", text)
        text = "\n".join(_CONTROL.sub("", line) for line in text.split("\n"))
    else:
        text = _CONTROL.sub("", _LINE_BREAK.sub(" ", text))
    if not text.isascii():     # (each run of other characters looked at, not every character of the text)
        text = _BEYOND_ASCII.sub(_kept, text)
    return text


def _kept(match: re.Match[str]) -> str:
    run = match.group()
    # printable: no control, format or surrogate character in it (str.isprintable is false for all three)
    return run if run.isprintable() else "".join(_keep(ch) for ch in run)


def one_line(text: Any) -> str:
    """:func:`terminal` text on one line, white space collapsed."""
    return " ".join(terminal(text).split())


_MARKDOWN = re.compile(
    r"[\\`*\[\]<>#@|~$]"            # code, emphasis, links, images, HTML, autolinks, headings, mentions, tables, math
    r"|(?<![^\W_])_|_(?![^\W_])"    # an underscore that is not inside a word
    r"|&(?=#?\w+;)"                 # an entity (&#x202E;)
    r"|:(?=//)"                     # http://… (an extended autolink)
    r"|(?<=[wW]{3})\."              # www.…
)
_LINE_START = re.compile(r"^(?:[-+](?=\s|$)|[-=]+\s*$|\d+(?=[.)](?:\s|$)))")


def markdown(text: Any) -> str:
    """:func:`one_line` text escaped so that it stays plain text in markdown."""
    text = _MARKDOWN.sub(lambda m: "\\" + m.group(), one_line(text))
    # A list item, a setext underline or a numbered item at the start of a line.
    return _LINE_START.sub(lambda m: m.group() + "\\" if m.group()[0].isdigit() else "\\" + m.group(), text, count=1)


def digits(whole: int) -> int:
    """About how many decimal digits ``whole`` has, without printing it (10**5000
    cannot be: Python refuses str() of a number that long)."""
    return int(whole.bit_length() * 0.30103)     # log10(2); bit_length ignores the sign


class _Short(reprlib.Repr):
    """reprlib's shortened repr, with whole numbers too long to print (10**5000)
    shown by their size, wherever they sit in the value."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 1000:
            return f"<a whole number of about {digits(x)} digits>"
        return super().repr_int(x, level)


_SHORT = _Short()


def quoted(value: Any, most: int = 40) -> str:
    """A value as it can be quoted back in a message: one safe line, at most
    ``most`` characters. A value that is not text is shown as Python writes
    it, shortened by reprlib (a list of a million items, a deep dict), and a
    whole number too long to print (10**5000) by its size."""
    text = one_line(_marked(value) if isinstance(value, str) else _SHORT.repr(value))
    return text if len(text) <= most else text[:most - 1] + "…"


_REMOVED = "\ufffd"
_CONTROL_NOT_BREAK = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")


def _marked(text: str) -> str:
    """``text`` with each escape sequence, control or format character it holds shown as one U+FFFD: quoted
    back without them, "RTX<ESC>]0;x<BEL> 3090" read as the 'RTX 3090' the message said it did not know."""
    text = _CONTROL_NOT_BREAK.sub(_REMOVED, _SEQUENCE.sub(_REMOVED, text))
    if text.isascii():
        return text
    return "".join(_REMOVED if unicodedata.category(ch) == "Cf" else ch for ch in text)


# What json.dumps(ensure_ascii=False) leaves as it is and a terminal could act
# on: DEL, C1 controls, format characters, line and paragraph separators (and
# lone surrogates, which cannot be encoded).
_NOT_ASCII = re.compile(r"[^\x00-\x7e]")


def _json_escape(match: re.Match[str]) -> str:
    ch = match.group()
    if ch != "\x7f" and unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Zl", "Zp"):
        return ch
    code = ord(ch)
    if code > 0xFFFF:
        code -= 0x10000
        return "\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
    return "\\u%04x" % code


def json_text(data: Any) -> str:
    """``data`` as indented JSON (non-ASCII letters as they are), ending in a newline.

    Strings keep their value: control and format characters are escaped, so
    the text can be printed on a terminal and parsed back unchanged."""
    return _NOT_ASCII.sub(_json_escape, json.dumps(data, ensure_ascii=False, indent=2)) + "\n"

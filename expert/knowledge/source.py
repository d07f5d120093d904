"""Reading the TOML files of a knowledge base, collecting the problems found
in them, and finding the line of a key or table for each problem."""

from __future__ import annotations

import math
import os
import pickle
import re
import stat
import sys
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeGuard

MAX_PROBLEMS = 50


def N_(message: str) -> str:
    """Marks a message for translation where it is not given to ``add``."""
    return message


class Problems:
    """Collects problems; the knowledge base loads only if there are none.
    The first MAX_PROBLEMS are kept (a file of 100,000 unknown keys is one
    mistake), then one line saying there are more."""

    def __init__(self) -> None:
        self.items: list[tuple[str, int, str, dict[str, Any]]] = []

    def add(self, path: str, line: Any, template: str, **params: Any) -> None:
        if len(self.items) > MAX_PROBLEMS:
            return
        if len(self.items) == MAX_PROBLEMS:
            line, params = 0, {"max": MAX_PROBLEMS}
            template = N_("more problems follow; only the first %(max)s are shown")
        # What a file says is shown escaped: a control or bidirectional character
        # in a key or a file name must not reach the terminal as is.
        params = {key: _printable(value) if isinstance(value, str) else value for key, value in params.items()}
        self.items.append((_printable(path), int(line), template, params))


def _printable(text: str) -> str:
    """``text`` with every non-printable character escaped (\\x1b, \\u202e)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def shown(value: str, limit: int = 40) -> str:
    """A value of a file as a message quotes it: at most ``limit`` characters."""
    return value if len(value) <= limit else value[:limit - 1] + "…"


# --- the line of a key or table ----------------------------------------------
# A problem names what it is about with a path: "strategy.single" (a key of a
# table), "rule[3].factor" (a key of the third [[rule]]), "ladder.lora[2]"
# (the second entry of a multi-line array of inline tables). Indices are
# 1-based, as in the messages.

_KEY = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER_RE = re.compile(rf"^\s*(\[\[?)\s*({_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_KEY_RE = re.compile(rf"^\s*({_DOTTED})\s*=(.*)$")
_STRING_RE = re.compile(r""""(?:\\.|[^"\\])*"|'[^']*'""")


def _keys(dotted: str) -> tuple[str, ...]:
    """The keys of a dotted key: 'a."b.c"' -> ("a", "b.c")."""
    if not any(c in dotted for c in ".\"'"):
        return (dotted.strip(),)
    return tuple(key.strip("\"'") for key in re.findall(_KEY, dotted))


def _depth(value: str) -> int:
    """How many brackets ``value`` leaves open (strings and comments aside)."""
    if "[" not in value and "]" not in value:
        return 0
    bare = _STRING_RE.sub("", value).split("#", 1)[0]
    return bare.count("[") - bare.count("]")


@lru_cache(maxsize=32)
def _lines(text: str) -> dict[tuple[str | int, ...], int]:
    """The line (1-based) of every table, key and inline-table array entry of
    ``text``, by path: ("rule", 0) for the first [[rule]], ("rule", 0, "id"),
    ("ladder", "lora", 1). The first occurrence counts."""
    found: dict[tuple[str | int, ...], int] = {}
    table: tuple[str | int, ...] = ()
    counts: dict[tuple[str | int, ...], int] = {}
    array: tuple[str | int, ...] = ()      # the multi-line array being read
    depth = entries = 0
    string = ""                            # the quotes of the multi-line string being read
    for n, line in enumerate(text.split("\n"), 1):   # not splitlines(): TOML ends lines with \n only
        stripped = line.lstrip()
        if string:
            string = "" if string in line else string
            continue
        if depth > 0:
            if depth == 1 and stripped.startswith("{"):
                found.setdefault(array + (entries,), n)
                entries += 1
            depth += _depth(line)
            continue
        if not stripped or stripped[0] == "#":
            continue
        header = _HEADER_RE.match(line) if stripped[0] == "[" else None
        if header:
            table = _keys(header.group(2))
            if header.group(1) == "[[":
                counts[table] = counts.get(table, -1) + 1
                found.setdefault(table, n)
                table += (counts[table],)
            found.setdefault(table, n)
            continue
        key = _KEY_RE.match(line)
        if key:
            array = table + _keys(key.group(1))
            found.setdefault(array, n)
            depth, entries = max(_depth(key.group(2)), 0), 0
            if "'''" in line or '"""' in line:
                string = next((quotes for quotes in ('"""', "'''") if key.group(2).count(quotes) % 2), "")
    return found


def _path(where: str) -> tuple[str | int, ...]:
    return tuple(int(index) - 1 if index else key for key, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", where))


def line_at(text: str, where: str) -> int:
    """Line (1-based) of the key or table at ``where``, or of the nearest one
    around it that the file has; 0 when it has none (the problem is the file's)."""
    found, path = _lines(text), _path(where)
    while path:
        if path in found:
            return found[path]
        path = path[:-1]
    return 0


class LazyLine:
    """The line of ``where``, looked up only if a problem is reported there."""

    def __init__(self, text: str, where: str) -> None:
        self.text, self.where = text, where

    def __int__(self) -> int:
        return line_at(self.text, self.where)


# --- reading a file ------------------------------------------------------------
# A knowledge-base or catalog file is opened only if it is a regular file of at
# most MAX_BYTES (not a directory, FIFO or device: /dev/zero would be read
# until memory runs out, a FIFO would block forever), and read with a bounded
# read. Before the TOML parser sees the text, dotted keys of more than
# MAX_KEY_PARTS parts are refused (the parser's time and memory grow with the
# square of their length), and its RecursionError on deep nesting is caught.

MAX_BYTES = 2_000_000
MAX_SIZE = "2 MB"
MAX_KEY_PARTS = 16
MAX_NESTING = 32
# The parser reads integers of any length, but Python refuses to convert more
# than 4300 decimal digits (a ValueError).
_LONG_NUMBER_RE = re.compile(r"[0-9_]{4000,}")
_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
_LONG_KEY_RE = re.compile(rf"(?<![A-Za-z0-9_-]){_PART}(?:[ \t]*\.[ \t]*{_PART}){{{MAX_KEY_PARTS},}}")


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _too_deep(text: str) -> int:
    """The first line where arrays and tables are nested more than
    MAX_NESTING deep (brackets in strings count too: it is only used to place
    the parser's RecursionError); 0 if none."""
    depth = 0
    for n, line in enumerate(text.split("\n"), 1):   # not splitlines(): TOML ends lines with \n only
        if "[" in line or "{" in line:
            for char in line:
                depth = depth + 1 if char in "[{" else max(depth - 1, 0) if char in "]}" else depth
                if depth > MAX_NESTING:
                    return n
        elif "]" in line or "}" in line:
            depth = max(depth - line.count("]") - line.count("}"), 0)
    return 0


class Unreadable(Exception):
    """Why :func:`read_regular` did not read a file: ``reason`` is "missing",
    "not-regular", "too-large" (``size`` then says how large) or "error"
    (``detail`` then says what the system said)."""

    def __init__(self, reason: str, detail: str = "", size: str = "") -> None:
        super().__init__(reason)
        self.reason, self.detail, self.size = reason, detail, size


def read_regular(path: str | Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit``
    bytes; :class:`Unreadable` otherwise. Every read of a file from outside
    goes through here: it is opened non-blocking (a FIFO does not wait for a
    writer, a terminal does not become the controlling one), checked on the
    open descriptor (what the name points to may change between a stat and an
    open), and read with a bounded read (/dev/zero would fill memory)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise Unreadable("missing") from None
    except (OSError, ValueError) as error:       # ValueError: a NUL in the name
        raise Unreadable("error", getattr(error, "strerror", None) or str(error)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):   # a directory, FIFO or device (even one swapped in since a stat)
            raise Unreadable("not-regular")
        if info.st_size > limit:
            raise Unreadable("too-large", size=str(info.st_size))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise Unreadable("error", error.strerror or str(error)) from None
    finally:
        os.close(fd)
    if len(data) > limit:      # it grew since the fstat
        raise Unreadable("too-large", size="> %d" % limit)
    return data


def _open(path: Path, problems: Problems) -> bytes | None:
    """The bytes of ``path`` if it is a regular file of at most MAX_BYTES."""
    try:
        return read_regular(path, MAX_BYTES)
    except Unreadable as error:
        if error.reason == "missing":
            problems.add(str(path), 0, "file is missing")
        elif error.reason == "not-regular":
            problems.add(str(path), 0, "is not a regular file (a TOML file of at most %(limit)s is accepted)",
                         limit=MAX_SIZE)
        elif error.reason == "too-large":
            problems.add(str(path), 0, "is too large: %(size)s bytes (a TOML file of at most %(limit)s is accepted)",
                         size=error.size, limit=MAX_SIZE)
        else:
            problems.add(str(path), 0, "cannot be read: %(error)s", error=error.detail)
        return None


def read_toml(path: Path, problems: Problems) -> tuple[dict[str, Any], str]:
    """The TOML document of ``path`` and its text; ({}, text) on a problem."""
    data = _open(path, problems)
    if data is None:
        return {}, ""
    try:
        # universal newlines, as text mode reads them
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        problems.add(str(path), line, "cannot be read: it is not UTF-8 text")
        return {}, ""
    kept = _PARSED.get(text)      # a text kept here passed every check below when it was parsed
    if kept is not None:
        return pickle.loads(kept), text
    long_key = _LONG_KEY_RE.search(text)
    if long_key:
        problems.add(str(path), _line_of(text, long_key.start()), "a dotted key has more than %(limit)s parts",
                     limit=MAX_KEY_PARTS)
        return {}, text
    # Imported here: a knowledge base read back from the cache (expert.knowledge.cache) parses no TOML.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"line (\d+)", str(error))
        problems.add(str(path), int(match.group(1)) if match else 0, "malformed TOML: %(error)s", error=str(error))
    except RecursionError:
        problems.add(str(path), _too_deep(text), "arrays or tables are nested too deeply")
    except ValueError:        # an integer of thousands of digits
        number = _LONG_NUMBER_RE.search(text)
        problems.add(str(path), _line_of(text, number.start()) if number else 0, "a number has too many digits")
    else:
        _keep(text, doc)
        return doc, text
    return {}, text


# Documents parsed, by their text (pickled: each reader gets its own copy to
# change). A process that loads the same files again, a --rules folder reloaded
# after one file was edited or copied elsewhere, `expert check` after the
# knowledge base was loaded, parses only what changed: reading back is some
# forty times cheaper than tomllib. Bounded, oldest first out.
_PARSED: dict[str, bytes] = {}
_PARSED_BYTES = 8 * 1024 * 1024
_PARSED_LOCK = threading.Lock()
_parsed_size = 0      # the bytes of the texts and documents in _PARSED


def _keep(text: str, doc: dict[str, Any]) -> None:
    try:
        blob = pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PickleError, TypeError, RecursionError):   # pragma: no cover - TOML values all pickle
        return
    if len(text) + len(blob) > _PARSED_BYTES:
        return
    global _parsed_size
    with _PARSED_LOCK:
        if text in _PARSED:      # another thread parsed it too
            return
        _PARSED[text] = blob
        _parsed_size += len(text) + len(blob)
        while _parsed_size > _PARSED_BYTES:
            oldest = next(iter(_PARSED))
            _parsed_size -= len(oldest) + len(_PARSED.pop(oldest))


def is_number(value: Any) -> TypeGuard[int | float]:
    """A finite number, and not absurdly large (TOML allows inf, 1e308 and
    integers of any length, which math.isfinite cannot take)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return abs(value) <= 1e12 if isinstance(value, int) else math.isfinite(value) and abs(value) <= 1e12

"""Reading the TOML files of a knowledge base, collecting the problems found
in them, and finding the line of a key or table for each problem."""

from __future__ import annotations

import math
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


class _Problems:
    """Collects problems; the knowledge base loads only if there are none."""

    def __init__(self) -> None:
        self.items: list[tuple[str, int, str, dict[str, Any]]] = []

    def add(self, path: str, line: Any, template: str, **params: Any) -> None:
        self.items.append((path, int(line), template, params))


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
    for n, line in enumerate(text.splitlines(), 1):
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


def _line(text: str, where: str) -> int:
    """Line (1-based) of the key or table at ``where``, or of the nearest one
    around it that the file has; 0 when it has none (the problem is the file's)."""
    found, path = _lines(text), _path(where)
    while path:
        if path in found:
            return found[path]
        path = path[:-1]
    return 0


class _LazyLine:
    """The line of ``where``, looked up only if a problem is reported there."""

    def __init__(self, text: str, where: str) -> None:
        self.text, self.where = text, where

    def __int__(self) -> int:
        return _line(self.text, self.where)


def _read(path: Path, problems: _Problems) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.add(str(path), 0, "file is missing")
        return {}, ""
    except (OSError, UnicodeDecodeError) as error:
        problems.add(str(path), 0, "cannot be read: %(error)s", error=str(error))
        return {}, ""
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"line (\d+)", str(error))
        problems.add(str(path), int(match.group(1)) if match else 0, "malformed TOML: %(error)s", error=str(error))
        return {}, text


def _is_number(value: Any) -> bool:
    """A finite number, and not absurdly large (TOML allows inf and 1e308)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and abs(value) <= 1e12

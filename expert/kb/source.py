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


@lru_cache(maxsize=32)
def _tables(text: str, header: str) -> tuple[list[str], list[int]]:
    """The lines of ``text`` and where each ``header`` table starts (0-based)."""
    lines = text.splitlines()
    return lines, [n for n, line in enumerate(lines) if line.strip() == header]


def _line_of(text: str, header: str, index: int, key: str | None = None) -> int:
    """Line (1-based) of the index-th ``header`` table, or of ``key`` in it."""
    lines, starts = _tables(text, header)
    if index >= len(starts):
        return 0
    start = starts[index]
    if key is None:
        return start + 1
    end = starts[index + 1] if index + 1 < len(starts) else len(lines)
    for n in range(start, end):
        if re.match(rf"\s*{re.escape(key)}\s*=", lines[n]):
            return n + 1
    return start + 1


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


class _LazyLine:
    """The line of a key, looked up only if a problem is reported there."""

    def __init__(self, text: str, where: str) -> None:
        self.text, self.where = text, where

    def __int__(self) -> int:
        key = self.where.rsplit(".", 1)[-1].split("[")[0]
        return _line_of_key(self.text, key) if key else 0


def _line_of_key(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s*(\[+[^\]]*\b{re.escape(key)}\b[^\]]*\]+|\"?{re.escape(key)}\"?\s*=)")
    return next((n + 1 for n, line in enumerate(text.splitlines()) if pattern.match(line)), 0)


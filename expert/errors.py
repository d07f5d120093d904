"""The errors the library raises on purpose.

Each carries an English source message with ``%(name)s`` placeholders; the
message a person sees is translated into the consultation's language.
A message may quote what someone typed or a file's name: it never carries
their escape sequences, control or format characters (:mod:`expert.escape`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .escape import terminal

# At most this many names in a "did you mean": the nearest, never the whole list.
SUGGESTIONS = 3
_NOT_WORD = re.compile(r"[\W_]+")


def _key(text: str) -> str:
    return _NOT_WORD.sub("", text.lower())


def nearest(text: Any, names: Iterable[str], most: int = SUGGESTIONS,
            keys: Mapping[str, Iterable[str]] | None = None) -> list[str]:
    """The names (at most ``most``) closest to what was typed, nearest first:
    the one place every "did you mean" comes from (cards, models, methods,
    formats, budgets, rule ids). Case, spaces, hyphens and punctuation do not
    count; a name that the text contains, or that contains it, comes first.
    ``keys`` gives other spellings of a name (a card's aliases). Linear in
    the names; the text is cut at 80 characters."""
    import difflib  # (here: `expert --help` and completion do not pay for it)

    if not isinstance(text, str):      # str() of an int of 5,000 digits raises; a number is no name anyway
        return []
    typed = _key(text[:80])
    if not typed:
        return []
    scores: dict[str, float] = {}
    for name in names:
        for spelling in (name, *((keys or {}).get(name, ()))):
            key = _key(spelling)
            if not key:
                continue
            score = difflib.SequenceMatcher(None, typed, key).ratio()
            if len(typed) >= 3 and len(key) > len(typed):   # a short name: the start of a longer one
                score = max(score, 0.9 * difflib.SequenceMatcher(None, typed, key[:len(typed)]).ratio())
            if len(key) >= 3 and len(typed) >= 3 and (key in typed or typed in key):
                score = max(score, 0.8 + 0.2 * min(len(key), len(typed)) / max(len(key), len(typed)))
            scores[name] = max(scores.get(name, 0.0), score)
    close = sorted((name for name, score in scores.items() if score >= 0.6), key=lambda n: -scores[n])
    return close[:most]


class InputError(ValueError):
    """An input field has a value that is not accepted.

    ``field`` names the profile field (or ``lang``, or the unknown argument);
    ``str(error)`` is the message in the consultation's language;
    ``suggestions`` the accepted values nearest to what was given (at most
    three, nearest first; the message names them too).
    """

    def __init__(self, field: str, message: str, suggestions: Iterable[str] = ()) -> None:
        message = terminal(message)
        super().__init__(message)
        self.field = field
        self.message = message
        self.suggestions = tuple(suggestions)


class KnowledgeBaseError(Exception):
    """A knowledge base that cannot be loaded: one line per problem.

    Each problem is ``(file, line, template, params)``; ``line`` may be 0
    when the problem belongs to the file as a whole.
    """

    def __init__(self, problems: list[tuple[str, int, str, dict[str, Any]]]) -> None:
        self.problems = problems
        super().__init__(self.render(lambda s: s))

    def render(self, gettext: Any) -> str:
        lines = []
        for path, line, template, params in self.problems:
            where = f"{path}:{line}" if line else path
            prefix = gettext("rule '%(rule)s': ") % params if "rule" in params else ""
            lines.append(terminal(f"{where}: {prefix}{gettext(template) % params}"))
        return "\n".join(lines)

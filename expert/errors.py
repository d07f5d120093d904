"""The errors the library raises on purpose.

Each carries an English source message with ``%(name)s`` placeholders; the
message a person sees is translated into the consultation's language.
A message may quote what someone typed or a file's name: it never carries
their escape sequences, control or format characters (:mod:`expert.escape`).
"""

from __future__ import annotations

from typing import Any

from .escape import terminal


class InputError(ValueError):
    """An input field has a value that is not accepted.

    ``field`` names the profile field (or ``lang``, or the unknown argument);
    ``str(error)`` is the message in the consultation's language.
    """

    def __init__(self, field: str, message: str) -> None:
        message = terminal(message)
        super().__init__(message)
        self.field = field
        self.message = message


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

"""The jinja2 environment the templates are written for (used by
``expert/render.py``), and the ``wrap`` filter (also used by ``expert ask``)."""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2


def new_environment(loader: Any) -> "jinja2.Environment":
    """An environment with the templates' settings and the i18n extension
    (new-style gettext, so that ``{% trans %}`` takes ``%(name)s`` values)."""
    import jinja2

    env = jinja2.Environment(
        loader=loader,
        extensions=["jinja2.ext.i18n"],
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.newstyle_gettext = True  # type: ignore[attr-defined]
    env.filters["wrap"] = wrap
    return env


# A number and its unit, or a count and its card, stay on one line.
_KEEP_TOGETHER = re.compile(r"(?<=\d) (?=(?:h|hr|GB|B|×)(?:\W|$))|(?<=×) ")


def wrap(text: str, width: int, indent: str = "", first: str | None = None) -> str:
    """The ``wrap`` filter: fill ``text`` to ``width`` (at least 40) columns."""
    text = _KEEP_TOGETHER.sub("\u00a0", text)
    wrapped = textwrap.fill(text, width=max(width, 40), initial_indent=indent if first is None else first,
                            subsequent_indent=indent, break_on_hyphens=False, break_long_words=False)
    return wrapped.replace("\u00a0", " ")

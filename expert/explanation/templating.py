"""The jinja2 environment the templates are written for (one per language,
with the templates of ``expert/explanation/templates``), the output formats, and the
``wrap`` filter (also used by ``expert ask``).

Text not written by us (card names, catalog file names) is already on one
line without control characters when it is put into a result's texts
(:mod:`expert.explanation.result`); the templates add the last layer for their format
(:mod:`expert.escape`): ``wrap`` (every text of a terminal template goes
through it) drops escape sequences, control and format characters, and the
``md`` filter (every text of a markdown template) escapes markdown.

Used by :mod:`expert.explanation.result` (a result renders itself), :mod:`expert.explanation.render`
(explanations and estimates) and :mod:`expert.explanation.rulebook`; it imports none of
them.
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from functools import cache
from typing import TYPE_CHECKING, Any

from .. import cachedir, paths
from ..errors import InputError, nearest
from ..escape import markdown, quoted, terminal
from ..i18n import Localizer

if TYPE_CHECKING:
    import jinja2

FORMATS = ("text", "markdown", "json")


@cache
def environment(lang: str) -> jinja2.Environment:
    """The environment of the templates in ``expert/explanation/templates``, translating into ``lang``."""
    import jinja2

    env = new_environment(jinja2.FileSystemLoader(str(paths.TEMPLATES)))
    env.bytecode_cache = _compiled_templates()
    # the i18n extension adds the method at run time; jinja2's types do not declare it
    env.install_gettext_translations(Localizer(lang).translations, newstyle=True)  # type: ignore[attr-defined]
    return env


@cache
def _compiled_templates() -> jinja2.BytecodeCache:
    """jinja2's bytecode cache, in the user's cache folder (:mod:`expert.cachedir`):
    a template is compiled once, not by every command. jinja2 compiles a
    template again when its text changed; a file's name also holds the
    versions of jinja2 and of this module (the environment's settings)."""
    import jinja2

    with open(__file__, "rb") as fh:
        settings = hashlib.sha256(fh.read()).hexdigest()

    class CompiledTemplates(jinja2.BytecodeCache):
        def get_cache_key(self, name: str, filename: str | None = None) -> str:
            return hashlib.sha256(f"{jinja2.__version__}\0{settings}\0{name}\0{filename}".encode()).hexdigest()

        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            data = cachedir.read(f"template-{bucket.key}")
            if data:
                try:
                    bucket.bytecode_from_string(data)
                except Exception:      # a damaged file, of any kind of damage: compiled again
                    bucket.reset()

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            cachedir.write(f"template-{bucket.key}", bucket.bytecode_to_string(), keep=64)

    return CompiledTemplates()


def check_format(fmt: str, lang: str, formats: tuple[str, ...] = FORMATS) -> None:
    """Raise InputError, in the user's language, for a format that is not one of ``formats``."""
    if fmt not in formats:
        tr = Localizer(lang)
        close = nearest(fmt, formats)
        raise InputError("format", tr.gettext("format: '%(value)s' is not accepted; choose %(accepted)s.")
                         % {"value": quoted(fmt),
                            "accepted": tr.list(formats, style="or")} + tr.did_you_mean(close),
                         close)


def new_environment(loader: Any) -> jinja2.Environment:
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
    env.newstyle_gettext = True  # type: ignore[attr-defined]  # an attribute of the i18n extension, undeclared
    env.filters["wrap"] = wrap
    env.filters["md"] = markdown
    env.filters["terminal"] = terminal
    return env


# A number and its unit, or a count and its card, stay on one line.
_KEEP_TOGETHER = re.compile(r"(?<=\d) (?=(?:h|hr|GiB|GB|B|×)(?:\W|$))|(?<=×) ")


def wrap(text: str, width: int, indent: str = "", first: str | None = None) -> str:
    """The ``wrap`` filter: fill ``text`` to ``width`` (at least 40) columns,
    without escape sequences, control or format characters."""
    text = _KEEP_TOGETHER.sub("\u00a0", terminal(text))
    wrapped = textwrap.fill(text, width=max(width, 40), initial_indent=indent if first is None else first,
                            subsequent_indent=indent, break_on_hyphens=False, break_long_words=False)
    return wrapped.replace("\u00a0", " ")

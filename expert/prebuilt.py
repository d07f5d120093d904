"""Work done once when the package is built, instead of in every process.

A process that answers one question (``expert advise ...``) used to spend
more time warming up than reasoning: parsing the knowledge base's TOML,
compiling the jinja2 templates, and loading babel's whole CLDR locale data to
format a few numbers. ``hatch_build.py`` calls :func:`build` when a wheel or an
editable install is built, and it writes ``expert/_prebuilt/`` (not in git):

- ``toml.json``: every shipped knowledge-base file, parsed, keyed by the
  SHA-256 of its text. The loader still validates what it gets.
- ``templates/``: the templates compiled to Python modules by jinja2's own
  ``Environment.compile_templates``, and ``templates.json`` with the jinja2
  version and the SHA-256 of each template's source.
- ``cldr.pickle``: for each supported language, the parts of the CLDR data
  babel reads to format our numbers, units and lists (number symbols, unit
  and list patterns, plural rules), and the babel version.

Each artefact is used only when it matches what it was built from: the same
text, the same jinja2, the same babel. Otherwise the process does the work
itself, and the answer is the same (``tests/test_prebuilt.py``). Nothing here
writes anywhere at run time.

This module imports nothing of ``expert`` at run time, and at build time only
:mod:`expert.templating` (which the build hook passes in), so that the hook
can run it without experta installed.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

HERE = Path(__file__).resolve().parent
DIRECTORY = HERE / "_prebuilt"
LANGUAGES = ("en", "es")
# The units expert formats (i18n.Localizer), and what is formatted when the
# CLDR subset is extracted: babel reads the same keys at run time.
UNITS = ("digital-gigabyte", "duration-hour")
NUMBER_FORMAT = "#,##0.#"

_LOCK = threading.Lock()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- run time ----------------------------------------------------------------

@lru_cache(maxsize=None)
def _json(name: str, directory: Path) -> Mapping[str, Any]:
    try:
        with open(directory / name, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def parsed_toml(text: str, directory: Path | None = None) -> dict[str, Any] | None:
    """The parsed TOML of ``text`` if it is a shipped file, unchanged; else None.

    A fresh copy each time (the loader may keep parts of it)."""
    with _LOCK:
        doc = _json("toml.json", directory or DIRECTORY).get(digest(text))
    if not isinstance(doc, str):
        return None
    parsed = json.loads(doc)
    return parsed if isinstance(parsed, dict) else None


def template_loader(templates: Path, directory: Path | None = None) -> Any:
    """A jinja2 loader for ``templates`` that takes each template's compiled
    module when it was built from the same source with this jinja2, and
    compiles the source otherwise."""
    import jinja2

    directory = directory or DIRECTORY

    class Loader(jinja2.FileSystemLoader):
        def __init__(self) -> None:
            super().__init__(str(templates))
            manifest = _json("templates.json", directory)
            self.hashes = manifest.get("sources", {}) if manifest.get("jinja2") == jinja2.__version__ else {}
            self.modules = jinja2.ModuleLoader(str(directory / "templates")) if self.hashes else None

        def load(self, environment: jinja2.Environment, name: str, globals: Any = None) -> jinja2.Template:
            if self.modules is not None and name in self.hashes:
                try:
                    source = (templates / name).read_text(encoding="utf-8")
                except OSError:
                    source = None
                if source is not None and digest(source) == self.hashes[name]:
                    try:
                        return self.modules.load(environment, name, globals)
                    except Exception:  # noqa: BLE001 - a damaged artefact: compile the source instead
                        pass
            return super().load(environment, name, globals)

    return Loader()


def locale(lang: str, directory: Path | None = None) -> Any:
    """A babel ``Locale`` for ``lang`` whose data starts as the prebuilt
    subset (if it was extracted by this babel) and falls back to babel's full
    data for anything else; babel's own ``Locale`` otherwise."""
    from babel import Locale

    subsets = _cldr(directory or DIRECTORY)
    result = Locale(lang)
    if lang not in subsets or not hasattr(result, "_Locale__data"):  # (babel keeps its data elsewhere now)
        return Locale.parse(lang)
    from babel.localedata import LocaleDataDict

    result._Locale__data = LocaleDataDict(_Subset(lang, subsets[lang]))  # type: ignore[attr-defined]
    return result


@lru_cache(maxsize=None)
def _cldr(directory: Path) -> dict[str, Any]:
    import babel

    try:
        with open(directory / "cldr.pickle", "rb") as fh:
            version, subsets = pickle.load(fh)
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError):
        return {}
    return subsets if version == babel.__version__ and isinstance(subsets, dict) else {}


class _Subset(Mapping[str, Any]):
    """The prebuilt part of a locale's data; babel's full data for the rest."""

    def __init__(self, lang: str, data: dict[str, Any]) -> None:
        self.lang, self.data = lang, data
        self._full: Mapping[str, Any] | None = None

    @property
    def full(self) -> Mapping[str, Any]:
        if self._full is None:
            from babel import localedata

            self._full = localedata.load(self.lang)
        return self._full

    def __getitem__(self, key: str) -> Any:
        return self.data[key] if key in self.data else self.full[key]

    def __contains__(self, key: object) -> bool:
        return key in self.data or key in self.full

    def __iter__(self) -> Any:
        return iter(self.full)

    def __len__(self) -> int:
        return len(self.full)


# --- build time --------------------------------------------------------------

def toml_parser() -> Any:
    """``tomllib``, or ``tomli`` on Python 3.10."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def build(target: Path, rules: Path, templates: Path, new_environment: Any = None) -> list[Path]:
    """Write the artefacts into ``target`` (emptied first); return the files.

    ``new_environment`` is :func:`expert.templating.new_environment`, given by
    the build hook, which loads this module on its own (outside the package).
    """
    import shutil

    if new_environment is None:
        from .templating import new_environment
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    return [_build_toml(target, rules), *_build_templates(target, templates, new_environment), _build_cldr(target)]


def _build_toml(target: Path, rules: Path) -> Path:
    tomllib = toml_parser()
    docs = {}
    for path in sorted(rules.rglob("*.toml")):
        text = path.read_text(encoding="utf-8")
        try:
            docs[digest(text)] = json.dumps(tomllib.loads(text), ensure_ascii=False)  # in file order
        except tomllib.TOMLDecodeError:
            continue  # the loader reports it, with its line
    out = target / "toml.json"
    out.write_text(json.dumps(docs, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    return out


def _build_templates(target: Path, templates: Path, new_environment: Any) -> list[Path]:
    import jinja2

    env = new_environment(jinja2.FileSystemLoader(str(templates)))
    names = sorted(env.list_templates())
    env.compile_templates(str(target / "templates"), zip=None, ignore_errors=False,
                          filter_func=lambda name: name in names)
    manifest = {"jinja2": jinja2.__version__,
                "sources": {name: digest((templates / name).read_text(encoding="utf-8")) for name in names}}
    out = target / "templates.json"
    out.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return [out, *sorted((target / "templates").glob("*.py"))]


def _plain(value: Any) -> Any:
    """babel's locale data as plain dicts (aliases resolved), so that the
    pickle holds only what is needed, not a reference to the whole locale."""
    if isinstance(value, Mapping):
        return {key: _plain(value[key]) for key in value}
    return value


def _build_cldr(target: Path) -> Path:
    import babel
    from babel import Locale
    from babel.lists import format_list
    from babel.numbers import format_decimal
    from babel.units import format_unit

    subsets = {}
    for lang in LANGUAGES:
        full = Locale.parse(lang)
        used: set[str] = set()
        data = full._data
        recorder = _Recorder(data, used)
        probe = Locale(lang)
        probe._Locale__data = recorder  # type: ignore[attr-defined]
        for value in (0, 1, 1.5, 1234.5):
            format_decimal(value, format=NUMBER_FORMAT, locale=probe)
            for unit in UNITS:
                format_unit(value, unit, length="short", format=NUMBER_FORMAT, locale=probe)
        for items in (["a"], ["a", "b"], ["a", "b", "c"]):
            for style in ("standard", "or"):
                format_list(items, style=style, locale=probe)
        subset = {key: _plain(data[key]) for key in sorted(used) if key in data}
        if "unit_patterns" in subset:
            subset["unit_patterns"] = {unit: subset["unit_patterns"][unit] for unit in UNITS}
        subsets[lang] = subset
    out = target / "cldr.pickle"
    with open(out, "wb") as fh:
        pickle.dump((babel.__version__, subsets), fh, protocol=4)
    return out


class _Recorder(Mapping[str, Any]):
    """Locale data that notes which top-level keys babel reads."""

    def __init__(self, data: Any, used: set[str]) -> None:
        self.data, self.used = data, used

    def __getitem__(self, key: str) -> Any:
        self.used.add(key)
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        self.used.add(key)
        return self.data.get(key, default)

    def __contains__(self, key: object) -> bool:
        self.used.add(str(key))
        return key in self.data

    def __iter__(self) -> Any:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def files(target: Path | None = None) -> list[Path]:
    """The artefacts in ``target`` (the package's by default)."""
    target = target or DIRECTORY
    return sorted(p for p in target.rglob("*") if p.is_file() and "__pycache__" not in p.parts) if target.exists() else []

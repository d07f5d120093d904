"""Where a sentence a person reads is written (issue 46): every sentence of
an answer (the command line's text and markdown, the JSON texts, the page)
is a message of the catalogs with its values put in, and this module goes
back from a sentence to those messages.

A message's id is its English text, the key the catalogs hold it under in
every language (gettext's msgid). Where it is written: the knowledge base's
record (``rules.toml rule own-gpu-fits``, from
:meth:`expert.knowledge.records.KnowledgeBase.keyed_messages`) or the
package's file and line (``expert/explanation/wording.py:120``, read by the
extraction ``scripts/update_catalogs.py`` runs, with the same settings:
KEYWORDS, METHODS, OPTIONS). :func:`sources` lists the messages a text holds;
:func:`unwritten` the words of a text no message wrote, its values aside
(numbers, cards' and models' names ...): nothing, for every sentence an
answer writes (tests/test_sentence_sources.py). ``scripts/message_source.py``
is the lookup for a person.

Matching is plain substring search, no regular expression: a message is
found where its words (the text between its placeholders) stand in the text
in order, each piece's next place remembered, so that a message costs a
pass over the text per piece whatever the text holds. At most MAX_TEXT
characters are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..knowledge import KnowledgeBase
from ..paths import LOCALES, PACKAGE

# What scripts/update_catalogs.py extracts from the package, and how: the
# functions that take a message (gettext's, and the error helpers that take a
# template as their 3rd or 2nd argument), the files and their extractors.
KEYWORDS: dict[str, Any] = {"error": None, "add": (3,), "bad": (2,)}
METHODS = [("**.py", "python"), ("**/templates/**.j2", "jinja2")]
OPTIONS = {"**/templates/**.j2": {"extensions": "jinja2.ext.i18n", "trim_blocks": "true"}}
MAX_TEXT = 100_000
# A placeholder: %(name)s, %(name).1f, %s, %d, %%.
PLACEHOLDER = re.compile(r"%(?:\(\w+\))?[-#0+]*\d*(?:\.\d+)?[sdfir%]")
# What stands around a word and is not one.
PUNCTUATION = ".,;:!?¿¡()[]{}«»“”\"'‘’*_|`—–-…/\\<>=#"
# A piece of a message that says something: two letters in a row (", " or " (" alone could stand anywhere).
WORDS = re.compile(r"[^\W\d_]{2}")


@dataclass(frozen=True)
class Message:
    """One message as a language writes it."""

    id: str                      # the English text: the catalogs' key (msgid)
    text: str                    # as the language writes it
    where: tuple[str, ...]       # the knowledge base's records, or the package's files and lines

    def pieces(self) -> list[str]:
        """The text between its placeholders, white space folded; empty ones left out."""
        return [folded for piece in PLACEHOLDER.split(self.text) if (folded := fold(piece))]


@dataclass(frozen=True)
class Found:
    """A message found in a text: where each of its pieces stands."""

    message: Message
    spans: tuple[tuple[int, int], ...]


def fold(text: str) -> str:
    """White space folded to single spaces (a terminal's text is wrapped), ends kept."""
    folded = " ".join(text.split())
    return (" " if text[:1].isspace() and folded else "") + folded + (" " if text[-1:].isspace() and folded else "")


@cache
def written_in_code() -> dict[str, list[str]]:
    """Each message of the package's code and templates, with its files and lines."""
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir

    found: dict[str, list[str]] = {}
    for filename, lineno, message, _, _ in extract_from_dir(
            PACKAGE, METHODS, keywords={**DEFAULT_KEYWORDS, **KEYWORDS}, options_map=OPTIONS):
        for msgid in (message if isinstance(message, tuple) else (message,)):
            if msgid:
                found.setdefault(msgid, []).append(f"expert/{filename}:{lineno}")
    return found


def catalog(kb: KnowledgeBase, lang: str) -> list[Message]:
    """Every message a sentence in ``lang`` may come from: the compiled
    catalog's (which holds the code's, the templates' and the knowledge
    base's), each with where it is written."""
    return list(_make(kb, lang))


@cache
def _translations(lang: str) -> dict[str, tuple[str, ...]]:
    """msgid -> its forms in ``lang`` (a plural's every form, each plural
    msgid an id too), from ``lang``'s compiled catalog; English from the
    Spanish one's keys (a catalog holds every message: the tests refuse one
    that does not)."""
    from babel.messages.mofile import read_mo

    with (LOCALES / ("es" if lang == "en" else lang) / "LC_MESSAGES" / "messages.mo").open("rb") as handle:
        read = read_mo(handle)
    found: dict[str, tuple[str, ...]] = {}
    for message in read:
        ids = tuple(str(i) for i in (message.id if isinstance(message.id, (tuple, list)) else (message.id,)))
        strings = message.string if isinstance(message.string, (tuple, list)) else (message.string,)
        for msgid in ids if ids[0] else ():
            found[msgid] = ids if lang == "en" else tuple(str(s) for s in strings)
    return found


# A run of letters: the words a message is known by.
LETTERS = re.compile(r"[^\W\d_]+")
_TOKEN = re.compile(r"\S+")
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class _Searched:
    """A message as it is searched for: its pieces (and again with a capital
    where it starts a sentence), and ``key``, a whole word of it, lower case,
    that a text holding it holds too ("" where it has none: always searched)."""

    message: Message
    variants: tuple[tuple[str, ...], ...]
    key: str


@dataclass(frozen=True)
class _Catalog:
    """A language's messages as they are searched for, in the catalogs' order,
    with the positions of those that hold each key word (``by_key``) and of
    those that have none (``keyless``): a text is searched for the messages
    whose key it holds, not every message's key checked against it."""

    searched: tuple[_Searched, ...]
    by_key: dict[str, tuple[int, ...]]
    keyless: tuple[int, ...]

    def holding(self, words: set[str]) -> list[_Searched]:
        """The messages a text of ``words`` may hold, in the catalogs' order."""
        at = [*self.keyless, *(index for word in words for index in self.by_key.get(word, ()))]
        return [self.searched[index] for index in sorted(at)]


# The catalogs made, by knowledge base (the object, kept so that its id is
# not reused) and language: each message as it is searched for.
_MADE: dict[tuple[int, str], tuple[KnowledgeBase, _Catalog]] = {}


def _searched(kb: KnowledgeBase, lang: str) -> _Catalog:
    made = _MADE.get((id(kb), lang))
    if made is None or made[0] is not kb:
        searched = tuple(found for message in _make(kb, lang) if (found := _searching(message)) is not None)
        by_key: dict[str, list[int]] = {}
        for index, item in enumerate(searched):
            if item.key:
                by_key.setdefault(item.key, []).append(index)
        catalog = _Catalog(searched, {key: tuple(at) for key, at in by_key.items()},
                           tuple(index for index, item in enumerate(searched) if not item.key))
        made = _MADE[(id(kb), lang)] = (kb, catalog)
    return made[1]


def _searching(message: Message) -> _Searched | None:
    """``message`` as it is searched for; None for one whose pieces say
    nothing (no two letters in a row). Its key is its longest word that no
    placeholder touches (a value may be glued to a word beside it)."""
    pieces = tuple(message.pieces())
    if not any(WORDS.search(piece) for piece in pieces):
        return None
    variants: tuple[tuple[str, ...], ...] = (pieces,)
    if message.text[:1].islower() and pieces[0][:1] == message.text[:1]:
        variants += ((pieces[0][:1].upper() + pieces[0][1:], *pieces[1:]),)
    words = [word.group().lower() for index, piece in enumerate(pieces) for word in LETTERS.finditer(piece)
             if (word.start() > 0 or (index == 0 and message.text.startswith(piece.lstrip())))
             and (word.end() < len(piece) or (index == len(pieces) - 1 and message.text.endswith(piece.rstrip())))]
    return _Searched(message, variants, max(words, key=len, default=""))


def _make(kb: KnowledgeBase, lang: str) -> tuple[Message, ...]:
    records: dict[str, list[str]] = {}
    for where, message in kb.keyed_messages():
        records.setdefault(message, []).append(where)
    code = written_in_code()
    return tuple(Message(msgid, text, tuple(records.get(msgid, []) + code.get(msgid, [])))
                 for msgid, forms in _translations(lang).items() for text in dict.fromkeys(forms))


def sources(text: str, kb: KnowledgeBase, lang: str) -> list[Found]:
    """The messages ``text`` holds (one sentence or paragraph, its white space
    folded), each wherever it stands, in the order they start, the longest
    first; a message whose pieces say nothing (no two letters in a row) is
    left out. A message may start with a capital where the text starts a
    sentence with it ("your GPU": "Your GPU")."""
    text = fold(text[:MAX_TEXT])
    words = {word.lower() for word in LETTERS.findall(text)}
    found = []
    for searched in _searched(kb, lang).holding(words):
        for pieces in searched.variants:
            if pieces[0] in text:       # (most candidates' first piece is not there at all)
                found += [Found(searched.message, spans) for spans in _occurrences(text, pieces)]
    return sorted(found, key=lambda f: (f.spans[0][0], -(f.spans[-1][1] - f.spans[0][0])))


def outermost(found: list[Found]) -> list[Found]:
    """Of ``found`` (as :func:`sources` orders it), the messages no other
    holds: where a sentence is written, without the words inside it."""
    kept: list[Found] = []
    for item in found:
        start, end = item.spans[0][0], item.spans[-1][1]
        if not any(k.spans[0][0] <= start and end <= k.spans[-1][1] for k in kept):
            kept.append(item)
    return kept


def _occurrences(text: str, pieces: tuple[str, ...]) -> list[tuple[tuple[int, int], ...]]:
    """Every place ``pieces`` stand in ``text`` in order: the first piece at
    each of its places, each other at its first place after the one before.
    A piece's place found is kept while it stays after where the search for
    it starts (which never goes back), so each piece is searched for in one
    pass over the text."""
    places = [-1] * len(pieces)          # each piece's last place found, -1 for none yet
    found: list[tuple[tuple[int, int], ...]] = []
    start = 0
    while True:
        spans = []
        at = start
        for index, piece in enumerate(pieces):
            if places[index] < at:
                places[index] = text.find(piece, at)
            if places[index] < 0:
                return found
            spans.append((places[index], places[index] + len(piece)))
            at = places[index] + len(piece)
        found.append(tuple(spans))
        start = spans[0][0] + 1


def unwritten(text: str, kb: KnowledgeBase, lang: str, values: frozenset[str] = frozenset()) -> list[str]:
    """The words of ``text`` (one sentence or paragraph) that no message
    wrote: what is left once the values put into messages are set aside (a
    word with a digit, the names of the knowledge base's cards, models,
    price lists, frameworks, rules and guide sections, the words babel
    writes for units and lists, and ``values``) and every message's pieces
    taken out."""
    folded = fold(text[:MAX_TEXT])
    spans: list[tuple[int, int]] = []       # the stretches written: set aside or a message's piece
    names = _names(kb) | _formatting(lang) | values
    for token in _TOKEN.finditer(folded):
        word = token.group().strip(PUNCTUATION)
        if word in names or _DIGIT.search(word) or not WORDS.search(word):
            spans.append(token.span())
    for found in sources(folded, kb, lang):
        spans += found.spans
    # The text with every stretch written made blank: what is between them kept, stretch by stretch.
    left, kept_to = [], 0
    for start, end in sorted(spans):
        if end > kept_to:
            left += [folded[kept_to:start] if start > kept_to else "", " " * (end - max(start, kept_to))]
            kept_to = end
    left.append(folded[kept_to:])
    words = (word.strip(PUNCTUATION) for word in "".join(left).split())
    return [word for word in words if WORDS.search(word)]


# The names' words, by knowledge base (kept, so that its id is not reused): made once, not once a paragraph.
_NAMES: dict[int, tuple[KnowledgeBase, frozenset[str]]] = {}


def _names(kb: KnowledgeBase) -> frozenset[str]:
    """The words of the names the answers put into messages: cards' (catalog,
    owned), models', price lists', recipes' frameworks, rules' ids and the
    guide's headings (cited as they stand)."""
    made = _NAMES.get(id(kb))
    if made is None or made[0] is not kb:
        made = _NAMES[id(kb)] = (kb, _names_of(kb))
    return made[1]


def _names_of(kb: KnowledgeBase) -> frozenset[str]:
    names = [card.name for card in kb.catalog] + [card.name for card in kb.owned]
    names += [model.name for model in kb.models] + [basis.name for basis in kb.prices]
    names += [str(recipe.get("framework", "")) for recipe in kb.recipes.get("recipe", {}).values()]
    names += [rule.id for rule in kb.rules] + [section.heading for section in kb.sections.values()]
    return frozenset(word.strip(PUNCTUATION) for name in names for word in name.split())


@cache
def _formatting(lang: str) -> frozenset[str]:
    """The words babel writes in ``lang`` around numbers and lists: units
    ("hr", "min", "US$") and the lists' "and" and "or"."""
    from ..i18n import Localizer

    tr = Localizer(lang)
    written = [tr.hours(0.5), tr.hours(2), tr.money(15), tr.gib(24), tr.list(["1", "2"]), tr.list(["1", "2"], "or"),
               tr.list(["1", "2", "3"]), tr.list(["1", "2", "3"], "or")]
    return frozenset(word.strip(PUNCTUATION) for text in written for word in text.split()) | frozenset(
        word.replace("$", "\\$") for text in written for word in text.split() if "$" in word)

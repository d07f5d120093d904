"""Every sentence a person reads is written by messages, and each message
says where it is written (issue 46, item 3): the command line's text and
markdown, the JSON texts and the page of a few answers, in both languages,
leave no word that no message wrote, values aside
(expert.explanation.sources, docs/explanations.md "Where a sentence is
written")."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from expert import advise, explain
from expert.explanation import sources
from expert.knowledge.bases import knowledge_base

ROOT = Path(__file__).resolve().parent.parent
PROFILES: list[dict[str, Any]] = [
    dict(model_size_b=70, method="lora", deadline_h=8),                          # several cards, WHY NOT
    dict(model="Llama-3.1-8B", method="full", vram_gb="RTX 3090"),                # an own card, torchtune
    dict(model_size_b=7, method="qlora", budget="low", purpose="production", interruptible=True),
]
# JSON strings that are data, not sentences: a price's citation and a rule's condition as written in rules.toml.
DATA_KEYS = {"price_source", "condition"}
WIDE = 100_000      # rendered without wrapping: a wrapped line holds part of a message


@pytest.fixture(scope="module")
def kb() -> Any:
    return knowledge_base()


def strings(value: Any, key: str = "") -> list[str]:
    """The sentences of a JSON value: its strings of three words or more, data aside."""
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in DATA_KEYS for s in strings(v, k)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v, key)]
    return [value] if isinstance(value, str) and len(value.split()) >= 3 else []


@pytest.mark.parametrize("lang", ["en", "es"])
def test_every_sentence_of_an_answer_is_written_by_messages(lang: str, kb: Any) -> None:
    checked, found = 0, set()
    for profile in PROFILES:
        for answer in (advise(**profile, lang=lang), explain(**profile, what_if={"method": "full"}, lang=lang)):
            shown = [answer.render(fmt, width=WIDE) for fmt in ("text", "markdown")]
            if not hasattr(answer, "result"):       # an answer (not an explanation) also has its --verbose form
                shown += [answer.render(fmt, width=WIDE, verbose=True) for fmt in ("text", "markdown")]
            paragraphs = [line for text in shown for line in text.split("\n")]
            for paragraph in paragraphs + strings(answer.to_dict()):
                # the same paragraph (in text and markdown, in the answer and its explanation: about 8,300
                # paragraphs, 1,700 different) gives the same words: looked up once
                if paragraph not in found:
                    assert sources.unwritten(paragraph, kb, lang) == [], paragraph
                    found.add(paragraph)
                checked += 1
    assert checked > 600 and len(found) > 600


class Blocks(HTMLParser):
    """The page's text, a paragraph per block element, and the attributes people read."""

    BLOCK = {"p", "li", "h1", "h2", "h3", "h4", "td", "th", "div", "label", "option", "button", "summary",
             "figcaption", "dt", "dd", "title", "legend", "caption", "section", "tr", "br", "text", "tspan"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        self.words: list[str] = []
        self.hidden = 0

    def flush(self) -> None:
        if text := " ".join("".join(self.words).split()):
            self.paragraphs.append(text)
        self.words = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hidden += tag in ("script", "style")
        if tag in self.BLOCK:
            self.flush()
        self.paragraphs += [v for k, v in attrs if k in ("title", "aria-label", "alt", "placeholder") and v]

    def handle_endtag(self, tag: str) -> None:
        self.hidden -= tag in ("script", "style")
        if tag in self.BLOCK:
            self.flush()

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.words.append(data)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_every_sentence_of_the_page_is_written_by_messages(lang: str, kb: Any) -> None:
    from starlette.testclient import TestClient

    from expert.application import BASES
    from expert.interfaces.web import create_app
    from expert.knowledge.bases import shipped_catalogs

    page = TestClient(create_app(), base_url="http://127.0.0.1:8000").get(
        "/", params={"model-size": "70", "method": "lora", "deadline": "8", "lang": lang})
    blocks = Blocks()
    blocks.feed(page.text)
    blocks.flush()
    # values a person types or picks, shown as they are typed: the bases, the catalogs' names, each language
    # under its own name, the JSON API's paths
    values = frozenset({*BASES, *shipped_catalogs(), "English", "Español", "api/advise", "api/explain"})
    assert len(blocks.paragraphs) > 100
    for paragraph in blocks.paragraphs:
        assert sources.unwritten(paragraph, kb, lang, values) == [], paragraph


def test_a_word_no_message_wrote_is_found(kb: Any) -> None:
    rule = next(rule for rule in kb.rules if rule.id == "do-not-buy-consumer-for-30b")
    sentence = rule.message % {"profile_model_size_b": "70B"}
    assert sources.unwritten(sentence, kb, "en") == []
    # a word changed: the sentence is no longer that message, and its words are no message's
    changed = sources.unwritten(sentence.replace("consumer card", "frobnicator card"), kb, "en")
    assert "frobnicator" in changed and "consumer" not in changed
    assert sources.unwritten(sentence + " Ask the frobnicator.", kb, "en") == ["Ask", "the", "frobnicator"]


def test_each_message_says_where_it_is_written(kb: Any) -> None:
    rule = next(rule for rule in kb.rules if rule.id == "do-not-buy-consumer-for-30b")
    for lang in ("en", "es"):
        from expert.i18n import Localizer

        sentence = Localizer(lang).gettext(rule.message) % {"profile_model_size_b": "70B"}
        found = sources.outermost(sources.sources(sentence, kb, lang))
        assert [(f.message.id, f.message.where) for f in found] == [(rule.message, (f"rules.toml rule {rule.id}",))]
    catalog = sources.catalog(kb, "en")
    assert len(catalog) >= len(kb.messages()) and all(message.where for message in catalog)
    records = dict((where, message) for where, message in kb.keyed_messages())
    for message in catalog:
        for where in message.where:
            if where.startswith("expert/"):       # a file and the line its call starts on: the message follows
                path, line = where.rsplit(":", 1)
                lines = (ROOT / path).read_text(encoding="utf-8").split("\n")[int(line) - 1:int(line) + 6]
                first = re.split(r"[%{\\\"]", message.id)[0][:20]
                assert first in " ".join(lines) or not first.strip(), (where, message.id)
            else:
                assert records[where] == message.id


def test_the_lookup_names_the_rule_and_the_words_no_message_wrote(capsys: Any) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("message_source", ROOT / "scripts" / "message_source.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    assert module.main(["--lang", "es", "No compres una tarjeta de consumo de 24 GB para un modelo de 70B: "
                                        "necesita más VRAM o varias GPU. Lo dijo el frobnicador."]) == 0
    out = capsys.readouterr().out
    assert "rules.toml rule do-not-buy-consumer-for-30b" in out
    assert out.rstrip().endswith("written by no message: Lo, dijo, el, frobnicador")


def test_a_message_is_searched_for_in_one_pass_over_the_text_per_piece() -> None:
    """The work, counted: the characters str.find scans, whatever the text repeats (a piece's next place is
    kept while it stays ahead), not once per place of the first piece."""
    class Counted(str):
        scanned = 0

        def find(self, piece: str, start: Any = None, *rest: Any) -> int:  # type: ignore[override]
            at = str.find(self, piece, start, *rest)
            Counted.scanned += (len(self) if at < 0 else at + len(piece)) - (start or 0)
            return at

    for size in (2_000, 4_000, 8_000):
        Counted.scanned = 0
        text = Counted("your GPU " * (size // 9) + "(24 GB)")
        found = sources._occurrences(text, ("your GPU", "(", "GB)"))
        assert len(found) == size // 9        # every "your GPU", each with the one "(24 GB)" at the end
        assert Counted.scanned <= 3 * (len(text) + 3 * len("your GPU")), (size, Counted.scanned)

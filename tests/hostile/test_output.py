"""Output is safe for where it goes, whatever a user catalog names its cards.

The catalog loader may refuse some of these names; the output must be safe
even for a name that got through. So the cards here are put into the
knowledge base directly, past the loader: a card of the guide's shape whose
name (and catalog file name) is hostile.

- markdown: the name cannot add a heading, a list item, a quote, emphasis, a
  code span, a link, an image, HTML, an entity, an autolink or an @mention;
  the output has the same lines, of the same kinds, as with a harmless name;
- text: no escape sequence (not even its printable tail), no control
  character but the newline, no format character (bidi overrides);
- JSON: parses back; no control or format character is written raw.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from expert import application as explanation_module
from expert.interfaces.api import consult, knowledge_base
from expert.escape import json_text, markdown, one_line, quoted, terminal
from expert.i18n import Localizer
from expert.knowledge import PROFILE_FIELDS, KnowledgeBase
from expert.explanation.render import render_estimate

FORGED = "Card\n\n**Recommendation:** Buy from http://evil.example\n### Injected"
NAMES = {
    "forged-recommendation": FORGED,
    "script": "<script>alert(1)</script>",
    "link": "[x](javascript:alert(1))",
    "image": "![](http://evil.example/p.png)",
    "mention": "@everyone and @here",
    "bidi": "Card\u202eevil\u2066x\u2069\u200b\u200f\ufeff",
    "csi": "\x1b[2JCard\x1b[31m",
    "osc-title": "\x1b]0;title\x07Card",
    "osc-hyperlink": "\x1b]8;;http://evil.example\x1b\\Card\x1b]8;;\x1b\\",
    "c1": "\x9b2J\x9d0;title\x9cCard\x85more",
    "markdown-soup": "- `code` *em* _em_ ~~s~~ > q | t | &#x202E; <http://x> www.evil.example $x$",
    "heading-start": "# Heading",
    "list-start": "1. Item",
    "setext": "===",
}
ORIGIN = "evil\x1b[2J\u202e](http://evil.example).toml"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    """The guide's cards recommended for PROFILE and two of a user catalog: an NVIDIA 80 GB card
    (recommended) and an AMD one (ruled out)."""
    path = tmp_path_factory.mktemp("catalog") / "harmless.toml"
    path.write_text("".join(
        f'[[gpu]]\nid = "{gpu}"\nname = "Harmless"\nvendor = "{vendor}"\nvram_gb = 80\ncost = "medium"\n'
        f'interconnect = "{link}"\nbf16_tflops = 312\nmemory_bandwidth_gbs = 2039\nprice_on_demand = 1.0\n\n' for gpu, vendor, link in (("x", "nvidia", "nvlink"), ("y", "amd", "infinity-fabric"))),
        encoding="utf-8")
    everything = knowledge_base(None, ["guide", path])
    # The guide's cards this profile rules out for the guide's own reasons never
    # show the name, and each would cost every explanation a WHY NOT search:
    # left out, so that y is the card ruled out.
    ruled_out = {r.gpu for r in result(everything).rejected} - {"x", "y"}
    return replace(everything, catalog=tuple(card for card in everything.catalog if card.id not in ruled_out))


_NAMED: dict[tuple[int, str, str], tuple[KnowledgeBase, KnowledgeBase]] = {}


def named(kb: KnowledgeBase, name: str, origin: str = ORIGIN) -> KnowledgeBase:
    """``kb`` with the user cards named ``name`` and coming from a file named
    ``origin`` (past the loader): the same object for the same name, so that
    its languages and questions share the engine's runs (see below)."""
    key = (id(kb), name, origin)
    if key not in _NAMED:
        _NAMED[key] = (kb, replace(kb, catalog=tuple(replace(card, name=name, origin=origin)
                                                     if card.id in ("x", "y") else card for card in kb.catalog)))
    return _NAMED[key][1]


PROFILE = dict(model_size_b=7, method="lora")


def result(kb: KnowledgeBase, lang: str = "en", **profile: Any):  # type: ignore[no-untyped-def]
    given = {name: {**PROFILE, **profile}.get(name) for name in PROFILE_FIELDS}
    return consult(kb, given, Localizer(lang))[1]


def explained(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, lang: str = "en", **options: Any):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(explanation_module, "knowledge_base", lambda *args, **kwargs: kb)
    return explanation_module.explain(lang=lang, **PROFILE, **options)


# What a harmless name gives, the reference each hostile output is compared
# with: made once per language and question, not once per test.
_HARMLESS: dict[str, Any] = {}


def harmless_result(base: KnowledgeBase, lang: str) -> Any:
    key = f"result {lang}"
    if key not in _HARMLESS:
        _HARMLESS[key] = result(named(base, "Harmless", "harmless.toml"), lang)
    return _HARMLESS[key]


def harmless_markdown(base: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, lang: str = "en", **options: Any) -> str:
    key = repr((lang, sorted(options.items()), explanation_module.MAX_CONSULTATIONS))
    if key not in _HARMLESS:
        _HARMLESS[key] = explained(named(base, "Harmless", "harmless.toml"), monkeypatch, lang, **options).render(
            "markdown")
    return _HARMLESS[key]


def unsafe_characters(text: str) -> list[str]:
    """Control characters (but the newline) and format characters: escape sequences, bidi overrides.
    A line str.isprintable() passes has none (it is false for every Cc, Cf, Cs, Zl and Zp character):
    only the other lines are looked at character by character."""
    return sorted({f"U+{ord(ch):04X}" for line in text.split("\n") if not line.isprintable() for ch in line
                   if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")})


def assert_terminal_safe(text: str) -> None:
    assert unsafe_characters(text) == []
    # Nothing is left of a sequence: not its printable tail either.
    for tail in ("[2J", "[31m", "0;title", "8;;http"):
        assert tail not in text


_BLOCK = re.compile(r"^(#+ |\s*[-*+] |\s*\d+[.)] |>|\*\*|_|\||=+\s*$|-+\s*$|\s{4})")


def skeleton(text: str) -> list[str]:
    """The kind of every line of a markdown text: what the name must not change."""
    return [(m.group(1) if (m := _BLOCK.match(line)) else "") for line in text.splitlines()]


def assert_markdown_safe(text: str, harmless: str) -> None:
    assert_terminal_safe(text)
    assert skeleton(text) == skeleton(harmless)
    assert [line for line in text.splitlines() if line.startswith("#")] == \
        [line for line in harmless.splitlines() if line.startswith("#")]
    assert text.count("**Recommendation:**") == harmless.count("**Recommendation:**")
    # The "Time and cost" table is the only markup with pipes: its rows keep
    # their cells, whatever the name brought.
    def cells(markdown: str) -> list[int]:
        return [len(re.findall(r"(?<!\\)\|", line)) for line in markdown.splitlines() if line.startswith("|")]

    assert cells(text) == cells(harmless) and all(n in (5, 6, 7, 8) for n in cells(text))
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("|"))
    # Nothing of the name is markup: every markdown character it brought is escaped.
    for pattern in (r"(?<!\\)<", r"(?<!\\)[\[\]]", r"(?<!\\)@", r"(?<!\\)://", r"(?<!\\)~", r"(?<!\\)\$",
                    r"(?<!\\)\|", r"(?<!\\)&#", r"(?<![\\w])www\.", r"\*\*Recommendation:\*\* Buy"):
        assert not re.search(pattern, prose if "|" in pattern else text), (pattern, re.search(pattern, text))
    assert "<script" not in text.replace("\\<script", "")
    assert "](" not in text.replace("\\](", "")
    assert "![" not in text
    assert "### Injected" not in text


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", sorted(NAMES))
def test_advise_markdown_escapes_a_hostile_card_name(base: KnowledgeBase, case: str, lang: str) -> None:
    hostile = result(named(base, NAMES[case]), lang)
    harmless = harmless_result(base, lang)
    assert any(r.gpu == "x" for r in hostile.recommendations) and any(r.gpu == "y" for r in hostile.rejected)
    for verbose in (False, True):     # the one-screen answer (its options a table) and the full one
        assert_markdown_safe(hostile.render("markdown", verbose=verbose), harmless.render("markdown", verbose=verbose))


@pytest.mark.parametrize("case", sorted(NAMES))
def test_advise_text_strips_escape_sequences_and_bidi_characters(base: KnowledgeBase, case: str) -> None:
    text = result(named(base, NAMES[case])).render("text", width=80)
    assert_terminal_safe(text)
    assert "\u202e" not in text and "\x1b" not in text and "\x07" not in text


@pytest.mark.parametrize("case", sorted(NAMES))
def test_advise_json_keeps_the_data_parseable_and_writes_no_raw_control_character(base: KnowledgeBase,
                                                                                  case: str) -> None:
    hostile = result(named(base, NAMES[case]))
    rendered = hostile.render("json")
    assert unsafe_characters(rendered) == []
    data = json.loads(rendered)
    card = next(r for r in data["recommendations"] if r["gpu"] == "x")
    # Names are display text: the JSON carries them as every other format shows them.
    assert card["name"] == f"{one_line(NAMES[case])} ({one_line(ORIGIN).removesuffix('.toml')})"
    assert card["source"] == one_line(ORIGIN)
    assert unsafe_characters(card["name"] + card["text"]) == []


def test_the_forged_recommendation_stays_inside_its_line(base: KnowledgeBase) -> None:
    brief = result(named(base, FORGED)).render("markdown")
    # In the one-screen answer, a cell of the options' table (cut short), every markdown character escaped.
    row = next(line for line in brief.splitlines() if line.startswith("| ") and "Card" in line)
    assert re.match(r"\| [2-9] \| 1 × Card \\\*\\\*Recommendation:\\\*\\\* Buy from ", row), row
    assert brief.splitlines()[0].startswith("**Recommendation:** 1 × RTX 4090")
    out = result(named(base, FORGED)).render("markdown", verbose=True)
    line = next(line for line in out.splitlines() if "evil.example" in line)
    # Its own numbered line of the alternatives, every markdown character escaped.
    assert re.match(r"[2-9]\. 1 × Card \\\*\\\*Recommendation:\\\*\\\* Buy from http\\://evil\.example \\#\\#\\# Injected",
                    line), line
    assert out.splitlines()[0].startswith("**Recommendation:** 1 × RTX 4090")


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", ["forged-recommendation", "script", "link", "image", "mention", "bidi", "osc-title",
                                  "markdown-soup", "heading-start"])
def test_explain_is_safe_in_every_format(base: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, case: str,
                                         lang: str) -> None:
    options = dict(what_if={"method": "qlora", "budget": "low"})
    hostile = explained(named(base, NAMES[case]), monkeypatch, lang, **options)
    harmless = harmless_markdown(base, monkeypatch, lang, **options)
    assert {w.gpu for w in hostile.why_not} >= {"y"}
    assert_markdown_safe(hostile.render("markdown"), harmless)
    assert_terminal_safe(hostile.render("text", width=80))
    rendered = hostile.render("json")
    assert unsafe_characters(rendered) == []
    json.loads(rendered)


@pytest.mark.parametrize("gpu", ["x", "y"])
@pytest.mark.parametrize("case", ["forged-recommendation", "script", "csi", "bidi", "markdown-soup"])
def test_why_not_a_hostile_card_is_safe(base: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, case: str,
                                        gpu: str) -> None:
    if gpu == "x":
        # x ranks lower, and no change makes it the answer: its search runs every
        # consultation an explanation may (12, each ~0.15 s of CPU) and then says
        # so, in words that name no card. One consultation makes the same lines
        # of the same kinds, the name in the same places; that the whole search
        # finds nothing either is checked, once, on the harmless name.
        assert x_has_no_change(base, monkeypatch)
        monkeypatch.setattr(explanation_module, "MAX_CONSULTATIONS", 1)
    hostile = explained(named(base, NAMES[case]), monkeypatch, why_not=gpu)
    harmless = harmless_markdown(base, monkeypatch, why_not=gpu)
    assert_markdown_safe(hostile.render("markdown"), harmless)
    assert_terminal_safe(hostile.render("text", width=80))
    assert unsafe_characters(hostile.render("json")) == []


def x_has_no_change(base: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> bool:
    """x, ranked lower, gets no change from the whole WHY NOT search (every consultation an explanation may run)."""
    if "x searched" not in _HARMLESS:
        (why,) = explained(named(base, "Harmless", "harmless.toml"), monkeypatch, why_not="x").why_not
        _HARMLESS["x searched"] = (why.status, why.change)
    return _HARMLESS["x searched"] == ("ranked-lower", None)


@pytest.mark.parametrize("case", ["osc-title", "csi", "bidi", "c1", "forged-recommendation"])
def test_the_estimate_names_cards_safely(base: KnowledgeBase, case: str) -> None:
    from expert.inference import estimate as estimator

    kb = named(base, NAMES[case])
    tr = Localizer("en")
    from expert.inference.estimate_input import from_input

    figures = estimator.estimate(kb, from_input(kb, tr, model_size_b="7", method="lora")[0])
    text = render_estimate(kb, figures, "text", "en", 80)
    assert "Cards of the catalog with enough memory per GPU" in text
    assert_terminal_safe(text)
    assert unsafe_characters(render_estimate(kb, figures, "json", "en", 80)) == []


# --- the escaping layer itself ---------------------------------------------


@pytest.mark.parametrize("sequence", ["\x1b[2J", "\x1b[38;5;196m", "\x1b]0;title\x07", "\x1b]0;title\x1b\\",
                                      "\x1b]8;;http://evil.example\x1b\\", "\x9b2J", "\x9d0;t\x9c", "\x1bPq#0\x1b\\",
                                      "\x1b7", "\x1b(B", "\x07", "\x08", "\x7f", "\x00"])
def test_terminal_keeps_nothing_of_an_escape_sequence(sequence: str) -> None:
    assert terminal(f"a{sequence}b") == "ab"


def test_terminal_drops_format_characters_and_turns_line_breaks_into_spaces() -> None:
    assert terminal("a\u202eb\u2066c\u2069d\u200be\ufeff\u00adf") == "abcdef"
    assert terminal("a\nb\r\nc\td\u2028e\x85f") == "a b  c d e f"
    assert terminal("a\nb\r\nc", newlines=True) == "a\nb\nc"
    assert terminal("\ud800") == "\ufffd"
    assert terminal("Núñez — 80 GB ×2 ⚠️") == "Núñez — 80 GB ×2 ⚠️"    # letters, symbols and emoji stay


def test_an_unterminated_string_sequence_loses_only_its_introducer() -> None:
    assert terminal("lang: '\x1b]0;x' is not supported") == "lang: '0;x' is not supported"


@pytest.mark.parametrize("text, escaped", [
    ("# Heading", "\\# Heading"),
    ("- item", "\\- item"),
    ("+ item", "\\+ item"),
    ("1. item", "1\\. item"),
    ("2) item", "2\\) item"),
    ("> quote", "\\> quote"),
    ("---", "\\---"),
    ("===", "\\==="),
    ("**bold** *em* _em_ ~~s~~", "\\*\\*bold\\*\\* \\*em\\* \\_em\\_ \\~\\~s\\~\\~"),
    ("`code`", "\\`code\\`"),
    ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),
    ("![](http://evil.example/p.png)", "!\\[\\](http\\://evil.example/p.png)"),
    ("<script>", "\\<script\\>"),
    ("<http://evil.example>", "\\<http\\://evil.example\\>"),
    ("www.evil.example", "www\\.evil.example"),
    ("@everyone", "\\@everyone"),
    ("a | b", "a \\| b"),
    ("&#x202E; &amp; Weights & Biases", "\\&\\#x202E; \\&amp; Weights & Biases"),
    ("$x$", "\\$x\\$"),
    ("a\\b", "a\\\\b"),
    ("line\n# two", "line \\# two"),
    ("rocm_ok and 2.6 hr", "rocm_ok and 2.6 hr"),
])
def test_markdown_escapes_what_could_become_markup(text: str, escaped: str) -> None:
    assert markdown(text) == escaped


def test_quoted_is_one_safe_short_line() -> None:
    # what was removed is marked, one U+FFFD a sequence or character: never "'RTX 3090' is not a GPU we know"
    assert quoted("\x1b[2J\x1b]0;x\x07abc\u202e") == "\ufffd\ufffdabc\ufffd"
    assert quoted("RTX\x1b]0;pwn\x07 3090\tx\n") == "RTX\ufffd 3090 x"
    assert quoted("a" * 100) == "a" * 39 + "…"
    assert quoted(3) == "3"


def test_json_text_escapes_what_a_terminal_would_act_on_and_keeps_the_data() -> None:
    data = {"name": "a\x1b[2J\x07\x7f\x9b\u202e\u2028\U000e0041 ñ ×", "n": 1}
    text = json_text(data)
    assert unsafe_characters(text) == []
    assert "ñ ×" in text
    assert json.loads(text) == data


def test_the_shipped_outputs_have_no_unsafe_character() -> None:
    golden = Path(__file__).resolve().parent.parent / "golden"
    for path in sorted(golden.iterdir()):
        assert unsafe_characters(path.read_text(encoding="utf-8")) == [], path.name

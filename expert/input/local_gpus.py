"""``--own-gpu auto``: the cards of this machine, read from ``nvidia-smi``
(NVIDIA) or ``rocm-smi`` (AMD) when one is on PATH, matched to the cards the
knowledge base knows, and given as the answer a person would type
(``"2x <card id>"``), which the one reader of the own-GPU field then reads.

What a tool prints is untrusted: it runs with a timeout, at most
:data:`MAX_OUTPUT` bytes of it are read (the tool is stopped past that), and
it is parsed line by line with anchored patterns (NVIDIA) or as JSON
(AMD). Anything else is an :class:`~expert.errors.InputError` naming the
field (``vram_gb``) in the person's language; no tool at all, or no card
in what it printed, says so and how to name the card instead.

Only the command line reads the machine: a server (the page, MCP over HTTP)
would read its own cards, not its visitor's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..escape import one_line, quoted
from ..i18n import Localizer
from ..knowledge import KnowledgeBase, find_cards
from ..knowledge.source import N_

# How long a tool may take, and how much of what it prints is read: nvidia-smi answers in well under a
# second and prints one line of under 80 bytes a card.
TIMEOUT_S = 10.0
MAX_OUTPUT = 64 * 1024
MAX_CARDS = 64
# The documented queries: nvidia-smi's --query-gpu fields (`nvidia-smi --help-query-gpu`: name, and
# memory.total "Total installed GPU memory", printed as "24564 MiB"); rocm-smi's product name and VRAM
# as JSON (ROCm's rocm_smi.py: "Card series" and "VRAM Total Memory (B)" per card).
NVIDIA = ("nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader")
AMD = ("rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json")
_NVIDIA_LINE = re.compile(r"^\s*(?P<name>[^,\x00-\x1f]{1,100}?)\s*,\s*(?P<mib>\d{1,9})\s*MiB\s*$")
# A card's memory as a tool reports it is a little under the memory it is sold with (a 24 GB data-centre
# card reports 22.5 GiB, an 80 GB one 79.6 GiB): a card of the knowledge base is that card if its memory
# is within this share of what was reported.
_MEMORY_SLACK = 0.12


@dataclass(frozen=True)
class LocalCard:
    """One card a tool reported: its name as printed, its memory in GiB and the
    knowledge base's card it is (an id), or None when none is."""

    name: str
    gib: float
    card: str | None


@dataclass(frozen=True)
class LocalCards:
    """What ``--own-gpu auto`` found: the ``answer`` for the own-GPU field
    (``"2x <card id>"``, or a VRAM figure for a card the knowledge base does
    not know), the ``tool`` that reported the cards, the cards ``used`` and
    those ``left_out`` (a machine with cards of different kinds: one kind is
    weighed, the one with the most memory in all)."""

    answer: str
    tool: str
    used: tuple[LocalCard, ...]
    left_out: tuple[LocalCard, ...] = field(default=())
    note: str = ""       # one line that says what was found, in the person's language


def _counted(cards: Sequence[LocalCard], tr: Localizer) -> str:
    kinds: dict[tuple[str, str | None], int] = {}
    for card in cards:
        kinds[(card.name, card.card)] = kinds.get((card.name, card.card), 0) + 1
    parts = []
    for (name, card_id), count in kinds.items():
        shown = quoted(name, 100)
        parts.append("%s × %s (%s)" % (count, shown, card_id) if card_id else
                     tr.gettext("%(count)s × %(name)s (not a card the knowledge base knows: its %(gib)s GB)")
                     % {"count": count, "name": shown, "gib": tr.number(_gib_of(cards, name), 1)})
    return tr.list(parts)


def _gib_of(cards: Sequence[LocalCard], name: str) -> float:
    return next(card.gib for card in cards if card.name == name)


@dataclass(frozen=True)
class _Say:
    """The own-GPU field's errors in the person's language: its label (rules/profile.toml), a card people
    own to name as an example (rules/owned.toml ``examples``), and how the way in that asked gives the
    field (labels.toml [how_*]: ``--own-gpu`` to the command line, ``vram_gb=`` to the library)."""

    kb: KnowledgeBase
    tr: Localizer
    label: str
    example: str

    def __call__(self, template: str, **params: Any) -> InputError:
        return InputError("vram_gb", self.tr.gettext(template) % {
            "how_own_gpu_auto_refused": self.kb.how(self.tr, "own_gpu_auto_refused", label=self.label),
            "label": self.label, "how_own_gpu_named": self.kb.how(self.tr, "own_gpu_named", example=self.example),
            "how_own_gpu_none": self.kb.how(self.tr, "own_gpu_none"), **params})


def detect(kb: KnowledgeBase, tr: Localizer, path: str | None = None) -> LocalCards:
    """The cards of this machine (``path``: where to look for the tools, PATH by default)."""
    spec = kb.fields.get("vram_gb")
    say = _Say(kb, tr, tr.gettext(spec.label) if spec else "vram_gb", kb.owned_examples[0] if kb.owned_examples else "24")
    for command in (NVIDIA, AMD):
        tool = shutil.which(command[0], path=path)
        if tool is None:
            continue
        output = _run([tool, *command[1:]], say, command[0])
        reported = _nvidia(output) if command is NVIDIA else _amd(output)
        if reported is None:
            raise say(N_("%(how_own_gpu_auto_refused)s: what %(tool)s printed could not be read (%(start)s). "
                         "Give the card's name or its VRAM instead (%(how_own_gpu_named)s)."),
                         tool=command[0], start=quoted(one_line(output.decode("utf-8", "replace"))[:60]) or "-")
        if not reported:
            raise say(N_("%(how_own_gpu_auto_refused)s: %(tool)s reported no GPU. Give the card's name or its "
                         "VRAM instead (%(how_own_gpu_named)s), or %(how_own_gpu_none)s for no GPU of your own."),
                         tool=command[0])
        return _answer(kb, tr, command[0], reported)
    raise say(N_("%(how_own_gpu_auto_refused)s found no GPU: neither nvidia-smi nor rocm-smi is on PATH. Give the "
                 "card's name or its VRAM instead (%(how_own_gpu_named)s), or %(how_own_gpu_none)s for no GPU of "
                 "your own."))


def _run(argv: list[str], say: _Say, name: str) -> bytes:
    """What ``argv`` prints, at most MAX_OUTPUT bytes in at most TIMEOUT_S seconds."""
    import subprocess  # here: every command imports this module (the library does), few run a tool (10 ms)

    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"})
    except OSError as error:
        raise say(N_("%(how_own_gpu_auto_refused)s: %(tool)s could not be started (%(reason)s)."), tool=name,
                     reason=quoted(error.strerror or str(error), 100)) from None
    assert process.stdout is not None
    stdout = process.stdout
    read = bytearray()

    def pump() -> None:       # reads until the end or past the limit (a thread: a pipe has no timeout of its own)
        while len(read) <= MAX_OUTPUT:
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                return
            read.extend(chunk)

    reader = threading.Thread(target=pump, daemon=True)
    started = time.monotonic()
    reader.start()
    reader.join(TIMEOUT_S)
    try:
        if reader.is_alive():
            raise say(N_("%(how_own_gpu_auto_refused)s: %(tool)s did not answer within %(seconds)s seconds. "
                         "Give the card's name or its VRAM instead (%(how_own_gpu_named)s)."), tool=name,
                         seconds=say.tr.number(TIMEOUT_S, 0))
        if len(read) > MAX_OUTPUT:
            raise say(N_("%(how_own_gpu_auto_refused)s: %(tool)s printed more than %(most)s bytes; that is not a "
                         "list of GPUs. Give the card's name or its VRAM instead (%(how_own_gpu_named)s)."),
                         tool=name, most=say.tr.number(MAX_OUTPUT, 0))
        try:
            status = process.wait(max(0.1, TIMEOUT_S - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            raise say(N_("%(how_own_gpu_auto_refused)s: %(tool)s did not answer within %(seconds)s seconds. "
                         "Give the card's name or its VRAM instead (%(how_own_gpu_named)s)."), tool=name,
                         seconds=say.tr.number(TIMEOUT_S, 0)) from None
        if status != 0:
            raise say(N_("%(how_own_gpu_auto_refused)s: %(tool)s failed (exit status %(status)s); is the driver "
                         "loaded? Give the card's name or its VRAM instead (%(how_own_gpu_named)s)."), tool=name,
                         status=status)
        return bytes(read)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        stdout.close()


def _nvidia(output: bytes) -> list[tuple[str, float]] | None:
    """(name, GiB) of each line of ``nvidia-smi --query-gpu=name,memory.total --format=csv,noheader``; None
    when a line is not such a line."""
    try:
        text = output.decode("utf-8")
    except UnicodeDecodeError:
        return None
    found: list[tuple[str, float]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _NVIDIA_LINE.match(line)
        if match is None or len(found) >= MAX_CARDS:
            return None
        found.append((match.group("name"), int(match.group("mib")) / 1024))
    return found


def _amd(output: bytes) -> list[tuple[str, float]] | None:
    """(name, GiB) of each card of ``rocm-smi --showproductname --showmeminfo vram --json``; None when it
    is not that."""
    try:
        data = json.loads(output.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    found: list[tuple[str, float]] = []
    for key, card in data.items():
        if not (isinstance(key, str) and key.lower().startswith("card")):
            continue            # "system": the driver's version
        if not isinstance(card, dict) or len(found) >= MAX_CARDS:
            return None
        fields = {str(k).lower(): v for k, v in card.items()}
        name = next((fields[k] for k in ("card series", "card sku", "card model") if isinstance(fields.get(k), str)
                     and 0 < len(fields[k].strip()) <= 100), None)
        memory = fields.get("vram total memory (b)")
        if name is None or not isinstance(memory, (str, int)) or not str(memory).strip().isdigit() \
                or len(str(memory).strip()) > 15:
            return None
        found.append((one_line(name).strip(), int(str(memory).strip()) / 2**30))
    return found


def match(kb: KnowledgeBase, name: str, gib: float) -> str | None:
    """The knowledge base's card a tool's ``name`` with ``gib`` of memory is,
    through the one reader of card names (:func:`expert.knowledge.find_cards`):
    the name as printed (the form factor, "SXM4" or "PCIe", and the brand
    are words owned.toml ignores), then the name with the memory of each
    known card near what was reported (a name printed without its memory, as
    the catalog names it with). A card whose memory is not near what was
    reported is not that card (a model sold with 8 or 12 GB is the one whose
    memory was reported)."""

    def near(vram: float) -> bool:
        return abs(vram - gib) <= _MEMORY_SLACK * vram

    found = [card for card in find_cards(kb, name) if near(card[2])]
    if not found:
        sizes = sorted({card.vram_gb for card in kb.owned} | {gpu.vram_gb / gpu.devices for gpu in kb.known_cards()})
        for size in (s for s in sizes if near(s)):
            found += [card for card in find_cards(kb, "%s %g GB" % (name, size)) if near(card[2])]
    if not found:
        return None
    return min(found, key=lambda card: abs(card[2] - gib))[0]


def _answer(kb: KnowledgeBase, tr: Localizer, tool: str, reported: list[tuple[str, float]]) -> LocalCards:
    cards = [LocalCard(name, round(gib, 1), match(kb, name, gib)) for name, gib in reported]
    kinds: dict[str, list[LocalCard]] = {}
    for card in cards:
        kinds.setdefault(card.card or "%.1f" % card.gib, []).append(card)
    # One kind is weighed (the profile holds one card and its count): the one with the most memory in all.
    kind, used = max(kinds.items(), key=lambda item: sum(card.gib for card in item[1]))
    count = len(used)
    answer = kind if used[0].card else "%g GB" % used[0].gib
    if count > 1:
        answer = "%dx %s" % (count, answer)
    left_out = tuple(card for card in cards if card not in used)
    note = tr.gettext("%(how_own_gpu_auto)s: %(tool)s found %(cards)s.") % {
        "how_own_gpu_auto": kb.how(tr, "own_gpu_auto"), "tool": tool, "cards": _counted(used, tr)}
    if left_out:
        note += " " + tr.gettext("One kind of card is weighed, the one with the most memory in all, so these are "
                                 "left out: %(cards)s. To weigh others, name the cards you will train on with "
                                 "%(how_own_gpu)s.") % {"cards": _counted(left_out, tr),
                                                        "how_own_gpu": kb.how(tr, "own_gpu")}
    return LocalCards(answer, tool, tuple(used), left_out, note)

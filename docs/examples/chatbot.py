"""A minimal terminal chatbot on expert's Consultation, keeping JSON state.

Each turn reads one message, restores the consultation from the JSON state
file, answers, and saves the state again: what a chat service does between
messages (the state is a few hundred bytes of plain data; see
docs/consultation.md). Run it and talk to it:

    python docs/examples/chatbot.py --lang es --state /tmp/chat.json

Say what you know in your own words ("Mistral-7B con LoRA en mi 3090"): every
answer recognised is taken (Consultation.tell) and only what is missing is
asked. "?" asks why a question is asked, "back" undoes the last answer, an
empty line takes the default. tests/test_examples.py runs it with piped input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from expert import Consultation, InputError

WHY = {"?", "why", "por qué", "por que"}
BACK = {"back", "atrás", "atras"}


def turn(state: dict | None, message: str, lang: str) -> tuple[str, dict]:
    """One chat message in, one reply and the state to keep out."""
    c = Consultation.from_dict(state) if state else Consultation(lang=lang)
    question = c.next_question()
    said = ""
    if state and question is not None:
        text = message.strip().lower()
        if text in WHY:
            return question.why, c.to_dict()
        told = c.tell(message) if text and text not in BACK else None
        if text in BACK:
            c.back()
        elif told and told.understood:
            said = told.text + "\n"     # "Understood: model size: 7B; ..."
        else:
            try:
                # Enter takes the default; a field without one (no deadline, no GPU) is answered "no".
                default = question.default if question.default is not None else "no"
                c.answer(question.id, message if text else default)
            except InputError as error:
                return f"{error}\n{question.text}", c.to_dict()
        question = c.next_question()
    if question is None:
        return said + c.result().render("markdown", detail="summary"), c.to_dict()
    hint = f" ({question.hint})" if question.hint else ""
    default = f" [{question.default_label}]" if question.default_label else ""
    return f"{said}{question.text}{hint}{default}", c.to_dict()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", default="en", choices=["en", "es"])
    parser.add_argument("--state", type=Path, help="where to keep the JSON state between turns")
    args = parser.parse_args()
    state_file = args.state
    state = json.loads(state_file.read_text()) if state_file and state_file.exists() else None
    reply, state = turn(state, "", args.lang)
    print(reply)
    for line in sys.stdin:
        reply, state = turn(state, line.rstrip("\n"), args.lang)
        if state_file:
            state_file.write_text(json.dumps(state))
        print(reply, flush=True)
        if "**Recommendation:**" in reply or "**Recomendación:**" in reply:
            return 0
    return 1


if __name__ == "__main__":
    raise SystemExit(main())

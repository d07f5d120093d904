"""Write expert/profile_types.py from the profile definition (rules/profile.toml).

The type annotations of advise(), explain(), estimate() and Consultation come
from this generated module; the JSON Schemas (`expert schema`) come from the
same definition at run time. tests/test_schema.py fails when the two drift
apart: run this script after changing rules/profile.toml.

    python scripts/update_types.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET = ROOT / "expert" / "profile_types.py"


def type_name(field: str) -> str:
    return "".join(part.capitalize() for part in field.split("_"))


def annotation(spec: object) -> str:
    kind = spec.type  # type: ignore[attr-defined]
    if kind == "choice":
        return "Literal[" + ", ".join(repr(c) for c in spec.choices) + "]"  # type: ignore[attr-defined]
    if kind == "bool":
        return "bool"
    base = {"size": "float | str", "number": "float | str", "amount": "float | str", "hours": "float | str",
            "integer": "int | str"}[kind]
    bounds = [f"{name}={getattr(spec, name)!r}" for name in ("min", "min_exclusive", "max")
              if getattr(spec, name) is not None]
    return f"Annotated[{base}, Bounds({', '.join(bounds)}, kind={kind!r})]"


def render() -> str:
    from expert.kb import load

    kb = load()
    lines = [
        '"""The profile\'s types, generated from rules/profile.toml by',
        "scripts/update_types.py: do not edit (tests/test_schema.py checks it).",
        "",
        "Choices are Literals; numbers carry their bounds as ``Bounds`` metadata",
        "(a number, or text as a person types it: ``\"70B\"``, ``\"2 days\"``).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Annotated, Literal",
        "",
        "from .bounds import Bounds",
        "",
        "__all__ = [" + ", ".join(repr(type_name(n)) for n in kb.fields) + ", 'FIELD_TYPES']",
        "",
    ]
    for name, spec in kb.fields.items():
        lines.append(f"{type_name(name)} = {annotation(spec)}")
    lines += ["", "# Each profile field's type, by field name.", "FIELD_TYPES = {"]
    lines += [f"    {name!r}: {type_name(name)}," for name in kb.fields]
    lines += ["}", ""]
    return "\n".join(lines)


def main() -> int:
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

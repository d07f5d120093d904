"""Bounds of a number, carried in ``Annotated`` type metadata (expert/input/profile_types.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bounds:
    """The accepted range of a profile number, as ``rules/profile.toml`` states it."""

    min: float | None = None
    min_exclusive: float | None = None
    max: float | None = None
    kind: str = "number"   # the profile field type: size, number, hours, integer

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

    def holds(self, value: float) -> bool:
        """Whether ``value`` is inside these bounds (what the value reader accepts of a number)."""
        return ((self.min is None or value >= self.min)
                and (self.min_exclusive is None or value > self.min_exclusive)
                and (self.max is None or value <= self.max))

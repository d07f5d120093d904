"""@record behaves as the dataclass it replaces (repr, ==, hash, frozen)."""

from __future__ import annotations

import dataclasses

import pytest

from expert.records import record


@record
class Point:
    """A frozen record."""

    x: int
    y: int = 0
    note: str = dataclasses.field(default="", repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class Twin:
    """The same, as a plain dataclass."""

    x: int
    y: int = 0
    note: str = dataclasses.field(default="", repr=False, compare=False)


@record(frozen=False)
class Box:
    """A mutable record."""

    items: list[int] = dataclasses.field(default_factory=list)


def test_repr_eq_and_hash_match_the_dataclass() -> None:
    assert repr(Point(1, 2, "hidden")) == repr(Twin(1, 2, "hidden")).replace("Twin", "Point") == "Point(x=1, y=2)"
    assert Point(1, 2, "a") == Point(1, 2, "b") and Point(1, 2) != Point(2, 1)
    assert hash(Point(1, 2, "a")) == hash(Point(1, 2, "b")) == hash(Twin(1, 2))
    assert Point(1, 2) != Twin(1, 2)  # only the same class compares equal
    assert {Point(1), Point(1)} == {Point(1)}


def test_frozen_and_dataclass_tools_work() -> None:
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
    assert dataclasses.replace(point, y=5) == Point(1, 5)
    assert dataclasses.asdict(point) == {"x": 1, "y": 0, "note": ""}
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "y", "note"]


def test_mutable_records_are_not_hashable() -> None:
    box = Box()
    box.items.append(1)
    assert box == Box([1]) and repr(box) == "Box(items=[1])"
    with pytest.raises(TypeError):
        hash(box)

"""``@record``: the dataclasses of this package, cheaper to define.

``dataclass`` compiles the source of every method it adds, for every class;
with ``repr``, ``eq`` and ``frozen`` that was most of the time it took to
import ``expert`` (a tenth of a whole ``expert advise`` process). A record is
a dataclass whose ``__init__`` (and, frozen, ``__setattr__``) are generated as
usual, and whose ``__repr__``, ``__eq__`` and ``__hash__`` are shared
functions that behave as the generated ones: the fields with ``repr=True`` in
the repr, the fields with ``compare=True`` compared (only with an instance of
the same class) and, for frozen records, hashed. ``fields``, ``asdict`` and
``replace`` work as on any dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypeVar

T = TypeVar("T")


def _repr(self: Any) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
    return f"{type(self).__qualname__}({shown})"


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, f.name) for f in fields(self) if f.compare)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return _values(self) == _values(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_values(self))


def record(cls: type[T] | None = None, /, *, frozen: bool = True) -> Any:
    """Declare a record: ``@record`` (frozen) or ``@record(frozen=False)``."""

    def wrap(cls: type[T]) -> type[T]:
        own = set(vars(cls))
        cls = dataclass(cls, frozen=frozen, repr=False, eq=False)  # type: ignore[call-overload]
        if "__repr__" not in own:
            cls.__repr__ = _repr  # type: ignore[assignment]
        if "__eq__" not in own:
            cls.__eq__ = _eq  # type: ignore[assignment]
            cls.__hash__ = _hash if frozen else None  # type: ignore[assignment]
        return cls

    return wrap if cls is None else wrap(cls)


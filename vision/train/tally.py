"""Counts that add up field by field: what the probes total over their frames."""

from __future__ import annotations

import dataclasses
from typing import Self

__all__ = ["Tally"]


@dataclasses.dataclass(frozen=True)
class Tally:
    """A frozen dataclass of int counts; ``a + b`` adds each count, ``sum(..., Kind())`` totals."""

    def __add__(self, other: Self) -> Self:
        if type(other) is not type(self):
            return NotImplemented
        return type(self)(
            **{
                field.name: getattr(self, field.name) + getattr(other, field.name)
                for field in dataclasses.fields(self)
            }
        )

"""Readings as vision.reader reports them, for the table's tests and the browser's fake camera
(no camera, no model). One class each, so a field vision.reader.Die gains is added once."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FakeDie:
    """A die as vision.reader.Die reports it."""

    value: int | None
    confidence: float = 0.99
    status: str = "ok"
    box: tuple[int, int, int, int] = (0, 0, 10, 10)
    blurred: bool = False
    hidden: bool = False
    cut: bool = False


@dataclass(frozen=True)
class FakeReading:
    """A settled reading: the dice in the roll zone, and those set aside."""

    dice: tuple[FakeDie, ...] = ()
    status: str = "settled"
    set_aside: tuple[FakeDie, ...] = ()

"""Frame to reading: locate the dice, classify each face, and say how sure the reading is.

The reader never invents a die: only what the locator finds is read, and a blob in which the face
model sees no face is dropped. A die it cannot read surely is ``uncertain``, or ``cocked`` (and
given no value) when its footprint shows two faces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from vision.classify import Classifier
from vision.locate import DEFAULT_LOCATOR, LocatedDie, LocatorOptions, TrayColour, locate_dice
from vision.preprocess import crops_for_model

__all__ = [
    "DiceReader",
    "DiceReading",
    "Die",
    "DieStatus",
    "FrameStatus",
    "Zone",
]

Frame = npt.NDArray[np.uint8]
Box = tuple[int, int, int, int]
FrameStatus = Literal["empty", "moving", "settled"]
DieStatus = Literal["ok", "uncertain", "cocked"]


@dataclass(frozen=True)
class Die:
    """One die as read: face value (None when unknown), confidence, status and box in pixels."""

    value: int | None
    confidence: float
    status: DieStatus
    box: Box

    def to_json(self) -> dict[str, object]:
        """Return the die as the JSON object ``pipcam read --json`` prints."""
        return {
            "value": self.value,
            "confidence": round(self.confidence, 4),
            "status": self.status,
            "box": list(self.box),
        }


@dataclass(frozen=True)
class DiceReading:
    """What the camera sees: the frame status, the dice in the roll zone and those set aside."""

    status: FrameStatus
    dice: tuple[Die, ...]
    set_aside: tuple[Die, ...] = ()

    @property
    def values(self) -> tuple[int, ...] | None:
        """The face values of the roll, sorted, or None unless every die in the zone is ``ok``."""
        if any(d.status != "ok" or d.value is None for d in self.dice):
            return None
        return tuple(sorted(d.value for d in self.dice if d.value is not None))


@dataclass(frozen=True)
class Zone:
    """The roll zone as fractions of the frame (0..1), so it fits frames of any size."""

    x0: float = 0.0
    y0: float = 0.0
    x1: float = 1.0
    y1: float = 1.0

    def __post_init__(self) -> None:
        if not (0.0 <= self.x0 < self.x1 <= 1.0 and 0.0 <= self.y0 < self.y1 <= 1.0):
            raise ValueError(f"zone {self!r} must satisfy 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1")

    def contains(self, x: float, y: float, width: int, height: int) -> bool:
        """Return True if the frame point (x, y) lies in the zone of a width x height frame."""
        return self.x0 * width <= x <= self.x1 * width and self.y0 * height <= y <= self.y1 * height

    def pixels(self, width: int, height: int) -> Box:
        """Return the zone as a pixel box of a width x height frame."""
        return (
            int(round(self.x0 * width)),
            int(round(self.y0 * height)),
            int(round(self.x1 * width)),
            int(round(self.y1 * height)),
        )


class DiceReader:
    """Reads the dice in a frame with a locator and a face classifier."""

    def __init__(
        self,
        classifier: Classifier,
        *,
        locator: LocatorOptions = DEFAULT_LOCATOR,
        zone: Zone | None = None,
        tray: TrayColour | None = None,
        min_confidence: float = 0.8,
        reject_confidence: float = 0.6,
    ) -> None:
        """Set up the reader.

        ``zone`` is the calibrated roll zone (None: the whole frame); ``tray`` the calibrated tray
        colour (None: learnt from each frame). A face read with at least ``min_confidence`` is
        ``ok``; otherwise the die is ``cocked`` if its footprint says it leans, else
        ``uncertain`` (its best guess as value, None if the model saw no face). A blob the model
        calls "no face" with at least ``reject_confidence`` is dropped.
        """
        self.classifier = classifier
        self.locator = locator
        self.zone = zone
        self.tray = tray
        self.min_confidence = min_confidence
        self.reject_confidence = reject_confidence

    def locate(self, frame: Frame) -> list[LocatedDie]:
        """Return the dice the locator finds in ``frame`` (boxes in frame pixels).

        With a roll zone smaller than the frame, the zone and the table around it are searched
        apart, each against its own colour: seen against the tray, the whole table is one blob.
        """
        height, width = frame.shape[:2]
        if self.zone is None or self.zone == Zone():
            return locate_dice(frame, tray=self.tray, options=self.locator)
        zone = self.zone
        inside = [
            d
            for d in locate_dice(frame, tray=self.tray, options=self.locator)
            if zone.contains(d.centre[0], d.centre[1], width, height)
        ]
        x0, y0, x1, y1 = zone.pixels(width, height)
        around = frame.copy()
        outside = np.ones((height, width), bool)
        outside[y0:y1, x0:x1] = False
        # Painting the zone in the table's colour leaves only the table for the second search.
        around[y0:y1, x0:x1] = np.median(frame[outside][::7], axis=0).astype(np.uint8)
        aside = [
            d
            for d in locate_dice(around, options=self.locator)
            if not zone.contains(d.centre[0], d.centre[1], width, height)
        ]
        return inside + aside

    def read(self, frame: Frame, *, status: FrameStatus | None = None) -> DiceReading:
        """Return the reading of ``frame``; ``status`` comes from settle detection if known.

        Without a ``status`` the frame is taken as still (a photo): ``empty`` if no die is seen,
        else ``settled``.
        """
        located = self.locate(frame)
        dice = self._classify(frame, located)
        height, width = frame.shape[:2]
        zone = self.zone or Zone()
        inside: list[Die] = []
        aside: list[Die] = []
        for found, die in dice:
            cx, cy = found.centre
            (inside if zone.contains(cx, cy, width, height) else aside).append(die)
        if status is None:
            status = "settled" if inside or aside else "empty"
        return DiceReading(status=status, dice=tuple(inside), set_aside=tuple(aside))

    def _classify(self, frame: Frame, located: list[LocatedDie]) -> list[tuple[LocatedDie, Die]]:
        if not located:
            return []
        probs = self.classifier.predict(crops_for_model(frame, [d.box for d in located]))
        dice: list[tuple[LocatedDie, Die]] = []
        for found, row in zip(located, probs, strict=True):
            best = int(np.argmax(row))
            confidence = float(row[best])
            if best == 0 and confidence >= self.reject_confidence:
                # Sure it is no face: not a die (a shoe, a hand, the tray's wall), or a die on
                # its edge the model cannot tell from one. Reporting nothing never invents a die.
                continue
            if best != 0 and confidence >= self.min_confidence:
                # The model was trained to call a tilted die class 0, so a sure face beats the
                # footprint's shape (perspective and shadows stretch flat dice too).
                die = Die(best, confidence, "ok", found.box)
            elif found.cocked:
                die = Die(None, confidence, "cocked", found.box)
            elif best == 0:
                die = Die(None, confidence, "uncertain", found.box)
            else:
                die = Die(best, confidence, "uncertain", found.box)
            dice.append((found, die))
        return dice

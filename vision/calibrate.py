"""Calibration: learn the empty tray (roll zone and colour) and keep it with the camera settings.

The calibration file is JSON, so it can be read and fixed by hand::

    {"version": 1, "frame_size": [1640, 1232], "zone": [x0, y0, x1, y1],
     "tray": {"median": [L, a, b], "spread": [L, a, b]}, "camera": {...} or null}

The zone is in fractions of the frame, the tray colour in OpenCV's 8-bit Lab.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.detect import iou
from vision.errors import CalibrationError
from vision.locate import (
    DEFAULT_LOCATOR,
    LocatorOptions,
    TrayColour,
    downscale,
    locate_dice,
    tray_colour,
)
from vision.picam import CameraSettings
from vision.reader import DiceReader, Zone
from vision.source import Frame

__all__ = [
    "Calibration",
    "TrayFollower",
    "calibrate_frame",
    "check_empty",
    "find_tray",
    "load_calibration",
    "save_calibration",
    "size_mismatch",
]

VERSION = 1


@dataclass(frozen=True)
class Calibration:
    """The empty tray as calibrated: roll zone, tray colour, frame size and camera settings."""

    zone: Zone
    tray: TrayColour
    frame_size: tuple[int, int]
    camera: CameraSettings | None = None

    def to_json(self) -> dict[str, object]:
        """Return the calibration as the JSON object stored in the file."""
        return {
            "version": VERSION,
            "frame_size": list(self.frame_size),
            "zone": [self.zone.x0, self.zone.y0, self.zone.x1, self.zone.y1],
            "tray": {"median": list(self.tray.median), "spread": list(self.tray.spread)},
            "camera": None if self.camera is None else self.camera.to_json(),
        }

    @classmethod
    def from_json(cls, data: Any) -> Calibration:
        """Build a calibration from its JSON object; ``ValueError`` says what is wrong."""
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
        if data.get("version") != VERSION:
            raise ValueError(f"unknown version {data.get('version')!r} (expected {VERSION})")
        try:
            x0, y0, x1, y1 = (float(v) for v in data["zone"])
            width, height = (int(v) for v in data["frame_size"])
            median = tuple(float(v) for v in data["tray"]["median"])
            spread = tuple(float(v) for v in data["tray"]["spread"])
            camera = data.get("camera")
            settings = None if camera is None else CameraSettings.from_json(camera)
        except KeyError as err:
            raise ValueError(f"missing field {err}") from None
        except (TypeError, ValueError) as err:
            raise ValueError(f"malformed field: {err}") from None
        if len(median) != 3 or len(spread) != 3:
            raise ValueError("tray median and spread need three values each (L, a, b)")
        return cls(
            zone=Zone(x0, y0, x1, y1),
            tray=TrayColour(
                median=(median[0], median[1], median[2]), spread=(spread[0], spread[1], spread[2])
            ),
            frame_size=(width, height),
            camera=settings,
        )


def find_tray(frame: Frame, *, work_size: int = 320, min_fraction: float = 0.2) -> Zone:
    """Return the tray as a zone: the largest region of the frame's dominant colour.

    If no region covers ``min_fraction`` of the frame the whole frame is the zone.
    """
    small, _ = downscale(frame, work_size)
    height, width = small.shape[:2]
    # The tray's colour is learnt from the middle of the frame, where the camera points.
    centre = np.zeros((height, width), np.uint8)
    centre[height // 4 : height * 3 // 4, width // 4 : width * 3 // 4] = 255
    colour = tray_colour(small, centre)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    scale = np.maximum(np.array(colour.spread, np.float32), 6.0)
    z = (lab - np.array(colour.median, np.float32)) / scale
    tray = (np.einsum("ijk,ijk->ij", z, z) < 4.0**2).astype(np.uint8) * 255
    kernel = np.ones((5, 5), np.uint8)
    tray = cv2.morphologyEx(tray, cv2.MORPH_CLOSE, kernel)
    count, _, stats, _ = cv2.connectedComponentsWithStats(tray, connectivity=8)
    if count <= 1:
        return Zone()
    best = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, w, h, area = (int(v) for v in stats[best])
    if area < min_fraction * width * height:
        return Zone()
    return Zone(x / width, y / height, min((x + w) / width, 1.0), min((y + h) / height, 1.0))


log = logging.getLogger(__name__)


class TrayFollower:
    """Keeps the roll zone on the tray when the tray (or the camera) is pushed after calibrating.

    Players nudge a tray all evening. With the zone fixed in the frame, a tray pushed a few
    centimetres leaves part of itself outside the zone (dice landing there would be taken as
    set aside) and takes in the table beside it. On frames at rest (dice may lie in the tray:
    they are holes in it, not its edge) the follower finds the tray again, as calibrating does,
    and when it has lain elsewhere for a few looks, moves the zone onto it. A tray found much
    larger or smaller than calibrated (a hand's shadow, another cloth put down) is not followed:
    that needs ``pipcam calibrate`` again, and is said.
    """

    def __init__(
        self,
        zone: Zone,
        move: Callable[[Zone], object],
        *,
        every: float = 2.0,
        looks: int = 3,
        clock: Callable[[], float] = time.monotonic,
        notice: Callable[[str], object] = lambda _notice: None,
    ) -> None:
        """``zone`` is the calibrated roll zone, ``move`` sets a new one (on the reader);
        ``notice`` tells the players when the tray looks another size ("tray_size"), and when
        it no longer does ("")."""
        self.zone = zone
        self.move = move
        self.every = every
        self.looks = looks
        self.clock = clock
        self.notice = notice
        self.moves = 0
        self._next_look = -math.inf
        self._seen: list[Zone] = []
        self._said = False

    def observe(self, frame: Frame) -> Zone | None:
        """Look at a frame at rest; return the zone when this look moved it."""
        now = self.clock()
        if now < self._next_look:
            return None
        self._next_look = now + self.every
        found = find_tray(frame)
        if found == Zone():
            self._seen = []
            return None
        area = _area(found) / _area(self.zone)
        if 0.8 <= area <= 1.25 and self._said:
            self._said = False
            self.notice("")
        if _overlap(found, self.zone) >= SAME_PLACE:
            self._seen = []
            return None
        if not 0.8 <= area <= 1.25:
            self._seen = []
            if not self._said:
                self._said = True
                self.notice("tray_size")
                log.warning(
                    "camera: the tray looks %.0f %% of its calibrated size; if the camera or the"
                    " tray was moved, run pipcam calibrate again",
                    100 * area,
                )
            return None
        if self._seen and _overlap(found, self._seen[-1]) < SAME_PLACE:
            self._seen = []  # not where the last look found it: not at rest yet
        self._seen.append(found)
        if len(self._seen) < self.looks:
            return None
        self._seen = []
        log.info(
            "camera: the tray was moved (%+.0f %%, %+.0f %% of the frame): the roll zone follows",
            100 * (found.x0 - self.zone.x0),
            100 * (found.y0 - self.zone.y0),
        )
        self.zone = found
        self.move(found)
        self.moves += 1
        return found


SAME_PLACE = 0.9
"""Zones overlapping this much (intersection over union) are the tray where it was."""


def _area(zone: Zone) -> float:
    return (zone.x1 - zone.x0) * (zone.y1 - zone.y0)


def _overlap(a: Zone, b: Zone) -> float:
    return iou((a.x0, a.y0, a.x1, a.y1), (b.x0, b.y0, b.x1, b.y1))


def calibrate_frame(
    frame: Frame,
    *,
    camera: CameraSettings | None = None,
    options: LocatorOptions = DEFAULT_LOCATOR,
) -> Calibration:
    """Calibrate from a frame of the empty tray; :class:`CalibrationError` if dice lie on it."""
    zone = find_tray(frame)
    small, _ = downscale(frame, options.work_size)
    sh, sw = small.shape[:2]
    x0, y0, x1, y1 = zone.pixels(sw, sh)
    region = np.zeros((sh, sw), np.uint8)
    region[y0:y1, x0:x1] = 255
    tray = tray_colour(small, region)
    dice = locate_dice(frame, tray=tray, options=options)
    height, width = frame.shape[:2]
    inside = [d for d in dice if zone.contains(d.centre[0], d.centre[1], width, height)]
    tray_grey = float(np.median(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)[y0:y1, x0:x1]))
    glare = [d.box for d in inside if _blown(frame, d.box, tray_grey)]
    if glare:
        # No die is blown out all over; a lamp's reflection on a glossy tray is.
        raise CalibrationError(
            f"a glare spot on the tray looks like a die (at {list(glare[0])}): diffuse the light"
            " (a lampshade, or baking paper over an LED ring) or move it off the camera's axis,"
            " then calibrate again"
        )
    if inside:
        raise CalibrationError(
            f"the tray is not empty: {len(inside)} dice seen; clear the tray and calibrate again"
        )
    return Calibration(zone=zone, tray=tray, frame_size=(width, height), camera=camera)


def _blown(frame: Frame, box: tuple[int, int, int, int], tray_grey: float) -> bool:
    """Whether what stands out from the tray in ``box`` is blown out (every channel at the top
    of the range) with no pip among it: a white die in too much light still shows dark pips,
    a lamp's reflection (a spot, an LED ring) shows none."""
    x0, y0, x1, y1 = box
    patch = frame[max(y0, 0) : y1, max(x0, 0) : x1]
    grey = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY).astype(np.float32) if patch.size else None
    if grey is None:
        return False
    standing = np.abs(grey - tray_grey) > 40
    if not standing.any():
        return False
    blown = float(np.mean(patch.min(axis=2)[standing] >= 245))
    dark = float(np.mean(grey[standing] < tray_grey))
    return blown > 0.6 and dark < 0.05


def check_empty(frame: Frame, reader: DiceReader) -> None:
    """Raise :class:`CalibrationError` if ``reader`` reads any die in ``frame``'s roll zone.

    :func:`calibrate_frame` looks with the classical locator, which misses white dice on a
    light table; the reader that will read the rolls must see the tray empty too, or the
    calibrated tray colour takes the dice in and a die left on it is read as thrown.
    """
    dice = reader.read(frame).dice
    if dice:
        values = ", ".join("?" if d.value is None else str(d.value) for d in dice)
        boxes = ", ".join(str(list(d.box)) for d in dice)
        raise CalibrationError(
            f"the tray is not empty: {len(dice)} dice read ({values}); clear the tray and"
            f" calibrate again (if nothing lies at {boxes}, a pattern or a reflection on the"
            " tray looks like dice there: cover it with a plain cloth)"
        )


def size_mismatch(
    calibrated: tuple[int, int], size: tuple[int, int], tolerance: float = 0.02
) -> str | None:
    """Say why frames of ``size`` may not fit a calibration made on frames of ``calibrated``.

    The zone is kept in fractions of the frame, so another size of the same shape reads the
    same tray; another shape (width / height off by more than ``tolerance``) is another crop of
    the sensor or another camera, and the zone would cut the tray in the wrong place.
    """
    (cw, ch), (w, h) = calibrated, size
    if abs((w / h) / (cw / ch) - 1.0) <= tolerance:
        return None
    return (
        f"frames are {w}x{h} but the tray was calibrated on {cw}x{ch} frames, another shape:"
        " the roll zone may be off; run pipcam calibrate again with this camera"
    )


def save_calibration(path: str | os.PathLike[str], calibration: Calibration) -> None:
    """Write the calibration as JSON; raise :class:`CalibrationError` naming the file on failure."""
    file = Path(path)
    text = json.dumps(calibration.to_json(), indent=2) + "\n"
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    except OSError as err:
        raise CalibrationError(
            f"cannot write calibration file {str(file)!r}: {err.strerror}"
        ) from err


def load_calibration(path: str | os.PathLike[str]) -> Calibration:
    """Read a calibration file; raise :class:`CalibrationError` naming the file and the fault."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationError(
            f"calibration file {str(file)!r} not found: run `pipcam calibrate --out {file}`"
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise CalibrationError(f"cannot read calibration file {str(file)!r}: {err}") from err
    try:
        return Calibration.from_json(json.loads(text))
    except json.JSONDecodeError as err:
        raise CalibrationError(
            f"calibration file {str(file)!r} is not valid JSON (line {err.lineno}): run"
            f" `pipcam calibrate` again"
        ) from None
    except ValueError as err:
        raise CalibrationError(f"calibration file {str(file)!r}: {err}") from None

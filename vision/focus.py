"""Telling the table's owner that the camera is out of focus, from the dice it reads.

A die blurred past reading is reported ``uncertain`` with ``blurred`` set, and the players are
asked its value (vision.reader). One such die is a die, but most dice of roll after roll are a
camera: a Camera Module v2 or HQ lens turned off the tray's distance (the v2 leaves the factory
focused far beyond a tray), or a Camera Module 3 that focused on something else. Asking the
players every value of every roll then helps nobody; the lens should be turned. A
:class:`FocusWatch` looks at each settled reading and says so (``notice("blurred")``), and stops
saying it once the dice are sharp again.

A lens far off (blur of 14 px and more on a 1280-px frame: an HQ camera's lens, wide open,
focused across the room) blurs the dice past finding: the reader sees none, and the tray would
read empty roll after roll. What stands out from the tray is still there, though, only soft: so
when a roll settles and the reader reads no die sharp, the shapes of a die's size that stand out
in the roll zone where no die was found are looked at (:func:`soft_shapes`), and those blurred
past reading count as blurred dice. One die read sharp shows the lens right (the dice lie at one
distance from it), and a soft shadow or stain on the tray is no die: then none is looked for.

An empty tray cannot tell: felt has no edges to be sharp. So this is watched during play, from
the dice, and not at ``pipcam calibrate``; ``pipcam focus`` measures the dice in the tray frame
after frame (:func:`dice_sharpness`) while the owner turns the lens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import cv2
import numpy as np

from vision.detect import iou
from vision.locate import Box, TrayColour, locate_dice
from vision.preprocess import crops_for_model, sharpness
from vision.reader import DiceReading, Zone
from vision.source import Frame

__all__ = [
    "BLURRED_ROLLS",
    "SHARP_DICE",
    "UNFOUND_BELOW",
    "FocusWatch",
    "dice_sharpness",
    "edge_width",
    "out_of_focus",
    "soft_shapes",
    "unfound",
    "unseen_blurred",
]

log = logging.getLogger(__name__)

UNFOUND_BELOW = 0.031
"""A shape the reader found no die in counts as a die blurred past finding when its crop's
sharpness is under this: the 95th percentile of rendered dice blurred past reading. Stricter
than the blurred-die check's :data:`vision.die_check.BLURRED_BELOW` (0.05): the learned locator
finds dice blurred up to about 12 px on a 1280-px frame (0.028 and softer), so what it misses
is softer still, while the soft edge of a board or a table out of the lens's depth of field
measures 0.045-0.05 (one held-out photo, hazed)."""

BLURRED_ROLLS = 2
"""Readings in a row, most of whose dice are blurred, before the camera is said to be out of
focus: one such reading can be a roll caught while a die still spun."""


SHARP_DICE = 0.1
"""The sharpness (:func:`vision.preprocess.sharpness`) of dice in focus, about: the middle half
of the labelled dice of the held-out photos measure 0.09-0.22 (medians 0.11-0.20 by source); a
die below 0.05 is blurred (vision.die_check.BLURRED_BELOW)."""


def dice_sharpness(frame: Frame, reading: DiceReading) -> float | None:
    """The median sharpness of the dice of ``reading`` (in the roll zone and set aside) in
    ``frame``, None when there are none. It depends on the lens and not on the dice's size, so
    it can be compared frame by frame while the lens turns."""
    dice = reading.dice + reading.set_aside
    if not dice:
        return None
    return float(np.median(sharpness(crops_for_model(frame, [die.box for die in dice]))))


def soft_shapes(
    frame: Frame, reading: DiceReading, *, zone: Zone | None = None, tray: TrayColour | None = None
) -> list[Box]:
    """The boxes of the shapes of a die's size that stand out from the tray in the roll zone of
    ``frame`` where ``reading`` has no die, blurred past reading: dice too blurred for the
    reader to find.

    The classical locator (vision.locate) finds what stands out from the tray's colour, blurred
    or not; a shape counts when its crop's sharpness is under :data:`UNFOUND_BELOW`. ``zone``
    and ``tray`` are the reader's calibrated ones (None: the whole frame, the tray's colour
    learnt from it). About 20 ms at 1280x960 on the development machine: for a settled roll,
    not for every frame.
    """
    height, width = frame.shape[:2]
    zone = zone or Zone()
    found = [die.box for die in reading.dice + reading.set_aside]
    shapes = [
        shape.box
        for shape in locate_dice(frame, tray=tray)  # the classical locator's search of the zone
        if zone.contains(*shape.centre, width, height)
        and not any(iou(shape.box, box) > 0 for box in found)
    ]
    if not shapes:
        return []
    soft = sharpness(crops_for_model(frame, shapes)) < UNFOUND_BELOW
    return [box for box, is_soft in zip(shapes, soft, strict=True) if is_soft]


def unseen_blurred(
    frame: Frame, reading: DiceReading, *, zone: Zone | None = None, tray: TrayColour | None = None
) -> int:
    """How many dice lie in the roll zone too blurred for the reader to find: the number of
    :func:`soft_shapes`."""
    return len(soft_shapes(frame, reading, zone=zone, tray=tray))


def edge_width(frame: Frame, box: Box) -> float:
    """How wide, in frame pixels, the edges in and around ``box`` are: their contrast over their
    steepest slope. About 3 px for a sharp die, and some 2.5 px more for each pixel of a
    Gaussian blur's sigma (a blurred step's slope is its contrast over sigma times the square
    root of 2 pi); on the synthetic trays 2.9 / 16.6 / 33 / 56 px at 0 / 8 / 20 / 40 px of blur.

    Where :func:`vision.preprocess.sharpness` has nothing left to measure (dice blurred past
    finding all measure about 0.015), this still falls as the lens turns toward focus.
    """
    x0, y0, x1, y1 = box
    # Half a box on each side: a blurred die's edge spreads past the box the locator drew.
    bw, bh = (x1 - x0) // 2, (y1 - y0) // 2
    height, width = frame.shape[:2]
    window = frame[max(y0 - bh, 0) : min(y1 + bh, height), max(x0 - bw, 0) : min(x1 + bw, width)]
    grey = np.asarray(cv2.cvtColor(window, cv2.COLOR_BGR2GRAY), np.float32)
    grey = np.asarray(cv2.GaussianBlur(grey, (0, 0), 1.0), np.float32)  # sensor noise is no edge
    # Sobel's 3x3 kernels weigh the difference of neighbours by 8: divided out, a slope in levels
    # per pixel.
    slope = (
        np.hypot(
            cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
        )
        / 8
    )
    contrast = float(np.percentile(grey, 95) - np.percentile(grey, 5))
    return contrast / max(float(np.percentile(slope, 99.5)), 1e-3)


def out_of_focus(reading: DiceReading, unseen: int = 0) -> bool:
    """Whether most dice of ``reading`` are blurred: two at least, and at least half of them
    (in the roll zone and set aside alike: the camera sees both through one lens). ``unseen``
    more dice are there, too blurred to be found (:func:`unseen_blurred`).

    A lens slightly off blurs the small dice past reading and leaves the larger readable, so
    all of them need not be blurred; a single die blurred among sharp ones says nothing of the
    lens."""
    dice = reading.dice + reading.set_aside
    blurred = sum(1 for die in dice if die.blurred) + unseen
    return blurred >= 2 and 2 * blurred >= len(dice) + unseen


def unfound(reading: DiceReading, unseen: Callable[[], int] | None) -> int:
    """The dice blurred past finding to count with ``reading``: ``unseen()`` (:func:`unseen_blurred`
    on its frame), asked only when the dice found leave the question open, none of them read
    sharp and not most of them blurred already; else 0.

    One die read sharp shows the lens right for the whole tray, whose dice lie at one distance
    from it; counting soft shapes beside it would count the soft shadows and stains a tray can
    have, roll after roll of a game played with one die."""
    if unseen is None:
        return 0
    sharp = any(not die.blurred for die in reading.dice + reading.set_aside)
    return unseen() if not sharp and not out_of_focus(reading) else 0


class FocusWatch:
    """Says when the dice of :data:`BLURRED_ROLLS` settled readings running are mostly blurred
    (``notice("blurred")``), and when a reading of dice none of which is blurred says the lens
    is right again (``notice("")``)."""

    def __init__(
        self,
        notice: Callable[[str], object] = lambda _notice: None,
        *,
        rolls: int = BLURRED_ROLLS,
    ) -> None:
        """``notice`` is told "blurred" once when the camera looks out of focus, and "" once it
        does not any more; ``rolls`` readings in a row must look so first."""
        if rolls < 1:
            raise ValueError(f"rolls must be at least 1, got {rolls}")
        self.notice = notice
        self.rolls = rolls
        self._running = 0
        self.said = False
        """Whether the camera is said to be out of focus now."""

    def observe(self, reading: DiceReading, unseen: Callable[[], int] | None = None) -> None:
        """Take the settled reading of a roll into account (each roll once).

        ``unseen`` counts the dice too blurred to be found (:func:`unseen_blurred` on the frame
        read); it is asked only when the dice found leave the question open (:func:`unfound`):
        none of them sharp, and not most of them blurred already."""
        if reading.status != "settled":
            return
        dice = reading.dice + reading.set_aside
        hidden = unfound(reading, unseen)
        if not dice and not hidden:
            return  # an empty tray says nothing of the lens
        if out_of_focus(reading, hidden):
            self._running += 1
            if self._running >= self.rolls and not self.said:
                self.said = True
                log.warning(
                    "camera: most dice of the last %d rolls were too blurred to read: the camera"
                    " is out of focus. Turn the lens of a Camera Module v2 or HQ camera until the"
                    " pips on the tray are sharp (stop the table and run pipcam focus to measure"
                    " it), or run pipcam calibrate again to focus a Camera Module 3",
                    self._running,
                )
                self.notice("blurred")
            return
        self._running = 0
        # A reading with a blurred die or two among sharp ones keeps what was said: the lens is
        # called right again only when every die is sharp.
        if self.said and dice and not hidden and not any(die.blurred for die in dice):
            self.said = False
            log.info("camera: the dice are in focus again")
            self.notice("")

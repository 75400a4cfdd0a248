"""Telling the table's owner that the camera is out of focus, from the dice it reads.

A die blurred past reading is reported ``uncertain`` with ``blurred`` set, and the players are
asked its value (vision.reader). One such die is a die, but most dice of roll after roll are a
camera: a Camera Module v2 or HQ lens turned off the tray's distance (the v2 leaves the factory
focused far beyond a tray), or a Camera Module 3 that focused on something else. Asking the
players every value of every roll then helps nobody; the lens should be turned. A
:class:`FocusWatch` looks at each settled reading and says so (``notice("blurred")``), and stops
saying it once the dice are sharp again.

An empty tray cannot tell: felt has no edges to be sharp. So this is watched during play, from
the dice, and not at ``pipcam calibrate``; ``pipcam focus`` measures the dice in the tray frame
after frame (:func:`dice_sharpness`) while the owner turns the lens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from vision.preprocess import crops_for_model, sharpness
from vision.reader import DiceReading
from vision.source import Frame

__all__ = ["BLURRED_ROLLS", "SHARP_DICE", "FocusWatch", "dice_sharpness", "out_of_focus"]

log = logging.getLogger(__name__)

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


def out_of_focus(reading: DiceReading) -> bool:
    """Whether most dice of ``reading`` are blurred: two at least, and at least half of them
    (in the roll zone and set aside alike: the camera sees both through one lens).

    A lens slightly off blurs the small dice past reading and leaves the larger readable, so
    all of them need not be blurred; a single die blurred among sharp ones says nothing of the
    lens."""
    dice = reading.dice + reading.set_aside
    blurred = sum(1 for die in dice if die.blurred)
    return blurred >= 2 and 2 * blurred >= len(dice)


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

    def observe(self, reading: DiceReading) -> None:
        """Take the settled reading of a roll into account (each roll once)."""
        dice = reading.dice + reading.set_aside
        if reading.status != "settled" or not dice:
            return  # an empty tray says nothing of the lens
        if out_of_focus(reading):
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
        if self.said and not any(die.blurred for die in dice):
            self.said = False
            log.info("camera: the dice are in focus again")
            self.notice("")

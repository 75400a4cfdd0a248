"""Settle detection: tell a roll in progress from dice at rest, and report each roll once.

Frames are shrunk and compared with the previous one. Dice are ``settled`` once nothing has
changed for ``settle_seconds``; a roll is reported on the first such frame and not again until
something moves. A hand in the tray (a large change, a large blob, or a skin-coloured blob far
bigger than a die) keeps the status at ``moving``; when it leaves the tray as it was at the last
reported roll, no new roll is reported. "As it was" means the same dice at the same places with
the same faces, whatever the light: a cloud, a lamp or a person's shadow changes how bright the
tray is, never what lies on it.

Dice of the tray's own colour (black dice on black felt, red on red) show only their pips,
which at the detector's scale do not stand out: such a tray looks empty. So a tray that comes
to rest after a change looking empty is not called empty by the detector alone: the update
asks (``check``) and the caller's reader says which (:meth:`SettleDetector.saw_dice`,
:meth:`SettleDetector.saw_empty`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.locate import LocatorOptions, TrayColour, downscale, foreground_mask
from vision.srgb import row_gains, to_levels, to_linear

__all__ = ["SettleDetector", "SettleUpdate", "Touched"]

Frame = npt.NDArray[np.uint8]
Box = tuple[int, int, int, int]

STILL_LEVELS = 4
"""A frame whose shrunk pixels, averaged over 3x3, all lie within this many levels of those the
foreground was last found in keeps that foreground (``SettleDetector(still_levels=...)``)."""


@dataclass(frozen=True)
class SettleUpdate:
    """What one frame tells: status, whether this frame completes a roll, and why."""

    status: str
    """``empty`` (nothing on the tray), ``moving`` (changing, or a hand) or ``settled``."""
    roll: bool
    """True on the one frame that reports a roll: dice present and still for long enough."""
    hand: bool
    """True while something much larger than a die (a hand) is in the tray."""
    motion: float
    """Fraction of the frame that changed since the previous frame."""
    occupancy: float
    """Fraction of the frame that is not tray."""
    still_for: float
    """Seconds since the last change."""
    check: bool = False
    """True on the one frame at which the tray comes to rest after a change looking empty: it
    is empty, or its dice are the colour of the tray. The caller reads the frame and says
    which; ``status`` is then what the detector would say without it."""


TOUCHED = 0.3
"""Share of the middle of a die's place that changed, at some moment while the dice moved, for
the place to have been touched: a die lifted from it bares the tray there."""


@dataclass(frozen=True)
class Touched:
    """Where the tray changed while the dice moved, between two settles: the place of a die
    picked up and thrown changed, that of a die left lying where no hand passed did not. A
    thrown die can land where a die lay, showing its face (about one throw of six dice in a
    hundred on a tray); this tells the two apart."""

    mask: npt.NDArray[np.bool_]
    """The pixels, at the detector's scale, that changed from one frame to the next."""
    scale: float
    """Detector pixels per frame pixel."""

    def __call__(self, box: Sequence[float]) -> bool:
        """Whether the place ``box`` (frame pixels) was touched."""
        x0, y0, x1, y1 = (float(v) * self.scale for v in box)
        # Its middle half: a neighbour lifted beside it blurs into its edge, not its middle.
        cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 4, (y1 - y0) / 4
        height, width = self.mask.shape
        left, right = max(int(cx - rx), 0), min(int(np.ceil(cx + rx)), width)
        top, bottom = max(int(cy - ry), 0), min(int(np.ceil(cy + ry)), height)
        region = self.mask[top:bottom, left:right]
        return region.size > 0 and float(np.mean(region)) >= TOUCHED


class SettleDetector:
    """Turns a stream of frames into statuses, and reports each roll once when it settles."""

    def __init__(
        self,
        *,
        settle_seconds: float = 0.6,
        clock: Callable[[], float] = time.monotonic,
        work_size: int = 160,
        pixel_change: int = 24,
        motion_fraction: float = 0.0015,
        hand_change: float = 0.2,
        hand_blob: float = 0.12,
        skin_blob: float = 0.03,
        empty_fraction: float = 0.0008,
        tray: TrayColour | None = None,
        still_levels: int | None = STILL_LEVELS,
    ) -> None:
        """Set the thresholds (fractions are of the frame's area) and the clock.

        ``pixel_change`` is the grey-level difference that counts a pixel as changed; a frame moves
        when more than ``motion_fraction`` of it changed. A hand is a change over ``hand_change``,
        a blob over ``hand_blob``, or a skin-coloured blob over ``skin_blob`` of the frame.
        ``still_levels``: a frame whose shrunk pixels (3x3 averages) all lie within this many
        levels of the frame the foreground was last found in keeps that foreground
        (:data:`STILL_LEVELS`; None finds it in every frame).
        """
        self.settle_seconds = settle_seconds
        self.clock = clock
        self.work_size = work_size
        self.pixel_change = pixel_change
        self.motion_fraction = motion_fraction
        self.hand_change = hand_change
        self.hand_blob = hand_blob
        self.skin_blob = skin_blob
        self.empty_fraction = empty_fraction
        self.tray = tray
        self.still_levels = still_levels
        self._locator = LocatorOptions(work_size=work_size)
        self.reset()

    def reset(self) -> None:
        """Forget the previous frames: the next frame starts a new watch, with no roll pending."""
        self._previous: npt.NDArray[np.uint8] | None = None
        # The tray as last reported (or as first seen): its relative grey levels and its mask.
        self._reported: tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]] | None = None
        self._still_since = 0.0
        # Dice already lying on the tray when watching starts are not a roll: only a change
        # (dice thrown in, picked up, moved) arms the next report.
        self._armed = False
        # Dice lie on the tray that stand out too little to see here (the caller's reader saw
        # them): the tray is settled, not empty, until a change and a look say otherwise.
        self._faint = False
        # Where the caller's reader found the dice of the last report (``saw_dice``, ``read``).
        self._dice: list[Box] | None = None
        self._looked: tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]] | None = None
        self._low = False
        # What changed while the dice moved since the last roll reported (or tray checked).
        self._touching: npt.NDArray[np.bool_] | None = None
        self._scale = 1.0
        # The shrunk frame the foreground was last found in, its mask and whether a hand's
        # blob was in it: a tray at rest, most frames of a table, is not searched again.
        self._found: tuple[Frame, npt.NDArray[np.uint8], bool, TrayColour | None] | None = None
        self.touched: Touched | None = None
        """Where the tray changed while the dice moved, from the roll reported before the last
        settle to it (None before the first settle): the places of dice picked up, and of dice
        a hand passed over."""

    def update(self, frame: Frame) -> SettleUpdate:
        """Take the next frame and return its status; ``roll`` is True once per settled roll."""
        now = self.clock()
        small, self._scale = downscale(frame, self.work_size)
        grey = np.asarray(
            cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0), np.uint8
        )
        area = float(grey.size)
        mask, blob = self._foreground(small, area)
        if self._previous is None or self._previous.shape != grey.shape:
            motion = 0.0
            self._still_since = now
            # Dice lying there when watching starts were never thrown: this is the tray as it
            # was, and a hand or a shadow that leaves it so is no roll either.
            self._reported = self._appearance(grey, mask)
        else:
            changed = self._changed(grey, self._previous)
            motion = float(np.count_nonzero(changed)) / area
            if motion > self.motion_fraction:  # a still frame's odd noisy pixel is no touch
                if self._touching is None or self._touching.shape != changed.shape:
                    self._touching = np.zeros(changed.shape, np.bool_)
                self._touching |= changed
        self._previous = grey
        occupancy = float(np.count_nonzero(mask)) / area
        hand = motion > self.hand_change or blob
        moving = motion > self.motion_fraction
        if moving or hand:
            self._still_since = now
            self._armed = True
        still_for = now - self._still_since
        low = occupancy < self.empty_fraction
        if hand or still_for < self.settle_seconds:
            status = "moving"
        elif low and not self._faint:
            status = "empty"
        else:
            status = "settled"
        roll = check = False
        if status != "moving" and self._armed:
            # Once a settle, not every frame: what lies on the tray against the last report.
            self._armed = False
            touching = self._touching if self._touching is not None else np.zeros_like(grey, bool)
            self.touched = Touched(touching.copy(), self._scale)
            appearance = self._appearance(grey, mask)
            if low:
                # At rest after a change, and (almost) nothing stands out: an empty tray, or
                # dice of the tray's colour. Only a reader can tell.
                check = True
            elif not self._same_as_reported(appearance):
                roll = True
                self._reported = appearance
                self._faint = False
            elif self._dice is not None and self._changed_unseen(appearance):
                # What stands out lies as it did, but something the mask does not see moved:
                # dice of the tray's colour thrown beside others that stand out.
                check = True
            self._looked, self._low = appearance, low
            if roll or check:
                self._touching = None  # touched since the last roll the caller reads
        elif status == "empty":
            self._armed = False
            self._reported = None
        return SettleUpdate(
            status=status,
            roll=roll,
            hand=hand,
            motion=motion,
            occupancy=occupancy,
            still_for=still_for,
            check=check,
        )

    def _foreground(self, small: Frame, area: float) -> tuple[npt.NDArray[np.uint8], bool]:
        """What stands out of the tray in ``small``, and whether a hand's blob is among it;
        those of the frame they were last found in while no pixel moved past ``still_levels``.

        The mask is most of a frame's cost (about 2.5 of 3.5 ms at 1280x960 on the host of
        2026-12-03), ten frames a second for as long as the table runs, and nearly every frame
        of a table shows the tray at rest. Sensor noise (2 levels a pixel at 1280x960) moves
        the shrunk frame's 3x3 averages by 3 levels at most; a die put down, a hand or a shadow
        moves them by tens."""
        found = self._found
        if (
            found is not None
            and self.still_levels is not None
            and found[0].shape == small.shape
            and found[3] is self.tray  # a tray colour set since is another foreground
            # Averaged over 3x3 pixels the noise falls, while the least a mask sees (a die of
            # about 3x3 work pixels, some 10 levels off the tray) stays.
            and int(cv2.norm(cv2.blur(cv2.absdiff(small, found[0]), (3, 3)), cv2.NORM_INF))
            <= self.still_levels
        ):
            return found[1], found[2]
        mask = foreground_mask(small, self.tray, self._locator)
        blob = self._hand_blob(small, mask, area)
        self._found = (small.copy(), mask, blob, self.tray)
        return mask, blob

    def _changed(
        self, grey: npt.NDArray[np.uint8], previous: npt.NDArray[np.uint8]
    ) -> npt.NDArray[np.bool_]:
        """The pixels that changed since the previous frame, whatever each row's light.

        A lamp on mains power flickers a hundred times a second, and a rolling shutter whose
        exposure is shorter than that sees it as horizontal bands, at another place in every
        frame: from a light 0.8 to 1.2 times its mean, a still tray never settled. A band
        scales the light of a whole row alike, so each row of the previous frame is first
        scaled (in linear light: a level is not proportional to its light) by its median ratio
        to the same row now; a die, a hand or a shadow covers too little of a row to move its
        median.
        """
        now, before = to_linear(grey), to_linear(previous)
        expected = to_levels(before * row_gains(now, before)).astype(np.int16)
        return np.asarray(np.abs(grey.astype(np.int16) - expected) > self.pixel_change)

    def saw_dice(self, dice: Sequence[Box]) -> bool:
        """After a ``check``: the reader found dice at ``dice`` (boxes in frame pixels).
        Return whether they are a new roll, not the dice of the last report lying where they
        lay (a hand or a shadow came and went); the tray is settled from now on."""
        new = self._dice is None or not _same_places(self._dice, dice)
        self._dice = list(dice)
        self._faint = self._low
        if new:
            self._reported = self._looked
        return new

    def saw_empty(self) -> None:
        """After a ``check``: the reader found no die; the tray is empty."""
        self._faint = False
        self._dice = None
        self._reported = None

    def read(self, dice: Sequence[Box]) -> None:
        """The caller's reader found dice at ``dice`` in the roll just reported: a later
        ``check`` compares with them."""
        self._dice = list(dice)

    def _changed_unseen(
        self, appearance: tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]
    ) -> bool:
        """Whether the tray changed, since the last report, where neither mask sees anything."""
        if self._reported is None or self._reported[0].shape != appearance[0].shape:
            return False
        relative, mask = appearance
        was_relative, was_mask = self._reported
        unseen = ~(mask | was_mask) & (np.abs(relative - was_relative) > self.pixel_change)
        return float(np.count_nonzero(unseen)) / float(relative.size) > self.motion_fraction

    def _appearance(
        self, grey: npt.NDArray[np.uint8], mask: npt.NDArray[np.uint8]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """What lies on the tray, whatever the light: each grey level relative to its close
        neighbourhood (128 where a pixel is as bright as the light around it), and the mask.

        A cloud, auto-exposure or a shadow scales a pixel and its neighbours alike, so the
        relative level stays. The neighbourhood is barely wider than the blur the grey frame
        already has (two work pixels, a fifth of a die's side on a tray that fills the frame):
        the smaller it is, the sharper the shadow edge across a die that it forgives.
        """
        level = grey.astype(np.float32)
        local = np.asarray(cv2.GaussianBlur(level, (0, 0), 2.0), np.float32)
        relative = np.asarray(128.0 * level / np.maximum(local, 1.0), np.float32)
        return relative, mask > 0

    def _same_as_reported(
        self, appearance: tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]
    ) -> bool:
        """True if the same dice lie at the same places with the same faces as at the last
        reported roll (a hand, a shadow or a change of light came and went)."""
        if self._reported is None or self._reported[0].shape != appearance[0].shape:
            return False
        relative, mask = appearance
        was_relative, was_mask = self._reported
        # A mask's outline moves by a pixel when the light changes how far a die's anti-aliased
        # edge stands out from the tray; a die moved, added or taken away moves it further.
        near = np.ones((3, 3), np.uint8)
        grown = cv2.dilate(mask.astype(np.uint8), near) > 0
        was_grown = cv2.dilate(was_mask.astype(np.uint8), near) > 0
        moved = (mask & ~was_grown) | (was_mask & ~grown)
        # Only what is not tray is compared: a shadow's edge across bare felt is no die.
        faces = (mask | was_mask) & (np.abs(relative - was_relative) > self.pixel_change)
        changed = moved | faces
        return float(np.count_nonzero(changed)) / float(relative.size) <= self.motion_fraction

    def _hand_blob(self, small: Frame, mask: npt.NDArray[np.uint8], area: float) -> bool:
        """True if the mask holds a blob far bigger than any die, or a large skin-coloured one."""
        count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        if count <= 1:
            return False
        sizes = stats[1:, cv2.CC_STAT_AREA].astype(np.float64) / area
        if float(sizes.max()) > self.hand_blob:
            return True
        candidates = np.nonzero(sizes > self.skin_blob)[0]
        if candidates.size == 0:
            return False
        ycrcb = cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb)
        # Skin of every tone falls in this Cr/Cb box (Chai and Ngan's classic bounds); white or
        # ivory dice, grey pips and green or blue felt all fall outside it.
        skin = cv2.inRange(ycrcb, (40, 135, 80), (255, 175, 128)) > 0
        for index in candidates:
            blob = labels == index + 1
            if np.count_nonzero(skin & blob) > 0.5 * np.count_nonzero(blob):
                return True
        return False


def _same_places(before: Sequence[Box], now: Sequence[Box]) -> bool:
    """Whether the dice at ``now`` lie where those at ``before`` lay, each within a third of
    its side. Places, not faces: a reader asked twice may read an unsure die two ways, and a
    die thrown again does not land where it lay."""
    if len(before) != len(now):
        return False
    left = list(before)
    for x0, y0, x1, y1 in now:
        reach = max(x1 - x0, y1 - y0) / 3
        match = next(
            (
                b
                for b in left
                if abs((b[0] + b[2]) - (x0 + x1)) / 2 <= reach
                and abs((b[1] + b[3]) - (y0 + y1)) / 2 <= reach
            ),
            None,
        )
        if match is None:
            return False
        left.remove(match)
    return True

"""Frame to reading: locate the dice, classify each face, and say how sure the reading is.

The reader never invents a die: only what the locator finds is read, and a box in which the face
model sees no face is dropped, unless the die check (:mod:`vision.die_check`) takes it for a die
the model cannot read, a die leaning on another or on the wall: that one is ``cocked``, with no
value, or ``uncertain`` with no value when its crop is blurred (a die out of focus, likely flat).
A face the die check takes for a die partly hidden (a card or a cup over part of it) is
``uncertain`` with no value too: what shows of it can look like another face; and so is a box
that would be dropped (no face, or a face as unsure as a phantom) that it takes for one. A face
it takes for a die leaning is ``cocked``, with no value: the face up is not the throw's.
A die it cannot read surely is ``uncertain``, or ``cocked`` (and given no value) when its
footprint shows two faces. Before that, a box not read surely that the learned locator drew
too large over a die pressed against it is read again as a square about its centre, and a face
read there with at least 0.9 stands (:func:`vision.detect.pressed_squares`). After it, a die not
read surely whose box the frame's edge cuts is ``uncertain``, partly hidden and ``cut``, with no
value: the camera's view cut it short, not a lean.

The thresholds were chosen on the training photos of ``shared/data/dice`` (never on the
held-out ones reported in ``models/MODEL_CARD.md``): a face is ``ok`` from a probability of 0.5
(the point where a wrong value, counted three times as costly as a question to the players, and an
unread die cost least); a box whose most likely class is "no face" is dropped whatever its
probability (keeping such boxes as ``uncertain`` lowered the exact-roll rate on every source); and
an unsure box to which the model gives "no face" at least 0.2 is dropped too (on the top-down
photos that removed 35 of 41 phantom boxes for 1 of 45 real dice read unsurely). Before any of
that, a face read with less than 0.9 is read again at three quarter turns and the four readings
averaged (on the training photos: recall +0.3 points on the top-down ones and +0.4 on the oblique
ones, the webcam ones unchanged; sure faces, nearly all of a clear tray, are read once).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from vision.classify import (
    CLASSES,
    DEFAULT_LOCATOR_MODEL,
    SURE_FACE,
    UNSURE_NO_FACE,
    Classifier,
    Crops,
    OnnxClassifier,
    OnnxLocator,
    Probabilities,
    read_unsure_turned,
)
from vision.detect import PRESSED_ASPECT, at_frame_edge, covered_share, pressed_squares
from vision.die_check import Judgement
from vision.locate import ClassicalLocator, LearnedLocator, LocatedDie, Locator, TrayColour
from vision.preprocess import crops_for_model

if TYPE_CHECKING:
    from vision.die_check import DieChecker

__all__ = [
    "DiceReader",
    "DiceReading",
    "Die",
    "DieStatus",
    "FrameStatus",
    "Zone",
    "default_locator",
]

Frame = npt.NDArray[np.uint8]
Box = tuple[int, int, int, int]
FrameStatus = Literal["empty", "moving", "settled"]
DieStatus = Literal["ok", "uncertain", "cocked"]


@dataclass(frozen=True)
class Die:
    """One die as read: face value (None when unknown), confidence, status and box in pixels;
    ``blurred`` for an ``uncertain`` die too blurred to read (out of focus, or still moving),
    ``hidden`` for one partly hidden (something lies over part of it), and ``cut`` besides when
    what hides it is the edge of the camera's view."""

    value: int | None
    confidence: float
    status: DieStatus
    box: Box
    blurred: bool = False
    hidden: bool = False
    cut: bool = False

    @property
    def text(self) -> str:
        """The die in a word, as ``pipcam read`` prints it: ``4``, ``4?`` (unsure), ``?``,
        ``cocked``, ``blurred``, ``hidden`` or ``cut``.

        >>> Die(4, 0.7, "uncertain", (0, 0, 9, 9)).text, Die(None, 0.4, "cocked", (0, 0, 9, 9)).text
        ('4?', 'cocked')
        """
        if self.status == "cocked":
            return "cocked"
        if self.blurred:
            return "blurred"
        if self.cut:
            return "cut"
        if self.hidden:
            return "hidden"
        if self.value is None:
            return "?"
        return f"{self.value}?" if self.status == "uncertain" else str(self.value)

    def to_json(self) -> dict[str, object]:
        """Return the die as the JSON object ``pipcam read --json`` prints (``"blurred": true``
        only on a blurred die, ``"hidden": true`` only on a partly hidden one, ``"cut": true``
        only on one the frame's edge cuts)."""
        out: dict[str, object] = {
            "value": self.value,
            "confidence": round(self.confidence, 4),
            "status": self.status,
            "box": list(self.box),
        }
        if self.blurred:
            out["blurred"] = True
        if self.hidden:
            out["hidden"] = True
        if self.cut:
            out["cut"] = True
        return out


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


@functools.cache
def _shipped_locator() -> LearnedLocator:
    """The shipped learned locator, loaded once: a session is shared by every reader."""
    return LearnedLocator(OnnxLocator(DEFAULT_LOCATOR_MODEL, threads=1))


def default_locator() -> Locator:
    """The learned locator when ``models/dice_locator.onnx`` is there, else the classical one.

    The learned one measured better on every held-out photo source (``models/MODEL_CARD.md``);
    the classical one remains the fallback and can be chosen for a calibrated tray.
    """
    if DEFAULT_LOCATOR_MODEL.is_file():
        return _shipped_locator()
    return ClassicalLocator()


COVERED_BY_READ = 0.5
"""A "no face" box the die check keeps is dropped all the same when the boxes of dice read
surely cover this share of it: it lies over their seam (models/EXPERIMENTS.md, "Dice the face
model cannot read")."""


SAME_DIE = 0.6
"""A die not read surely whose box lies this much inside the box of one die read surely is that
die seen again (a box round its top face or a part of it beside its whole body's, too unlike in
size for the locator's overlap rule), and is dropped: on black dice on a black tray they were
asked about as partly hidden. Dice pressed together lie less inside any one neighbour's box,
though their neighbours together may cover more (models/EXPERIMENTS.md, "A die seen twice")."""

SURE_AGAIN = 0.9
"""How sure the second look at a box squared over a pressed die must be for its reading to stand:
a square is a guess at where the die lies (models/EXPERIMENTS.md, "Dice pressed together, read
again as squares": at the first look's 0.5, oblique photos under camera effects gained 16 dice
and 7 wrong values; at 0.9, 6 and none)."""
SEAM_OF_READ = 0.9
"""A box squared for a second look is not looked at when the squares of dice read surely cover
this share of it: it lies on their seam (the middle of a square of four), not on a die."""


def _covered(box: Box, others: list[Box]) -> float:
    """The share of ``box`` that the union of ``others`` covers (0 to 1).

    >>> _covered((0, 0, 10, 10), [(5, 0, 20, 10), (0, 5, 10, 20)])
    0.75
    """
    x0, y0, x1, y1 = box
    if x1 <= x0 or y1 <= y0:
        return 0.0
    mask = np.zeros((y1 - y0, x1 - x0), np.bool_)
    for ox0, oy0, ox1, oy1 in others:
        mask[max(oy0 - y0, 0) : max(oy1 - y0, 0), max(ox0 - x0, 0) : max(ox1 - x0, 0)] = True
    return float(mask.mean())


class DiceReader:
    """Reads the dice in a frame with a locator and a face classifier."""

    def __init__(
        self,
        classifier: Classifier,
        *,
        locator: Locator | None = None,
        zone: Zone | None = None,
        tray: TrayColour | None = None,
        min_confidence: float = SURE_FACE,
        reject_confidence: float = 0.0,
        unsure_no_face: float = UNSURE_NO_FACE,
        turn_below: float = 0.9,
        die_check: DieChecker | None | Literal["auto"] = "auto",
        square_pressed: float = PRESSED_ASPECT,
    ) -> None:
        """Set up the reader.

        ``locator`` finds the dice (None: :func:`default_locator`); ``zone`` is the calibrated
        roll zone (None: the whole frame); ``tray`` the calibrated tray colour (None: learnt from
        each frame, by the classical locator). A face read with at least ``min_confidence`` is
        ``ok``; otherwise the die is ``cocked`` if its footprint says it leans, else
        ``uncertain`` (its best guess as value, None if the model saw no face). A box the model
        calls "no face" with at least ``reject_confidence`` is dropped, and so is an unsure,
        flat one to which it gives "no face" a probability of at least ``unsure_no_face``. A
        face first read with less than ``turn_below`` is read again at three quarter turns and
        the readings averaged (:func:`vision.classify.read_unsure_turned`; 0 turns this off).
        ``die_check`` keeps, as ``cocked``, the "no face" boxes it takes for dice ("auto": the
        check fitted to the classifier's model file, if there is one; None: none kept), or as
        ``uncertain`` (no value) those it takes for blurred dice; and it makes ``uncertain`` (no
        value) the faces it takes for dice partly hidden. A box of the learned locator not read
        surely that it drew too large over a die pressed against it (longer one way than the
        other, or its shorter side longer than the side of the dice read surely, by more than
        ``square_pressed``; :func:`vision.detect.pressed_squares`) is read again as a square
        about its centre, and that reading stands when it is a face read with at least
        ``SURE_AGAIN`` (0 turns this off).
        """
        self.classifier = classifier
        self.locator = default_locator() if locator is None else locator
        self.zone = zone
        self.tray = tray
        self.min_confidence = min_confidence
        self.reject_confidence = reject_confidence
        self.unsure_no_face = unsure_no_face
        self.turn_below = turn_below
        self.square_pressed = square_pressed
        if die_check == "auto":
            from vision.die_check import die_checker_for

            die_check = None
            if isinstance(classifier, OnnxClassifier):
                die_check = die_checker_for(classifier.path, threads=classifier.threads)
        self.die_check = die_check

    def locate(self, frame: Frame) -> list[LocatedDie]:
        """Return the dice the locator finds in ``frame`` (boxes in frame pixels), set-aside too."""
        height, width = frame.shape[:2]
        zone = None if self.zone is None else self.zone.pixels(width, height)
        return self.locator.locate(frame, zone=zone, tray=self.tray)

    def read(self, frame: Frame, *, status: FrameStatus | None = None) -> DiceReading:
        """Return the reading of ``frame``; ``status`` comes from settle detection if known.

        Without a ``status`` the frame is taken as still (a photo): ``empty`` if no die is seen,
        else ``settled``. A die not read surely whose box reaches the frame's edge is asked about
        as partly hidden (``uncertain``, ``hidden`` and ``cut``, no value), never called ``cocked``.
        """
        dice = self._locate_and_read(frame)
        height, width = frame.shape[:2]
        zone = self.zone or Zone()
        inside: list[Die] = []
        aside: list[Die] = []
        for found, die in dice:
            if die.status != "ok" and not die.blurred and at_frame_edge(die.box, (height, width)):
                # Cut short by the camera's view: neither leaning nor a guess at its face (what
                # shows can look like another), but a die partly hidden, asked about.
                die = dataclasses.replace(
                    die, value=None, status="uncertain", hidden=True, cut=True
                )
            cx, cy = found.centre
            (inside if zone.contains(cx, cy, width, height) else aside).append(die)
        if status is None:
            status = "settled" if inside or aside else "empty"
        return DiceReading(status=status, dice=tuple(inside), set_aside=tuple(aside))

    def read_box(self, frame: Frame, box: Box) -> Die | None:
        """Read the one die whose box is known (a crop of a single die: its whole image).

        The locator is skipped; the face is read and judged as in :meth:`read` (a flat die:
        the box says nothing of leaning). None when the model sees no face there.
        """
        (x0, y0, x1, y1) = box
        centre = ((x0 + x1) / 2.0, (y0 + y1) / 2.0)
        found = LocatedDie(box=box, rect=(centre, (x1 - x0, y1 - y0), 0.0), cocked=False)
        dice = self._classify(frame, [found])
        return dice[0][1] if dice else None

    def _locate_and_read(self, frame: Frame) -> list[tuple[LocatedDie, Die]]:
        """Locate and read; the learned locator's footprints only where a decision uses them.

        A footprint is consulted only for a die not read surely, and moves a die's centre only
        within a few pixels of its box, which matters only near the roll zone's edge. A frame
        with neither is decided without them, as it would be with them: on a clear tray that
        spares about a millisecond a die.
        """
        if not isinstance(self.locator, LearnedLocator):
            return self._classify(frame, self.locate(frame))
        plain = self.locator.without_footprints(frame)
        probs, judged = self._probabilities(frame, plain)
        dice = self._decide(plain, probs, judged)
        if any(self._uses_footprint(row) for row in probs) or not all(
            self._zone_side_is_clear(frame, found.box) for found, _ in dice
        ):
            dice = self._decide(self.locator.with_footprints(frame, plain), probs, judged)
        return self._read_pressed_again(frame, plain, dice)

    def _read_pressed_again(
        self, frame: Frame, plain: list[LocatedDie], dice: list[tuple[LocatedDie, Die]]
    ) -> list[tuple[LocatedDie, Die]]:
        """``dice`` with the boxes not read surely that the locator drew too large over a die
        pressed against them read again as squares; a square's reading replaces the box's (or
        adds the die the box lost) only when it is a face read with at least ``SURE_AGAIN``,
        never on the seam of dice read surely.

        On frames of dice pressed together (a renderer neither model learnt from, 400 frames)
        this read 1434 of 1500 dice right against 1395 and invented none; on the real photos
        it changed no reading of the top-down and webcam sources (models/EXPERIMENTS.md, "Dice
        pressed together, read again as squares").
        """
        sure = {found.box for found, die in dice if die.status == "ok"}
        if all(found.box in sure for found in plain):
            return dice  # a clear tray: every box read surely, none to look at again
        # The dice read surely give the dice's side in this frame: the shorter side of their
        # boxes, which a box stretched one way still has right.
        sides = sorted(min(x1 - x0, y1 - y0) for x0, y0, x1, y1 in sure)
        squares = pressed_squares(
            [d.box for d in plain],
            frame.shape[:2],
            aspect=self.square_pressed,
            side=sides[len(sides) // 2] if sides else None,
        )
        sure_squares = [
            square or found.box
            for found, square in zip(plain, squares, strict=True)
            if found.box in sure
        ]
        looked: dict[Box, LocatedDie] = {}
        for found, square in zip(plain, squares, strict=True):
            if (
                square is None
                or found.box in sure
                or _covered(square, sure_squares) >= SEAM_OF_READ
            ):
                continue
            x0, y0, x1, y1 = square
            rect = (((x0 + x1) / 2, (y0 + y1) / 2), (float(x1 - x0), float(y1 - y0)), 0.0)
            looked[found.box] = LocatedDie(box=square, rect=rect, cocked=False)
        if not looked:
            return dice
        located = list(looked.values())
        read = self._decide(located, *self._probabilities(frame, located))
        sure_again = {
            found.box: (found, die)
            for found, die in read
            if die.status == "ok" and die.confidence >= SURE_AGAIN
        }
        better = {
            box: sure_again[square.box]
            for box, square in looked.items()
            if square.box in sure_again
        }
        kept = [better.pop(found.box, (found, die)) for found, die in dice]
        return kept + list(better.values())

    def _uses_footprint(self, row: npt.NDArray[np.float32]) -> bool:
        """Whether :meth:`_decide` looks at the footprint for a die read as ``row``."""
        best = int(np.argmax(row))
        confidence = float(row[best])
        if best == 0:
            return confidence < self.reject_confidence
        return confidence < self.min_confidence

    def _zone_side_is_clear(self, frame: Frame, box: Box) -> bool:
        """Whether every point within a box's size of ``box`` lies on one side of the zone."""
        height, width = int(frame.shape[0]), int(frame.shape[1])
        zone = self.zone or Zone()
        x0, y0, x1, y1 = box
        bw, bh = x1 - x0, y1 - y0
        ex0, ey0, ex1, ey1 = x0 - bw, y0 - bh, x1 + bw, y1 + bh
        zx0, zy0, zx1, zy1 = zone.x0 * width, zone.y0 * height, zone.x1 * width, zone.y1 * height
        inside = zx0 <= ex0 and ex1 <= zx1 and zy0 <= ey0 and ey1 <= zy1
        outside = ex1 < zx0 or zx1 < ex0 or ey1 < zy0 or zy1 < ey0
        return inside or outside

    def _probabilities(
        self, frame: Frame, located: list[LocatedDie]
    ) -> tuple[Probabilities, Judgement]:
        """The face model's reading of each located die, unsure ones read again at turns, and
        the die check's judgement of each (:meth:`vision.die_check.DieChecker.judge_frame`;
        all False without a check)."""
        none = Judgement.nothing(len(located))
        if not located:
            return np.zeros((0, CLASSES), np.float32), none
        boxes = [d.box for d in located]
        crops = crops_for_model(frame, boxes)
        check = self.die_check
        if check is None:
            return self.read_crops(crops), none
        features = None
        if check.reads_features_of(self.classifier):
            # The check reads what the face model's first member computes anyway: one run.
            first, features = self.classifier.predict_with_features(crops)
        else:
            first = self.classifier.predict(crops)
        probs = read_unsure_turned(self.classifier, crops, first, self.turn_below)
        return probs, check.judge_frame(crops, boxes, probs, features=features)

    def read_crops(self, crops: Crops) -> Probabilities:
        """The face model's reading of model crops (N, 3, 64, 64), unsure ones read again at
        turns: what the reader decides each die from."""
        return read_unsure_turned(
            self.classifier, crops, self.classifier.predict(crops), self.turn_below
        )

    def _classify(self, frame: Frame, located: list[LocatedDie]) -> list[tuple[LocatedDie, Die]]:
        return self._decide(located, *self._probabilities(frame, located))

    def _decide(
        self, located: list[LocatedDie], probs: Probabilities, judged: Judgement
    ) -> list[tuple[LocatedDie, Die]]:
        """Each located die's status and value from its reading (class-0 and unsure boxes
        dropped, but for the class-0 ones the die check takes for dice, of which the blurred
        ones are ``uncertain`` and the others ``cocked``; faces it takes for dice partly hidden
        are ``uncertain``, with no value, and so are the boxes otherwise dropped that it takes
        for dice partly hidden); a face it takes for a die leaning is ``cocked``, with no value.
        A die not read surely whose box lies ``SAME_DIE`` inside the box of one die read surely
        is that die seen again, and dropped."""
        dies, blurred, hidden, hidden_dropped, leaning = judged
        dice: list[tuple[LocatedDie, Die]] = []
        read = [
            found.box
            for found, row in zip(located, probs, strict=True)
            if int(np.argmax(row)) != 0 and float(row.max()) >= self.min_confidence
        ]
        for found, row, is_die, is_blurred, is_hidden, is_hidden_dropped, is_leaning in zip(
            located, probs, dies, blurred, hidden, hidden_dropped, leaning, strict=True
        ):
            best = int(np.argmax(row))
            confidence = float(row[best])
            kept = (best == 0 and is_die) or is_hidden_dropped
            if kept and _covered(found.box, read) >= COVERED_BY_READ:
                # A box over the seam of dice read one by one (a square of four pressed
                # together): they are all there already.
                continue
            if best == 0 and is_die and is_blurred:
                # No face, but a die, and out of focus: flat for all we know, so the players
                # are asked its value rather than told to throw it again.
                die = Die(None, confidence, "uncertain", found.box, blurred=True)
            elif best == 0 and is_die:
                # No face, but a die (the check, fitted on leaning dice against the phantoms of
                # real photos): one leaning on another or on the wall. Asked, never guessed.
                die = Die(None, confidence, "cocked", found.box)
            elif best == 0 and is_hidden_dropped:
                # No face, but what shows of a die partly hidden (the check, fitted on dice under
                # cards against the phantoms of real photos): asked, and told what covers it.
                die = Die(None, confidence, "uncertain", found.box, hidden=True)
            elif best == 0 and confidence >= self.reject_confidence:
                # Sure it is no face: not a die (a shoe, a hand, the tray's wall), or a die on
                # its edge the model cannot tell from one. Reporting nothing never invents a die.
                continue
            elif best != 0 and confidence >= self.min_confidence and is_hidden:
                # A face, but of a die partly hidden (the check, fitted on dice under cards cut
                # as in training): what shows can look like another face. Asked, never guessed.
                die = Die(None, confidence, "uncertain", found.box, hidden=True)
            elif best != 0 and confidence >= self.min_confidence:
                # The model was trained to call a tilted die class 0, so a sure face beats the
                # footprint's shape (perspective and shadows stretch flat dice too).
                die = Die(best, confidence, "ok", found.box)
            elif found.cocked:
                die = Die(None, confidence, "cocked", found.box)
            elif best == 0:
                die = Die(None, confidence, "uncertain", found.box)
            elif float(row[0]) >= self.unsure_no_face and is_hidden_dropped:
                # As unsure as a phantom, but the check takes it for a die partly hidden.
                die = Die(None, confidence, "uncertain", found.box, hidden=True)
            elif float(row[0]) >= self.unsure_no_face:
                # Neither a sure face nor a leaning footprint, and a fair chance it is no die at
                # all (a knob, a shadow, a pip cluster on a box): reporting it would invent one.
                continue
            else:
                # An unsure face: its best guess, unless it is a die partly hidden.
                value = None if is_hidden else best
                die = Die(value, confidence, "uncertain", found.box, hidden=bool(is_hidden))
            if die.value is not None and is_leaning:
                # A face, but of a die leaning (the check, fitted on rendered leaning dice
                # read as a face against flat ones): the face up is not the throw's.
                die = Die(None, confidence, "cocked", found.box)
            if die.status != "ok" and any(
                covered_share(found.box, box) >= SAME_DIE for box in read if box != found.box
            ):
                # Mostly inside the box of one die read surely: that die seen again.
                continue
            dice.append((found, die))
        return dice

"""DiceReader on synthetic frames with fake classifiers: values, statuses, zone, no phantoms.

Every reading test runs with both locators: the learned one (shipped model) and the classical one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from tests.vision.boxes_net import BoxesNet
from vision.classify import DEFAULT_LOCATOR_MODEL, DEFAULT_MODEL, FakeClassifier, OnnxClassifier
from vision.detect import PRESSED_ASPECT
from vision.die_check import DEFAULT_DIE_CHECK, DieChecker, load_die_check
from vision.focus import out_of_focus
from vision.locate import ClassicalLocator, LearnedLocator, LocatedDie, Locator, TrayColour
from vision.preprocess import crops_for_model
from vision.reader import DiceReader, DiceReading, Die, Zone, default_locator
from vision.synthetic import (
    TRAYS,
    DieSpec,
    dice_side_by_side,
    die_cut_by_edge,
    draw_hand,
    leaning_beside_two_flat,
    make_frame,
    make_tray,
    six_dice,
    tray_of,
)

Crop = npt.NDArray[np.float32]
Frame = npt.NDArray[np.uint8]


@pytest.fixture(
    params=["learned", pytest.param("classical")],
)
def locator(request: pytest.FixtureRequest) -> Locator:
    """Each locator in turn: the shipped learned one and the classical one."""
    return default_locator() if request.param == "learned" else ClassicalLocator()


def _values(reading: DiceReading) -> list[int | None]:
    return sorted((d.value for d in reading.dice), key=lambda v: -1 if v is None else v)


@pytest.mark.parametrize("tray", sorted(TRAYS))
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_six_dice_read_right(
    tray: str, seed: int, pip_classifier: FakeClassifier, locator: Locator
) -> None:
    dice = six_dice(1280, 960, seed=seed)
    reading = DiceReader(pip_classifier, locator=locator).read(
        make_frame(1280, 960, dice, tray=tray, seed=seed)
    )
    assert reading.status == "settled"
    assert _values(reading) == sorted(d.value for d in dice)
    assert all(d.status == "ok" for d in reading.dice)
    assert reading.values == tuple(sorted(d.value for d in dice))
    assert reading.set_aside == ()


@pytest.mark.parametrize("tray", sorted(TRAYS))
def test_empty_tray_reads_empty_and_asks_the_model_nothing(
    tray: str, pip_classifier: FakeClassifier, locator: Locator
) -> None:
    reading = DiceReader(pip_classifier, locator=locator).read(
        make_tray(1280, 960, colour=tray, seed=3)
    )
    assert reading == DiceReading(status="empty", dice=(), set_aside=())
    assert pip_classifier.calls == []


def test_dice_outside_the_zone_are_set_aside(
    pip_classifier: FakeClassifier, locator: Locator
) -> None:
    inside = [DieSpec(2, 300, 400, 80), DieSpec(5, 600, 500, 80, angle=30)]
    outside = [DieSpec(6, 1150, 200, 80), DieSpec(1, 1180, 800, 80)]
    frame = make_frame(1280, 960, inside + outside, tray="green")
    reading = DiceReader(pip_classifier, locator=locator, zone=Zone(0.0, 0.0, 0.8, 1.0)).read(frame)
    assert _values(reading) == [2, 5]
    assert sorted(d.value or 0 for d in reading.set_aside) == [1, 6]
    assert all(d.box[0] > 0.8 * 1280 for d in reading.set_aside)


def _constant(label: int, confidence: float) -> Callable[[Crop], tuple[int, float]]:
    return lambda _crop: (label, confidence)


@pytest.mark.parametrize(
    ("label", "confidence", "reject", "expected"),
    [
        (4, 0.95, 0.0, (4, "ok")),
        (4, 0.5, 0.0, (4, "ok")),
        (4, 0.45, 0.0, (4, "uncertain")),
        (0, 0.5, 0.6, (None, "uncertain")),
    ],
)
def test_confidence_and_class_zero_decide_the_status(
    label: int,
    confidence: float,
    reject: float,
    expected: tuple[int | None, str],
    locator: Locator,
) -> None:
    frame = make_frame(640, 480, [DieSpec(4, 320, 240, 60)], tray="grey")
    classifier = FakeClassifier(_constant(label, confidence))
    reading = DiceReader(classifier, locator=locator, reject_confidence=reject).read(frame)
    assert len(reading.dice) == 1
    die = reading.dice[0]
    assert (die.value, die.status) == expected
    assert die.confidence == pytest.approx(confidence)
    assert (reading.values is None) == (expected[1] != "ok")


@pytest.mark.parametrize("confidence", [0.3, 0.97])
def test_a_box_whose_best_class_is_no_face_is_dropped(confidence: float, locator: Locator) -> None:
    frame = make_frame(640, 480, [DieSpec(4, 320, 240, 60)], tray="grey")
    reading = DiceReader(FakeClassifier(_constant(0, confidence)), locator=locator).read(frame)
    assert reading.dice == ()
    assert reading.status == "empty"


FLAT = [DieSpec(2, 300, 300, 90, angle=10), DieSpec(5, 700, 600, 90, angle=50)]
LEANING = [DieSpec(4, 1000, 300, 90, angle=15)]


def test_an_unsure_die_that_leans_is_cocked_never_guessed(locator: Locator) -> None:
    frame = make_frame(1280, 960, FLAT, cocked=LEANING, tray="brown")
    reading = DiceReader(FakeClassifier(_constant(3, 0.4)), locator=locator).read(frame)
    cocked = [d for d in reading.dice if d.status == "cocked"]
    assert len(cocked) == 1
    assert cocked[0].value is None
    assert cocked[0].box[0] > 900
    assert [(d.value, d.status) for d in reading.dice if d.status != "cocked"] == [
        (3, "uncertain"),
        (3, "uncertain"),
    ]
    assert reading.values is None


def test_a_sure_face_beats_the_footprint(pip_classifier: FakeClassifier, locator: Locator) -> None:
    # The model is trained to call a tilted die "no face": when it reads a face surely, the
    # stretched footprint is perspective or shadow.
    frame = make_frame(1280, 960, FLAT, cocked=LEANING, tray="brown")
    reading = DiceReader(pip_classifier, locator=locator).read(frame)
    assert reading.values == (2, 4, 5)


def test_a_leaning_blob_with_no_face_is_dropped(locator: Locator) -> None:
    frame = make_frame(1280, 960, [], cocked=LEANING, tray="brown")
    assert DiceReader(FakeClassifier(_constant(0, 0.8)), locator=locator).read(frame).dice == ()


def test_given_status_is_kept(pip_classifier: FakeClassifier, locator: Locator) -> None:
    frame = make_frame(640, 480, six_dice(640, 480), tray="green")
    reading = DiceReader(pip_classifier, locator=locator).read(frame, status="moving")
    assert reading.status == "moving"


def test_large_frames_are_located_small_and_cropped_at_full_resolution(
    pip_classifier: FakeClassifier, locator: Locator
) -> None:
    dice = six_dice(3280, 2464, seed=4)
    frame = make_frame(3280, 2464, dice, tray="grey", seed=4)
    reader = DiceReader(pip_classifier, locator=locator)
    reading = reader.read(frame)
    assert _values(reading) == sorted(d.value for d in dice)
    boxes = [d.box for d in reading.dice]
    assert all(box[2] - box[0] > 200 for box in boxes)
    np.testing.assert_array_equal(pip_classifier.calls[0], crops_for_model(frame, boxes))


def test_die_json_has_the_contract_fields() -> None:
    die = Die(value=3, confidence=0.987654, status="ok", box=(1, 2, 30, 40))
    assert die.to_json() == {
        "value": 3,
        "confidence": 0.9877,
        "status": "ok",
        "box": [1, 2, 30, 40],
    }


@pytest.mark.parametrize(
    "zone", [(0.5, 0.0, 0.5, 1.0), (0.0, -0.1, 1.0, 1.0), (0.0, 0.0, 1.2, 1.0)]
)
def test_bad_zones_are_refused(zone: tuple[float, float, float, float]) -> None:
    with pytest.raises(ValueError, match="must satisfy"):
        Zone(*zone)


@pytest.mark.parametrize("tray", sorted(TRAYS))
def test_shipped_model_reads_synthetic_rolls_and_empty_trays(tray: str, locator: Locator) -> None:
    reader = DiceReader(OnnxClassifier(DEFAULT_MODEL), locator=locator)
    for seed in (0, 1):
        dice = six_dice(1280, 960, seed=seed)
        reading = reader.read(make_frame(1280, 960, dice, tray=tray, seed=seed))
        # Values as read or best guessed: how sure the model is depends on its training run.
        assert _values(reading) == sorted(d.value for d in dice)
        assert all(d.status in ("ok", "uncertain") for d in reading.dice)
    assert reader.read(make_tray(1280, 960, colour=tray, seed=9)).dice == ()


@pytest.mark.parametrize(
    ("rows", "cols", "gap", "least"),
    [
        pytest.param(1, 2, 0.0, 11, id="a pair pressed together"),
        pytest.param(1, 3, 0.0, 10, id="a row of three pressed together"),
        pytest.param(2, 2, 0.03, 10, id="a square of four, a seam apart"),
        pytest.param(2, 3, 0.03, 10, id="a block of six, a seam apart"),
    ],
)
def test_dice_lying_side_by_side_are_read_one_by_one(
    rows: int, cols: int, gap: float, least: int
) -> None:
    """Dice that knocked together and came to rest touching, turned alike, are each found and
    read: not one box around two, which the face model rightly calls no die, so that both
    vanished (the locator before 2026-12-02 read 2, 1, 0 and 0 of these 12 frames; before boxes
    too large over a neighbour were read again as squares, the row of three read 8 and the
    block of six 9). The shipped reader, on frames of a renderer neither model learnt from, one
    tray colour after another; ``least`` is at most what the card's measurement on other seeds
    (100-123) found, per 12 frames."""
    reader = DiceReader(OnnxClassifier(DEFAULT_MODEL))
    exact = 0
    for seed in range(12):
        dice = dice_side_by_side(1280, 960, rows=rows, cols=cols, gap=gap, seed=seed)
        frame = make_frame(1280, 960, dice, tray=tray_of(seed), seed=seed)
        reading = reader.read(frame)
        assert len(reading.dice) <= len(dice), "a die was invented"
        exact += _values(reading) == sorted(d.value for d in dice)
    assert exact >= least


def test_a_leaning_die_is_reported_cocked_not_dropped() -> None:
    """The face model calls a leaning die "no face", as it calls a knob or a shadow; the die
    check tells the die apart, so the table asks for a re-throw instead of losing it. The shipped
    reader on a renderer neither the models nor the check learnt from: on seeds 100-159 it
    reported 44 of 60 leaning dice ``cocked`` (1 without the check; 8 were read as a face, 8
    missed), every flat die right and nothing invented. Here seeds 0-11 (10 found)."""
    frames = [leaning_beside_two_flat(seed)[:2] for seed in range(12)]
    checks: list[tuple[Literal["auto"] | None, int, int]] = [("auto", 9, 12), (None, 0, 1)]
    for check, least, most in checks:
        reader = DiceReader(OnnxClassifier(DEFAULT_MODEL), die_check=check)
        cocked = 0
        for frame, flat in frames:
            reading = reader.read(frame)
            left = [d for d in reading.dice if d.box[2] < 800]
            assert [(d.value, d.status) for d in sorted(left, key=lambda d: d.box[0])] == [
                (d.value, "ok") for d in flat
            ]
            right = [d for d in reading.dice if d.box[0] > 800]
            assert len(right) <= 1, "a die was invented"
            cocked += [(d.value, d.status) for d in right] == [(None, "cocked")]
        assert least <= cocked <= most, check


# A die against the left edge of the frame, 70 % of it in view, beside two whole ones.
CUT = DieSpec(5, 30, 480, 100, angle=0)
WHOLE = [DieSpec(2, 500, 300, 100, angle=10), DieSpec(4, 900, 600, 100, angle=50)]


@pytest.mark.parametrize(
    ("confidence", "cut", "whole"),
    [
        pytest.param(
            0.4, (None, "uncertain", True, True), (3, "uncertain", False, False), id="unsure"
        ),
        pytest.param(0.95, (3, "ok", False, False), (3, "ok", False, False), id="sure"),
    ],
)
def test_a_die_cut_by_the_frames_edge_is_asked_about_as_partly_hidden(
    confidence: float,
    cut: tuple[int | None, str, bool, bool],
    whole: tuple[int, str, bool, bool],
) -> None:
    """What shows of a die the frame cuts can look like another face: not read surely, it is
    asked about as partly hidden, cut by the frame (what to move is the die, not something
    over it), with no guess; a die read surely there stands, and the whole dice are decided
    as ever. (The learned locator: the classical one leaves out what
    the frame's edge cuts, mostly arms and the tray's wall.)"""
    frame = make_frame(1280, 960, [CUT, *WHOLE], tray="grey")
    reader = DiceReader(FakeClassifier(_constant(3, confidence)), locator=default_locator())
    reading = reader.read(frame)
    by_place = sorted(reading.dice, key=lambda d: d.box[0])
    assert by_place[0].box[0] <= 1, "the cut die was not found"
    assert [(d.value, d.status, d.hidden, d.cut) for d in by_place] == [cut, whole, whole]


def test_a_die_read_by_its_box_alone_is_not_taken_for_one_cut_by_the_frame() -> None:
    """``read_box`` reads a crop of one die, whose box is the whole image: it touches every
    edge, and the die is whole."""
    frame = make_frame(120, 120, [DieSpec(4, 60, 60, 100)], tray="grey")
    die = DiceReader(FakeClassifier(_constant(4, 0.4))).read_box(frame, (0, 0, 120, 120))
    assert die is not None
    assert (die.value, die.status, die.hidden, die.cut) == (4, "uncertain", False, False)


def test_the_shipped_reader_calls_no_die_cut_by_the_frame_cocked() -> None:
    """A die resting where the camera's view ends lies flat: before the frame's edge was
    looked at, the shipped reader called 6 of these 40 cut dice (60 % in view) ``cocked``, a
    re-throw for a die that does not lean. Each one not read surely is asked about as partly
    hidden, with no value, and the whole die beside it is read right."""
    reader = DiceReader(OnnxClassifier(DEFAULT_MODEL))
    hidden = 0
    for seed in range(100, 140):
        frame, _, whole = die_cut_by_edge(seed, 0.6)
        reading = reader.read(frame)
        assert all(d.status != "cocked" for d in reading.dice)
        unsure = [d for d in reading.dice if d.status != "ok"]
        assert all(d.hidden and d.cut and d.value is None for d in unsure)
        hidden += len(unsure)
        assert whole.value in [d.value for d in reading.dice if d.status == "ok"]
    assert hidden >= 4


def test_the_die_check_keeps_no_hand_and_no_bare_tray() -> None:
    """What the check may keep is what the locator boxes and the face model calls no face:
    a hand resting on a tray, or a bare tray, still reads as no dice."""
    reader = DiceReader(OnnxClassifier(DEFAULT_MODEL))
    assert reader.die_check is not None
    rng = np.random.default_rng(5)
    for seed in range(12):
        frame = make_tray(1280, 960, colour=tray_of(seed), seed=seed)
        assert reader.read(frame).dice == ()
        draw_hand(
            frame,
            float(rng.uniform(300, 900)),
            float(rng.uniform(400, 800)),
            float(rng.uniform(150, 300)),
        )
        assert reader.read(frame).dice == ()


def _out_of_focus(seed: int, sigma: float) -> tuple[Frame, list[DieSpec]]:
    """Six dice on a tray, the whole frame blurred by a Gaussian of ``sigma`` pixels (the dice
    are 80-95 px: 10 px is past what the face model reads)."""
    specs = six_dice(1280, 960, seed=seed)
    frame = make_frame(1280, 960, specs, tray=tray_of(seed), seed=seed)
    return np.asarray(cv2.GaussianBlur(frame, (0, 0), sigma), np.uint8), specs


def test_dice_out_of_focus_are_asked_about_never_guessed() -> None:
    """A camera out of focus: the face model calls most dice "no face", and the blurred-die
    check reports them ``uncertain`` with no value, so the table asks for them instead of
    saying a die is missing. Measured on seeds 0-11 at 10 and 12 px: 114 of 144 dice asked
    about, 15 read right, none read wrong (the leaning-die check alone: none asked about); the
    dice asked about are all marked blurred, and 22 of the 24 frames are out of focus as the
    table's focus watch counts them (the same trays sharp: none)."""
    shipped = load_die_check(DEFAULT_DIE_CHECK)
    assert shipped.blurred is not None
    classifier = OnnxClassifier(DEFAULT_MODEL)
    readers = {
        "both": DiceReader(classifier),
        "leaning only": DiceReader(
            classifier,
            die_check=DieChecker(DEFAULT_MODEL, dataclasses.replace(shipped, blurred=None)),
        ),
    }
    asked = dict.fromkeys(readers, 0)
    blurred = dict.fromkeys(readers, 0)
    unfocused = dict.fromkeys(readers, 0)
    for seed in range(12):
        for sigma in (10.0, 12.0):
            frame, specs = _out_of_focus(seed, sigma)
            for name, reader in readers.items():
                reading = reader.read(frame)
                unfocused[name] += out_of_focus(reading)
                for die in reading.dice:
                    cx, cy = (die.box[0] + die.box[2]) / 2, (die.box[1] + die.box[3]) / 2
                    under = min(specs, key=lambda s: (s.cx - cx) ** 2 + (s.cy - cy) ** 2)
                    assert abs(under.cx - cx) < under.side / 2, "a die was invented"
                    assert die.value in (None, under.value), (seed, sigma, name, die)
                    asked[name] += die.value is None
                    if die.blurred:
                        assert (die.value, die.status) == (None, "uncertain"), die
                        assert die.to_json()["blurred"] is True
                        blurred[name] += 1
        specs = six_dice(1280, 960, seed=seed)
        sharp = make_frame(1280, 960, specs, tray=tray_of(seed), seed=seed)
        assert not out_of_focus(readers["both"].read(sharp)), seed
    assert asked["both"] >= 90
    assert blurred["both"] >= 90
    assert unfocused["both"] >= 18
    assert asked["leaning only"] <= 5
    assert blurred["leaning only"] == unfocused["leaning only"] == 0


class _Grid:
    """A locator that boxes the whole frame in squares of ``side`` pixels, die or not."""

    def __init__(self, side: int) -> None:
        self.side = side

    def locate(
        self,
        frame: Frame,
        *,
        zone: tuple[int, int, int, int] | None = None,  # noqa: ARG002
        tray: TrayColour | None = None,  # noqa: ARG002
    ) -> list[LocatedDie]:
        s, (height, width) = self.side, frame.shape[:2]
        return [
            LocatedDie(
                box=(x, y, x + s, y + s), rect=((x + s / 2, y + s / 2), (s, s), 0.0), cocked=False
            )
            for y in range(0, height - s + 1, s)
            for x in range(0, width - s + 1, s)
        ]


def test_a_tray_out_of_focus_has_no_die_where_none_lies() -> None:
    """Blur takes away the edges that tell a die from felt, so the blurred-die check is asked
    about smooth things. A locator that boxed every square of a bare tray with a hand on it,
    sharp and out of focus, would get next to no die back (the shipped locator boxes none).
    On 21480 such boxes (seeds 0-5, 60/80/100/120 px, blur 0/4/8/12/16 px) the check fitted on
    2026-12-04 (on boxes below the sharpness line only, with a blurred hand among them) takes
    9, here 2 of 2496; the one before it, fitted on every box and with no hand, took 35, here 7.
    A check fitted without bare places took thousands. The bound is one box in 500."""
    rng = np.random.default_rng(7)
    kept: list[tuple[int, int, float, int]] = []
    for side in (60, 120):
        reader = DiceReader(OnnxClassifier(DEFAULT_MODEL), locator=_Grid(side))
        for seed in range(2):
            frame = make_tray(1280, 960, colour=tray_of(seed), seed=seed)
            draw_hand(frame, float(rng.uniform(300, 900)), float(rng.uniform(400, 800)), 220.0)
            for sigma in (0.0, 6.0, 12.0):
                blurred = frame
                if sigma:
                    blurred = np.asarray(cv2.GaussianBlur(frame, (0, 0), sigma), np.uint8)
                assert DiceReader(OnnxClassifier(DEFAULT_MODEL)).read(blurred).dice == ()
                if found := len(reader.read(blurred).dice):
                    kept.append((side, seed, sigma, found))
    assert sum(found for *_, found in kept) <= 5, kept  # of 2496 boxes


class _Recording:
    """A locator that answers fixed dice and keeps the zone and tray it was asked with."""

    def __init__(self, dice: list[LocatedDie]) -> None:
        self.dice = dice
        self.asked: list[tuple[tuple[int, int, int, int] | None, TrayColour | None]] = []

    def locate(
        self,
        frame: Frame,  # noqa: ARG002
        *,
        zone: tuple[int, int, int, int] | None = None,
        tray: TrayColour | None = None,
    ) -> list[LocatedDie]:
        self.asked.append((zone, tray))
        return self.dice


def test_the_reader_asks_its_locator_with_the_zone_in_pixels_and_the_tray(
    pip_classifier: FakeClassifier,
) -> None:
    tray = TrayColour(median=(100.0, 120.0, 140.0), spread=(3.0, 1.0, 1.0))
    frame = make_frame(800, 600, [DieSpec(3, 600, 300, 60)], tray="green")
    found = LocatedDie(
        box=(570, 270, 631, 331), rect=((600.0, 300.0), (60.0, 60.0), 0.0), cocked=False
    )
    aside = LocatedDie(
        box=(70, 70, 131, 131), rect=((100.0, 100.0), (60.0, 60.0), 0.0), cocked=False
    )
    locator = _Recording([found, aside])
    reader = DiceReader(pip_classifier, locator=locator, zone=Zone(0.3, 0.0, 1.0, 1.0), tray=tray)
    reading = reader.read(frame)
    assert locator.asked == [((240, 0, 800, 600), tray)]
    assert [(d.value, d.box) for d in reading.dice] == [(3, found.box)]
    # The second box lies left of the zone on bare tray: no face there, so it is not set aside.
    assert reading.set_aside == ()


def test_a_box_the_locator_finds_on_bare_tray_is_dropped_when_the_model_sees_no_face(
    pip_classifier: FakeClassifier,
) -> None:
    # The locator may answer something die-like where there is none: the face model decides.
    ghost = LocatedDie(
        box=(300, 200, 361, 261), rect=((330.0, 230.0), (60.0, 60.0), 0.0), cocked=False
    )
    reading = DiceReader(pip_classifier, locator=_Recording([ghost])).read(
        make_tray(640, 480, colour="green", seed=1)
    )
    assert reading == DiceReading(status="empty", dice=(), set_aside=())


def test_the_default_locator_is_the_learned_one_when_the_model_is_shipped() -> None:
    expected = LearnedLocator if DEFAULT_LOCATOR_MODEL.is_file() else ClassicalLocator
    assert isinstance(default_locator(), expected)
    assert isinstance(DiceReader(FakeClassifier(_constant(1, 0.9))).locator, expected)


class _Fixed:
    """A classifier answering the same probability row for every crop."""

    def __init__(self, row: list[float]) -> None:
        self.row = np.asarray(row, np.float32)

    def predict(self, crops: Crop) -> npt.NDArray[np.float32]:
        return np.tile(self.row, (len(crops), 1))


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        pytest.param([0.1, 0.0, 0.0, 0.45, 0.45, 0.0, 0.0], [(3, "uncertain")], id="unsure-face"),
        pytest.param([0.25, 0.0, 0.0, 0.4, 0.35, 0.0, 0.0], [], id="unsure-maybe-no-die"),
        pytest.param([0.25, 0.0, 0.0, 0.75, 0.0, 0.0, 0.0], [(3, "ok")], id="sure-face"),
        pytest.param([0.4, 0.0, 0.0, 0.35, 0.25, 0.0, 0.0], [], id="no-face-first"),
    ],
)
def test_an_unsure_flat_box_that_may_be_no_die_is_dropped(
    row: list[float], expected: list[tuple[int, str]], locator: Locator
) -> None:
    frame = make_frame(640, 480, [DieSpec(4, 320, 240, 60)], tray="grey")
    reading = DiceReader(_Fixed(row), locator=locator).read(frame)
    assert [(d.value, d.status) for d in reading.dice] == expected


def test_an_unsure_leaning_die_is_cocked_even_if_it_may_be_no_face(locator: Locator) -> None:
    frame = make_frame(1280, 960, FLAT, cocked=LEANING, tray="brown")
    reading = DiceReader(_Fixed([0.3, 0.0, 0.0, 0.4, 0.3, 0.0, 0.0]), locator=locator).read(frame)
    assert [d.status for d in reading.dice] == ["cocked"]
    assert reading.dice[0].box[0] > 900


class _SureOnceTurned:
    """Reads each crop as an unsure five as it lies (a glare spot as a fifth pip), a four turned."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def predict(self, crops: Crop) -> npt.NDArray[np.float32]:
        first = not self.batches
        self.batches.append(len(crops))
        row = [0.05, 0, 0, 0, 0.47, 0.48, 0] if first else [0.02, 0, 0, 0, 0.9, 0.08, 0]
        return np.tile(np.asarray(row, np.float32), (len(crops), 1))


@pytest.mark.parametrize(
    ("turn_below", "expected", "batches"),
    [
        pytest.param(0.9, [(4, "ok")], [1, 3], id="unsure-read-again-turned"),
        pytest.param(0.0, [(5, "uncertain")], [1], id="turns-off"),
        pytest.param(0.4, [(5, "uncertain")], [1], id="sure-enough-read-once"),
    ],
)
def test_an_unsure_face_is_read_again_at_three_turns(
    turn_below: float, expected: list[tuple[int, str]], batches: list[int], locator: Locator
) -> None:
    frame = make_frame(640, 480, [DieSpec(4, 320, 240, 60)], tray="grey")
    classifier = _SureOnceTurned()
    reading = DiceReader(classifier, locator=locator, turn_below=turn_below).read(frame)
    assert [(d.value, d.status) for d in reading.dice] == expected
    assert classifier.batches == batches


# --- The learned locator's footprints are taken only when a decision looks at them.


class _AlwaysFootprints:
    """The learned locator behind the plain Locator protocol: every die gets its footprint."""

    def __init__(self, inner: LearnedLocator) -> None:
        self.inner = inner

    def locate(
        self, frame: Frame, *, zone: tuple[int, int, int, int] | None = None, tray: object = None
    ) -> list[LocatedDie]:
        return self.inner.locate(frame)


@pytest.fixture
def footprint_calls(monkeypatch: pytest.MonkeyPatch) -> tuple[LearnedLocator, list[int]]:
    """The shipped learned locator, counting the dice it takes footprints of."""
    learned = default_locator()
    if not isinstance(learned, LearnedLocator):
        pytest.skip("no learned locator shipped")
    calls: list[int] = []
    original = learned.with_footprints

    def counted(frame: Frame, dice: list[LocatedDie]) -> list[LocatedDie]:
        calls.append(len(dice))
        return original(frame, dice)

    monkeypatch.setattr(learned, "with_footprints", counted)
    return learned, calls


def _reading_key(reading: DiceReading) -> tuple[object, ...]:
    def dice(group: tuple[Die, ...]) -> list[tuple[object, ...]]:
        return [(d.value, d.status, d.box, d.confidence) for d in group]

    return reading.status, dice(reading.dice), dice(reading.set_aside)


@pytest.mark.parametrize(
    ("decide", "zone", "taken"),
    [
        pytest.param(_constant(4, 0.99), None, False, id="sure-faces"),
        pytest.param(_constant(3, 0.4), None, True, id="unsure-faces"),
        pytest.param(_constant(0, 0.6), None, False, id="sure-no-face"),
        pytest.param(_constant(4, 0.99), Zone(0.5, 0.0, 1.0, 1.0), True, id="die-at-the-zone-edge"),
        pytest.param(
            _constant(4, 0.99), Zone(0.0, 0.0, 0.8, 0.9), False, id="dice-well-inside-a-zone"
        ),
    ],
)
def test_footprints_are_taken_only_when_a_decision_looks_at_them(
    footprint_calls: tuple[LearnedLocator, list[int]],
    decide: Callable[[Crop], tuple[int, float]],
    zone: Zone | None,
    taken: bool,
) -> None:
    learned, calls = footprint_calls
    # Dice at x 255-345 and 655-745 of 1280: the second straddles a zone starting at 640.
    frame = make_frame(1280, 960, FLAT, tray="brown")
    reading = DiceReader(FakeClassifier(decide), locator=learned, zone=zone).read(frame)
    assert bool(calls) == taken
    always = DiceReader(FakeClassifier(decide), locator=_AlwaysFootprints(learned), zone=zone)
    assert _reading_key(reading) == _reading_key(always.read(frame))


@pytest.mark.parametrize("seed", range(6))
def test_a_frame_reads_the_same_whether_footprints_are_taken_or_not(
    footprint_calls: tuple[LearnedLocator, list[int]], seed: int
) -> None:
    learned, _ = footprint_calls
    dice = six_dice(1280, 960, seed=seed)
    cocked = [DieSpec(1 + seed % 6, 1100, 150 + 40 * seed, 80, angle=20)] if seed % 2 else []
    frame = make_frame(1280, 960, dice, cocked=cocked, tray=tray_of(seed))
    classifier = OnnxClassifier(DEFAULT_MODEL)
    zone = Zone(0.1, 0.1, 0.9, 0.9) if seed % 3 == 0 else None
    fast = DiceReader(classifier, locator=learned, zone=zone).read(frame)
    always = DiceReader(classifier, locator=_AlwaysFootprints(learned), zone=zone).read(frame)
    assert _reading_key(fast) == _reading_key(always)


class _ReadAgain:
    """A classifier reading its first batch as ``first`` (a row per crop, in the order the
    locator finds them: the stand-in net's peaks are equal, so top to bottom, then left to
    right) and every later batch (the second look at squared boxes) as ``again``."""

    def __init__(self, first: list[list[float]], again: list[float]) -> None:
        self.first = np.asarray(first, np.float32)
        self.again = np.asarray(again, np.float32)
        self.batches: list[int] = []

    def predict(self, crops: Crop) -> npt.NDArray[np.float32]:
        self.batches.append(len(crops))
        if len(self.batches) == 1:
            assert len(crops) == len(self.first)
            return self.first
        return np.tile(self.again, (len(crops), 1))


_SURE_TWO = [0.0, 0.0, 0.99, 0.01, 0.0, 0.0, 0.0]
_SURE_FIVE = [0.0, 0.0, 0.0, 0.0, 0.0, 0.99, 0.01]
_NO_FACE = [0.9, 0.02, 0.02, 0.02, 0.02, 0.01, 0.01]
_UNSURE_FIVE = [0.1, 0.1, 0.1, 0.1, 0.1, 0.4, 0.1]
# Three dice 100 px a side pressed together in a row; the net draws the middle one 150 px wide,
# over half of each neighbour, as the shipped locator does on such rows.
_ROW = [DieSpec(2, 540, 480, 100), DieSpec(5, 640, 480, 100), DieSpec(2, 740, 480, 100)]
_ROW_BOXES = [_ROW[0].box, (565, 430, 715, 530), _ROW[2].box]


_SQUARE = [(490, 380, 590, 480), (590, 380, 690, 480), (490, 480, 590, 580), (590, 480, 690, 580)]


def _pressed_reader(
    boxes: list[tuple[int, int, int, int]],
    classifier: _ReadAgain,
    square_pressed: float = PRESSED_ASPECT,
) -> DiceReader:
    net = BoxesNet(boxes, (960, 1280))
    return DiceReader(
        classifier,
        locator=LearnedLocator(net),
        turn_below=0.0,
        die_check=None,
        square_pressed=square_pressed,
    )


_DIE = DieSpec(2, 540, 480, 100)


@pytest.mark.parametrize(
    ("inner", "reported"),
    [
        pytest.param((495, 435, 555, 495), 1, id="inside it: the same die"),
        pytest.param((520, 450, 620, 530), 1, id="seven tenths inside it"),
        pytest.param((560, 440, 660, 520), 2, id="two fifths: another die"),
    ],
)
def test_an_unsure_box_mostly_inside_a_die_read_surely_is_that_die_seen_again(
    inner: tuple[int, int, int, int], reported: int
) -> None:
    """A second box round part of a die (its top face, say) is too small beside the die's
    own for the locator's overlap rule to drop it; read unsurely, it was asked about as another
    die. A box that lies less inside it is another die, as where dice lie pressed together."""
    frame = make_frame(1280, 960, [_DIE], tray="grey")
    boxes = sorted([_DIE.box, inner], key=lambda b: ((b[1] + b[3]) // 8, (b[0] + b[2]) // 8))
    rows = [_SURE_TWO if box == _DIE.box else _UNSURE_FIVE for box in boxes]
    reading = _pressed_reader(boxes, _ReadAgain(rows, _UNSURE_FIVE), square_pressed=0).read(frame)
    assert len(reading.dice) == reported
    (sure,) = [d for d in reading.dice if d.status == "ok"]
    # The box comes back through a locator output of float32 log sizes, exp'd and cut to whole
    # pixels outward: a pixel wider is the same box.
    assert sure.value == 2
    assert max(abs(a - b) for a, b in zip(sure.box, _DIE.box, strict=True)) <= 1


def test_black_dice_on_a_black_tray_are_not_read_twice() -> None:
    """On black dice on a black felt the shipped locator drew a second, smaller box on two of
    these ten frames' dice, and the reader asked about it as a die partly hidden."""
    reader = DiceReader(OnnxClassifier(DEFAULT_MODEL))
    for seed in range(10):
        dice = [
            dataclasses.replace(d, body=(30, 30, 30), pip=(235, 235, 235))
            for d in six_dice(1280, 960, seed=seed)
        ]
        reading = reader.read(make_frame(1280, 960, dice, tray=(35, 35, 35), seed=seed))
        assert len(reading.dice) <= len(dice), f"a die was invented at seed {seed}"


@pytest.mark.parametrize("middle", [_NO_FACE, _UNSURE_FIVE], ids=["dropped", "unsure"])
@pytest.mark.parametrize(
    "box",
    [_ROW_BOXES[1], (575, 415, 705, 545)],
    ids=["stretched one way", "too large both ways"],
)
def test_a_box_stretched_over_dice_pressed_against_it_is_read_again_as_a_square(
    middle: list[float], box: tuple[int, int, int, int]
) -> None:
    """The learned locator draws a die between two it touches too large; the face model,
    taught that a box around two dice holds none, drops it. Read again as a square about the
    box's centre (the side of the dice read surely), it is kept when that reading is a sure
    face, with the square as its box."""
    frame = make_frame(1280, 960, _ROW, tray="grey")
    classifier = _ReadAgain([_SURE_TWO, middle, _SURE_TWO], _SURE_FIVE)
    reading = _pressed_reader([_ROW_BOXES[0], box, _ROW_BOXES[2]], classifier).read(frame)
    assert classifier.batches == [3, 1], "only the stretched box is read again"
    dice = sorted(reading.dice, key=lambda d: d.box[0])
    assert [(d.value, d.status) for d in dice] == [(2, "ok"), (5, "ok"), (2, "ok")]
    x0, y0, x1, y1 = dice[1].box
    assert x1 - x0 == y1 - y0 == pytest.approx(100, abs=6)
    assert (x0 + x1) / 2 == pytest.approx(640, abs=6)
    assert (y0 + y1) / 2 == pytest.approx(480, abs=6)


@pytest.mark.parametrize("middle", [_NO_FACE, _UNSURE_FIVE], ids=["dropped", "unsure"])
@pytest.mark.parametrize(
    "again",
    [_UNSURE_FIVE, [0.05, 0.05, 0.05, 0.05, 0.05, 0.7, 0.05]],
    ids=["unsure", "sure for a first look, not for a second"],
)
def test_a_second_look_that_is_not_sure_changes_nothing(
    middle: list[float], again: list[float]
) -> None:
    frame = make_frame(1280, 960, _ROW, tray="grey")
    classifier = _ReadAgain([_SURE_TWO, middle, _SURE_TWO], again)
    reading = _pressed_reader(_ROW_BOXES, classifier).read(frame)
    assert classifier.batches == [3, 1]
    once = _ReadAgain([_SURE_TWO, middle, _SURE_TWO], again)
    assert reading == _pressed_reader(_ROW_BOXES, once, square_pressed=0.0).read(frame)
    assert once.batches == [3]


def test_with_square_pressed_off_a_stretched_box_is_read_once() -> None:
    frame = make_frame(1280, 960, _ROW, tray="grey")
    classifier = _ReadAgain([_SURE_TWO, _NO_FACE, _SURE_TWO], _SURE_FIVE)
    reading = _pressed_reader(_ROW_BOXES, classifier, square_pressed=0.0).read(frame)
    assert _values(reading) == [2, 2]
    assert classifier.batches == [3]


@pytest.mark.parametrize(
    ("boxes", "first", "read"),
    [
        pytest.param(
            _ROW_BOXES, [_SURE_TWO, _SURE_FIVE, _SURE_TWO], [2, 2, 5], id="read surely at once"
        ),
        pytest.param([_ROW_BOXES[1]], [_NO_FACE], [], id="alone: not pressed, a slanted view"),
        pytest.param(
            # A square of four pressed together and a box the net drew over their seam.
            [*_SQUARE, (560, 450, 620, 530)],
            [_SURE_TWO, _SURE_TWO, _NO_FACE, _SURE_TWO, _SURE_TWO],
            [2, 2, 2, 2],
            id="on the seam of dice read surely",
        ),
    ],
)
def test_a_box_is_not_read_again(
    boxes: list[tuple[int, int, int, int]], first: list[list[float]], read: list[int]
) -> None:
    # The stand-in net and classifier decide; the frame is only something to crop.
    frame = make_frame(1280, 960, _ROW, tray="grey")
    classifier = _ReadAgain(first, _SURE_FIVE)
    reading = _pressed_reader(boxes, classifier).read(frame)
    assert classifier.batches == [len(boxes)]
    assert _values(reading) == read

"""DiceReader on synthetic frames with fake classifiers: values, statuses, zone, no phantoms."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pytest

from vision.classify import DEFAULT_MODEL, FakeClassifier, OnnxClassifier
from vision.preprocess import crops_for_model
from vision.reader import DiceReader, DiceReading, Die, Zone
from vision.synthetic import TRAYS, DieSpec, make_frame, make_tray, six_dice

Crop = npt.NDArray[np.float32]


def _values(reading: DiceReading) -> list[int | None]:
    return sorted((d.value for d in reading.dice), key=lambda v: -1 if v is None else v)


@pytest.mark.parametrize("tray", sorted(TRAYS))
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_six_dice_read_right(tray: str, seed: int, pip_classifier: FakeClassifier) -> None:
    dice = six_dice(1280, 960, seed=seed)
    reading = DiceReader(pip_classifier).read(make_frame(1280, 960, dice, tray=tray, seed=seed))
    assert reading.status == "settled"
    assert _values(reading) == sorted(d.value for d in dice)
    assert all(d.status == "ok" for d in reading.dice)
    assert reading.values == tuple(sorted(d.value for d in dice))
    assert reading.set_aside == ()


@pytest.mark.parametrize("tray", sorted(TRAYS))
def test_empty_tray_reads_empty_and_asks_the_model_nothing(
    tray: str, pip_classifier: FakeClassifier
) -> None:
    reading = DiceReader(pip_classifier).read(make_tray(1280, 960, colour=tray, seed=3))
    assert reading == DiceReading(status="empty", dice=(), set_aside=())
    assert pip_classifier.calls == []


def test_dice_outside_the_zone_are_set_aside(pip_classifier: FakeClassifier) -> None:
    inside = [DieSpec(2, 300, 400, 80), DieSpec(5, 600, 500, 80, angle=30)]
    outside = [DieSpec(6, 1150, 200, 80), DieSpec(1, 1180, 800, 80)]
    frame = make_frame(1280, 960, inside + outside, tray="green")
    reading = DiceReader(pip_classifier, zone=Zone(0.0, 0.0, 0.8, 1.0)).read(frame)
    assert _values(reading) == [2, 5]
    assert sorted(d.value or 0 for d in reading.set_aside) == [1, 6]
    assert all(d.box[0] > 0.8 * 1280 for d in reading.set_aside)


def _constant(label: int, confidence: float) -> Callable[[Crop], tuple[int, float]]:
    return lambda _crop: (label, confidence)


@pytest.mark.parametrize(
    ("label", "confidence", "expected"),
    [
        (4, 0.95, (4, "ok")),
        (4, 0.6, (4, "uncertain")),
        (0, 0.5, (None, "uncertain")),
    ],
)
def test_confidence_and_class_zero_decide_the_status(
    label: int, confidence: float, expected: tuple[int | None, str]
) -> None:
    frame = make_frame(640, 480, [DieSpec(4, 320, 240, 60)], tray="grey")
    reading = DiceReader(FakeClassifier(_constant(label, confidence))).read(frame)
    assert len(reading.dice) == 1
    die = reading.dice[0]
    assert (die.value, die.status) == expected
    assert die.confidence == pytest.approx(confidence)
    assert (reading.values is None) == (expected[1] != "ok")


def test_a_blob_the_model_is_sure_is_no_die_is_dropped() -> None:
    frame = make_frame(640, 480, [DieSpec(4, 320, 240, 60)], tray="grey")
    reading = DiceReader(FakeClassifier(_constant(0, 0.97))).read(frame)
    assert reading.dice == ()
    assert reading.status == "empty"


FLAT = [DieSpec(2, 300, 300, 90, angle=10), DieSpec(5, 700, 600, 90, angle=50)]
LEANING = [DieSpec(4, 1000, 300, 90, angle=15)]


def test_an_unsure_die_that_leans_is_cocked_never_guessed() -> None:
    frame = make_frame(1280, 960, FLAT, cocked=LEANING, tray="brown")
    reading = DiceReader(FakeClassifier(_constant(3, 0.5))).read(frame)
    cocked = [d for d in reading.dice if d.status == "cocked"]
    assert len(cocked) == 1
    assert cocked[0].value is None
    assert cocked[0].box[0] > 900
    assert [(d.value, d.status) for d in reading.dice if d.status != "cocked"] == [
        (3, "uncertain"),
        (3, "uncertain"),
    ]
    assert reading.values is None


def test_a_sure_face_beats_the_footprint(pip_classifier: FakeClassifier) -> None:
    # The model is trained to call a tilted die "no face": when it reads a face surely, the
    # stretched footprint is perspective or shadow.
    frame = make_frame(1280, 960, FLAT, cocked=LEANING, tray="brown")
    reading = DiceReader(pip_classifier).read(frame)
    assert reading.values == (2, 4, 5)


def test_a_leaning_blob_with_no_face_is_dropped() -> None:
    frame = make_frame(1280, 960, [], cocked=LEANING, tray="brown")
    assert DiceReader(FakeClassifier(_constant(0, 0.8))).read(frame).dice == ()


def test_given_status_is_kept(pip_classifier: FakeClassifier) -> None:
    frame = make_frame(640, 480, six_dice(640, 480), tray="green")
    assert DiceReader(pip_classifier).read(frame, status="moving").status == "moving"


def test_large_frames_are_located_small_and_cropped_at_full_resolution(
    pip_classifier: FakeClassifier,
) -> None:
    dice = six_dice(3280, 2464, seed=4)
    frame = make_frame(3280, 2464, dice, tray="grey", seed=4)
    reader = DiceReader(pip_classifier)
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


real_model = pytest.mark.skipif(not DEFAULT_MODEL.is_file(), reason="models/dice_faces.onnx absent")


@real_model
@pytest.mark.parametrize("tray", sorted(TRAYS))
def test_shipped_model_reads_synthetic_rolls_and_empty_trays(tray: str) -> None:
    reader = DiceReader(OnnxClassifier(DEFAULT_MODEL))
    for seed in (0, 1):
        dice = six_dice(1280, 960, seed=seed)
        reading = reader.read(make_frame(1280, 960, dice, tray=tray, seed=seed))
        # Values as read or best guessed: how sure the model is depends on its training run.
        assert _values(reading) == sorted(d.value for d in dice)
        assert all(d.status in ("ok", "uncertain") for d in reading.dice)
    assert reader.read(make_tray(1280, 960, colour=tray, seed=9)).dice == ()

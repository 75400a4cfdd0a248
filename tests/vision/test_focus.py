"""The focus watch: the camera is said to be out of focus from the dice of the rolls it reads.

Readings are written as strings, one character a die: ``6`` a die read, ``b`` a blurred one
(uncertain, no value), ``?`` an uncertain one that is not blurred, ``c`` a cocked one, ``~`` a
shape in the roll zone blurred past finding (no die found there: :func:`unseen_blurred`); ``|``
starts the dice set aside, and ``-`` is an empty tray."""

from __future__ import annotations

import functools
import logging

import cv2
import numpy as np
import pytest

from vision.focus import (
    FocusWatch,
    dice_sharpness,
    edge_width,
    out_of_focus,
    unseen_blurred,
)
from vision.preprocess import crops_for_model, sharpness
from vision.reader import DiceReading, Die, Zone
from vision.source import Frame
from vision.synthetic import make_frame, make_tray, six_dice


def _die(code: str, k: int) -> Die:
    box = (k * 50, 10, k * 50 + 40, 50)
    if code == "b":
        return Die(None, 0.95, "uncertain", box, blurred=True)
    if code == "?":
        return Die(None, 0.6, "uncertain", box)
    if code == "c":
        return Die(None, 0.9, "cocked", box)
    return Die(int(code), 0.99, "ok", box)


def _reading(text: str, status: str = "settled") -> DiceReading:
    if text == "-":
        return DiceReading(status="empty", dice=())
    zone, _, aside = text.replace("~", "").partition("|")
    dice = tuple(_die(code, k) for k, code in enumerate(zone))
    set_aside = tuple(_die(code, k + len(zone)) for k, code in enumerate(aside))
    return DiceReading(status=status, dice=dice, set_aside=set_aside)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("123456", False),
        ("b23456", False),  # one blurred die among sharp ones: a die, not the lens
        ("bb3456", False),
        ("bbb456", True),  # half of them
        ("bbbbbb", True),
        ("bb", True),
        ("b", False),  # one die says nothing of the lens
        ("bbb???", True),
        ("??????", False),  # unsure faces are no blur
        ("cccccc", False),
        ("bb|bb66", True),  # the dice set aside are seen through the same lens
        ("66|bbb", True),
        ("6666|bb", False),
        ("-", False),
        ("~~~~~~", True),  # dice blurred past finding count as blurred dice
        ("b~", True),
        ("~", False),
        ("6~", False),
        ("66~~", True),
        ("666~~", False),
    ],
)
def test_most_dice_blurred_is_out_of_focus(text: str, expected: bool) -> None:
    assert out_of_focus(_reading(text), text.count("~")) is expected


@pytest.mark.parametrize(
    ("readings", "notices"),
    [
        (["bbbbbb"], []),  # one roll caught while the dice spun: nothing said
        (["bbbbbb", "bbbbbb"], ["blurred"]),
        (["bbbbbb", "bbbbbb", "bbbbbb", "bbb456"], ["blurred"]),  # said once
        (["bbbbbb", "123456", "bbbbbb"], []),  # not two in a row
        (["bbbbbb", "-", "bbbbbb"], ["blurred"]),  # an empty tray between rolls breaks nothing
        (["bbbbbb", "bbbbbb", "b23456"], ["blurred"]),  # one blurred die left: not mended yet
        (["bbbbbb", "bbbbbb", "123456"], ["blurred", ""]),  # every die sharp: mended
        (["bbbbbb", "bbbbbb", "123456", "bbbbbb", "bbbbbb"], ["blurred", "", "blurred"]),
        (["bbbbbb", "bbbbbb", "-", "-"], ["blurred"]),  # an empty tray does not mend a lens
        (["b", "b", "b"], []),
        # A lens far off: the reader finds no die, or one, where six soft shapes lie.
        (["~~~~~~", "~~~~~~"], ["blurred"]),
        (["b~~~~~", "~~~~~~", "123456"], ["blurred", ""]),
        (["~~~~~~", "~~~~~~", "~"], ["blurred"]),  # one shape left blurred: not mended yet
        (["~~~~~~", "~~~~~~", "6~"], ["blurred", ""]),  # a die read sharp: the lens is right
        (["~", "~", "~"], []),
        (["66~~~~", "66~~~~"], []),  # dice read sharp: soft shapes are stains or shadows
        (["6~~", "6~~"], []),
    ],
)
def test_the_watch_says_it_after_rolls_running_and_until_the_dice_are_sharp(
    readings: list[str], notices: list[str]
) -> None:
    said: list[str] = []
    watch = FocusWatch(said.append)
    for text in readings:
        watch.observe(_reading(text), unseen=functools.partial(str.count, text, "~"))
    assert said == notices
    assert watch.said is (notices[-1:] == ["blurred"])


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("123456", False),  # sharp dice: the lens is right
        ("66", False),
        ("bbbbbb", False),  # most dice blurred already
        ("bb6", False),
        ("6", False),  # a die read sharp: the lens is right for the whole tray
        ("b66", False),
        ("b6", False),
        ("b", True),  # one die found, blurred: the others may lie there unfound
        ("b?", False),  # an unsure face is no blur: sharp enough to read
        ("", True),  # a roll settled and no die found
        ("-", False),  # an empty tray
    ],
)
def test_the_watch_looks_for_unfound_dice_only_when_the_dice_found_leave_it_open(
    text: str, asked: bool
) -> None:
    """Looking for shapes the reader did not find costs a classical search of the frame: it is
    done only when no die was read sharp and the dice found do not already say."""
    calls: list[str] = []

    def unseen() -> int:
        calls.append(text)
        return 0

    FocusWatch().observe(_reading(text), unseen=unseen)
    assert bool(calls) is asked


def _six(seed: int, blur: float) -> Frame:
    frame = make_frame(1280, 960, six_dice(1280, 960, seed=seed), tray="green", seed=seed)
    return np.asarray(cv2.GaussianBlur(frame, (0, 0), blur), np.uint8) if blur else frame


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dice_blurred_past_finding_are_counted_where_the_reader_found_none(seed: int) -> None:
    """Measured on seeds 0-11: from a blur of 16 px the shipped reader finds no die of six, and
    every one of them is counted; at 0-8 px (the dice read) none ever is."""
    sharp, far_off = _six(seed, 0.0), _six(seed, 20.0)
    nothing = DiceReading(status="settled", dice=())
    assert unseen_blurred(sharp, nothing) == 0  # the shapes are sharp: no blur to count
    assert unseen_blurred(far_off, nothing) == 6
    assert out_of_focus(nothing, unseen_blurred(far_off, nothing))
    # Where a die was found, no shape is counted again.
    specs = six_dice(1280, 960, seed=seed)
    found = Die(None, 0.9, "uncertain", specs[0].box, blurred=True)
    assert unseen_blurred(far_off, DiceReading(status="settled", dice=(found,))) == 5
    # Only the roll zone is searched: a calibrated zone over the left half holds fewer.
    left = Zone(0.0, 0.0, 0.5, 1.0)
    in_left = sum(1 for spec in specs if spec.cx < 640)
    assert 0 < in_left < 6
    assert unseen_blurred(far_off, nothing, zone=left) == in_left


def test_edges_widen_with_the_blur_all_the_way_past_finding() -> None:
    """The measure `pipcam focus` gives for dice blurred past finding: about 2.5 px wider for
    each pixel of blur, where the sharpness of such dice is flat."""
    spec = six_dice(1280, 960, seed=4)[0]
    widths, sharp = [], []
    for blur in (0.0, 4.0, 8.0, 16.0, 24.0, 32.0):
        frame = _six(4, blur)
        widths.append(edge_width(frame, spec.box))
        sharp.append(float(sharpness(crops_for_model(frame, [spec.box]))[0]))
    assert widths[0] < 4.0  # a sharp die's edges: a pixel or two, and the anti-aliasing
    assert widths == sorted(widths)
    for blur, width in zip((8.0, 16.0, 24.0, 32.0), widths[2:], strict=True):
        assert 1.5 * blur < width < 3.0 * blur, (blur, width)
    assert max(sharp[3:]) - min(sharp[3:]) < 0.01  # what sharpness no longer tells


@pytest.mark.parametrize("blur", [0.0, 20.0])
def test_an_empty_tray_has_no_dice_unfound(blur: float) -> None:
    tray = make_tray(1280, 960, colour="green", seed=3)
    if blur:
        tray = np.asarray(cv2.GaussianBlur(tray, (0, 0), blur), np.uint8)
    assert unseen_blurred(tray, DiceReading(status="settled", dice=())) == 0


def test_only_settled_readings_count() -> None:
    said: list[str] = []
    watch = FocusWatch(said.append)
    for _ in range(3):
        watch.observe(_reading("bbbbbb", status="moving"))
    assert said == []


def test_the_number_of_rolls_is_an_option() -> None:
    said: list[str] = []
    watch = FocusWatch(said.append, rolls=1)
    watch.observe(_reading("bbbbbb"))
    assert said == ["blurred"]
    with pytest.raises(ValueError, match="rolls must be at least 1, got 0"):
        FocusWatch(rolls=0)


def test_the_owner_is_told_in_the_log_what_to_turn(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="vision.focus")
    watch = FocusWatch()
    for text in ("bbbbbb", "bbbbbb", "bbbbbb", "123456"):
        watch.observe(_reading(text))
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert len(messages) == 2
    assert messages[0][0] == "WARNING"
    assert "the camera is out of focus" in messages[0][1]
    assert "Turn the lens" in messages[0][1]
    assert messages[1] == ("INFO", "camera: the dice are in focus again")


def test_no_dice_have_no_sharpness() -> None:
    frame = np.zeros((60, 400, 3), np.uint8)
    assert dice_sharpness(frame, _reading("-")) is None
    frame[10:50, 0:40] = 255  # the first die's box, one hard edge around it
    assert dice_sharpness(frame, _reading("6")) == pytest.approx(
        float(sharpness(crops_for_model(frame, [(0, 10, 40, 50)]))[0])
    )

"""The focus watch: the camera is said to be out of focus from the dice of the rolls it reads.

Readings are written as strings, one character a die: ``6`` a die read, ``b`` a blurred one
(uncertain, no value), ``?`` an uncertain one that is not blurred, ``c`` a cocked one; ``|``
starts the dice set aside, and ``-`` is an empty tray."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from vision.focus import FocusWatch, dice_sharpness, out_of_focus
from vision.preprocess import crops_for_model, sharpness
from vision.reader import DiceReading, Die


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
    zone, _, aside = text.partition("|")
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
    ],
)
def test_most_dice_blurred_is_out_of_focus(text: str, expected: bool) -> None:
    assert out_of_focus(_reading(text)) is expected


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
    ],
)
def test_the_watch_says_it_after_rolls_running_and_until_the_dice_are_sharp(
    readings: list[str], notices: list[str]
) -> None:
    said: list[str] = []
    watch = FocusWatch(said.append)
    for text in readings:
        watch.observe(_reading(text))
    assert said == notices
    assert watch.said is (notices[-1:] == ["blurred"])


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

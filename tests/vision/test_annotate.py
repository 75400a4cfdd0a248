"""What was read, drawn on the frame (vision.annotate): boxes where the dice are, in the colour
of their status, the roll zone outlined, nothing else changed."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.annotate import COLOURS, ZONE_COLOUR, annotate, to_jpeg

FRAME = np.full((480, 640, 3), 90, np.uint8)


def near(pixel: np.ndarray, colour: tuple[int, int, int]) -> bool:
    return bool(np.abs(pixel.astype(int) - np.array(colour)).max() <= 2)


@pytest.mark.parametrize("status", ["ok", "uncertain", "cocked", "no_die"])
def test_each_die_is_boxed_in_the_colour_of_its_status(status: str) -> None:
    die = {"value": 5 if status == "ok" else None, "status": status, "box": [300, 200, 360, 260]}
    drawn = annotate(FRAME, [die])
    assert near(drawn[230, 300], COLOURS[status])  # the box's left side, halfway down
    assert near(drawn[260, 330], COLOURS[status])  # its bottom
    assert near(drawn[230, 330], (90, 90, 90))  # the die itself is left as it is
    assert near(drawn[50, 50], (90, 90, 90))  # and the rest of the frame
    assert near(FRAME[230, 300], (90, 90, 90))  # the frame given is not drawn on


def test_the_roll_zone_is_outlined_unless_it_is_the_whole_frame() -> None:
    assert near(annotate(FRAME, [], zone=(100, 50, 500, 400))[200, 100], ZONE_COLOUR)
    assert (annotate(FRAME, [], zone=(0, 0, 640, 480)) == FRAME).all()
    assert (annotate(FRAME, []) == FRAME).all()


def test_dice_set_aside_are_boxed_thinner_and_numbered_after_the_zones() -> None:
    zone = {"value": 2, "status": "ok", "box": [100, 100, 160, 160]}
    out = {"value": 6, "status": "ok", "box": [400, 100, 460, 160]}
    drawn = annotate(FRAME, [zone], [out])
    thick = sum(near(drawn[130, x], COLOURS["ok"]) for x in range(96, 104))
    thin = sum(near(drawn[130, x], COLOURS["ok"]) for x in range(396, 404))
    assert thick > thin >= 1


def test_a_die_without_a_box_is_refused_with_what_was_wrong() -> None:
    with pytest.raises(ValueError, match=r"a die needs a box \[x0, y0, x1, y1\]"):
        annotate(FRAME, [{"value": 3, "status": "ok", "box": [1, 2]}])


def decoded_shape(data: bytes) -> tuple[int, ...]:
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None, "not a JPEG"
    return tuple(image.shape)


def test_a_frame_is_shrunk_to_a_jpeg_of_its_longest_side_at_most() -> None:
    big = np.zeros((2464, 3280, 3), np.uint8)
    assert decoded_shape(to_jpeg(big, longest=1280)) == (962, 1280, 3)
    assert decoded_shape(to_jpeg(FRAME)) == FRAME.shape

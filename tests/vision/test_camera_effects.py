"""Camera effects for ``pipcam eval --effect``: each does what its name says, repeatably."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import pytest

from vision.camera_effects import EFFECTS, Effect, with_effect
from vision.evaluate import IntBox
from vision.srgb import to_linear
from vision.synthetic import make_frame, six_dice

Frame = np.ndarray


@pytest.fixture(scope="module")
def frame() -> Frame:
    return make_frame(320, 240, six_dice(320, 240, seed=3), tray="green", seed=3)


@pytest.mark.parametrize("name", list(EFFECTS))
def test_each_effect_keeps_a_colour_frame_of_its_scaled_size_and_repeats(
    name: str, frame: Frame
) -> None:
    effect = EFFECTS[name]
    out = effect.apply(frame)
    assert out.dtype == np.uint8
    size = (round(240 * effect.scale), round(320 * effect.scale))
    assert out.shape == (*(size[::-1] if effect.quarter_turns % 2 else size), 3)
    assert np.array_equal(effect.apply(frame), out)
    assert name == effect.name


def _means(frame: Frame) -> np.ndarray:
    """The frame's mean blue, green and red."""
    return np.asarray(frame.reshape(-1, 3).mean(axis=0), np.float64)


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("none", lambda before, after: np.allclose(before, after)),
        ("warm", lambda before, after: after[2] / after[0] > 1.5 * before[2] / before[0]),
        ("cool", lambda before, after: after[0] / after[2] > 1.4 * before[0] / before[2]),
        ("green", lambda before, after: after[1] / after[2] > 1.1 * before[1] / before[2]),
        ("dim", lambda before, after: after.mean() < 0.5 * before.mean()),
        ("dim-noisy", lambda before, after: after.mean() < 0.6 * before.mean()),
        # Four times the linear light is about 1.8 times the encoded level, clipped at 255.
        ("day", lambda before, after: after.mean() > 1.5 * min(before.mean(), 140)),
        ("flat", lambda before, after: np.ptp(after) < 0.7 * np.ptp(before)),
        # The green tray's colour gone, its brightness kept.
        ("grey", lambda before, after: np.ptp(after) < 0.5 < np.ptp(before)),
    ],
)
def test_colour_effects_move_the_colours_the_way_their_names_say(
    name: str, check: object, frame: Frame
) -> None:
    assert callable(check)
    assert check(_means(frame), _means(EFFECTS[name].apply(frame)))


@pytest.mark.parametrize("name", ["noisy", "dim-noisy", "jpeg40", "defocus"])
def test_degrading_effects_change_the_pixels_but_not_the_scene(name: str, frame: Frame) -> None:
    out = EFFECTS[name].apply(frame).astype(np.int16)
    scale = 0.5 if name == "dim-noisy" else 1.0
    difference = np.abs(out - frame.astype(np.int16) * scale)
    assert difference.mean() > 0.5
    assert difference.mean() < 25


def test_with_effect_reads_the_changed_frame_and_maps_boxes_back(frame: Frame) -> None:
    seen: list[tuple[int, ...]] = []

    def read(image: Frame) -> Sequence[tuple[int | None, IntBox]]:
        seen.append(image.shape)
        # A box in the effected frame's own pixels, as the reader would give.
        return [(4, (10, 20, 50, 60)), (None, (100, 100, 140, 130))]

    half = with_effect(read, EFFECTS["half"])
    assert list(half(frame)) == [(4, (20, 40, 100, 120)), (None, (200, 200, 280, 260))]
    assert seen == [(120, 160, 3)]
    double = with_effect(read, EFFECTS["double"])
    assert list(double(frame)) == [(4, (5, 10, 25, 30)), (None, (50, 50, 70, 65))]


def test_an_effect_that_keeps_the_size_keeps_the_boxes(frame: Frame) -> None:
    darker = Effect("test", "darker", lambda image: image // 2)
    boxes: list[tuple[int | None, IntBox]] = [(2, (1, 2, 3, 4))]
    assert list(with_effect(lambda _image: boxes, darker)(frame)) == boxes


def test_flicker_lights_each_row_alike_in_bands_from_0_7_to_1_3() -> None:
    grey = np.full((460, 40, 3), 128, np.uint8)
    out = EFFECTS["flicker"].apply(grey)
    assert (out == out[:, :1]).all()
    light = to_linear(out)[:, 0, 0] / to_linear(grey)[0, 0, 0]
    assert light.max() == pytest.approx(1.3, abs=0.02)
    assert light.min() == pytest.approx(0.7, abs=0.02)
    # 2.3 bands down the frame: the light crosses its mean 4 times after the first row.
    sides = np.sign(light - 1.0)
    crossings = np.count_nonzero(np.diff(sides[sides != 0]))
    assert crossings == 4


def test_shadow_gives_a_quarter_of_the_light_beyond_a_slanted_line_through_the_middle() -> None:
    grey = np.full((300, 400, 3), 150, np.uint8)
    light = to_linear(EFFECTS["shadow"].apply(grey))[:, :, 1] / to_linear(grey)[0, 0, 1]
    # The corners on either side of the line, 20 degrees off upright: one lit, one shaded.
    assert light[0, -1] == pytest.approx(1.0, abs=0.02)
    assert light[-1, 0] == pytest.approx(0.25, abs=0.02)
    assert light[150, 200] == pytest.approx(0.625, abs=0.05)
    # Half the frame in shadow, the edge a few pixels wide.
    assert float((light < 0.3).mean()) == pytest.approx(0.5, abs=0.02)
    assert float(((light > 0.3) & (light < 0.95)).mean()) < 0.02


def test_grey_keeps_each_pixels_brightness_in_all_three_channels(frame: Frame) -> None:
    out = EFFECTS["grey"].apply(frame)
    assert (out == out[:, :, :1]).all()
    brightness = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    assert np.array_equal(out[:, :, 0], brightness)


def test_vignette_darkens_the_corners_to_0_4_of_the_light_and_keeps_the_middle() -> None:
    grey = np.full((300, 400, 3), 150, np.uint8)
    light = to_linear(EFFECTS["vignette"].apply(grey))[:, :, 1] / to_linear(grey)[0, 0, 1]
    assert light[150, 200] == pytest.approx(1.0, abs=0.01)
    for corner in (light[0, 0], light[0, -1], light[-1, 0], light[-1, -1]):
        assert corner == pytest.approx(0.4, abs=0.02)
    # Falling all the way out along a row from the middle.
    assert (np.diff(light[150, 200:]) <= 1e-6).all()
    assert light[150, -1] < 0.8


def _white_boxes(frame: Frame) -> list[tuple[int | None, IntBox]]:
    """A stand-in reader: the box of each white patch of ``frame``, top rows first (by 100 px
    bands), then left to right."""
    white = (frame[:, :, 0] > 127).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(white)
    found = sorted(stats[1:count].tolist(), key=lambda s: (s[1] // 100, s[0]))
    return [(1, (x, y, x + w, y + h)) for x, y, w, h, _ in found]


def _around(box: IntBox, square: IntBox) -> None:
    """``box``, mapped back from a bent or tilted frame, is the box around the box read there:
    the 60 px ``square``, centred within 3 px, and a little more (under 1.5 times its area)."""
    x0, y0, x1, y1 = box
    assert abs((x0 + x1) - (square[0] + square[2])) / 2 <= 3
    assert abs((y0 + y1) - (square[1] + square[3])) / 2 <= 3
    assert x0 <= square[0] + 1
    assert y0 <= square[1] + 1
    assert x1 >= square[2] - 1
    assert y1 >= square[3] - 1
    assert (x1 - x0) * (y1 - y0) < 1.5 * 60 * 60


def test_tilt_narrows_the_far_side_and_maps_boxes_back() -> None:
    """A white square near each top corner and one at the bottom: tilted, the top ones move
    inwards and shrink, the bottom one barely; the boxes read in the tilted frame come back
    around the squares."""
    image = np.zeros((400, 600, 3), np.uint8)
    squares = [(60, 40, 120, 100), (480, 40, 540, 100), (270, 300, 330, 360)]
    for x0, y0, x1, y1 in squares:
        image[y0:y1, x0:x1] = 255

    (_, left), (_, right), (_, bottom) = _white_boxes(EFFECTS["tilt"].apply(image))
    assert left[0] > squares[0][0] + 20
    assert right[2] < squares[1][2] - 20
    assert left[2] - left[0] <= 0.95 * (bottom[2] - bottom[0])
    assert bottom[2] - bottom[0] >= 55
    back = list(with_effect(_white_boxes, EFFECTS["tilt"])(image))
    for die, square in zip(back, squares, strict=True):
        _around(die[1], square)


@pytest.mark.parametrize(("name", "quarters"), [("turned", 1), ("upside-down", 2)])
def test_a_turned_camera_turns_the_photo_and_its_boxes_come_back_to_the_photo(
    name: str, quarters: int
) -> None:
    """Three white rectangles of different shapes: found in the turned frame where np.rot90
    puts them, their boxes come back to the photo's own pixels exactly."""
    image = np.zeros((400, 600, 3), np.uint8)
    rectangles = [(60, 40, 120, 80), (480, 40, 540, 140), (270, 300, 370, 360)]
    for x0, y0, x1, y1 in rectangles:
        image[y0:y1, x0:x1] = 255
    effect = EFFECTS[name]
    turned = effect.apply(image)
    assert np.array_equal(turned, np.rot90(image, quarters))
    # Each rectangle's shape turns with it: a quarter turn swaps its width and height.
    sizes = sorted((b[2] - b[0], b[3] - b[1]) for _, b in _white_boxes(turned))
    shapes = [(x1 - x0, y1 - y0) for x0, y0, x1, y1 in rectangles]
    assert sizes == sorted([s[::-1] for s in shapes] if quarters % 2 else shapes)
    back = sorted(die[1] for die in with_effect(_white_boxes, effect)(image))
    assert back == sorted(rectangles)


def test_a_wide_lens_enlarges_the_middle_squeezes_the_corners_and_maps_boxes_back() -> None:
    """A white square in the middle and one near a corner: through the wide-angle lens the
    middle one is about 1.15 times larger, the corner one smaller and further out; the boxes
    read in the bent frame come back around the squares."""
    image = np.zeros((600, 800, 3), np.uint8)
    squares = [(370, 270, 430, 330), (40, 40, 100, 100)]
    for x0, y0, x1, y1 in squares:
        image[y0:y1, x0:x1] = 255
    effect = EFFECTS["wide"]
    assert effect.to_photo is not None
    corners = np.array([[0.0, 0.0], [800.0, 0.0], [800.0, 600.0], [0.0, 600.0]])
    assert np.allclose(effect.to_photo(corners, 800, 600), corners)

    (_, corner), (_, middle) = _white_boxes(effect.apply(image))
    assert 66 <= middle[2] - middle[0] <= 72
    # Near the corner the lens shows less than in the middle, and pulls the square outwards.
    area = (corner[2] - corner[0]) * (corner[3] - corner[1])
    assert area < 0.85 * (middle[2] - middle[0]) * (middle[3] - middle[1])
    assert corner[0] < 40
    assert corner[1] < 40
    back = list(with_effect(_white_boxes, effect)(image))
    # Near the corner the bent square's box holds more than the square: 71 px against 60.
    for die, square in zip(back, sorted(squares), strict=True):
        _around(die[1], square)

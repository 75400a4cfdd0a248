"""The face model's crop: square side, centring, edge replication, RGB order and scaling; and
``shrink``, the area average that scales frames down for the locator and the table's looks."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.die_check import BLURRED_BELOW
from vision.preprocess import (
    MODEL_SIZE,
    crop_for_model,
    crops_for_model,
    sharpness,
    shrink,
    square_around,
)
from vision.synthetic import DieSpec, make_frame


def _ramp(height: int = 240, width: int = 320) -> npt.NDArray[np.uint8]:
    """A frame whose blue channel is the column (mod 256) and green channel the row."""
    frame = np.zeros((height, width, 3), np.uint8)
    frame[:, :, 0] = (np.arange(width) % 256)[None, :]
    frame[:, :, 1] = (np.arange(height) % 256)[:, None]
    frame[:, :, 2] = 200
    return frame


@pytest.mark.parametrize(
    ("box", "square"),
    [
        pytest.param((100, 100, 150, 150), (95, 95, 155, 155), id="square-box"),
        pytest.param((10, 20, 30, 30), (8, 13, 32, 37), id="wide-box-uses-width"),
        pytest.param((0, 0, 10, 40), (-19, -4, 29, 44), id="tall-box-uses-height"),
    ],
)
def test_square_is_centred_with_side_one_point_two_times_longer_side(
    box: tuple[int, int, int, int], square: tuple[int, int, int, int]
) -> None:
    assert square_around(box) == square


def test_crop_is_float32_chw_rgb_scaled_to_one() -> None:
    frame = np.zeros((50, 50, 3), np.uint8)
    frame[:, :] = (10, 20, 30)  # B, G, R
    crop = crop_for_model(frame, (10, 10, 40, 40))
    assert crop.shape == (3, MODEL_SIZE, MODEL_SIZE)
    assert crop.dtype == np.float32
    np.testing.assert_allclose(crop[0], 30 / 255, atol=1e-6)  # R first
    np.testing.assert_allclose(crop[1], 20 / 255, atol=1e-6)
    np.testing.assert_allclose(crop[2], 10 / 255, atol=1e-6)


def test_crop_covers_exactly_the_square() -> None:
    frame = _ramp()
    # Box 50 px wide centred on (125, 125): the square runs over columns 95..154.
    crop = crop_for_model(frame, (100, 100, 150, 150))
    columns = crop[2] * 255  # blue channel = column index
    # INTER_AREA averages the ~0.94 source columns falling into each target column.
    assert columns[:, 0].mean() == pytest.approx(95.5, abs=0.6)
    assert columns[:, -1].mean() == pytest.approx(154.0, abs=0.6)
    rows = crop[1] * 255
    assert rows[0].mean() == pytest.approx(95.5, abs=0.6)
    assert rows[-1].mean() == pytest.approx(154.0, abs=0.6)


def test_outside_the_frame_is_edge_replicated() -> None:
    frame = _ramp()
    # The square runs 12 px past the left and top edges: those pixels repeat column/row 0.
    crop = crop_for_model(frame, (-2, -2, 48, 48))
    side = square_around((-2, -2, 48, 48))
    assert side[0] < 0
    outside = int((0 - side[0]) * MODEL_SIZE / (side[2] - side[0])) - 1
    assert np.all(crop[2][:, :outside] == 0.0)
    assert np.all(crop[1][:outside, :] == 0.0)
    assert crop[2][:, -1].mean() > 0.1


def test_square_wholly_outside_the_frame_repeats_the_nearest_pixel() -> None:
    frame = _ramp()
    crop = crop_for_model(frame, (400, 300, 420, 320))
    expected = frame[239, 319][::-1] / 255  # BGR pixel turned RGB
    np.testing.assert_allclose(crop[:, 0, 0], expected, atol=1e-6)
    assert np.ptp(crop, axis=(1, 2)).max() == 0.0


def test_crops_for_model_stacks_single_crops_in_order() -> None:
    frame = _ramp()
    boxes = [(10, 10, 40, 40), (200, 100, 260, 150), (300, 200, 330, 245)]
    stacked = crops_for_model(frame, boxes)
    assert stacked.shape == (3, 3, MODEL_SIZE, MODEL_SIZE)
    for index, box in enumerate(boxes):
        np.testing.assert_array_equal(stacked[index], crop_for_model(frame, box))


def test_no_boxes_give_an_empty_batch() -> None:
    assert crops_for_model(_ramp(), []).shape == (0, 3, MODEL_SIZE, MODEL_SIZE)


@settings(max_examples=40, deadline=None)
@given(
    x=st.integers(-50, 350),
    y=st.integers(-50, 260),
    w=st.integers(1, 200),
    h=st.integers(1, 200),
)
def test_any_box_gives_a_valid_crop(x: int, y: int, w: int, h: int) -> None:
    crop = crop_for_model(_ramp(), (x, y, x + w, y + h))
    assert crop.shape == (3, MODEL_SIZE, MODEL_SIZE)
    assert float(crop.min()) >= 0.0
    assert float(crop.max()) <= 1.0


def _area(image: npt.NDArray[np.uint8], size: tuple[int, int]) -> npt.NDArray[np.uint8]:
    return np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA), np.uint8)


@pytest.mark.parametrize(
    ("shape", "size"),
    [
        pytest.param((960, 1280, 3), (320, 240), id="four-times"),
        pytest.param((1232, 1640, 3), (320, 240), id="pi-v2-to-locator"),
        pytest.param((1233, 1641, 3), (320, 240), id="odd-sides"),
        pytest.param((1296, 2304, 3), (320, 180), id="pi-v3-to-locator"),
        pytest.param((480, 640, 3), (600, 450), id="less-than-half"),
        pytest.param((1232, 1640), (160, 120), id="grey"),
    ],
)
def test_shrink_gives_the_size_asked(shape: tuple[int, ...], size: tuple[int, int]) -> None:
    image = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    out = shrink(image, size)
    assert out.dtype == np.uint8
    assert out.shape == (size[1], size[0], *shape[2:])


def test_shrink_by_less_than_half_is_one_inter_area_step() -> None:
    image = np.random.default_rng(1).integers(0, 256, (480, 640, 3), dtype=np.uint8)
    assert np.array_equal(shrink(image, (400, 300)), _area(image, (400, 300)))


def test_shrink_by_halves_is_the_area_average_rounded_twice() -> None:
    image = np.random.default_rng(2).integers(0, 256, (960, 1280, 3), dtype=np.uint8)
    diff = np.abs(shrink(image, (320, 240)).astype(int) - _area(image, (320, 240)).astype(int))
    assert int(diff.max()) <= 1


@settings(max_examples=40, deadline=None)
@given(
    shape=st.sampled_from([(1232, 1640), (1520, 2028), (1296, 2304), (2464, 3280)]),
    x=st.floats(0.05, 0.85),
    y=st.floats(0.05, 0.85),
    side=st.floats(0.02, 0.1),
    back=st.integers(0, 120),
)
def test_shrink_keeps_where_a_die_lies_and_how_bright_it_is(
    shape: tuple[int, int], x: float, y: float, side: float, back: int
) -> None:
    """The locator's boxes come from the shrunk frame: a bright square (a die) must stay where
    one INTER_AREA step puts it, to a tenth of a pixel, with its light kept to a few per cent
    (the linear step samples a hard edge, which area averaging would spread)."""
    height, width = shape
    image = np.full((height, width, 3), back, np.uint8)
    x0, y0, s = int(x * width), int(y * height), max(int(side * width), 8)
    image[y0 : y0 + s, x0 : x0 + s] = 240
    size = (320, int(round(height * 320 / width)))

    def centre_and_mass(small: npt.NDArray[np.uint8]) -> tuple[float, float, float]:
        excess = small[:, :, 0].astype(np.float64) - back
        rows, cols = np.indices(excess.shape)
        mass = float(excess.sum())
        return float((cols * excess).sum()) / mass, float((rows * excess).sum()) / mass, mass

    ours, theirs = centre_and_mass(shrink(image, size)), centre_and_mass(_area(image, size))
    assert abs(ours[0] - theirs[0]) < 0.1
    assert abs(ours[1] - theirs[1]) < 0.1
    # Light kept to 3 %, or for the smallest dice (a few pixels across once shrunk) to half a
    # shrunk pixel's light along one side: the linear step samples an edge row that area
    # averaging would weigh, which a small die's total feels most.
    shrunk_side = s * size[0] / width
    assert abs(ours[2] - theirs[2]) <= max(0.03 * theirs[2], 0.5 * shrunk_side * (240 - back))


def _blurred_die(side: float, blur: float, *, value: int = 5, noise: float = 0.0) -> float:
    """The sharpness of a white die of ``side`` pixels on the felt, blurred by a Gaussian of
    ``blur`` times its side, with sensor noise of ``noise`` grey levels added after."""
    size = int(side * 3)
    frame = make_frame(size, size, [DieSpec(value, size / 2, size / 2, side, angle=20.0)])
    if blur:
        frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), blur * side), np.uint8)
    if noise:
        grain = np.random.default_rng(1).normal(0.0, noise, frame.shape)
        frame = np.clip(frame + grain, 0, 255).astype(np.uint8)
    half = side * 0.75
    box = (size / 2 - half, size / 2 - half, size / 2 + half, size / 2 + half)
    return float(sharpness(crops_for_model(frame, [box]))[0])


@pytest.mark.parametrize("side", [30.0, 60.0, 150.0, 300.0])
@pytest.mark.parametrize("value", [1, 6])
def test_sharpness_tells_a_blurred_die_from_a_sharp_one_at_any_size(
    side: float, value: int
) -> None:
    """A die in focus stays above the reader's line and one blurred by a sixth of its side
    falls below it, from 30 to 400 pixels, with a single pip or six, with sensor noise or
    without: the measure is of the die, not of the camera's resolution."""
    for noise in (0.0, 4.0):
        sharp = _blurred_die(side, 0.0, value=value, noise=noise)
        soft = _blurred_die(side, 0.17, value=value, noise=noise)
        assert soft < BLURRED_BELOW < sharp, (noise, soft, sharp)


def test_sharpness_falls_as_the_blur_grows() -> None:
    figures = [_blurred_die(80.0, blur) for blur in (0.0, 0.03, 0.06, 0.1, 0.15, 0.25)]
    assert figures == sorted(figures, reverse=True), figures

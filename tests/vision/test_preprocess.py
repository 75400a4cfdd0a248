"""The face model's crop: square side, centring, edge replication, RGB order and scaling; and
``shrink``, the area average that scales frames down for the locator and the table's looks;
the crop's sharpness and what its box's edges look like."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.die_check import BLURRED_BELOW
from vision.preprocess import (
    EDGE_FEATURES,
    MODEL_SIZE,
    crop_for_model,
    crops_for_model,
    edge_features,
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
    for size in ((640, 480), (800, 600)):
        assert np.array_equal(shrink(image, size, fixed_point=True), _area(image, size))


@pytest.mark.parametrize("size", [(488, 366), (400, 300), (333, 250)])
def test_shrink_in_fixed_point_by_less_than_half_is_close_to_one_inter_area_step(
    size: tuple[int, int],
) -> None:
    """Up to twice the size, then halved (fixed-point both, the same bytes on ARM), instead of
    one INTER_AREA step of that factor, which sums in float."""
    noise = np.random.default_rng(1).integers(0, 256, (480, 640, 3), dtype=np.uint8)
    image = np.asarray(cv2.GaussianBlur(noise, (0, 0), 2.0), np.uint8)  # a photo's detail
    fixed = shrink(image, size, fixed_point=True)
    assert fixed.shape == (size[1], size[0], 3)
    diff = np.abs(fixed.astype(int) - _area(image, size).astype(int))
    assert float(diff.mean()) < 0.5
    assert int(diff.max()) <= 3


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


Box = tuple[float, float, float, float]


def _covered_die(
    side: float, covered: float, *, seed: int = 0
) -> tuple[npt.NDArray[np.uint8], Box]:
    """A white die of ``side`` pixels with three pips on a green felt grained at a tenth of
    the die's side; a grey card with a faint print over its right ``covered`` share (none at
    0). Returns the frame and the box of what shows."""
    size = int(side * 4)
    rng = np.random.default_rng(seed)
    grain = cv2.GaussianBlur(rng.normal(0.0, 1.0, (size, size)), (0, 0), side / 10)
    felt = (grain / grain.std() * 12.0)[:, :, None] + np.array([60.0, 120.0, 50.0])
    frame = np.clip(felt, 0, 255).astype(np.uint8)
    x0 = y0 = int(size / 2 - side / 2)
    x1 = y1 = int(x0 + side)
    frame[y0:y1, x0:x1] = 235
    for k in (0.25, 0.5, 0.75):
        centre = (int(x0 + k * side), int(y0 + k * side))
        cv2.circle(frame, centre, int(side / 10), (20, 20, 20), -1)
    shows = x1 if covered == 0 else int(x1 - covered * side)
    if covered:
        card = rng.normal(150.0, 3.0, (size, size - shows, 1))
        frame[:, shows:] = np.clip(card, 0, 255).astype(np.uint8)
    return frame, (float(x0), float(y0), float(shows), float(y1))


def _edges(side: float, covered: float, *, seed: int = 0) -> npt.NDArray[np.float32]:
    frame, box = _covered_die(side, covered, seed=seed)
    return np.asarray(edge_features(crops_for_model(frame, [box]), [box])[0], np.float32)


@pytest.mark.parametrize("side", [40.0, 90.0, 300.0])
@pytest.mark.parametrize("covered", [0.2, 0.45, 0.6])
def test_a_side_ending_at_a_cover_is_a_stronger_edge_than_any_of_the_whole_die(
    side: float, covered: float
) -> None:
    """Where a card cuts a die, the edge along the cut (light die against grey card) is
    stronger than any side of the whole die on the felt, the more so the more the card
    covers (the crop's mean gradient falls with the pips hidden). The box is narrower than
    the crop's square, so the sides must follow the box, not the crop's margin."""
    whole = _edges(side, 0.0)
    cut = _edges(side, covered)
    assert cut[1] > 1.15 * whole[1], (cut, whole)
    assert cut[0] > 0.5, cut  # the die is still unlike the felt on its other sides


def test_a_phantom_on_the_felt_has_no_side_unlike_its_inside() -> None:
    """Boxed felt, with no die, has about the same colour inside and outside each side."""
    frame, _ = _covered_die(60.0, 0.0)
    box = (10.0, 10.0, 50.0, 50.0)
    phantom = edge_features(crops_for_model(frame, [box]), [box])[0]
    die = _edges(60.0, 0.0)
    assert phantom[0] < 0.15 < 0.8 < die[0], (phantom, die)
    assert phantom[1] < 0.5 * die[1], (phantom, die)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_edges_measure_the_die_not_its_size_in_pixels(seed: int) -> None:
    """The colour distances, the smallest spread and the cut's gradient agree from 40 to 300
    pixels."""
    small, large = _edges(40.0, 0.45, seed=seed), _edges(300.0, 0.45, seed=seed)
    for index, within in ((0, 0.15), (2, 0.03), (6, 0.15), (1, 1.5)):
        assert abs(float(small[index]) - float(large[index])) < within, (index, small, large)


def test_edge_features_of_no_boxes_and_of_mismatched_ones() -> None:
    assert edge_features(np.zeros((0, 3, 64, 64), np.float32), []).shape == (0, EDGE_FEATURES)
    with pytest.raises(ValueError, match="2 crops for 1 boxes"):
        edge_features(np.zeros((2, 3, 64, 64), np.float32), [(0.0, 0.0, 5.0, 5.0)])


@given(
    st.tuples(*(st.floats(-50.0, 150.0) for _ in range(4))),
    st.integers(0, 2**31 - 1),
)
@settings(max_examples=60, deadline=None)
def test_any_box_gives_finite_edges(box: Box, seed: int) -> None:
    """A box of any size or place, even empty or turned inside out, gives finite numbers."""
    crops = np.random.default_rng(seed).random((1, 3, 64, 64)).astype(np.float32)
    assert np.isfinite(edge_features(crops, [box])).all()

"""The learned locator's input scaling and output decoding (vision/detect.py), numpy only."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import vision.train.heatmap
from vision.detect import LOCATOR_SIDE, STRIDE, decode, locator_input, pressed_squares
from vision.synthetic import make_frame, six_dice


def _logit(p: float) -> float:
    return float(np.log(p / (1 - p)))


def _outputs(
    peaks: list[tuple[int, int, float, float, float]], grid: tuple[int, int] = (16, 16)
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Heatmap logits (1, 1, h, w) and boxes (1, 4, h, w), peaks (row, col, p, width, height)."""
    heat = np.full((1, 1, *grid), _logit(0.01), np.float32)
    boxes = np.zeros((1, 4, *grid), np.float32)
    for row, col, p, width, height in peaks:
        heat[0, 0, row, col] = _logit(p)
        boxes[0, :, row, col] = [0.5, 0.5, np.log(width / STRIDE), np.log(height / STRIDE)]
    return heat, boxes


def test_training_and_the_reader_share_one_implementation() -> None:
    assert vision.train.heatmap.locator_input is locator_input
    assert vision.train.heatmap.decode is decode
    assert vision.train.heatmap.STRIDE == STRIDE
    assert vision.train.heatmap.LOCATOR_SIDE == LOCATOR_SIDE


@pytest.mark.parametrize(
    ("shape", "tensor_shape", "factor"),
    [
        pytest.param((960, 1280), (1, 3, 240, 320), 4.0, id="pi-frame"),
        pytest.param((2464, 3280), (1, 3, 240, 320), 10.25, id="pi-full"),
        pytest.param((3024, 4032), (1, 3, 240, 320), 12.6, id="phone"),
        pytest.param((300, 200), (1, 3, 320, 224), 0.9375, id="small-portrait-upscaled"),
    ],
)
def test_locator_input_scales_the_longer_side_to_320_and_pads_to_sixteen(
    shape: tuple[int, int], tensor_shape: tuple[int, ...], factor: float
) -> None:
    frame = np.zeros((*shape, 3), np.uint8)
    frame[..., 0] = 255  # blue in BGR
    tensor, got = locator_input(frame)
    assert tensor.shape == tensor_shape
    assert tensor.dtype == np.float32
    assert tensor.flags.c_contiguous
    assert got == pytest.approx(factor)
    assert float(tensor[0, 2].min()) == 1.0  # blue is the last channel: RGB
    assert float(tensor[0, :2].max()) == 0.0


def test_padding_repeats_the_last_row_and_column() -> None:
    frame = np.zeros((100, 150, 3), np.uint8)
    frame[-1, :, :] = 200
    tensor, factor = locator_input(frame)
    assert factor == pytest.approx(150 / 320)
    assert tensor.shape == (1, 3, 224, 320)
    # 100 * 320 / 150 = 213 rows of picture; the padding below repeats the bright last row.
    assert np.all(tensor[0, :, 213:, :] > 0.5)


def test_decode_gives_boxes_in_frame_pixels_best_first() -> None:
    heat, boxes = _outputs([(4, 4, 0.6, 16.0, 12.0), (10, 2, 0.9, 20.0, 20.0)])
    found = decode(heat, boxes, factor=2.0)
    assert [round(f.score, 3) for f in found] == [0.9, 0.6]
    # Centre at (col + 0.5) * STRIDE, box side from exp(log(side / STRIDE)) * STRIDE, then x2.
    np.testing.assert_allclose(found[0].box, (0.0, 64.0, 40.0, 104.0), atol=1e-4)
    np.testing.assert_allclose(found[1].box, (20.0, 24.0, 52.0, 48.0), atol=1e-4)


def test_decode_keeps_only_local_maxima_above_the_threshold() -> None:
    heat, boxes = _outputs([(5, 5, 0.8, 16.0, 16.0), (5, 6, 0.7, 16.0, 16.0), (12, 12, 0.35, 8, 8)])
    found = decode(heat, boxes, factor=1.0)
    assert [round(f.score, 2) for f in found] == [0.8]
    assert len(decode(heat, boxes, factor=1.0, threshold=0.3)) == 2


@pytest.mark.parametrize(
    ("second", "kept"),
    [
        # 40 px boxes 8 px apart (IoU 0.67): one die whose face and body both peaked.
        pytest.param((5, 7, 0.7, 40.0, 40.0), 1, id="same-die-twice"),
        # 40 px boxes 40 px apart: two dice side by side.
        pytest.param((5, 15, 0.7, 40.0, 40.0), 2, id="touching-dice"),
        # 40 px boxes 20 px apart (IoU 0.33): a die leaning on another.
        pytest.param((5, 10, 0.7, 40.0, 40.0), 2, id="leaning-die"),
    ],
)
def test_decode_keeps_one_box_per_die(
    second: tuple[int, int, float, float, float], kept: int
) -> None:
    heat, boxes = _outputs([(5, 5, 0.9, 40.0, 40.0), second], grid=(16, 20))
    found = decode(heat, boxes, factor=1.0)
    assert len(found) == kept
    assert found[0].score == pytest.approx(0.9)


def test_decode_clips_boxes_to_the_frame() -> None:
    heat, boxes = _outputs([(0, 0, 0.9, 40.0, 40.0)])
    (found,) = decode(heat, boxes, factor=1.0, frame_shape=(64, 64))
    np.testing.assert_allclose(found.box, (0.0, 0.0, 22.0, 22.0), atol=1e-4)


def test_nothing_above_the_threshold_finds_nothing() -> None:
    heat, boxes = _outputs([])
    assert decode(heat, boxes, factor=1.0) == []


def test_a_pi_full_frame_scales_down_close_to_plain_area_averaging() -> None:
    # Frames over eight times the locator's side take a nearest-neighbour shortcut first.
    frame = make_frame(3280, 2464, six_dice(3280, 2464, seed=3), tray="brown", seed=3)
    tensor, _ = locator_input(frame)
    plain = cv2.resize(frame, (320, 240), interpolation=cv2.INTER_AREA)
    expected = cv2.cvtColor(plain, cv2.COLOR_BGR2RGB).transpose(2, 0, 1) / 255.0
    difference = np.abs(tensor[0] - expected)
    assert float(difference.mean()) < 0.02
    assert float(np.percentile(difference, 99)) < 0.2


# A row of dice 100 px a side pressed together: the net drew the middle one 150 px wide.
_LEFT, _RIGHT = (100, 200, 200, 300), (300, 200, 400, 300)
_WIDE = (175, 200, 325, 300)


@pytest.mark.parametrize(
    ("boxes", "squares"),
    [
        pytest.param(
            [_LEFT, _WIDE, _RIGHT], [None, (200, 200, 300, 300), None], id="stretched-over-two"
        ),
        pytest.param(
            [(250, 175, 350, 325), (250, 100, 350, 190)],
            [(250, 200, 350, 300), None],
            id="stretched-upwards",
        ),
        pytest.param([_WIDE], [None], id="alone: a die seen at a slant, not pressed"),
        pytest.param([_LEFT, (195, 200, 305, 300), _RIGHT], [None] * 3, id="within-the-aspect"),
        pytest.param(
            [(0, 200, 150, 300), (140, 200, 240, 300)], [None, None], id="cut-by-the-frame"
        ),
        pytest.param(
            [(400, 560, 560, 640), (500, 540, 600, 630)], [None, None], id="cut-at-the-bottom"
        ),
        pytest.param([(100, 100, 100, 200), _WIDE], [None, None], id="an-empty-box"),
        pytest.param(
            [_LEFT, (185, 185, 315, 315), _RIGHT], [None, None, None], id="too-large-both-ways"
        ),
    ],
)
def test_pressed_squares_squares_a_box_stretched_over_a_neighbour(
    boxes: list[tuple[int, int, int, int]], squares: list[tuple[int, int, int, int] | None]
) -> None:
    assert pressed_squares(boxes, (640, 800)) == squares


@pytest.mark.parametrize(
    ("boxes", "squares"),
    [
        pytest.param(
            [_LEFT, (185, 185, 315, 315), _RIGHT],
            [None, (200, 200, 300, 300), None],
            id="too-large-both-ways: the dice's side",
        ),
        pytest.param(
            [_LEFT, _WIDE, _RIGHT], [None, (200, 200, 300, 300), None], id="stretched: its own"
        ),
        pytest.param(
            [_LEFT, (190, 190, 300, 300), _RIGHT], [None] * 3, id="within-the-aspect-of-the-side"
        ),
        pytest.param([(185, 185, 315, 315)], [None], id="alone: a die nearer the camera"),
    ],
)
def test_given_the_dice_side_a_box_too_large_both_ways_is_squared_to_it(
    boxes: list[tuple[int, int, int, int]], squares: list[tuple[int, int, int, int] | None]
) -> None:
    assert pressed_squares(boxes, (640, 800), side=100) == squares


def test_pressed_squares_with_no_aspect_squares_none() -> None:
    assert pressed_squares([_LEFT, _WIDE, _RIGHT], (640, 800), aspect=0) == [None] * 3


@given(
    st.lists(
        st.tuples(
            st.integers(2, 700), st.integers(2, 500), st.integers(1, 200), st.integers(1, 200)
        ),
        max_size=8,
    ),
    st.one_of(st.none(), st.integers(1, 150)),
)
def test_a_square_is_a_square_inside_its_box_about_the_same_centre(
    corners: list[tuple[int, int, int, int]], dice_side: int | None
) -> None:
    boxes = [(x, y, x + w, y + h) for x, y, w, h in corners]
    squares = pressed_squares(boxes, (800, 1000), side=dice_side)
    for box, square in zip(boxes, squares, strict=True):
        if square is None:
            continue
        side = min(box[2] - box[0], box[3] - box[1])
        assert square[2] - square[0] == square[3] - square[1] in (side, dice_side)
        assert box[0] <= square[0] < square[2] <= box[2]
        assert box[1] <= square[1] < square[3] <= box[3]
        assert abs((square[0] + square[2]) - (box[0] + box[2])) <= 1
        assert abs((square[1] + square[3]) - (box[1] + box[3])) <= 1

"""The locator's centre-heatmap codec, numpy only: encode boxes, decode them back."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.train.heatmap import STRIDE, decode, encode, locator_input


def _logits(heat: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    clipped = np.clip(heat, 1e-6, 1 - 1e-6)
    return np.asarray(np.log(clipped / (1 - clipped)), dtype=np.float32)


@pytest.mark.parametrize(
    ("shape", "tensor_shape", "factor"),
    [
        pytest.param((960, 1280), (1, 3, 240, 320), 4.0, id="pi-frame"),
        pytest.param((2464, 3280), (1, 3, 240, 320), 10.25, id="pi-full"),
        pytest.param((640, 640), (1, 3, 320, 320), 2.0, id="square"),
        pytest.param((1080, 1920), (1, 3, 192, 320), 6.0, id="webcam-padded-to-16"),
    ],
)
def test_locator_input_keeps_aspect_and_pads_to_sixteen(
    shape: tuple[int, int], tensor_shape: tuple[int, ...], factor: float
) -> None:
    frame = np.zeros((*shape, 3), np.uint8)
    frame[..., 2] = 255  # red in BGR
    tensor, got = locator_input(frame)
    assert tensor.shape == tensor_shape
    assert got == pytest.approx(factor)
    assert tensor.dtype == np.float32
    assert float(tensor[0, 0].min()) == 1.0  # red is channel 0: RGB
    assert float(tensor[0, 2].max()) == 0.0


def test_touching_dice_keep_separate_peaks() -> None:
    boxes = [(40.0, 40.0, 80.0, 80.0), (80.0, 40.0, 120.0, 80.0), (40.0, 80.0, 80.0, 120.0)]
    heat, box, mask = encode(boxes, 160, 160)
    assert int(mask.sum()) == 3
    found = decode(_logits(heat), box, factor=1.0)
    assert len(found) == 3
    for f in found:
        assert any(np.allclose(f.box, b, atol=1e-3) for b in boxes)


def test_nothing_above_the_threshold_finds_nothing() -> None:
    heat, box, _ = encode([], 64, 64)
    assert heat.max() == 0.0
    assert decode(_logits(heat), box, factor=1.0) == []


def test_boxes_are_clipped_to_the_frame() -> None:
    heat, box, _ = encode([(0.0, 0.0, 30.0, 30.0)], 64, 64)
    box[2:, 3, 3] += np.log(2.0)  # predict a die twice as big, reaching outside the frame
    (found,) = decode(_logits(heat), box, factor=2.0, frame_shape=(128, 128))
    assert found.box[0] == 0.0
    assert found.box[1] == 0.0


@settings(max_examples=40, deadline=None)
@given(
    x=st.floats(0, 100),
    y=st.floats(0, 100),
    w=st.floats(8, 40),
    h=st.floats(8, 40),
    factor=st.sampled_from([1.0, 2.0, 4.0]),
)
def test_encode_then_decode_gives_the_box_back(
    x: float, y: float, w: float, h: float, factor: float
) -> None:
    heat, box, _ = encode([(x, y, x + w, y + h)], 160, 160)
    (found,) = decode(_logits(heat), box, factor=factor)
    expected = (x * factor, y * factor, (x + w) * factor, (y + h) * factor)
    np.testing.assert_allclose(found.box, expected, atol=1e-3 * factor * STRIDE)

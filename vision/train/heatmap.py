"""Centre-heatmap encoding and decoding for the dice locator (numpy only, no torch).

The locator sees a frame scaled so its longer side is ``LOCATOR_SIDE`` pixels and answers, on a
grid ``STRIDE`` times coarser, a heatmap of die centres and the die's width and height there.
:func:`decode` turns those outputs back into boxes in the original frame's pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

__all__ = [
    "LOCATOR_SIDE",
    "STRIDE",
    "Found",
    "decode",
    "encode",
    "locator_input",
]

LOCATOR_SIDE = 320
STRIDE = 4
FloatBox = tuple[float, float, float, float]


def locator_input(
    frame_bgr: npt.NDArray[np.uint8], side: int = LOCATOR_SIDE
) -> tuple[npt.NDArray[np.float32], float]:
    """Scale a frame for the locator: (1, 3, H, W) RGB / 255, H and W multiples of 16.

    Returns the tensor and the factor from locator pixels back to frame pixels. The frame is
    scaled (keeping its aspect) so the longer side is ``side``, then padded at the right and bottom
    by edge replication.

    >>> tensor, factor = locator_input(np.zeros((960, 1280, 3), np.uint8))
    >>> tensor.shape, factor
    ((1, 3, 240, 320), 4.0)
    """
    height, width = frame_bgr.shape[:2]
    scale = side / max(height, width)
    new_w, new_h = max(int(round(width * scale)), 1), max(int(round(height * scale)), 1)
    small = cv2.resize(frame_bgr, (new_w, new_h), interpolation=cv2.INTER_AREA)
    pad_w, pad_h = (-new_w) % 16, (-new_h) % 16
    if pad_w or pad_h:
        small = cv2.copyMakeBorder(small, 0, pad_h, 0, pad_w, cv2.BORDER_REPLICATE)
    rgb = cv2.cvtColor(small, cv2.COLOR_BGR2RGB)
    tensor = rgb.transpose(2, 0, 1)[None].astype(np.float32) / np.float32(255.0)
    return np.ascontiguousarray(tensor), 1.0 / scale


def encode(
    boxes: Sequence[FloatBox], height: int, width: int
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Training targets on the output grid for boxes in locator-input pixels.

    Returns the centre heatmap (1, h, w) with a Gaussian peak of 1 at each centre cell; the box
    target (4, h, w) holding, at each centre cell, the centre's offset inside the cell (x, y in
    0..1) and log(width / STRIDE), log(height / STRIDE); and the mask (1, h, w) of those cells.

    >>> heat, box, mask = encode([(8.0, 8.0, 26.0, 24.0)], 32, 32)
    >>> heat.shape, float(heat.max()), int(mask.sum())
    ((1, 8, 8), 1.0, 1)
    >>> [round(float(v), 3) for v in box[:, 4, 4]]
    [0.25, 0.0, 1.504, 1.386]
    """
    grid_h, grid_w = height // STRIDE, width // STRIDE
    heat = np.zeros((1, grid_h, grid_w), np.float32)
    size = np.zeros((4, grid_h, grid_w), np.float32)
    mask = np.zeros((1, grid_h, grid_w), np.float32)
    yy, xx = np.mgrid[0:grid_h, 0:grid_w].astype(np.float32)
    for x0, y0, x1, y1 in boxes:
        bw, bh = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
        cx, cy = (x0 + x1) / 2 / STRIDE, (y0 + y1) / 2 / STRIDE
        ix, iy = int(cx), int(cy)
        if not (0 <= ix < grid_w and 0 <= iy < grid_h):
            continue
        # The peak is as wide as a sixth of the die, so touching dice keep separate peaks.
        sigma = max(min(bw, bh) / STRIDE / 6.0, 0.5)
        peak = np.exp(-((xx - ix) ** 2 + (yy - iy) ** 2) / (2 * sigma**2))
        heat[0] = np.maximum(heat[0], peak)
        size[0, iy, ix] = cx - ix
        size[1, iy, ix] = cy - iy
        size[2, iy, ix] = np.log(bw / STRIDE)
        size[3, iy, ix] = np.log(bh / STRIDE)
        mask[0, iy, ix] = 1.0
    return heat, size, mask


@dataclass(frozen=True)
class Found:
    """A die the locator found: box in frame pixels and the heatmap score at its centre."""

    box: FloatBox
    score: float


def decode(
    heat_logits: npt.NDArray[np.float32],
    size: npt.NDArray[np.float32],
    *,
    factor: float,
    threshold: float = 0.4,
    frame_shape: tuple[int, int] | None = None,
) -> list[Found]:
    """Boxes from one frame's locator outputs: local maxima of the heatmap above ``threshold``.

    ``heat_logits`` is (1, h, w) or (1, 1, h, w) before the sigmoid, ``size`` the box output
    (4, h, w) or (1, 4, h, w) as :func:`encode` makes it; ``factor`` maps locator pixels back to the
    frame (from :func:`locator_input`).

    >>> heat, box, _ = encode([(8.0, 8.0, 26.0, 24.0)], 32, 32)
    >>> logits = np.log(np.clip(heat, 1e-6, 1 - 1e-6) / (1 - np.clip(heat, 1e-6, 1 - 1e-6)))
    >>> [tuple(round(v, 3) for v in f.box) for f in decode(logits, box, factor=2.0)]
    [(16.0, 16.0, 52.0, 48.0)]
    """
    heat = 1.0 / (1.0 + np.exp(-heat_logits.reshape(heat_logits.shape[-2:])))
    sizes = size.reshape(4, *size.shape[-2:])
    pooled = cv2.dilate(heat.astype(np.float32), np.ones((3, 3), np.uint8))
    peaks = np.argwhere((heat >= pooled) & (heat >= threshold))
    found: list[Found] = []
    for iy, ix in peaks:
        bw = float(np.exp(sizes[2, iy, ix])) * STRIDE
        bh = float(np.exp(sizes[3, iy, ix])) * STRIDE
        cx = (ix + float(sizes[0, iy, ix])) * STRIDE
        cy = (iy + float(sizes[1, iy, ix])) * STRIDE
        box = (
            float((cx - bw / 2) * factor),
            float((cy - bh / 2) * factor),
            float((cx + bw / 2) * factor),
            float((cy + bh / 2) * factor),
        )
        if frame_shape is not None:
            height, width = frame_shape
            box = (max(box[0], 0.0), max(box[1], 0.0), min(box[2], width), min(box[3], height))
        found.append(Found(box=box, score=float(heat[iy, ix])))
    found.sort(key=lambda f: -f.score)
    return found

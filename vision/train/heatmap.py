"""Centre-heatmap training targets for the dice locator (numpy only, no torch).

:func:`encode` makes the targets the locator is trained on; the input scaling and the decoding of
its outputs live in :mod:`vision.detect`, shared with the reader, and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from vision.detect import LOCATOR_SIDE, STRIDE, FloatBox, Found, decode, locator_input

__all__ = [
    "LOCATOR_SIDE",
    "STRIDE",
    "Found",
    "decode",
    "encode",
    "locator_input",
]


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

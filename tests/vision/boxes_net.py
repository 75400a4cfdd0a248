"""A stand-in for the learned locator's network that answers given boxes (for LearnedLocator)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from vision.detect import locator_input
from vision.train.heatmap import encode

Array = npt.NDArray[np.float32]


class BoxesNet:
    """A heatmap model that answers fixed dice (boxes in frame pixels) for one frame size."""

    def __init__(self, boxes: Sequence[tuple[float, float, float, float]], shape: tuple[int, int]):
        _, factor = locator_input(np.zeros((*shape, 3), np.uint8))
        scaled = [tuple(v / factor for v in box) for box in boxes]
        self.tensor_shape = locator_input(np.zeros((*shape, 3), np.uint8))[0].shape
        heat, size, _ = encode([(b[0], b[1], b[2], b[3]) for b in scaled], *self.tensor_shape[2:])
        clipped = np.clip(heat, 1e-4, 1 - 1e-4)
        self.heat = np.log(clipped / (1 - clipped))[None].astype(np.float32)
        self.size = size[None]
        self.seen: list[tuple[int, ...]] = []

    def run(self, image: Array) -> tuple[Array, Array]:
        """The boxes' heatmap and sizes, whatever the image (its shape is kept in ``seen``)."""
        self.seen.append(image.shape)
        return self.heat, self.size

"""The one crop function shared by training and inference of the face model.

The face model sees a square around each die: side ``max(w, h) * 1.2`` centred on the box, padded by
edge replication where it leaves the frame, resized with ``cv2.INTER_AREA`` to 64x64, RGB, scaled to
0..1 and laid out CHW. Training and the reader both call :func:`crop_for_model`, so the model never
sees crops made any other way.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt

__all__ = [
    "CONTEXT",
    "MODEL_SIZE",
    "Box",
    "crop_for_model",
    "crops_for_model",
    "sharpness",
    "shrink",
    "square_around",
]

Box = tuple[int, int, int, int]

MODEL_SIZE = 64
"""Side in pixels of the square crop the face model reads."""

CONTEXT = 1.2
"""The crop side is this many times the longer side of the die's box."""


def shrink(image: npt.NDArray[np.uint8], size: tuple[int, int]) -> npt.NDArray[np.uint8]:
    """Return ``image`` scaled down to ``size`` (width, height), close to one ``INTER_AREA`` step.

    OpenCV's ``INTER_AREA`` halves an image on a vectorised path but takes any other factor on a
    general one many times slower: a 1640x1232 Pi frame to the locator's 320x240 costs 12.7 ms
    on one core of the development machine, more than the locator's network. So an image at least
    twice ``size`` is brought by linear interpolation, a step of less than two, to ``size`` times
    the largest power of two it holds, and halved from there by area averaging: 1640x1232 to
    1280x960, 640x480, 320x240. Within a few levels of one ``INTER_AREA`` step, most pixels within
    one (tests/vision/test_preprocess.py); exactly one step when ``size`` is over half the image.

    >>> shrink(np.zeros((1232, 1640, 3), np.uint8), (320, 240)).shape
    (240, 320, 3)
    """
    width, height = size
    source_w, source_h = image.shape[1], image.shape[0]
    times = 1
    while width * times * 2 <= source_w and height * times * 2 <= source_h:
        times *= 2
    if times == 1:
        return np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA), np.uint8)
    if (source_w, source_h) != (width * times, height * times):
        image = np.asarray(
            cv2.resize(image, (width * times, height * times), interpolation=cv2.INTER_LINEAR),
            np.uint8,
        )
    while times > 1:
        times //= 2
        image = np.asarray(
            cv2.resize(image, (width * times, height * times), interpolation=cv2.INTER_AREA),
            np.uint8,
        )
    return image


def square_around(box: Sequence[float]) -> Box:
    """Return the integer square ``(x0, y0, x1, y1)`` the model crop takes around ``box``.

    >>> square_around((10, 20, 30, 30))
    (8, 13, 32, 37)
    """
    x0, y0, x1, y1 = (float(v) for v in box)
    side = max(int(round(max(x1 - x0, y1 - y0) * CONTEXT)), 1)
    cx = (x0 + x1) / 2.0
    cy = (y0 + y1) / 2.0
    sx = int(round(cx - side / 2.0))
    sy = int(round(cy - side / 2.0))
    return (sx, sy, sx + side, sy + side)


def _square_pixels(frame_bgr: npt.NDArray[np.uint8], box: Sequence[float]) -> npt.NDArray[np.uint8]:
    """Cut the square around ``box`` out of the frame, replicating edges outside it."""
    height, width = frame_bgr.shape[:2]
    sx0, sy0, sx1, sy1 = square_around(box)
    # Only the part of the square that overlaps the frame is copied; the rest is edge replication,
    # so a die at the border keeps its true position inside the crop.
    cx0, cy0 = max(sx0, 0), max(sy0, 0)
    cx1, cy1 = min(sx1, width), min(sy1, height)
    if cx0 >= cx1 or cy0 >= cy1:
        # The square lies wholly outside the frame: replicate the nearest frame pixel.
        px = min(max(sx0, 0), width - 1)
        py = min(max(sy0, 0), height - 1)
        pixel = frame_bgr[py, px]
        return np.broadcast_to(pixel, (sy1 - sy0, sx1 - sx0, 3)).copy()
    inner = frame_bgr[cy0:cy1, cx0:cx1]
    top, left = cy0 - sy0, cx0 - sx0
    bottom, right = sy1 - cy1, sx1 - cx1
    if top or left or bottom or right:
        padded = cv2.copyMakeBorder(inner, top, bottom, left, right, cv2.BORDER_REPLICATE)
        return np.asarray(padded, dtype=np.uint8)
    return np.ascontiguousarray(inner)


def crop_for_model(
    frame_bgr: npt.NDArray[np.uint8], box: Sequence[float]
) -> npt.NDArray[np.float32]:
    """Return the face model's input for one die: float32 (3, 64, 64), RGB, values 0..1.

    >>> frame = np.zeros((100, 100, 3), np.uint8)
    >>> frame[:, :, 2] = 255  # red in BGR
    >>> crop = crop_for_model(frame, (10, 10, 50, 50))
    >>> crop.shape, crop.dtype.name, float(crop[0].min()), float(crop[2].max())
    ((3, 64, 64), 'float32', 1.0, 0.0)
    """
    square = _square_pixels(frame_bgr, box)
    resized = cv2.resize(square, (MODEL_SIZE, MODEL_SIZE), interpolation=cv2.INTER_AREA)
    rgb = cv2.cvtColor(resized, cv2.COLOR_BGR2RGB)
    return np.ascontiguousarray(rgb.transpose(2, 0, 1), dtype=np.float32) / np.float32(255.0)


def crops_for_model(
    frame_bgr: npt.NDArray[np.uint8], boxes: Sequence[Sequence[float]]
) -> npt.NDArray[np.float32]:
    """Return the face model's input for several dice: float32 (N, 3, 64, 64).

    >>> crops_for_model(np.zeros((40, 40, 3), np.uint8), []).shape
    (0, 3, 64, 64)
    """
    if len(boxes) == 0:
        return np.zeros((0, 3, MODEL_SIZE, MODEL_SIZE), np.float32)
    return np.stack([crop_for_model(frame_bgr, box) for box in boxes])


def sharpness(crops: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """How sharp each face-model crop (N, 3, 64, 64) is: the mean absolute Laplacian of its grey
    level, smoothed by a Gaussian of one pixel, over its contrast (the spread between its 5th
    and 95th percentiles, at least 0.05).

    Measured on the crop, the die's size is taken out: a blur a tenth of the die wide leaves
    about the same figure on a small die and a large one. The smoothing keeps sensor noise and
    8-bit steps, which a blur leaves while it takes the contrast away, from passing for edges.
    On rendered dice the face model cannot read, leaning ones give 0.086 and more (95 %), dice
    blurred past reading 0.031 and less (models/MODEL_CARD.md, "Dice the face model cannot
    read").

    >>> flat = np.full((1, 3, 64, 64), 0.5, np.float32)
    >>> edge = flat.copy(); edge[:, :, :, 32:] = 1.0
    >>> [round(float(v), 3) for v in sharpness(np.concatenate([flat, edge]))]
    [0.0, 0.05]
    """
    out = np.zeros(len(crops), np.float32)
    for i, crop in enumerate(crops):
        grey = np.asarray(cv2.GaussianBlur(crop.mean(axis=0), (0, 0), 1.0), np.float32)
        low, high = np.percentile(grey, [5.0, 95.0])
        laplacian = cv2.Laplacian(grey, cv2.CV_32F, ksize=3)
        out[i] = float(np.abs(laplacian).mean()) / max(float(high - low), 0.05)
    return out

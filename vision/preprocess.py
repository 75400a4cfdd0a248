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
    "EDGE_FEATURES",
    "MODEL_SIZE",
    "Box",
    "crop_for_model",
    "crops_for_model",
    "edge_features",
    "sharpness",
    "shrink",
    "square_around",
]

Box = tuple[int, int, int, int]

MODEL_SIZE = 64
"""Side in pixels of the square crop the face model reads."""

CONTEXT = 1.2
"""The crop side is this many times the longer side of the die's box."""


def shrink(
    image: npt.NDArray[np.uint8], size: tuple[int, int], *, fixed_point: bool = False
) -> npt.NDArray[np.uint8]:
    """Return ``image`` scaled down to ``size`` (width, height), close to one ``INTER_AREA`` step.

    OpenCV's ``INTER_AREA`` halves an image on a vectorised path but takes any other factor on a
    general one many times slower: a 1640x1232 Pi frame to the locator's 320x240 costs 12.7 ms
    on one core of the development machine, more than the locator's network. So an image at least
    twice ``size`` is brought by linear interpolation, a step of less than two, to ``size`` times
    the largest power of two it holds, and halved from there by area averaging: 1640x1232 to
    1280x960, 640x480, 320x240. Within a few levels of one ``INTER_AREA`` step, most pixels within
    one (tests/vision/test_preprocess.py); exactly one step when ``size`` is over half the image.

    ``fixed_point``: only steps that OpenCV computes in fixed point, the same bytes on every
    processor, for what the reader decides from (the locator's view). One ``INTER_AREA`` step by
    a factor under two sums in float, which rounds otherwise on ARM (0.05 % of a 640-pixel
    photo's levels one apart at 488); such an image is brought up to twice ``size`` linearly and
    halved once instead, within two levels of it. Not the default: the linear step samples hard
    edges, and a small blown-out spot measured on the look (``vision.light``) loses pixels.

    >>> shrink(np.zeros((1232, 1640, 3), np.uint8), (320, 240)).shape
    (240, 320, 3)
    """
    width, height = size
    source_w, source_h = image.shape[1], image.shape[0]
    times = 1
    while width * times * 2 <= source_w and height * times * 2 <= source_h:
        times *= 2
    if times == 1:
        if not fixed_point or width >= source_w or height >= source_h:
            return np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA), np.uint8)
        times = 2  # up to twice ``size`` and one halving, both fixed-point
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
    blurred past reading 0.031 and less (models/EXPERIMENTS.md, "Dice the face model cannot
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


EDGE_FEATURES = 8
"""How many numbers :func:`edge_features` gives a crop."""

_STRIP = 5
"""Pixels of the crop on either side of the box's edge that :func:`edge_features` compares:
the margin the crop keeps outside a square box (64 * (1 - 1 / CONTEXT) / 2). Strips of 4 a
pixel clear of the edge took fewer hidden dice at as few phantoms (models/EXPERIMENTS.md, "What
the crop's edges say")."""


def edge_features(
    crops: npt.NDArray[np.float32], boxes: Sequence[Sequence[float]]
) -> npt.NDArray[np.float32]:
    """What the edges of each located box look like in its face-model crop (N, 3, 64, 64): (N, 8).

    A die partly hidden by a card or a lid is boxed up to the cover's edge; there the crop's
    margin is the cover (one even colour, unlike the die just inside) and one straight, even
    edge runs along the box's side. A phantom (a shadow, a knob) seldom has such a side. For
    each side of the box, in the crop: the colour distance between the strip outside it and the
    strip inside (:data:`_STRIP` pixels each), the outer strip's colour spread, the mean
    gradient across the side over the crop's mean gradient, and how unevenly that gradient
    runs along the side (its spread over its mean). The eight: the largest distance, the
    largest side gradient, the smallest spread; that of the side of the largest distance, its
    gradient and unevenness; the second-largest distance; and the crop's mean gradient.

    >>> crop = np.full((2, 3, 64, 64), 0.2, np.float32)
    >>> crop[1, :, 6:59, 6:59] = 0.9  # a light die boxed on a dark table; the first: no die
    >>> rows = edge_features(crop, [(0.0, 0.0, 54.0, 54.0)] * 2)
    >>> [round(float(v), 2) for v in rows[:, 0]], [round(float(v), 2) for v in rows[:, 2]]
    ([0.0, 1.21], [0.0, 0.0])
    """
    if len(crops) != len(boxes):
        raise ValueError(f"{len(crops)} crops for {len(boxes)} boxes; give one box a crop")
    out = np.zeros((len(crops), EDGE_FEATURES), np.float32)
    for i, (crop, box) in enumerate(zip(crops, boxes, strict=True)):
        size = crop.shape[-1]
        sx0, sy0, sx1, _ = square_around(box)
        scale = size / max(sx1 - sx0, 1)
        # The box's sides in crop pixels, each strip kept inside the crop and not empty (the
        # square leaves 5 pixels around a box's long side, more around its short one).
        x0, y0, x1, y1 = (
            int(round((v - o) * scale)) for v, o in zip(box, (sx0, sy0, sx0, sy0), strict=True)
        )
        x0, y0 = min(max(x0, 2), size - 5), min(max(y0, 2), size - 5)
        x1, y1 = min(max(x1, x0 + 3), size - 2), min(max(y1, y0 + 3), size - 2)
        grey = np.asarray(cv2.GaussianBlur(crop.mean(axis=0), (0, 0), 1.0), np.float32)
        across_x = np.abs(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3))
        across_y = np.abs(cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3))
        mean_gradient = float(np.hypot(across_x, across_y).mean()) + 1e-3
        pixels = crop.transpose(1, 2, 0)
        sides = []
        # (outer strip, inner strip, gradient across the side along it) for left, right, top,
        # bottom; the gradient taken as the highest of the two pixels either side of the edge.
        for outer, inner, along in (
            (
                pixels[y0:y1, max(x0 - _STRIP, 0) : x0],
                pixels[y0:y1, x0 : min(x0 + _STRIP, x1)],
                across_x[y0:y1, x0 - 1 : x0 + 1].max(axis=1),
            ),
            (
                pixels[y0:y1, x1 : min(x1 + _STRIP, size)],
                pixels[y0:y1, max(x1 - _STRIP, x0) : x1],
                across_x[y0:y1, x1 - 1 : min(x1 + 1, size)].max(axis=1),
            ),
            (
                pixels[max(y0 - _STRIP, 0) : y0, x0:x1],
                pixels[y0 : min(y0 + _STRIP, y1), x0:x1],
                across_y[y0 - 1 : y0 + 1, x0:x1].max(axis=0),
            ),
            (
                pixels[y1 : min(y1 + _STRIP, size), x0:x1],
                pixels[max(y1 - _STRIP, y0) : y1, x0:x1],
                across_y[y1 - 1 : min(y1 + 1, size), x0:x1].max(axis=0),
            ),
        ):
            outer_px, inner_px = outer.reshape(-1, 3), inner.reshape(-1, 3)
            distance = float(np.linalg.norm(outer_px.mean(axis=0) - inner_px.mean(axis=0)))
            spread = float(outer_px.std(axis=0).mean())
            gradient = float(along.mean())
            uneven = float(along.std()) / (gradient + 1e-3)
            sides.append((distance, spread, gradient / mean_gradient, uneven))
        table = np.array(sides, np.float32)
        order = np.argsort(-table[:, 0], kind="stable")
        far = table[order[0]]
        out[i] = (
            table[:, 0].max(),
            table[:, 2].max(),
            table[:, 1].min(),
            far[1],
            far[2],
            far[3],
            table[order[1], 0],
            mean_gradient,
        )
    return out

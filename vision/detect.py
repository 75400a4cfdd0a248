"""The learned locator's pre- and post-processing (numpy and OpenCV, no onnxruntime, no torch).

The locator sees a frame scaled so its longer side is ``LOCATOR_SIDE`` pixels and answers, on a
grid ``STRIDE`` times coarser, a heatmap of die centres and the die's width and height there.
:func:`locator_input` makes its input and :func:`decode` turns its outputs back into boxes in the
original frame's pixels. Training (``vision/train/heatmap.py``) and the reader share these two.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.preprocess import shrink

__all__ = [
    "LOCATOR_SIDE",
    "STRIDE",
    "FloatBox",
    "Found",
    "at_frame_edge",
    "centre_inside",
    "covered_share",
    "decode",
    "iou",
    "locator_input",
    "merge_found",
    "pressed_squares",
]

LOCATOR_SIDE = 320
STRIDE = 4
SUPPRESS_IOU = 0.5
"""Peaks whose boxes overlap a stronger peak's this much (IoU) are one die seen twice."""
FloatBox = tuple[float, float, float, float]
PRESSED_ASPECT = 1.15
"""A box this much longer one way than the other, over a neighbour's, is drawn too large."""
PRESSED_OVERLAP = 0.05
"""The share of a box another box must cover for the two to count as pressed together."""


def locator_input(
    frame_bgr: npt.NDArray[np.uint8], side: int = LOCATOR_SIDE
) -> tuple[npt.NDArray[np.float32], float]:
    """Scale a frame for the locator: (1, 3, H, W) RGB / 255, H and W multiples of 16.

    Returns the tensor and the factor from locator pixels back to frame pixels. The frame is
    scaled (keeping its aspect) so the longer side is ``side`` by area averaging
    (:func:`vision.preprocess.shrink`; frames over eight times that size first by nearest
    neighbour to four times it), then padded at the right and bottom by edge
    replication.

    >>> tensor, factor = locator_input(np.zeros((960, 1280, 3), np.uint8))
    >>> tensor.shape, factor
    ((1, 3, 240, 320), 4.0)
    """
    height, width = frame_bgr.shape[:2]
    scale = side / max(height, width)
    new_w, new_h = max(int(round(width * scale)), 1), max(int(round(height * scale)), 1)
    if scale < 0.125:
        # INTER_AREA over an 8-megapixel frame costs more than the network: a nearest-neighbour
        # step to four times the target first keeps most of the averaging for a fraction of it.
        step = (new_w * 4, new_h * 4)
        frame_bgr = np.asarray(
            cv2.resize(frame_bgr, step, interpolation=cv2.INTER_NEAREST), dtype=np.uint8
        )
    small = shrink(frame_bgr, (new_w, new_h), fixed_point=True)
    pad_w, pad_h = (-new_w) % 16, (-new_h) % 16
    if pad_w or pad_h:
        small = np.asarray(
            cv2.copyMakeBorder(small, 0, pad_h, 0, pad_w, cv2.BORDER_REPLICATE), np.uint8
        )
    rgb = cv2.cvtColor(small, cv2.COLOR_BGR2RGB)
    tensor = rgb.transpose(2, 0, 1)[None].astype(np.float32) / np.float32(255.0)
    return np.ascontiguousarray(tensor), 1.0 / scale


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
    suppress: float = SUPPRESS_IOU,
) -> list[Found]:
    """Boxes from one frame's locator outputs: local maxima of the heatmap above ``threshold``.

    Two peaks can rise on one die (its top face and its whole body): a box overlapping a
    stronger one by an IoU of ``suppress`` or more is dropped. Dice seen from above cannot
    overlap that much; one leaning on another overlaps far less.

    ``heat_logits`` is (1, h, w) or (1, 1, h, w) before the sigmoid; ``size`` the box output
    (4, h, w) or (1, 4, h, w): the centre's offset inside its cell (x, y), log(width / STRIDE)
    and log(height / STRIDE); ``factor`` maps locator pixels back to the frame (from
    :func:`locator_input`).

    >>> logits = np.full((1, 8, 8), -9.0, np.float32)
    >>> logits[0, 4, 4] = 3.0
    >>> box = np.zeros((4, 8, 8), np.float32)
    >>> box[:, 4, 4] = [0.25, 0.0, np.log(4.5), np.log(4.0)]
    >>> [tuple(round(v, 3) for v in f.box) for f in decode(logits, box, factor=2.0)]
    [(16.0, 16.0, 52.0, 48.0)]
    """
    # In float64, then rounded to float32: numpy's float32 exp rounds its last bit otherwise on
    # x86 and ARM (on 44 % of a frame's values), and a box a hair wider can be cut a pixel
    # wider; float64's differences do not survive the rounding to float32 or to pixels.
    logits = heat_logits.reshape(heat_logits.shape[-2:]).astype(np.float64)
    heat = (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)
    sizes = size.reshape(4, *size.shape[-2:])
    pooled = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    peaks = np.argwhere((heat >= pooled) & (heat >= threshold))
    found: list[Found] = []
    for iy, ix in peaks:
        bw = math.exp(float(sizes[2, iy, ix])) * STRIDE
        bh = math.exp(float(sizes[3, iy, ix])) * STRIDE
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
    kept: list[Found] = []
    for candidate in found:
        if all(iou(candidate.box, k.box) < suppress for k in kept):
            kept.append(candidate)
    return kept


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two boxes (x0, y0, x1, y1).

    >>> iou((0, 0, 2, 2), (1, 0, 3, 2))
    0.3333333333333333
    """
    inter = _intersection(a, b)
    if inter <= 0:
        return 0.0
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def centre_inside(inner: Sequence[float], outer: Sequence[float]) -> bool:
    """True when the centre of box ``inner`` lies inside box ``outer``.

    >>> centre_inside((0, 0, 4, 4), (1, 1, 3, 3)), centre_inside((0, 0, 4, 4), (3, 3, 5, 5))
    (True, False)
    """
    cx, cy = (inner[0] + inner[2]) / 2, (inner[1] + inner[3]) / 2
    return outer[0] <= cx <= outer[2] and outer[1] <= cy <= outer[3]


def merge_found(primary: Sequence[Found], extra: Sequence[Found]) -> list[Found]:
    """The dice of ``primary``, and those of ``extra`` that none of them already covers.

    A box of ``extra`` is the same die as one of ``primary`` when they overlap by an IoU of
    ``SUPPRESS_IOU`` or more or when either's centre lies inside the other.

    >>> near, far = Found((0, 0, 10, 10), 0.9), Found((40, 0, 50, 10), 0.5)
    >>> [f.box for f in merge_found([near], [Found((1, 1, 11, 11), 0.8), far])]
    [(0, 0, 10, 10), (40, 0, 50, 10)]
    """
    merged = list(primary)
    for candidate in extra:
        if all(
            iou(candidate.box, kept.box) < SUPPRESS_IOU
            and not centre_inside(candidate.box, kept.box)
            and not centre_inside(kept.box, candidate.box)
            for kept in primary
        ):
            merged.append(candidate)
    return merged


def pressed_squares(
    boxes: Sequence[Sequence[int]],
    frame_shape: tuple[int, int],
    *,
    aspect: float = PRESSED_ASPECT,
    side: float | None = None,
) -> list[tuple[int, int, int, int] | None]:
    """For each box, a square about its centre where the net drew it too large over a die
    pressed against it; None where the box stands as drawn.

    Seen from above a die's box is square at any turn. Where dice touch, the net's size output
    blends a die with its neighbour: the box stretches over it, centred rightly, and the face
    model, taught that a box around two dice holds no die, drops it. A box over another (that
    covers at least ``PRESSED_OVERLAP`` of it) and clear of the frame's edge (where the frame,
    not the net, cut it short) is squared with its shorter side when it is more than ``aspect``
    times longer one way than the other; and, given ``side`` (the dice's side in the frame),
    squared to ``side`` when its shorter side is more than ``aspect`` times that: too large both
    ways. ``aspect`` 0 squares none.

    >>> pressed_squares([(20, 10, 170, 110), (160, 10, 260, 110), (400, 20, 550, 110)], (300, 600))
    [(45, 10, 145, 110), None, None]
    >>> pressed_squares([(20, 10, 150, 140), (140, 10, 240, 110)], (300, 600), side=100)
    [(35, 25, 135, 125), None]
    """
    squares: list[tuple[int, int, int, int] | None] = []
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        w, h = x1 - x0, y1 - y0
        square = min(w, h)
        if side is not None and square > aspect * side:
            square = int(round(side))
        # The box's own shape first: most boxes are square, and the neighbours need no look.
        if (
            aspect <= 0
            or square <= 0
            or at_frame_edge((x0, y0, x1, y1), frame_shape)
            or max(w, h) <= aspect * square
        ):
            squares.append(None)
            continue
        if not any(
            covered_share((x0, y0, x1, y1), other) >= PRESSED_OVERLAP
            for j, other in enumerate(boxes)
            if j != i
        ):
            squares.append(None)
            continue
        left, top = (x0 + x1 - square) // 2, (y0 + y1 - square) // 2
        squares.append((left, top, left + square, top + square))
    return squares


def at_frame_edge(box: Sequence[float], frame_shape: tuple[int, int]) -> bool:
    """Whether ``box`` reaches the edge of a frame of ``frame_shape`` (height, width): the die
    in it may go on beyond the frame, cut short by the camera's view, not by the net.

    >>> at_frame_edge((1, 40, 60, 99), (480, 640)), at_frame_edge((2, 40, 60, 99), (480, 640))
    (True, False)
    """
    height, width = frame_shape
    return box[0] <= 1 or box[1] <= 1 or box[2] >= width - 1 or box[3] >= height - 1


def covered_share(inner: Sequence[float], outer: Sequence[float]) -> float:
    """The share of box ``inner``'s area that lies inside box ``outer`` (0 for an empty box).

    >>> covered_share((0, 0, 10, 10), (5, 0, 20, 20)), covered_share((0, 0, 0, 10), (0, 0, 9, 9))
    (0.5, 0.0)
    """
    area = (inner[2] - inner[0]) * (inner[3] - inner[1])
    return _intersection(inner, outer) / area if area > 0 else 0.0


def _intersection(a: Sequence[float], b: Sequence[float]) -> float:
    """The area two boxes (x0, y0, x1, y1) share."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0

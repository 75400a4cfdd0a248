"""Where the dice are: a :class:`Locator` answers boxes in full-frame pixels.

Two locators share the protocol. :class:`LearnedLocator` runs the trained centre-heatmap net
(``models/dice_locator.onnx``, through :class:`vision.classify.OnnxLocator`) on a 320 px copy of the
frame. :class:`ClassicalLocator` is plain OpenCV: a die is anything that stands out from the tray,
its colour far from the tray's (learnt from the empty tray at calibration, else the frame's dominant
colour); touching dice are split by their expected size. For both, a footprint that is not square,
or that overlaps another die, marks a cocked die.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect import LOCATOR_SIDE, Found, decode, iou, locator_input, merge_found
from vision.preprocess import shrink

__all__ = [
    "DEFAULT_LOCATOR",
    "ClassicalLocator",
    "HeatmapModel",
    "LearnedLocator",
    "LocatedDie",
    "Locator",
    "LocatorOptions",
    "ZOOM_BELOW",
    "TrayColour",
    "die_at",
    "downscale",
    "foreground_mask",
    "footprint",
    "locate_dice",
    "tray_colour",
]

Frame = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.uint8]
Box = tuple[int, int, int, int]
RotatedRect = tuple[tuple[float, float], tuple[float, float], float]


@dataclass(frozen=True)
class TrayColour:
    """The tray's colour in OpenCV 8-bit Lab: per-channel median and robust spread."""

    median: tuple[float, float, float]
    spread: tuple[float, float, float]


@dataclass(frozen=True)
class LocatorOptions:
    """Tuning of :func:`locate_dice`; the defaults suit a tray filling most of the frame."""

    work_size: int = 480
    """Longer side, in pixels, of the downscaled frame the dice are looked for in."""
    distance: float = 4.0
    """How many robust standard deviations from the tray colour a die's pixel must be."""
    min_contrast: tuple[float, float, float] = (10.0, 5.0, 5.0)
    """Floor of the per-channel scale (Lab units), so a flat tray does not flag its own noise."""
    shadow_ratio: float = 0.55
    """Pixels darker than the tray are a die only below this fraction of its lightness (shadows)."""
    min_die_fraction: float = 0.0006
    """Smallest die, as a fraction of the frame's area."""
    max_die_fraction: float = 0.06
    """Largest single die, as a fraction of the frame's area."""
    die_side: float | None = None
    """Expected die side in full-frame pixels (from calibration); else estimated per frame."""
    max_cluster: int = 8
    """A blob holding more dice than this is not dice (a hand, the tray's wall, a box)."""
    cocked_aspect: float = 1.28
    """A footprint this much longer than wide is a leaning die showing two faces."""
    min_fill: float = 0.6
    """A single die fills at least this much of its rotated rectangle."""
    close: int = 5
    """Side of the closing kernel (work pixels) that joins the pieces of one die."""
    min_thickness: float = 0.3
    """A blob whose widest inscribed circle has a radius under this many die sides is no die."""


DEFAULT_LOCATOR = LocatorOptions()
"""The locator options used when none are given."""


@dataclass(frozen=True)
class LocatedDie:
    """A die found in a frame: its box and rotated rectangle in frame pixels."""

    box: Box
    rect: RotatedRect
    cocked: bool

    @property
    def centre(self) -> tuple[float, float]:
        """Centre of the die in frame pixels."""
        return self.rect[0]


def downscale(frame: Frame, work_size: int) -> tuple[Frame, float]:
    """Return the frame shrunk so its longer side is at most ``work_size``, and the factor used."""
    height, width = frame.shape[:2]
    factor = min(1.0, work_size / max(height, width))
    if factor >= 1.0:
        return frame, 1.0
    size = (max(int(round(width * factor)), 1), max(int(round(height * factor)), 1))
    if factor < 0.25:
        # INTER_AREA over a 12-megapixel frame costs tens of milliseconds; a nearest-neighbour
        # step to twice the target first keeps the averaging but drops most of the work.
        step = (size[0] * 2, size[1] * 2)
        frame = np.asarray(cv2.resize(frame, step, interpolation=cv2.INTER_NEAREST), np.uint8)
    return shrink(frame, size), factor


def tray_colour(
    small: Frame, region: Mask | None = None, *, lab: Frame | None = None
) -> TrayColour:
    """Return the dominant colour of ``small`` (the tray), from a sparse sample of its pixels.

    ``lab`` is ``small`` in Lab, when the caller has it already."""
    if lab is None:
        lab = np.asarray(cv2.cvtColor(small, cv2.COLOR_BGR2LAB), np.uint8)
    if region is not None:
        sample = lab[region > 0].reshape(-1, 3)[::7].astype(np.float32)
    else:
        sample = lab[::3, ::3].reshape(-1, 3).astype(np.float32)
    if sample.size == 0:
        sample = lab.reshape(-1, 3).astype(np.float32)
    median, spread = _median_spread(sample)
    m = tuple(float(v) for v in median)
    s = tuple(float(v) for v in spread)
    return TrayColour(median=(m[0], m[1], m[2]), spread=(s[0], s[1], s[2]))


def _median_spread(
    sample: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The median of each channel of an (N, 3) sample, and its spread (1.4826 times the median
    absolute deviation: a standard deviation that outliers such as dice do not move)."""
    channels = np.ascontiguousarray(sample.T)  # a row a channel: numpy's loops run along rows
    median = np.asarray(np.median(channels, axis=1), np.float32)
    spread = 1.4826 * np.median(np.abs(channels - median[:, None]), axis=1)
    return median, np.asarray(spread, np.float32)


def foreground_mask(
    small: Frame, tray: TrayColour | None = None, options: LocatorOptions = DEFAULT_LOCATOR
) -> Mask:
    """Return 255 where ``small`` is not tray: dice, pips, hands; soft shadows stay tray.

    With a calibrated ``tray`` colour every pixel is compared with it; without one, with the
    local background (a median over a quarter of the frame), so a tray that fills only part of
    the photo, beside a table and a rim of other colours, still stands out as background.
    """
    lab_u8 = np.asarray(cv2.cvtColor(small, cv2.COLOR_BGR2LAB), np.uint8)
    lab = lab_u8.astype(np.float32)
    floor = np.array(options.min_contrast, np.float32)
    if tray is not None:
        centre = np.array(tray.median, np.float32)
        scale = np.maximum(np.array(tray.spread, np.float32), floor)
        mask = _far(lab, centre, scale, options)
    else:
        background = _local_background(lab_u8)
        residual = (lab - background)[::3, ::3].reshape(-1, 3)
        scale = np.maximum(_median_spread(residual)[1], floor)
        # A die differs from the tray (the frame's dominant colour) and from what surrounds it:
        # the first alone flags the table round a tray, the second alone the tray's corners.
        dominant = np.array(tray_colour(small, lab=lab_u8).median, np.float32)
        mask = _far(lab, background, scale, options) & _far(lab, dominant, scale, options)
    mask = np.asarray(cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)), np.uint8)
    # Closing joins the pieces of a die whose body is close to the tray's colour (white on grey)
    # around its pips and edges.
    square = np.ones((options.close, options.close), np.uint8)
    mask = np.asarray(cv2.morphologyEx(mask, cv2.MORPH_CLOSE, square), np.uint8)
    return np.asarray(mask, dtype=np.uint8)


def _far(
    lab: npt.NDArray[np.float32],
    centre: npt.NDArray[np.float32],
    scale: npt.NDArray[np.float32],
    options: LocatorOptions,
) -> Mask:
    """255 where a pixel is more than ``options.distance`` scaled units from ``centre`` (a
    colour, or an image of them)."""
    # Plane by plane: numpy's loops over an (h, w, 3) image against a colour run three values
    # at a time, about twice the time of this for the settle detector's every frame.
    planes: list[npt.NDArray[np.float32]] = [np.asarray(p, np.float32) for p in cv2.split(lab)]
    centres: list[npt.NDArray[np.float32]] = (
        [np.asarray(c, np.float32) for c in cv2.split(centre)]
        if centre.ndim == 3
        else [np.asarray(v, np.float32) for v in centre]  # 0-d: a colour's channel
    )
    light, back_light = planes[0], centres[0]
    # A shadow only darkens the tray: a pixel darker than the tray counts by its lightness only
    # when it is darker than a shadow can make it.
    darker = light < back_light
    dark_enough = light < back_light * options.shadow_ratio
    distance = np.zeros(light.shape, np.float32)
    for k, (plane, middle) in enumerate(zip(planes, centres, strict=True)):
        z = (plane - middle) / scale[k]
        if k == 0:
            z = np.where(darker & ~dark_enough, np.float32(0.0), z)
        distance += z * z
    return np.asarray(distance > options.distance**2, np.uint8) * np.uint8(255)


def _local_background(lab: Frame) -> npt.NDArray[np.float32]:
    """Median colour around each pixel over a quarter of the frame: the tray without the dice."""
    height, width = lab.shape[:2]
    # The median runs on a quarter-size copy: the background changes slowly, and a large
    # median kernel at full work size would cost more than the whole rest of locating.
    tiny = cv2.resize(lab, (max(width // 4, 1), max(height // 4, 1)), interpolation=cv2.INTER_AREA)
    kernel = max(3, (max(tiny.shape[:2]) // 4) | 1)
    blurred = cv2.medianBlur(tiny, kernel)
    return np.asarray(
        cv2.resize(blurred, (width, height), interpolation=cv2.INTER_LINEAR), np.float32
    )


def _filled_blobs(mask: Mask) -> list[tuple[int, npt.NDArray[np.int32], int]]:
    """Return ``(id, outer contour, id of the blob whose hole holds it or -1)``, outermost first.

    A blob is filled in (pips and glare do not split a die), but what lies in a hole is kept
    apart: dice on a tray whose surround (a table of another colour) rings the whole frame.
    """
    contours, hierarchy = cv2.findContours(mask, cv2.RETR_TREE, cv2.CHAIN_APPROX_SIMPLE)
    if hierarchy is None:
        return []
    parents = [int(p) for p in hierarchy[0][:, 3]]
    depth = [0] * len(contours)
    for i in range(len(contours)):
        p = parents[i]
        while p >= 0:
            depth[i] += 1
            p = parents[p]
    outer = sorted((i for i in range(len(contours)) if depth[i] % 2 == 0), key=lambda i: depth[i])
    # An outer contour's parent is a hole; the hole's parent is the enclosing blob.
    return [
        (i, np.asarray(contours[i], dtype=np.int32), parents[parents[i]] if parents[i] >= 0 else -1)
        for i in outer
    ]


def _rotated_rect(points: npt.NDArray[np.int32] | npt.NDArray[np.float32]) -> RotatedRect:
    (cx, cy), (w, h), angle = cv2.minAreaRect(points)
    return ((float(cx), float(cy)), (float(w), float(h)), float(angle))


def _thickness(contour: npt.NDArray[np.int32]) -> float:
    """Radius of the largest circle inside the filled contour (a strip of rim is thin)."""
    x, y, w, h = cv2.boundingRect(contour)
    blob = np.zeros((h + 2, w + 2), np.uint8)
    cv2.drawContours(blob, [contour], -1, 255, -1, offset=(1 - x, 1 - y))
    return float(cv2.distanceTransform(blob, cv2.DIST_L2, 3).max())


def _aspect(rect: RotatedRect) -> float:
    w, h = rect[1]
    return max(w, h) / max(min(w, h), 1e-6)


def _estimate_side(rects: Sequence[tuple[RotatedRect, float]], fallback: float) -> float:
    """Median side of the blobs that look like one flat die (square and well filled)."""
    sides = [
        math.sqrt(area)
        for rect, area in rects
        if _aspect(rect) < 1.2 and area >= 0.75 * rect[1][0] * rect[1][1]
    ]
    if not sides:
        return fallback
    return float(np.median(sides))


def _split(
    contour: npt.NDArray[np.int32], shape: tuple[int, int], count: int
) -> list[npt.NDArray[np.float32]]:
    """Split a blob of ``count`` touching dice into ``count`` point sets (k-means on its pixels)."""
    blob = np.zeros(shape, np.uint8)
    cv2.drawContours(blob, [contour], -1, 255, -1)
    ys, xs = np.nonzero(blob)
    points = np.column_stack([xs, ys]).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    # k-means starts from random centres; a fixed seed makes the same frame split the same way.
    cv2.setRNGSeed(12345)
    best = np.zeros((len(points), 1), np.int32)
    _, found, _ = cv2.kmeans(points, count, best, criteria, 3, cv2.KMEANS_PP_CENTERS)
    labels = np.asarray(found).ravel()
    return [points[labels == k] for k in range(count) if np.any(labels == k)]


def _to_frame(rect: RotatedRect, factor: float, width: int, height: int) -> tuple[Box, RotatedRect]:
    """Scale a rotated rectangle from the small frame to the full frame; return it and its box."""
    (cx, cy), (w, h), angle = rect
    inv = 1.0 / factor
    # +0.5: a pixel index is the pixel's corner, its centre is half a pixel further.
    full: RotatedRect = (
        ((cx + 0.5) * inv - 0.5, (cy + 0.5) * inv - 0.5),
        (w * inv, h * inv),
        angle,
    )
    corners = cv2.boxPoints(full)
    x0 = int(max(math.floor(float(corners[:, 0].min())), 0))
    y0 = int(max(math.floor(float(corners[:, 1].min())), 0))
    x1 = int(min(math.ceil(float(corners[:, 0].max())) + 1, width))
    y1 = int(min(math.ceil(float(corners[:, 1].max())) + 1, height))
    return (x0, y0, x1, y1), full


def _overlaps(a: RotatedRect, b: RotatedRect, min_area: float) -> bool:
    kind, region = cv2.rotatedRectangleIntersection(a, b)
    if kind == cv2.INTERSECT_NONE or region is None:
        return False
    return float(cv2.contourArea(region)) > min_area


def locate_dice(
    frame: Frame,
    *,
    tray: TrayColour | None = None,
    options: LocatorOptions = DEFAULT_LOCATOR,
) -> list[LocatedDie]:
    """Return the dice in ``frame``, left to right then top to bottom, boxes in frame pixels."""
    height, width = frame.shape[:2]
    small, factor = downscale(frame, options.work_size)
    mask = foreground_mask(small, tray, options)
    area_total = float(small.shape[0] * small.shape[1])
    min_area = options.min_die_fraction * area_total
    max_area = options.max_die_fraction * area_total
    blobs = []
    sh, sw = mask.shape[:2]
    for ident, contour, enclosing in _filled_blobs(mask):
        area = float(cv2.contourArea(contour))
        if area < min_area:
            continue
        x, y, w, h = cv2.boundingRect(contour)
        if x <= 0 or y <= 0 or x + w >= sw or y + h >= sh:
            # Cut by the frame's edge: a die half out of view cannot be read, and what reaches in
            # from the edge is mostly arms, sleeves and the tray's own wall.
            continue
        rect = _rotated_rect(contour)
        blobs.append((ident, contour, rect, area, enclosing))
    if options.die_side is not None:
        side = options.die_side * factor
    else:
        singles = [(r, a) for _, _, r, a, _ in blobs if a <= max_area]
        # With no lone die to measure, a row of touching dice is still one die wide.
        shortest = [min(r[1]) for _, _, r, a, _ in blobs if a <= max_area * options.max_cluster]
        fallback = float(np.median(shortest)) if shortest else math.sqrt(min_area * 4.0)
        side = _estimate_side(singles, fallback)
    die_area = side * side
    found: list[tuple[RotatedRect, bool]] = []
    # Anything inside a hole of a die (a pip of the tray's colour, say) is part of that die.
    taken: set[int] = set()
    for ident, contour, rect, area, enclosing in blobs:
        if enclosing in taken:
            continue
        if _thickness(contour) < options.min_thickness * side:
            continue
        count = int(round(area / die_area))
        fill = area / max(rect[1][0] * rect[1][1], 1e-6)
        if count > options.max_cluster:
            continue
        if count <= 1 or (area < 1.7 * die_area and _aspect(rect) < 1.75):
            if area > max_area or fill < options.min_fill * 0.8:
                continue
            taken.add(ident)
            found.append((rect, _aspect(rect) > options.cocked_aspect))
            continue
        taken.add(ident)
        for points in _split(contour, mask.shape[:2], count):
            if len(points) < min_area * 0.5:
                continue
            part = _rotated_rect(points)
            found.append((part, _aspect(part) > options.cocked_aspect))
    cocked = [c for _, c in found]
    _mark_overlapping([r for r, _ in found], cocked, 0.08 * die_area)
    dice = []
    for (rect, _), is_cocked in zip(found, cocked, strict=True):
        box, full = _to_frame(rect, factor, width, height)
        dice.append(LocatedDie(box=box, rect=full, cocked=is_cocked))
    dice.sort(key=lambda d: (d.box[1] // max(int(side / factor), 1), d.box[0]))
    return dice


def _mark_overlapping(rects: Sequence[RotatedRect], cocked: list[bool], min_area: float) -> None:
    """A die lying flat cannot overlap another seen from above: the more elongated one leans."""
    for i, a in enumerate(rects):
        for j in range(i + 1, len(rects)):
            b = rects[j]
            if _overlaps(a, b, min_area):
                ai, aj = _aspect(a), _aspect(b)
                if ai >= aj - 0.05:
                    cocked[i] = True
                if aj >= ai - 0.05:
                    cocked[j] = True


class Locator(Protocol):
    """Anything that finds the dice in a frame (boxes and footprints in frame pixels)."""

    def locate(
        self, frame: Frame, *, zone: Box | None = None, tray: TrayColour | None = None
    ) -> list[LocatedDie]:
        """Return the dice in ``frame``; ``zone`` is the roll zone in pixels, ``tray`` its colour.

        Dice outside the zone are returned too (the reader sets them aside).
        """
        ...


class ClassicalLocator:
    """OpenCV only: dice are what stands out from the tray's colour (:func:`locate_dice`)."""

    def __init__(self, options: LocatorOptions = DEFAULT_LOCATOR) -> None:
        """Keep the tuning options."""
        self.options = options

    def __repr__(self) -> str:
        return f"ClassicalLocator({self.options!r})"

    def locate(
        self, frame: Frame, *, zone: Box | None = None, tray: TrayColour | None = None
    ) -> list[LocatedDie]:
        """Return the dice in ``frame``, in the zone and on the table around it.

        With a roll zone smaller than the frame, the zone and the table around it are searched
        apart, each against its own colour: seen against the tray, the whole table is one blob.
        """
        height, width = frame.shape[:2]
        if zone is None or zone == (0, 0, width, height):
            return locate_dice(frame, tray=tray, options=self.options)
        x0, y0, x1, y1 = zone

        def in_zone(die: LocatedDie) -> bool:
            cx, cy = die.centre
            return x0 <= cx <= x1 and y0 <= cy <= y1

        inside = [d for d in locate_dice(frame, tray=tray, options=self.options) if in_zone(d)]
        around = frame.copy()
        outside = np.ones((height, width), bool)
        outside[y0:y1, x0:x1] = False
        # Painting the zone in the table's colour leaves only the table for the second search.
        around[y0:y1, x0:x1] = np.median(frame[outside][::7], axis=0).astype(np.uint8)
        aside = [d for d in locate_dice(around, options=self.options) if not in_zone(d)]
        return inside + aside


class HeatmapModel(Protocol):
    """The learned locator's network: (1, 3, H, W) RGB in, heatmap logits and boxes out."""

    def run(
        self, image: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Return heatmap logits (1, 1, h, w) and boxes (1, 4, h, w) at stride 4."""
        ...


def footprint(
    frame: Frame, box: Box, *, work: int = 48, min_contrast: float = 6.0
) -> RotatedRect | None:
    """The rotated rectangle of the die around ``box``, from its colour against its surround.

    A window 1.5 times the box, shrunk to ``work`` pixels, is split by Otsu's threshold on the
    colour distance from the window's border; the blob under the box centre is the die. None when
    no blob is there, or nothing in the window is ``min_contrast`` (Lab units) from the border.
    Shadows only darken the surround, so lightness counts less than colour.
    """
    height, width = frame.shape[:2]
    x0, y0, x1, y1 = box
    bw, bh = max(x1 - x0, 1), max(y1 - y0, 1)
    wx0, wy0 = max(int(x0 - bw / 4), 0), max(int(y0 - bh / 4), 0)
    wx1, wy1 = min(int(x1 + bw / 4) + 1, width), min(int(y1 + bh / 4) + 1, height)
    if wx1 - wx0 < 4 or wy1 - wy0 < 4:
        return None
    scale = min(1.0, work / max(wx1 - wx0, wy1 - wy0))
    size = (max(int(round((wx1 - wx0) * scale)), 4), max(int(round((wy1 - wy0) * scale)), 4))
    window = cv2.resize(frame[wy0:wy1, wx0:wx1], size, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(window, cv2.COLOR_BGR2LAB).astype(np.float32)
    border = np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]])
    background = np.median(border, axis=0)
    distance = np.sqrt((((lab - background) ** 2) * np.array([0.3, 1.0, 1.0], np.float32)).sum(-1))
    scaled = np.clip(distance * 4, 0, 255).astype(np.uint8)
    level, mask = cv2.threshold(scaled, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if level < min_contrast * 4:
        # Otsu splits any window in two; on bare tray the two halves are only its texture.
        return None
    mask = np.asarray(cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)), np.uint8)
    count, labels = cv2.connectedComponents(mask)
    cx = int(((x0 + x1) / 2 - wx0) * scale)
    cy = int(((y0 + y1) / 2 - wy0) * scale)
    cx, cy = min(max(cx, 0), size[0] - 1), min(max(cy, 0), size[1] - 1)
    # The box centre can fall on a pip of the tray's colour: vote over the box's middle instead.
    r = max(int(min(bw, bh) * scale / 4), 1)
    middle = labels[max(cy - r, 0) : cy + r + 1, max(cx - r, 0) : cx + r + 1]
    votes = np.bincount(middle.ravel(), minlength=count)
    votes[0] = 0
    best = int(votes.argmax())
    if count < 2 or votes[best] == 0:
        return None
    ys, xs = np.nonzero(labels == best)
    points = np.column_stack([xs, ys]).astype(np.float32)
    (rx, ry), (rw, rh), angle = _rotated_rect(points)
    inv = 1.0 / scale
    # +0.5: a pixel index is the pixel's corner; its centre is half a pixel further.
    return (
        ((rx + 0.5) * inv + wx0 - 0.5, (ry + 0.5) * inv + wy0 - 0.5),
        ((rw + 1) * inv, (rh + 1) * inv),
        angle,
    )


ZOOM_BELOW = 20.0
"""Dice whose median side is under this many pixels of the 320-pixel view get a second look.

Chosen on the training photos (never the held-out ones): 16 and 20 read alike on the oblique
phone photos, 20 read more of the top-down photos of 10-25 dice exactly (88.8 % against 87.6 %).
The locator was trained on dice of about 5 to 100 pixels at that view, so a die made 28 pixels
is well inside what it knows.
"""


class LearnedLocator:
    """The trained centre-heatmap locator; leaning dice are told by their footprint."""

    def __init__(
        self,
        model: HeatmapModel,
        *,
        threshold: float = 0.4,
        options: LocatorOptions = DEFAULT_LOCATOR,
        zoom_below: float = ZOOM_BELOW,
        zoom_to: float = 28.0,
        zoom_max_side: int = 1280,
    ) -> None:
        """Use ``model``; a die is a heatmap peak of at least ``threshold`` (0..1).

        ``options.cocked_aspect`` says how elongated a footprint marks a leaning die. When the
        dice found are small (their median side under ``zoom_below`` pixels of the locator's
        320-pixel view), the frame is looked at again, larger, so that they measure about
        ``zoom_to`` pixels (its longer side at most ``zoom_max_side`` and the frame's own), and
        the dice found there are added: many dice in one photo, or a camera far from the tray.
        ``zoom_below`` 0 never zooms.
        """
        self.model = model
        self.threshold = threshold
        self.options = options
        self.zoom_below = zoom_below
        self.zoom_to = zoom_to
        self.zoom_max_side = zoom_max_side

    def __repr__(self) -> str:
        return f"LearnedLocator({self.model!r}, threshold={self.threshold})"

    def _find(self, frame: Frame, side: int) -> list[Found]:
        """The net's dice with the frame scaled to ``side`` pixels (boxes in frame pixels)."""
        tensor, factor = locator_input(frame, side)
        heat, size = self.model.run(tensor)
        return decode(
            heat, size, factor=factor, threshold=self.threshold, frame_shape=frame.shape[:2]
        )

    def find(self, frame: Frame) -> list[Found]:
        """The dice the net finds, with a second, larger look when they are small."""
        found = self._find(frame, LOCATOR_SIDE)
        if self.zoom_below <= 0 or not found:
            return found
        longer = max(frame.shape[:2])
        sides = sorted(max(f.box[2] - f.box[0], f.box[3] - f.box[1]) for f in found)
        median = sides[len(sides) // 2] * LOCATOR_SIDE / longer
        if median >= self.zoom_below:
            return found
        side = min(int(LOCATOR_SIDE * self.zoom_to / max(median, 1.0)), self.zoom_max_side, longer)
        if side < LOCATOR_SIDE * 1.25:
            return found
        # The closer look sees the small dice best; the first keeps any large die it cut up.
        merged = merge_found(self._find(frame, side), found)
        return sorted(merged, key=lambda f: -f.score)

    def locate(
        self,
        frame: Frame,
        *,
        zone: Box | None = None,  # noqa: ARG002  (the net looks at the whole frame)
        tray: TrayColour | None = None,  # noqa: ARG002  (and needs no tray colour)
    ) -> list[LocatedDie]:
        """Return the dice the net finds anywhere in ``frame``, most certain first."""
        return self.with_footprints(frame, self.without_footprints(frame))

    def without_footprints(self, frame: Frame) -> list[LocatedDie]:
        """The dice :meth:`locate` returns, each with its box's rectangle and none cocked.

        A footprint costs about a millisecond a die and only matters for a die whose face is
        not read surely (or near the roll zone's edge), so the reader asks for them only then
        (:meth:`with_footprints`).
        """
        dice: list[LocatedDie] = []
        for f in self.find(frame):
            x0, y0, x1, y1 = f.box
            box = (int(math.floor(x0)), int(math.floor(y0)), int(math.ceil(x1)), int(math.ceil(y1)))
            if box[2] - box[0] < 2 or box[3] - box[1] < 2:
                continue
            rect = (((x0 + x1) / 2, (y0 + y1) / 2), (x1 - x0, y1 - y0), 0.0)
            dice.append(LocatedDie(box=box, rect=rect, cocked=False))
        return dice

    def with_footprints(self, frame: Frame, dice: Sequence[LocatedDie]) -> list[LocatedDie]:
        """``dice`` (from :meth:`without_footprints`) with their footprints and leaning marked."""
        boxes = [d.box for d in dice]
        rects = [footprint(frame, d.box) or d.rect for d in dice]
        cocked = [_aspect(r) > self.options.cocked_aspect for r in rects]
        sides = sorted(min(r[1]) for r in rects)
        side = sides[len(sides) // 2] if sides else 0.0
        _mark_overlapping(rects, cocked, 0.08 * side * side)
        return [
            LocatedDie(box=box, rect=rect, cocked=is_cocked)
            for box, rect, is_cocked in zip(boxes, rects, cocked, strict=True)
        ]


POINTED_PEAK = 0.05
"""How faint a heatmap peak may be where a person points at a die the locator missed: far below
the reader's 0.4, since a person says a die is there."""


def die_at(
    frame: Frame,
    point: tuple[float, float],
    others: Sequence[Box],
    locator: Locator | None = None,
) -> Box | None:
    """The box of a die a person pointed at in ``frame`` (one the camera missed), or None.

    None when the point is on one of ``others`` (the dice already known). The locator's faintest
    peaks are looked at first (``POINTED_PEAK`` for the learned one): the most certain box that
    holds the point, overlaps none of the others and, when there are others, measures half to
    twice their median side. Failing that, a box of the others' median side centred on the
    point, if it overlaps none of them: a tap is off by a few pixels, the box the net draws is
    not.
    """
    x, y = point
    height, width = frame.shape[:2]
    if not (0 <= x < width and 0 <= y < height):
        return None
    if any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in others):
        return None  # a die already known
    sides = sorted(max(b[2] - b[0], b[3] - b[1]) for b in others)
    median = float(sides[len(sides) // 2]) if sides else 0.0
    found: list[tuple[float, Box]] = []
    if isinstance(locator, LearnedLocator):
        faint = LearnedLocator(
            locator.model,
            threshold=POINTED_PEAK,
            options=locator.options,
            zoom_below=locator.zoom_below,
            zoom_to=locator.zoom_to,
            zoom_max_side=locator.zoom_max_side,
        )
        for f in faint.find(frame):
            x0, y0, x1, y1 = f.box
            box = (math.floor(x0), math.floor(y0), math.ceil(x1), math.ceil(y1))
            found.append((f.score, box))
    elif locator is not None:
        found = [(1.0, die.box) for die in locator.locate(frame)]
    for _, box in sorted(found, key=lambda item: -item[0]):
        if not (box[0] <= x <= box[2] and box[1] <= y <= box[3]):
            continue
        if any(iou(box, other) >= 0.3 for other in others):
            continue  # a die already known, or two dice in one box
        side = max(box[2] - box[0], box[3] - box[1])
        if median and not 0.5 * median <= side <= 2.0 * median:
            continue
        return (max(box[0], 0), max(box[1], 0), min(box[2], width), min(box[3], height))
    if not median:
        return None
    half = median / 2
    box = (
        max(round(x - half), 0),
        max(round(y - half), 0),
        min(round(x + half), width),
        min(round(y + half), height),
    )
    if box[2] <= box[0] or box[3] <= box[1] or any(iou(box, b) >= 0.3 for b in others):
        return None
    return box

"""The locator's training samples, numpy and OpenCV only: photos, synthetic scenes, augmentation.

:mod:`vision.train.locator` trains on what :func:`sample` gives; keeping this part free of torch
lets the suite check, without the ``train`` extra, that every crop, turn and flip moves the dice
boxes with the pixels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect import LOCATOR_SIDE
from vision.train.data import FloatBox, Record, die_boxes, lay_cover, read_image, shown_box
from vision.train.synth import render_scene

__all__ = [
    "LocatorConfig",
    "Photo",
    "Scene",
    "cover_die",
    "cut_scene",
    "load_photo",
    "photometric",
    "render_pool",
    "sample",
]

Scene = tuple[npt.NDArray[np.uint8], list[FloatBox]]
"""A training picture (BGR) and its dice boxes in its pixels."""


@dataclass(frozen=True)
class LocatorConfig:
    """Everything that decides a locator run."""

    seed: int = 4
    steps: int = 8000
    batch_size: int = 16
    crop: int = 192
    learning_rate: float = 2e-3
    synthetic_share: float = 0.3
    threads: int = 2
    threshold: float = 0.4
    widths: tuple[int, int, int, int, int] = (24, 32, 64, 96, 48)
    """Channels at stride 2, 4, 8 and 16, and of the stride-4 head."""
    scale_range: tuple[float, float] = (0.5, 2.5)
    """Photos are seen at these multiples of the locator's own scale (longer side 320 px)."""
    photo_side: int = 640
    """Photos are kept with this longer side, so that scaling up does not only blur them."""
    synthetic_scenes: int = 3000
    """Scenes rendered once and cut at random (0: a new scene for every synthetic sample)."""
    max_dice: int = 16
    """Synthetic scenes hold 0 to this many dice."""
    scatter: bool = True
    """Synthetic dice lie anywhere in the scene, not around the first (see render_scene)."""
    rim_share: float = 0.4
    """Share of synthetic scenes with a tray's rim."""
    touching: float = 0.0
    """Share of synthetic dice pushed against another, at a side or a corner (render_scene)."""
    photometric: bool = True
    """Also turn by 90 degrees, shuffle colour channels, grey, blur, noise (beyond gains)."""
    grey: float = 0.1
    """Share of the photometric samples made grey, as a monochrome camera sees them."""
    exclude: tuple[str, ...] = ()
    """Sources left out of training whole (measured on all their photos): unseen scenes."""
    occluded: float = 0.0
    """Share of training samples with a card over part of a die (:func:`cover_die`)."""


@dataclass
class Photo:
    """A training or validation photo at locator scale, with its whole-die boxes."""

    source: str
    image: npt.NDArray[np.uint8]
    boxes: list[FloatBox]
    frame: Path
    source_shape: tuple[int, int]
    """Height and width of the photo as stored in the source."""


def load_photo(record: Record, side: int = LOCATOR_SIDE) -> Photo:
    """Read a photo, scale it so its longer side is ``side`` and its boxes with it."""
    image = read_image(record.path)
    boxes = die_boxes(record, image)
    scale = side / max(image.shape[:2])
    if side > LOCATOR_SIDE:
        # Kept large for scaling up later: never beyond the photo's own pixels.
        scale = min(scale, 1.0)
    small = cv2.resize(
        image,
        (round(image.shape[1] * scale), round(image.shape[0] * scale)),
        interpolation=cv2.INTER_AREA,
    )
    scaled = [(b[0] * scale, b[1] * scale, b[2] * scale, b[3] * scale) for b in boxes]
    height, width = image.shape[:2]
    return Photo(record.source, np.asarray(small, np.uint8), scaled, record.path, (height, width))


def _render(rng: np.random.Generator, config: LocatorConfig, size: int) -> Scene:
    """One synthetic table scene of ``size`` pixels and its dice boxes."""
    scene = render_scene(
        rng,
        size=(size, size),
        dice=int(rng.integers(0, config.max_dice + 1)),
        half_range=(6.0, 14.0) if not config.scatter else (4.0, 18.0),
        scatter=config.scatter,
        rim_share=config.rim_share,
        touching=config.touching,
    )
    return scene.image, [d.box for d in scene.dice]


def render_pool(
    rng: np.random.Generator,
    config: LocatorConfig,
    progress: Callable[[Iterable[int]], Iterable[int]] = iter,
) -> list[Scene]:
    """Render ``config.synthetic_scenes`` scenes once (rendering each batch anew is slow).

    ``progress`` wraps the loop (a progress bar, say).
    """
    side = config.crop + config.crop // 3
    return [_render(rng, config, side) for _ in progress(range(config.synthetic_scenes))]


def cut_scene(scene: Scene, rng: np.random.Generator, size: int) -> Scene:
    """A random ``size`` window of a pre-rendered scene, turned by a multiple of 90 degrees."""
    image, boxes = scene
    height, width = image.shape[:2]
    x0 = int(rng.integers(0, width - size + 1))
    y0 = int(rng.integers(0, height - size + 1))
    window = image[y0 : y0 + size, x0 : x0 + size]
    moved = [(b[0] - x0, b[1] - y0, b[2] - x0, b[3] - y0) for b in boxes]
    for _ in range(int(rng.integers(4))):
        window, moved = _quarter_turn(window, moved)
    return np.ascontiguousarray(window), moved


def _quarter_turn(image: npt.NDArray[np.uint8], boxes: list[FloatBox]) -> Scene:
    """A square picture turned a quarter clockwise: (x, y) goes to (side - y, x)."""
    side = image.shape[0]
    return np.rot90(image, -1), [(side - b[3], b[0], side - b[1], b[2]) for b in boxes]


def sample(
    photos: list[Photo],
    rng: np.random.Generator,
    config: LocatorConfig,
    pool: list[Scene] | None = None,
) -> Scene:
    """One training crop: a real photo or a synthetic scene, scaled, cropped, flipped."""
    size = config.crop
    if rng.random() < config.synthetic_share:
        if pool:
            return cut_scene(pool[int(rng.integers(len(pool)))], rng, size)
        return _render(rng, config, size)
    photo = photos[int(rng.integers(len(photos)))]
    low, high = config.scale_range
    # Photos are stored at their own scale; the range is in multiples of the locator's scale.
    native = LOCATOR_SIDE / max(photo.source_shape)
    stored = photo.image.shape[1] / photo.source_shape[1]
    scale = float(np.exp(rng.uniform(np.log(low), np.log(high)))) * native / stored
    image = cv2.resize(
        photo.image,
        (max(round(photo.image.shape[1] * scale), 1), max(round(photo.image.shape[0] * scale), 1)),
        interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR,
    )
    boxes = [(b[0] * scale, b[1] * scale, b[2] * scale, b[3] * scale) for b in photo.boxes]
    height, width = image.shape[:2]
    if height < size or width < size:
        # A flat border of the photo's own median colour: a mirrored border would show the
        # dice near the edge again, unlabelled, and teach the locator to pass them over.
        fill = [float(v) for v in np.median(image.reshape(-1, 3), axis=0)]
        image = cv2.copyMakeBorder(
            image,
            0,
            max(size - height, 0),
            0,
            max(size - width, 0),
            cv2.BORDER_CONSTANT,
            value=fill,
        )
        height, width = image.shape[:2]
    x0 = int(rng.integers(0, width - size + 1))
    y0 = int(rng.integers(0, height - size + 1))
    image = image[y0 : y0 + size, x0 : x0 + size]
    moved = [(b[0] - x0, b[1] - y0, b[2] - x0, b[3] - y0) for b in boxes]
    if rng.random() < 0.5:
        image = image[:, ::-1]
        moved = [(size - b[2], b[1], size - b[0], b[3]) for b in moved]
    if rng.random() < 0.5:
        image = image[::-1]
        moved = [(b[0], size - b[3], b[2], size - b[1]) for b in moved]
    return np.ascontiguousarray(image), moved


def photometric(
    image: npt.NDArray[np.uint8],
    boxes: list[FloatBox],
    rng: np.random.Generator,
    grey: float = LocatorConfig.grey,
) -> Scene:
    """Other cameras, trays and dice: quarter turns, any channel order, grey (a ``grey`` share),
    blur and noise."""
    if image.shape[0] == image.shape[1] and rng.random() < 0.5:
        image, boxes = _quarter_turn(image, boxes)
    if rng.random() < 0.5:
        # Dice come in every colour: the locator must not learn which ones are common.
        image = image[:, :, rng.permutation(3)]
    if rng.random() < grey:
        brightness = cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_BGR2GRAY)
        image = np.repeat(brightness[:, :, None], 3, axis=2)
    work = np.ascontiguousarray(image).astype(np.float32)
    if rng.random() < 0.2:
        work = np.asarray(cv2.GaussianBlur(work, (0, 0), float(rng.uniform(0.5, 1.5))), np.float32)
    if rng.random() < 0.3:
        work = work + rng.normal(0, rng.uniform(2, 10), work.shape).astype(np.float32)
    if rng.random() < 0.3:
        # Contrast about the mean: flat lighting, or a harsh lamp.
        mean = work.mean()
        work = (work - mean) * float(rng.uniform(0.6, 1.4)) + mean
    return np.clip(work, 0, 255).astype(np.uint8), boxes


HIDDEN_BEYOND = 0.7
"""A die more hidden than this share of its box is not labelled: too little of it shows."""


def cover_die(
    image: npt.NDArray[np.uint8], boxes: list[FloatBox], rng: np.random.Generator
) -> Scene:
    """A card laid over part of one die (over the table when there are none), and the boxes of
    what still shows of each die.

    The card is a rectangle one to four sides across, turned at random, whose edge covers 10 to
    90 % of the die's box; it may cover other dice too. A die is boxed where it shows, as a
    player would point at it, while at most ``HIDDEN_BEYOND`` of its box is covered; beyond
    that it is not labelled. So the locator learns to find a die partly under something (the
    reader then asks the players about it) and that the card's corners are not dice.
    """
    height, width = image.shape[:2]
    if boxes:
        x0, y0, x1, y1 = boxes[int(rng.integers(len(boxes)))]
        side = max(((x1 - x0) + (y1 - y0)) / 2, 2.0)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        angle = float(rng.uniform(0, 2 * np.pi))
        extent = abs((x1 - x0) * float(np.cos(angle))) + abs((y1 - y0) * float(np.sin(angle)))
        edge = extent / 2 - float(rng.uniform(0.1, 0.9)) * extent
    else:
        side = float(rng.uniform(0.05, 0.15)) * min(height, width)
        cx, cy = float(rng.uniform(0, width)), float(rng.uniform(0, height))
        angle = float(rng.uniform(0, 2 * np.pi))
        edge = 0.0
    nx, ny = float(np.cos(angle)), float(np.sin(angle))
    deep = float(rng.uniform(1.0, 4.0)) * side
    half = float(rng.uniform(0.75, 2.0)) * side
    offset = float(rng.uniform(-0.5, 0.5)) * side

    def depth(xs: npt.NDArray[np.float32], ys: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """How far each point lies inside the card (negative outside), in pixels."""
        across = (xs - cx) * nx + (ys - cy) * ny - edge
        along = (xs - cx) * -ny + (ys - cy) * nx - offset
        return np.asarray(np.minimum(np.minimum(across, deep - across), half - np.abs(along)))

    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    covered = lay_cover(image.astype(np.float32), depth(xx, yy), side, rng)
    shown: list[FloatBox] = []
    for bx0, by0, bx1, by1 in boxes:
        gx, gy = np.meshgrid(
            np.linspace(bx0, bx1, 13, dtype=np.float32), np.linspace(by0, by1, 13, dtype=np.float32)
        )
        shows = depth(gx, gy) <= 0
        if shows.all():
            shown.append((bx0, by0, bx1, by1))
        elif 1.0 - shows.mean() <= HIDDEN_BEYOND:
            shown.append(shown_box(gx, gy, shows))
    return np.asarray(np.clip(covered, 0, 255), np.uint8), shown

"""Synthetic tray frames drawn with OpenCV: dice, cocked dice and hands on a textured tray.

They give the tests and ``pipcam bench`` frames whose every die is known, without the face model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

__all__ = [
    "PIP_LAYOUT",
    "TRAYS",
    "DieSpec",
    "dice_side_by_side",
    "die_cut_by_edge",
    "die_across_shadow",
    "draw_cocked_die",
    "draw_die",
    "draw_hand",
    "leaning_beside_two_flat",
    "make_frame",
    "make_tray",
    "six_dice",
    "tray_of",
]

Frame = npt.NDArray[np.uint8]
Colour = tuple[int, int, int]

TRAYS: dict[str, Colour] = {
    "green": (60, 120, 40),
    "brown": (40, 70, 120),
    "grey": (120, 120, 120),
}
"""Tray felt colours (BGR) the synthetic frames use."""

PIP_LAYOUT: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((0, 0),),
    2: ((-1, -1), (1, 1)),
    3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (1, -1), (-1, 1), (1, 1)),
    5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
    6: ((-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)),
}
"""Pip positions of each face on a 3x3 grid (-1, 0, 1 in x and y)."""


@dataclass(frozen=True)
class DieSpec:
    """One die to draw: face value, centre (pixels), side (pixels) and rotation (degrees)."""

    value: int
    cx: float
    cy: float
    side: float
    angle: float = 0.0
    body: Colour = (235, 238, 240)
    pip: Colour = (25, 25, 25)

    @property
    def box(self) -> tuple[int, int, int, int]:
        """Axis-aligned box around the rotated die."""
        half = (
            self.side
            / 2.0
            * (abs(math.cos(math.radians(self.angle))) + abs(math.sin(math.radians(self.angle))))
        )
        return (
            int(round(self.cx - half)),
            int(round(self.cy - half)),
            int(round(self.cx + half)),
            int(round(self.cy + half)),
        )


def tray_of(seed: int) -> str:
    """The tray colour of a frame of ``seed``: the trays in turn, so a run of seeds meets all."""
    return sorted(TRAYS)[seed % len(TRAYS)]


def make_tray(width: int, height: int, *, colour: str | Colour = "green", seed: int = 0) -> Frame:
    """Return a tray texture: a felt colour with soft blotches and fine grain."""
    base = np.array(TRAYS[colour] if isinstance(colour, str) else colour, np.float32)
    rng = np.random.default_rng(seed)
    coarse = rng.normal(0.0, 1.0, (max(height // 64, 2), max(width // 64, 2))).astype(np.float32)
    blotch = cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC) * 6.0
    grain = rng.normal(0.0, 3.0, (height, width)).astype(np.float32)
    shade = (blotch + grain)[:, :, None]
    return np.clip(base[None, None, :] + shade, 0, 255).astype(np.uint8)


def _face_patch(spec: DieSpec, scale: int) -> tuple[Frame, npt.NDArray[np.uint8]]:
    """Draw an upright face ``side * scale`` pixels wide: body and pips, plus its mask."""
    side = max(int(round(spec.side * scale)), 4)
    patch = np.zeros((side, side, 3), np.uint8)
    mask = np.zeros((side, side), np.uint8)
    radius = max(side // 7, 1)
    for target, colour in ((patch, spec.body), (mask, (255, 255, 255))):
        cv2.rectangle(target, (radius, 0), (side - 1 - radius, side - 1), colour, -1)
        cv2.rectangle(target, (0, radius), (side - 1, side - 1 - radius), colour, -1)
        for cx in (radius, side - 1 - radius):
            for cy in (radius, side - 1 - radius):
                cv2.circle(target, (cx, cy), radius, colour, -1, cv2.LINE_AA)
    pip_radius = max(int(round(side * 0.085)), 1)
    for gx, gy in PIP_LAYOUT[spec.value]:
        centre = (int(round(side / 2 + gx * side * 0.27)), int(round(side / 2 + gy * side * 0.27)))
        cv2.circle(patch, centre, pip_radius, spec.pip, -1, cv2.LINE_AA)
    return patch, mask


def _paste(
    frame: Frame,
    patch: Frame,
    mask: npt.NDArray[np.uint8],
    matrix: npt.NDArray[np.float64],
) -> None:
    """Warp ``patch`` into ``frame`` with ``matrix``, blending by the warped ``mask``."""
    height, width = frame.shape[:2]
    ph, pw = patch.shape[:2]
    corners = np.array([[0, 0, 1], [pw, 0, 1], [0, ph, 1], [pw, ph, 1]], np.float64) @ matrix.T
    x0 = max(int(np.floor(corners[:, 0].min())) - 2, 0)
    y0 = max(int(np.floor(corners[:, 1].min())) - 2, 0)
    x1 = min(int(np.ceil(corners[:, 0].max())) + 2, width)
    y1 = min(int(np.ceil(corners[:, 1].max())) + 2, height)
    if x0 >= x1 or y0 >= y1:
        return
    # Warp into the die's neighbourhood only: a whole 8-megapixel frame per die is slow.
    local = matrix.copy()
    local[0, 2] -= x0
    local[1, 2] -= y0
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpAffine(patch, local, size, flags=cv2.INTER_AREA)
    alpha = cv2.warpAffine(mask, local, size, flags=cv2.INTER_AREA)
    a = alpha.astype(np.float32)[:, :, None] / 255.0
    region = frame[y0:y1, x0:x1].astype(np.float32)
    frame[y0:y1, x0:x1] = (warped.astype(np.float32) * a + region * (1.0 - a)).astype(np.uint8)


def _shadow(frame: Frame, spec: DieSpec, *, stretch: float = 1.0) -> None:
    """Darken the tray softly under and beside a die, as a diffuse light does."""
    height, width = frame.shape[:2]
    reach = int(spec.side * (1.0 + stretch))
    x0, y0 = max(int(spec.cx) - reach, 0), max(int(spec.cy) - reach, 0)
    x1, y1 = min(int(spec.cx) + reach, width), min(int(spec.cy) + reach, height)
    if x0 >= x1 or y0 >= y1:
        return
    shadow = np.zeros((y1 - y0, x1 - x0), np.float32)
    off = spec.side * 0.08
    centre = (spec.cx + off - x0, spec.cy + off - y0)
    rect = (centre, (spec.side, spec.side * stretch), spec.angle)
    corners = np.asarray(cv2.boxPoints(rect)).round().astype(np.int32)
    cv2.fillPoly(shadow, [corners], 1.0)
    k = int(spec.side * 0.25) | 1
    shadow = np.asarray(cv2.GaussianBlur(shadow, (k, k), 0), np.float32)
    region = frame[y0:y1, x0:x1].astype(np.float32)
    frame[y0:y1, x0:x1] = (region * (1.0 - 0.35 * shadow[:, :, None])).astype(np.uint8)


def draw_die(frame: Frame, spec: DieSpec, *, shadow: bool = True) -> None:
    """Draw a die lying flat, seen from above, into ``frame`` (in place)."""
    if shadow:
        _shadow(frame, spec)
    scale = 2
    patch, mask = _face_patch(spec, scale)
    side = patch.shape[0]
    matrix = np.asarray(
        cv2.getRotationMatrix2D((side / 2.0, side / 2.0), spec.angle, 1.0 / scale), np.float64
    )
    matrix[0, 2] += spec.cx - side / 2.0
    matrix[1, 2] += spec.cy - side / 2.0
    _paste(frame, patch, mask, matrix)


def draw_cocked_die(frame: Frame, spec: DieSpec, *, tilt: float = 40.0) -> None:
    """Draw a die leaning by ``tilt`` degrees: a foreshortened top face and a shaded side face."""
    top_h = spec.side * math.cos(math.radians(tilt))
    side_h = spec.side * math.sin(math.radians(tilt))
    total = top_h + side_h
    _shadow(frame, spec, stretch=total / spec.side)
    scale = 2
    top, top_mask = _face_patch(spec, scale)
    other = DieSpec(
        value=(spec.value % 6) + 1, cx=0, cy=0, side=spec.side, body=spec.body, pip=spec.pip
    )
    side_face, side_mask = _face_patch(other, scale)
    side_face = (side_face.astype(np.float32) * 0.7).astype(np.uint8)
    width = top.shape[1]
    top_px = max(int(round(top_h * scale)), 1)
    side_px = max(int(round(side_h * scale)), 1)
    patch = np.concatenate(
        [
            cv2.resize(top, (width, top_px), interpolation=cv2.INTER_AREA),
            cv2.resize(side_face, (width, side_px), interpolation=cv2.INTER_AREA),
        ]
    )
    mask = np.concatenate(
        [
            cv2.resize(top_mask, (width, top_px), interpolation=cv2.INTER_AREA),
            cv2.resize(side_mask, (width, side_px), interpolation=cv2.INTER_AREA),
        ]
    )
    height = patch.shape[0]
    matrix = np.asarray(
        cv2.getRotationMatrix2D((width / 2.0, height / 2.0), spec.angle, 1.0 / scale), np.float64
    )
    matrix[0, 2] += spec.cx - width / 2.0
    matrix[1, 2] += spec.cy - height / 2.0
    _paste(frame, patch, mask, matrix)


def draw_hand(frame: Frame, cx: float, cy: float, size: float) -> None:
    """Draw a skin-coloured hand (palm and four fingers) reaching in from the bottom edge."""
    skin = (120, 160, 215)
    height = frame.shape[0]
    palm = (int(cx), int(cy))
    cv2.ellipse(frame, palm, (int(size * 0.45), int(size * 0.55)), 0, 0, 360, skin, -1)
    cv2.rectangle(
        frame, (int(cx - size * 0.35), int(cy)), (int(cx + size * 0.35), height), skin, -1
    )
    for i in range(4):
        x = int(cx - size * 0.33 + i * size * 0.22)
        cv2.ellipse(
            frame,
            (x, int(cy - size * 0.7)),
            (int(size * 0.09), int(size * 0.3)),
            0,
            0,
            360,
            skin,
            -1,
        )


def make_frame(
    width: int,
    height: int,
    dice: Sequence[DieSpec] = (),
    *,
    tray: str | Colour = "green",
    seed: int = 0,
    cocked: Sequence[DieSpec] = (),
) -> Frame:
    """Return a tray frame with ``dice`` lying flat and ``cocked`` dice leaning."""
    frame = make_tray(width, height, colour=tray, seed=seed)
    for spec in dice:
        draw_die(frame, spec)
    for spec in cocked:
        draw_cocked_die(frame, spec)
    return frame


def six_dice(width: int, height: int, *, seed: int = 0) -> list[DieSpec]:
    """Return six well-separated dice of random faces and angles scaled to the frame."""
    rng = np.random.default_rng(seed)
    side = min(width, height) * 0.09
    dice = []
    for i in range(6):
        col, row = i % 3, i // 3
        dice.append(
            DieSpec(
                value=int(rng.integers(1, 7)),
                cx=width * (0.25 + 0.25 * col) + float(rng.uniform(-0.04, 0.04)) * width,
                cy=height * (0.33 + 0.34 * row) + float(rng.uniform(-0.05, 0.05)) * height,
                side=side * float(rng.uniform(0.95, 1.05)),
                angle=float(rng.uniform(0, 90)),
            )
        )
    return dice


def dice_side_by_side(
    width: int,
    height: int,
    *,
    rows: int,
    cols: int,
    gap: float = 0.0,
    seed: int = 0,
) -> list[DieSpec]:
    """Return ``rows`` x ``cols`` dice of random faces lying side by side, turned alike and
    ``gap`` sides apart (0: touching), as dice that knock together in a tray come to rest."""
    rng = np.random.default_rng(seed)
    side = min(width, height) * 0.09 * float(rng.uniform(0.95, 1.05))
    angle = float(rng.uniform(0, 90))
    # A die turned by ``angle`` has its sides along these (see ``draw_die``'s rotation).
    along = (math.cos(math.radians(angle)), -math.sin(math.radians(angle)))
    across = (math.sin(math.radians(angle)), math.cos(math.radians(angle)))
    cx = width * (0.5 + float(rng.uniform(-0.1, 0.1)))
    cy = height * (0.5 + float(rng.uniform(-0.1, 0.1)))
    step = side * (1.0 + gap)
    dice = []
    for row in range(rows):
        for col in range(cols):
            u, v = (col - (cols - 1) / 2) * step, (row - (rows - 1) / 2) * step
            dice.append(
                DieSpec(
                    value=int(rng.integers(1, 7)),
                    cx=cx + u * along[0] + v * across[0],
                    cy=cy + u * along[1] + v * across[1],
                    side=side,
                    angle=angle,
                )
            )
    return dice


def leaning_beside_two_flat(seed: int) -> tuple[Frame, list[DieSpec], DieSpec]:
    """A 1280x960 frame with two flat dice on the left and one leaning by 40-60 degrees on the
    right (x > 800), the tray's colour by ``seed``; returns the frame, the flat dice and the
    leaning one (drawn by :func:`draw_cocked_die`)."""
    rng = np.random.default_rng(seed)
    side = float(rng.uniform(60, 120))
    flat = [
        DieSpec(
            int(rng.integers(1, 7)),
            250 + 300 * i,
            float(rng.uniform(200, 760)),
            side,
            angle=float(rng.uniform(0, 90)),
        )
        for i in range(2)
    ]
    leaning = DieSpec(
        int(rng.integers(1, 7)),
        float(rng.uniform(900, 1100)),
        float(rng.uniform(200, 760)),
        side,
        angle=float(rng.uniform(0, 90)),
    )
    frame = make_frame(1280, 960, flat, tray=tray_of(seed), seed=seed)
    draw_cocked_die(frame, leaning, tilt=float(rng.uniform(40, 60)))
    return frame, flat, leaning


def die_cut_by_edge(seed: int, visible: float) -> tuple[Frame, DieSpec, DieSpec]:
    """A 1280x960 frame with one die cut by the frame's edge and one whole die in the middle.

    The cut die lies against one of the four edges (by ``seed``), with ``visible`` of its box
    across that edge inside the frame, as a die that came to rest against a tray's wall where
    the camera's view ends; returns the frame, the cut die and the whole one.
    """
    rng = np.random.default_rng(seed)
    width, height = 1280, 960
    side = float(rng.uniform(70, 110))
    angle = float(rng.uniform(0, 90))
    turned = math.radians(angle)
    half = side / 2.0 * (abs(math.cos(turned)) + abs(math.sin(turned)))  # as DieSpec.box
    inside = -half + visible * 2 * half
    edge = int(rng.integers(4))
    along = float(rng.uniform(0.2, 0.8))
    cx, cy = {
        0: (inside, height * along),
        1: (width - inside, height * along),
        2: (width * along, inside),
        3: (width * along, height - inside),
    }[edge]
    cut = DieSpec(int(rng.integers(1, 7)), cx, cy, side, angle=angle)
    whole = DieSpec(
        int(rng.integers(1, 7)), width / 2, height / 2, side, angle=float(rng.uniform(0, 90))
    )
    return make_frame(width, height, [cut, whole], tray=tray_of(seed), seed=seed), cut, whole


def die_across_shadow(seed: int, light: float) -> tuple[Frame, list[DieSpec], DieSpec]:
    """Six dice (:func:`six_dice`) under a hard shadow whose edge runs through one die's centre
    (and may cross another on its way).

    The light on one side of the edge (at any angle, by ``seed``) is ``light`` times the rest,
    the edge blurred over a few pixels, as the tray's wall under one bulb casts it. Returns the
    frame, the six dice and the one the edge crosses.
    """
    rng = np.random.default_rng(seed)
    width, height = 1280, 960
    dice = six_dice(width, height, seed=seed)
    frame = make_frame(width, height, dice, tray=tray_of(seed), seed=seed)
    crossed = dice[int(rng.integers(len(dice)))]
    angle = float(rng.uniform(0, 2 * math.pi))
    rows, cols = np.mgrid[0:height, 0:width]
    along = (cols - crossed.cx) * math.cos(angle) + (rows - crossed.cy) * math.sin(angle)
    gain = cv2.GaussianBlur(np.where(along > 0, 1.0, light).astype(np.float32), (5, 5), 0)
    shaded = np.clip(frame * gain[:, :, None], 0, 255).astype(np.uint8)
    return shaded, dice, crossed

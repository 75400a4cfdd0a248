"""Named camera effects, to measure how the reader holds up on a camera it has never seen.

``pipcam eval --effect NAME`` reads every labelled photo as another camera would have taken it:
half the resolution, a warm lamp without locked white balance, a dim room with sensor noise, hard
JPEG compression, a lens slightly out of focus. Each effect is fixed and deterministic (the
noise is seeded), so two runs give the same figures; an effect that changes the frame's size maps
the reader's boxes back to the photo's own pixels, so they still match the labels.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.evaluate import Found, ReadFn
from vision.source import Frame
from vision.srgb import decode, encode, to_levels, to_linear

__all__ = ["EFFECTS", "Effect", "with_effect"]


PointMap = Callable[[npt.NDArray[np.float64], int, int], npt.NDArray[np.float64]]
"""Points (N x 2: x, y, in pixel edges) of one frame -> the same places in another, given the
width and height of the photo the effect was applied to."""


@dataclass(frozen=True)
class Effect:
    """One way another camera would see the same scene; ``scale`` is its frame-size factor."""

    name: str
    description: str
    apply: Callable[[Frame], Frame]
    scale: float = 1.0
    to_photo: PointMap | None = None
    """Where the points of the frame it gives lie in the photo, for a photo of (width, height):
    for an effect that moves the scene (a tilt, a turn, a lens); None: the same places, scaled
    by ``scale``."""
    quarter_turns: int = 0
    """Quarter turns anticlockwise it gives the frame (an odd number swaps width and height)."""


def _resize(factor: float) -> Callable[[Frame], Frame]:
    def apply(frame: Frame) -> Frame:
        height, width = frame.shape[:2]
        size = (max(1, round(width * factor)), max(1, round(height * factor)))
        # INTER_AREA is what a sensor binning pixels does; cubic for a sharper, larger sensor.
        method = cv2.INTER_AREA if factor < 1 else cv2.INTER_CUBIC
        return np.asarray(cv2.resize(frame, size, interpolation=method), np.uint8)

    return apply


def _levels(blue: float, green: float, red: float, lift: float = 0.0) -> Callable[[Frame], Frame]:
    """Per-channel gains (white balance, exposure, contrast), then a lift (haze)."""

    def apply(frame: Frame) -> Frame:
        gains = np.array([blue, green, red], np.float32)
        work: npt.NDArray[np.float32] = frame.astype(np.float32) * gains + np.float32(lift)
        return np.clip(work, 0, 255).astype(np.uint8)

    return apply


def _noise(sigma: float, gain: float = 1.0) -> Callable[[Frame], Frame]:
    def apply(frame: Frame) -> Frame:
        # Seeded per call: the same photo always gets the same noise, so figures repeat.
        rng = np.random.default_rng(0)
        work = frame.astype(np.float32) * gain + rng.normal(0, sigma, frame.shape)
        return np.clip(work, 0, 255).astype(np.uint8)

    return apply


def _light(factor: float) -> Callable[[Frame], Frame]:
    """``factor`` times the light on the sensor (linear, not the encoded levels), clipped as a
    locked camera clips it."""
    scaled = np.arange(256, dtype=np.float64) / 255.0
    table = np.round(255.0 * encode(decode(scaled) * factor)).astype(np.uint8)

    def apply(frame: Frame) -> Frame:
        return np.asarray(cv2.LUT(frame, table), np.uint8)

    return apply


def _flicker(depth: float, bands: float) -> Callable[[Frame], Frame]:
    """A lamp on mains power seen by a rolling shutter with an exposure shorter than its
    flicker: each row integrates the light at another moment, so the frame shows horizontal
    bands, ``bands`` of them across its height, the light ``1 +- depth`` times its mean."""

    def apply(frame: Frame) -> Frame:
        height = frame.shape[0]
        rows = 1.0 + depth * np.sin(2.0 * np.pi * bands * np.arange(height) / height)
        return to_levels(to_linear(frame) * rows.astype(np.float32)[:, None, None])

    return apply


def _shadow(light: float, slant: float) -> Callable[[Frame], Frame]:
    """A lamp's hard shadow over part of the tray (a wall or a hand under one bulb): beyond a
    line through the frame's middle, ``slant`` degrees off upright, ``light`` times the light
    (linear), the edge softened over a hundredth of the frame's width."""

    def apply(frame: Frame) -> Frame:
        height, width = frame.shape[:2]
        rows, cols = np.mgrid[0:height, 0:width].astype(np.float32)
        turn = np.radians(slant)
        across = (cols - width / 2) * np.cos(turn) + (rows - height / 2) * np.sin(turn)
        soft = max(width / 100.0, 1.0)
        lit = np.clip(0.5 + across / soft, 0.0, 1.0)
        gain = light + (1.0 - light) * lit
        return to_levels(to_linear(frame) * gain[:, :, None])

    return apply


def _grey(frame: Frame) -> Frame:
    """What a monochrome sensor sees: the light's brightness alone, in all three channels."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR), np.uint8)


def _vignette(corner: float) -> Callable[[Frame], Frame]:
    """A lens's fall-off left uncorrected: the light (linear) falls with the square of the
    distance from the middle, to ``corner`` times the middle's at the corners."""

    def apply(frame: Frame) -> Frame:
        height, width = frame.shape[:2]
        rows, cols = np.mgrid[0:height, 0:width].astype(np.float32)
        half = float(np.hypot(width, height)) / 2.0
        r2 = ((cols + 0.5 - width / 2.0) ** 2 + (rows + 0.5 - height / 2.0) ** 2) / half**2
        gain = 1.0 - (1.0 - corner) * r2
        return to_levels(to_linear(frame) * gain[:, :, None])

    return apply


def _trapezoid(narrow: float) -> Callable[[int, int], npt.NDArray[np.float64]]:
    """The homography of a camera tilted off straight down: the far (top) side of the photo
    ``narrow`` times as wide as the near one, the rows shrinking towards it as perspective
    does."""

    def homography(width: int, height: int) -> npt.NDArray[np.float64]:
        inset = width * (1.0 - narrow) / 2.0
        source = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
        target = np.array(
            [[inset, 0], [width - inset, 0], [width, height], [0, height]], np.float32
        )
        return np.asarray(cv2.getPerspectiveTransform(source, target), np.float64)

    return homography


def _back_through(homography: Callable[[int, int], npt.NDArray[np.float64]]) -> PointMap:
    """The point map back to the photo of an effect that puts it through ``homography``."""

    def to_photo(
        points: npt.NDArray[np.float64], width: int, height: int
    ) -> npt.NDArray[np.float64]:
        back = np.linalg.inv(homography(width, height))
        moved = cv2.perspectiveTransform(points.reshape(-1, 1, 2).astype(np.float64), back)
        return np.asarray(moved.reshape(-1, 2), np.float64)

    return to_photo


def _barrel(strength: float) -> PointMap:
    """A wide-angle lens's barrel distortion: the frame's point at radius ``r`` from the middle
    (in half-diagonals) shows the photo's point at ``r (1 + strength r^2) / (1 + strength)``, so
    the corners stay the corners, the middle is ``1 + strength`` times larger and what lies
    near the edge is squeezed along the radius."""

    def to_photo(
        points: npt.NDArray[np.float64], width: int, height: int
    ) -> npt.NDArray[np.float64]:
        centre = np.array([width / 2.0, height / 2.0])
        half = float(np.hypot(width, height)) / 2.0
        u = (np.asarray(points, np.float64).reshape(-1, 2) - centre) / half
        r2 = (u * u).sum(axis=1, keepdims=True)
        return np.asarray(centre + u * (1.0 + strength * r2) / (1.0 + strength) * half, np.float64)

    return to_photo


def _remapped(to_photo: PointMap) -> Callable[[Frame], Frame]:
    """An effect that shows, at each pixel of the frame, the photo's pixel ``to_photo`` names."""

    @functools.lru_cache(maxsize=4)
    def maps(width: int, height: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        # Once per frame size (a folder's photos mostly share one), a band of rows at a time:
        # the points of a whole large photo at once take a few hundred megabytes.
        map_x = np.empty((height, width), np.float32)
        map_y = np.empty((height, width), np.float32)
        # Pixel i covers [i, i + 1): its centre is at i + 0.5 in the points' terms.
        xs = np.arange(width, dtype=np.float64) + 0.5
        for top in range(0, height, 64):
            rows = np.arange(top, min(top + 64, height), dtype=np.float64) + 0.5
            grid = np.stack(np.meshgrid(xs, rows), axis=-1).reshape(-1, 2)
            points = to_photo(grid, width, height) - 0.5
            map_x[top : top + len(rows)] = points[:, 0].reshape(len(rows), width)
            map_y[top : top + len(rows)] = points[:, 1].reshape(len(rows), width)
        return map_x, map_y

    def apply(frame: Frame) -> Frame:
        height, width = frame.shape[:2]
        map_x, map_y = maps(width, height)
        return np.asarray(
            cv2.remap(frame, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE),
            np.uint8,
        )

    return apply


def _warped(homography: Callable[[int, int], npt.NDArray[np.float64]]) -> Callable[[Frame], Frame]:
    def apply(frame: Frame) -> Frame:
        height, width = frame.shape[:2]
        # What the tilted camera sees beside the photo is more of the same table.
        return np.asarray(
            cv2.warpPerspective(
                frame,
                homography(width, height),
                (width, height),
                flags=cv2.INTER_AREA,
                borderMode=cv2.BORDER_REPLICATE,
            ),
            np.uint8,
        )

    return apply


def _turning(name: str, description: str, quarters: int) -> Effect:
    """The camera turned ``quarters`` (1 to 3) quarter turns: the photo turned anticlockwise as
    ``np.rot90`` turns it, its boxes turned back (box edges map to box edges)."""

    def homography(width: int, height: int) -> npt.NDArray[np.float64]:
        """The photo's pixels -> those of the turned frame."""
        if quarters == 1:
            rows = ((0, 1, 0), (-1, 0, width))
        elif quarters == 2:
            rows = ((-1, 0, width), (0, -1, height))
        else:
            rows = ((0, -1, height), (1, 0, 0))
        return np.array([*rows, (0, 0, 1)], np.float64)

    def apply(frame: Frame) -> Frame:
        return np.ascontiguousarray(np.rot90(frame, quarters))

    return Effect(
        name, description, apply, to_photo=_back_through(homography), quarter_turns=quarters
    )


def _jpeg(quality: int) -> Callable[[Frame], Frame]:
    def apply(frame: Frame) -> Frame:
        ok, encoded = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            raise ValueError(f"OpenCV could not JPEG-encode a {frame.shape} frame")
        return np.asarray(cv2.imdecode(encoded, cv2.IMREAD_COLOR), np.uint8)

    return apply


def _defocus(sigma: float) -> Callable[[Frame], Frame]:
    def apply(frame: Frame) -> Frame:
        return np.asarray(cv2.GaussianBlur(frame, (0, 0), sigma), np.uint8)

    return apply


_TILT = _trapezoid(0.75)
_WIDE = _barrel(0.15)

EFFECTS: Mapping[str, Effect] = {
    effect.name: effect
    for effect in (
        Effect("none", "the photos as they are", lambda frame: frame),
        Effect(
            "half",
            "half the resolution (a smaller sensor, or the camera higher up)",
            _resize(0.5),
            0.5,
        ),
        Effect(
            "double",
            "twice the resolution (a larger sensor, or the camera lower)",
            _resize(2.0),
            2.0,
        ),
        Effect(
            "warm",
            "a warm lamp, white balance not locked (red x1.25, blue x0.75)",
            _levels(0.75, 1.0, 1.25),
        ),
        Effect("cool", "daylight through a window (red x0.8, blue x1.2)", _levels(1.2, 1.0, 0.8)),
        Effect("green", "a green cast (red and blue x0.85)", _levels(0.85, 1.0, 0.85)),
        Effect("dim", "a dim room, exposure x0.45", _levels(0.45, 0.45, 0.45)),
        Effect(
            "dim-noisy", "a dim room at high gain: exposure x0.5, noise sigma 6", _noise(6.0, 0.5)
        ),
        Effect(
            "day",
            "a camera locked under a lamp, then daylight: 4 times the light, blown out",
            _light(4.0),
        ),
        Effect(
            "flicker",
            "a flickering lamp, exposure shorter than its flicker: 2.3 horizontal bands, the"
            " light 0.7 to 1.3 times its mean",
            _flicker(0.3, 2.3),
        ),
        Effect("noisy", "sensor noise, sigma 10", _noise(10.0)),
        Effect(
            "flat", "flat, hazy light: contrast x0.6, lifted by 70", _levels(0.6, 0.6, 0.6, 70.0)
        ),
        Effect(
            "shadow",
            "a lamp's hard shadow over half the tray: a quarter of the light beyond a slanted"
            " line through the middle",
            _shadow(0.25, 20.0),
        ),
        Effect(
            "grey",
            "a monochrome sensor (some global-shutter and machine-vision cameras): no colour,"
            " the brightness alone",
            _grey,
        ),
        Effect(
            "vignette",
            "a cheap lens's fall-off left uncorrected (as many USB webcams show): the corners"
            " get 0.4 of the middle's light",
            _vignette(0.4),
        ),
        Effect("jpeg40", "hard JPEG compression, quality 40", _jpeg(40)),
        Effect("defocus", "the lens slightly out of focus (Gaussian, sigma 1.5 px)", _defocus(1.5)),
        Effect(
            "tilt",
            "the camera tilted some 25 degrees off straight down: the far side of the tray"
            " three quarters as wide as the near one",
            _warped(_TILT),
            to_photo=_back_through(_TILT),
        ),
        _turning(
            "turned",
            "the camera turned a quarter round (a Pi camera's ribbon cable may leave it any way"
            " round): the photo a quarter turn anticlockwise, taller than wide",
            1,
        ),
        _turning("upside-down", "the camera turned half round: the photo upside down", 2),
        Effect(
            "wide",
            "a wide-angle lens (as the Pi Camera Module 3 Wide's) left uncorrected: barrel"
            " distortion, the middle 1.15 times larger, a die in a corner squeezed to four fifths"
            " along the radius",
            _remapped(_WIDE),
            to_photo=_WIDE,
        ),
    )
}
"""Every effect ``pipcam eval --effect`` knows, by name."""


def with_effect(read: ReadFn, effect: Effect) -> ReadFn:
    """Wrap ``read`` so it reads each photo through ``effect``, with boxes in the photo's pixels."""

    def read_through(frame: Frame) -> Sequence[Found]:
        found = read(effect.apply(frame))
        if effect.to_photo is not None:
            to_photo = effect.to_photo
            return [_mapped(die, to_photo, frame.shape[1], frame.shape[0]) for die in found]
        if effect.scale == 1.0:
            return found
        return [_scaled(die, 1.0 / effect.scale) for die in found]

    return read_through


def _scaled(die: Found, factor: float) -> Found:
    """``die`` with its box scaled by ``factor`` (its value and any confidence kept)."""
    x0, y0, x1, y1 = die[1]
    box = (round(x0 * factor), round(y0 * factor), round(x1 * factor), round(y1 * factor))
    return (die[0], box) if len(die) == 2 else (die[0], box, die[2])


def _mapped(die: Found, to_photo: PointMap, width: int, height: int) -> Found:
    """``die`` with its box's corners and edge midpoints taken back to the photo (its value and
    any confidence kept): the box around them (a lens bends a box's edges; a homography keeps
    them straight, and its box is the corners' alone)."""
    x0, y0, x1, y1 = die[1]
    xm, ym = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    edge = [(x0, y0), (xm, y0), (x1, y0), (x1, ym), (x1, y1), (xm, y1), (x0, y1), (x0, ym)]
    points = to_photo(np.array(edge, np.float64), width, height)
    (a, b), (c, d) = points.min(axis=0), points.max(axis=0)
    box = (round(float(a)), round(float(b)), round(float(c)), round(float(d)))
    return (die[0], box) if len(die) == 2 else (die[0], box, die[2])

"""Keeping a locked Pi camera's picture as calibrated when the room's light changes.

``pipcam calibrate`` locks exposure, gain and white balance so that every roll is lit the same
way, and the table opens the camera with them every time it starts. A room's light is not that
steady: a table calibrated under an evening lamp can see the same tray by day several times
brighter, and the locked camera then blows the dice out (four times the light costs the reader
22 points of recall on matteop65's webcam photos and 4.6 on nell-byler's top-down ones:
``pipcam eval --effect day``).

A :class:`LightKeeper` watches the bare tray while the dice lie still and, when its light has
drifted well away from the calibration's for a few seconds, scales the locked exposure and gain
(and the white balance gains) so that the tray looks as it did. It changes nothing while a roll
is in the air or a hand is over the tray, and nothing for a small drift: within a turn the
picture stays as steady as a locked camera's.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from vision.locate import DEFAULT_LOCATOR, TrayColour, downscale, foreground_mask
from vision.picam import MAINS_FLICKER, CameraSettings
from vision.reader import Zone
from vision.source import Frame
from vision.srgb import decode, row_gains, to_linear

__all__ = [
    "LightKeeper",
    "LightOptions",
    "flicker_bands",
    "lighting_advice",
    "tray_light",
    "tray_rgb",
]

log = logging.getLogger(__name__)

LUMA = (0.0722, 0.7152, 0.2126)
"""Rec. 709 weights of linear blue, green and red in the luminance."""

CLIPPED = 250
"""An 8-bit channel this bright is blown out: the light that made it is unknown."""

LOOK_SIZE = 160
"""The tray's light is looked at on a copy this many pixels across (the settle detector's
size): a light needs no detail, and a look costs a Pi a few milliseconds."""

LOOK = replace(DEFAULT_LOCATOR, work_size=LOOK_SIZE)

HUE_RADIUS = 40.0
"""How far (in a and b, OpenCV's 8-bit Lab) from the calibrated tray's hue a pixel may be and
still be tray: a warm lamp's cast (red x1.3, blue x0.75) moves grey felt by 11, skin is 53 from
green felt and 33 from grey (but 4 from brown: there the settle detector's hand test is what
keeps hands out)."""


@dataclass(frozen=True)
class LightOptions:
    """When and how far the keeper moves the camera's settings."""

    tolerance: float = 1.3
    """The tray may be this many times brighter or darker than calibrated before anything moves."""
    colour_tolerance: float = 1.15
    """And its red or blue against its green this many times off."""
    aim: float = 1.08
    """Once the settings moved, later looks refine them until light and colour are this close
    (a blown-out tray, or a camera slow to apply them, needs more than one step)."""
    hold: float = 3.0
    """Seconds the drift must last (a player leaning over the tray casts a passing shadow)."""
    every: float = 1.0
    """Seconds between looks at the tray (a look costs a few milliseconds)."""
    settle: float = 2.0
    """Seconds after a change before the next look: the camera takes a few frames to apply it."""
    max_step: float = 8.0
    """The most one change scales the light by, either way."""
    min_exposure: int = 100
    """Microseconds."""
    max_exposure: int = 33_000
    """Microseconds: 1/30 s, beyond which a rolling die blurs (a calibration's own longer
    exposure stays allowed)."""
    max_gain: float = 8.0
    min_colour_gain: float = 0.25
    max_colour_gain: float = 8.0
    min_tray: float = 0.3
    """The share of the roll zone that must be bare tray for a look to count."""


def _linear(value: float) -> float:
    """sRGB-encoded 0..255 to linear light 0..1."""
    return decode(value / 255.0)


def _bgr(tray: TrayColour) -> tuple[float, float, float]:
    """The tray's colour (OpenCV's 8-bit Lab scale) as sRGB-encoded blue, green and red,
    0..255, unrounded: a dark channel of a coloured felt is a few levels, and a level matters."""
    light, a, b = tray.median
    pixel = np.array([[[light * 100.0 / 255.0, a - 128.0, b - 128.0]]], np.float32)
    blue, green, red = (float(v) * 255.0 for v in cv2.cvtColor(pixel, cv2.COLOR_Lab2BGR)[0, 0])
    return blue, green, red


def tray_rgb(tray: TrayColour) -> tuple[float, float, float]:
    """The tray's colour as linear blue, green and red (0..1)."""
    blue, green, red = _bgr(tray)
    return _linear(blue), _linear(green), _linear(red)


def tray_light(
    frame: Frame,
    zone: Zone | None = None,
    *,
    like: TrayColour | None = None,
    min_tray: float = 0.3,
) -> TrayColour | None:
    """The colour of the bare tray in ``zone`` (the whole frame if None): the mean of the middle
    half of each Lab channel, on the calibration's scale. None when dice, hands and their
    shadows leave too little of it. ``like`` is the calibrated tray: what is far from its hue
    is not tray (a hand, a sleeve, a box put down), however the light has changed."""
    small, _ = downscale(frame, LOOK_SIZE)
    height, width = small.shape[:2]
    x0, y0, x1, y1 = (zone or Zone()).pixels(width, height)
    region = np.zeros((height, width), bool)
    region[y0:y1, x0:x1] = True
    # What stands out from its surroundings (dice, pips, hands), grown to take their edges
    # and the shadows beside them, is not tray.
    busy = cv2.dilate(foreground_mask(small, options=LOOK), np.ones((5, 5), np.uint8)) > 0
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    bare = region & ~busy
    if like is not None:
        # a and b move little with brightness, and a cast moves them less than another thing.
        chroma = np.hypot(lab[:, :, 1] - like.median[1], lab[:, :, 2] - like.median[2])
        bare &= chroma <= HUE_RADIUS
    if np.count_nonzero(bare) < min_tray * float(np.count_nonzero(region)):
        return None
    sample = lab[bare]
    low, high = np.percentile(sample, [25, 75], axis=0)
    middle = [
        float(sample[(sample[:, c] >= low[c]) & (sample[:, c] <= high[c]), c].mean())
        for c in range(3)
    ]
    spread = 1.4826 * np.median(np.abs(sample - np.median(sample, axis=0)), axis=0)
    return TrayColour(
        median=(middle[0], middle[1], middle[2]),
        spread=(float(spread[0]), float(spread[1]), float(spread[2])),
    )


class LightKeeper:
    """Moves a locked camera's settings so the bare tray keeps its calibrated light."""

    def __init__(
        self,
        calibrated: TrayColour,
        settings: CameraSettings,
        apply: Callable[[CameraSettings], object],
        *,
        zone: Zone | None = None,
        options: LightOptions = LightOptions(),
        clock: Callable[[], float] = time.monotonic,
        notice: Callable[[str], object] = lambda _notice: None,
    ) -> None:
        """``calibrated`` is the tray's colour at calibration, ``settings`` what the camera is
        locked to now, ``apply`` locks new ones (``PiCameraSource.lock``); ``notice`` tells the
        players at its limits ("dark", "bright"), and when it is back within them ("")."""
        self.calibrated = calibrated
        self.target = tray_rgb(calibrated)
        # A tray calibrated near white cannot tell a blown-out look from its own colour.
        self._may_clip = max(_bgr(calibrated)) < CLIPPED - 10
        self.settings = settings
        self.apply = apply
        self.zone = zone
        self.options = options
        self.clock = clock
        self.notice = notice
        self.changes = 0
        self._max_exposure = max(options.max_exposure, settings.exposure_time)
        self._next_look = -math.inf
        self._drift_since: float | None = None
        self._at_limit = False
        self._refining = False

    @property
    def steady(self) -> bool:
        """Whether the light is as calibrated (or as near as the camera can bring it): no change
        made that a later look has not found good."""
        return not self._refining

    def observe(self, frame: Frame) -> CameraSettings | None:
        """Look at a frame of dice lying still (or of the bare tray); return the settings
        locked when this look changed them."""
        now = self.clock()
        if now < self._next_look:
            return None
        self._next_look = now + self.options.every
        seen = tray_light(frame, self.zone, like=self.calibrated, min_tray=self.options.min_tray)
        if seen is None:
            return None
        clipped = self._may_clip and max(_bgr(seen)) >= CLIPPED
        light, red, blue = self._drift(tray_rgb(seen), clipped=clipped)
        if not self._off(light, red, blue):
            self._drift_since = None
            if self._at_limit:
                self.notice("")
            self._at_limit = self._refining = False
            return None
        if self._drift_since is None:
            self._drift_since = now
        if not self._refining and now - self._drift_since < self.options.hold:
            return None
        new = self._settings_for(light, red, blue)
        self._drift_since = None
        if new == self.settings:
            self._refining = False
            self._say_limit(light)
            return None
        log.info(
            "camera: the tray is %s%.2f times as bright as calibrated: exposure %d -> %d us,"
            " gain %.2f -> %.2f, colour gains %.2f, %.2f -> %.2f, %.2f",
            "blown out, at least " if clipped else "",
            1.0 / light,
            self.settings.exposure_time,
            new.exposure_time,
            self.settings.analogue_gain,
            new.analogue_gain,
            *self.settings.colour_gains,
            *new.colour_gains,
        )
        self.apply(new)
        self.settings = new
        self.changes += 1
        self._refining = True
        self._next_look = now + self.options.settle
        return new

    def _drift(
        self, seen: tuple[float, float, float], *, clipped: bool
    ) -> tuple[float, float | None, float | None]:
        """How far to scale the light, the red gain and the blue gain to meet the target."""
        tb, tg, tr = self.target
        sb, sg, sr = seen
        luma = sum(w * v for w, v in zip(LUMA, seen, strict=True))
        target = sum(w * v for w, v in zip(LUMA, self.target, strict=True))
        light = target / max(luma, 1e-4)
        if clipped:
            # A blown-out tray is brighter than it measures: at least halve the light each time.
            light = min(light, 0.5)
        step = self.options.max_step
        light = min(max(light, 1.0 / step), step)
        # A channel near black or blown out tells nothing of the white balance.
        usable = not clipped and min(tb, tg, tr, sb, sg, sr) > 0.004
        red = (tr / tg) / (sr / sg) if usable else None
        blue = (tb / tg) / (sb / sg) if usable else None
        return light, red, blue

    def _off(self, light: float, red: float | None, blue: float | None) -> bool:
        """Whether the tray has drifted past the tolerances (past the aim while refining)."""
        worst = max(light, 1.0 / light)
        colour = max((max(g, 1.0 / g) for g in (red, blue) if g is not None), default=1.0)
        o = self.options
        if self._refining:
            return max(worst, colour) > o.aim
        return worst > o.tolerance or colour > o.colour_tolerance

    def _settings_for(self, light: float, red: float | None, blue: float | None) -> CameraSettings:
        """The settings that scale the light by ``light`` and the colour gains by ``red`` and
        ``blue`` (exposure first, in whole flickers of the room's lamps where it can be:
        :meth:`CameraSettings.with_light`)."""
        o = self.options
        total = self.settings.exposure_time * self.settings.analogue_gain * light
        lit = self.settings.with_light(
            total, shortest=o.min_exposure, longest=self._max_exposure, max_gain=o.max_gain
        )
        gains = self.settings.colour_gains
        # The white balance moves only when the colour itself is off: a change of brightness
        # alone leaves it as calibrated.
        if self._off(1.0, red, blue):
            gains = (
                min(max(gains[0] * (red or 1.0), o.min_colour_gain), o.max_colour_gain),
                min(max(gains[1] * (blue or 1.0), o.min_colour_gain), o.max_colour_gain),
            )
        return replace(lit, colour_gains=(round(gains[0], 3), round(gains[1], 3)))

    def _say_limit(self, light: float) -> None:
        """Say once that the camera cannot follow the light any further."""
        if self._at_limit:
            return
        self._at_limit = True
        self.notice("dark" if light > 1 else "bright")
        if light > 1:
            log.warning(
                "camera: the tray is too dark even at the longest exposure and the highest"
                " gain; add light over the table (or run pipcam calibrate in this light)"
            )
        else:
            log.warning(
                "camera: the tray is too bright even at the shortest exposure; shade the"
                " table from direct sun (or run pipcam calibrate in this light)"
            )


BANDS = 0.04
"""How far (a share of its light) a row's light may move between frames of a still tray before
the bands of a flickering lamp are said."""


def flicker_bands(frames: Sequence[Frame], zone: Zone | None = None) -> float:
    """How far the light of a row of the tray moves from one frame to the next, at most, as a
    share of its light (0: steady light). A lamp on mains power flickers, and a rolling shutter
    exposed for part of a flicker sees bands that lie elsewhere in every frame."""
    worst = 0.0
    rows: list[np.ndarray[Any, np.dtype[np.float32]]] = []
    for frame in frames:
        small, _ = downscale(frame, LOOK_SIZE)
        height, width = small.shape[:2]
        x0, y0, x1, y1 = (zone or Zone()).pixels(width, height)
        grey = cv2.cvtColor(small[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
        rows.append(to_linear(np.asarray(grey, np.uint8)))
    for before, now in zip(rows, rows[1:], strict=False):
        if before.shape != now.shape:
            continue
        ratio = row_gains(now, before)
        worst = max(worst, float(np.abs(ratio / np.median(ratio) - 1.0).max()))
    return worst


GLARE = 0.002
"""Share of the tray blown out above which it is said (a glare spot on a die reads as a pip)."""

UNEVEN = 2.0
"""How many times more light the brightest part of the tray may get than its darkest."""

HIGH_GAIN = 6.0
"""An analogue gain from which a camera's picture is noisy enough to say so."""


def lighting_advice(
    frame: Frame,
    zone: Zone | None = None,
    settings: CameraSettings | None = None,
    *,
    later: Sequence[Frame] = (),
) -> list[str]:
    """What to mend in the light over an empty tray before a game: glare, a tray lit unevenly,
    too little light, a flickering lamp (seen in the ``later`` frames of the same tray). Empty
    when the light is good."""
    small, _ = downscale(frame, DEFAULT_LOCATOR.work_size)
    height, width = small.shape[:2]
    x0, y0, x1, y1 = (zone or Zone()).pixels(width, height)
    tray = small[y0:y1, x0:x1]
    advice = []
    grey = cv2.cvtColor(tray, cv2.COLOR_BGR2GRAY)
    level = float(np.median(grey))
    blown = float(np.count_nonzero(tray.max(axis=2) >= CLIPPED)) / float(grey.size)
    # A white tray is at the top of the range by itself: there blown pixels say nothing.
    if blown > GLARE and level < CLIPPED - 20:
        advice.append(
            f"glare: {100 * blown:.1f} % of the tray is blown out; diffuse the light (a lampshade,"
            " or baking paper over an LED ring) or move it off the camera's axis: a glare spot"
            " on a die reads as a pip"
        )
    # Light across the tray: the median of each cell of a 4 x 4 grid, in linear light.
    cells = [
        _linear(float(np.median(cell)))
        for band in np.array_split(grey, 4, axis=0)
        for cell in np.array_split(band, 4, axis=1)
        if cell.size
    ]
    if cells and min(cells) > 0 and max(cells) / min(cells) > UNEVEN:
        advice.append(
            f"the tray is lit unevenly: its darkest part gets {max(cells) / min(cells):.1f} times"
            " less light than its brightest; light it from above or from two sides (a shadow"
            " across the tray hides pips)"
        )
    elif cells and min(cells) == 0:
        advice.append("part of the tray is black: light the whole tray (or calibrate again)")
    dark = level < 35
    if (settings is not None and settings.analogue_gain >= HIGH_GAIN) or dark:
        gain = (
            ""
            if settings is None
            else f" (the camera needs a gain of {settings.analogue_gain:.1f})"
        )
        advice.append(f"the tray is dark{gain}: add light, or the picture is noisy")
    period = None if settings is None else settings.flicker_period
    bands = flicker_bands([frame, *later], zone) if later else 0.0
    short = settings is not None and period is not None and settings.exposure_time < period
    if bands > BANDS and not short:
        mains = {p: str(hz) for hz, p in MAINS_FLICKER.items()}.get(period or 0)
        fix = (
            "calibrate again with --mains 50 or --mains 60, the mains frequency here"
            if mains is None
            else f"if the mains here is not {mains} Hz, calibrate again with --mains"
            f" {'60' if mains == '50' else '50'}"
        )
        advice.append(
            f"a lamp flickers: bands across the picture move from frame to frame (a row's"
            f" light by up to {100 * min(bands, 9.99):.0f} %); {fix}"
        )
    if short and settings is not None and period is not None:
        advice.append(
            f"the exposure ({settings.exposure_time / 1000:.1f} ms) is shorter than one flicker"
            f" of a mains lamp ({period / 1000:.1f} ms): lamps on mains power then show as bands"
            " across the picture; if such lamps light the tray, dim them or move them further"
            " away and calibrate again (daylight does not flicker)"
        )
    return advice

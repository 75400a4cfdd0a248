"""A tray under a room's light, as a locked camera sees it: a fake picamera2 that renders it.

The scene is what the camera sees at the ``reference`` settings in the light it was calibrated
in. The frame scales the scene's linear light by the room's light and colour cast and by the
camera's exposure, gain and white balance gains against the reference, then encodes it as
sRGB and clips it, as a sensor and its ISP do.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tests.vision.test_picam import FakePicamera2
from vision.picam import CameraSettings
from vision.source import Frame
from vision.srgb import to_levels, to_linear

FLICKER_50HZ = 10_000
"""Microseconds between the flickers of a lamp on 50 Hz mains."""

REFERENCE = CameraSettings(exposure_time=12000, analogue_gain=1.5, colour_gains=(1.8, 1.4))


def shoot(
    scene: Frame,
    settings: CameraSettings,
    *,
    room: float = 1.0,
    cast: tuple[float, float, float] = (1.0, 1.0, 1.0),
    reference: CameraSettings = REFERENCE,
) -> Frame:
    """The frame a camera locked to ``settings`` takes of ``scene`` in ``room`` times the
    calibrated light, tinted by ``cast`` (blue, green, red)."""
    return expose(to_linear(scene), settings, room=room, cast=cast, reference=reference)


def expose(
    linear: npt.NDArray[np.float32],
    settings: CameraSettings,
    *,
    room: float = 1.0,
    cast: tuple[float, float, float] = (1.0, 1.0, 1.0),
    reference: CameraSettings = REFERENCE,
    flicker: float = 0.0,
    phase: float = 0.0,
    period: int = 10_000,
) -> Frame:
    """:func:`shoot` of a scene already in linear light.

    ``flicker`` is how deep the room's lamps flicker, every ``period`` microseconds (10 000 on
    50 Hz mains; 0: steady light, 1: dark at each zero of the current). A rolling shutter
    exposes each row at another moment, so an exposure of less than whole flickers sees them
    as bands across the frame (2.3 of them down it at 50 Hz: a v2 camera's rows at 1640x1232),
    at ``phase``; an exposure of whole flickers averages every row alike.
    """
    exposure = (settings.exposure_time * settings.analogue_gain) / (
        reference.exposure_time * reference.analogue_gain
    )
    (red, blue), (red0, blue0) = settings.colour_gains, reference.colour_gains
    gains = np.array([blue / blue0, 1.0, red / red0], np.float32) * np.array(cast, np.float32)
    light = linear * (np.float32(room * exposure) * gains)
    if flicker:
        # The light of a row is the flicker's mean over the exposure: a sinc of its length.
        depth = flicker * abs(float(np.sinc(settings.exposure_time / period)))
        height, bands = linear.shape[0], 2.3 * FLICKER_50HZ / period
        rows = 1.0 + depth * np.sin(2.0 * np.pi * bands * np.arange(height) / height + phase)
        light = light * rows.astype(np.float32)[:, None, None]
    return to_levels(light)


class LitCamera(FakePicamera2):
    """A fake Picamera2 whose frames are ``scene`` under ``room`` light, as its controls set."""

    scene: Frame = np.zeros((8, 10, 3), np.uint8)
    room = 1.0
    cast = (1.0, 1.0, 1.0)
    flicker = 0.0
    """How deep the room's lamps flicker (:func:`expose`), every ``period`` microseconds."""
    period = FLICKER_50HZ
    captures = 0

    def capture_array(self, name: str = "main") -> np.ndarray[Any, Any]:
        self.calls.append(("capture_array", name))
        c = self.controls
        settings = (
            CameraSettings(
                int(c["ExposureTime"]), float(c["AnalogueGain"]), tuple(c["ColourGains"])
            )
            if "ExposureTime" in c
            else REFERENCE
        )
        LitCamera.captures += 1
        return expose(
            to_linear(LitCamera.scene),
            settings,
            room=LitCamera.room,
            cast=LitCamera.cast,
            flicker=LitCamera.flicker,
            # Frames do not keep time with the mains: the bands lie elsewhere in each.
            phase=2.1 * LitCamera.captures,
            period=LitCamera.period,
        )

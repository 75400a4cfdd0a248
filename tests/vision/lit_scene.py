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
) -> Frame:
    """:func:`shoot` of a scene already in linear light."""
    exposure = (settings.exposure_time * settings.analogue_gain) / (
        reference.exposure_time * reference.analogue_gain
    )
    (red, blue), (red0, blue0) = settings.colour_gains, reference.colour_gains
    gains = np.array([blue / blue0, 1.0, red / red0], np.float32) * np.array(cast, np.float32)
    return to_levels(linear * (np.float32(room * exposure) * gains))


class LitCamera(FakePicamera2):
    """A fake Picamera2 whose frames are ``scene`` under ``room`` light, as its controls set."""

    scene: Frame = np.zeros((8, 10, 3), np.uint8)
    room = 1.0
    cast = (1.0, 1.0, 1.0)

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
        return shoot(LitCamera.scene, settings, room=LitCamera.room, cast=LitCamera.cast)

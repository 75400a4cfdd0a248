"""The Raspberry Pi camera through picamera2, imported only when a Pi camera is opened.

picamera2 comes from apt (``python3-picamera2``), never from pip, and cannot be imported on a PC;
this module imports it inside :class:`PiCameraSource` so that everything else runs anywhere.
"RGB888" frames arrive from libcamera in BGR byte order, which is what OpenCV expects.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from vision.errors import BadCameraSpec, CameraUnavailable
from vision.source import BaseSource, Frame, as_bgr

__all__ = ["MAINS_FLICKER", "CameraSettings", "PiCameraSource", "default_size"]


def default_size(sensor: tuple[int, int]) -> tuple[int, int]:
    """Half the sensor's full resolution in each direction: its 2x2 binned mode, fast and sharp.

    1640x1232 on the v2 camera (IMX219), 2304x1296 on Camera Module 3 (IMX708), 2028x1520 on the
    HQ camera (IMX477); a die 15 mm across stays well over the 20 px the reader needs.
    """
    width, height = sensor
    return (width // 2 // 2 * 2, height // 2 // 2 * 2)


MAINS_FLICKER = {50: 10_000, 60: 8_333}
"""Microseconds between the flickers of a lamp on mains power of 50 or 60 Hz: its light dims at
every zero of the current, twice a cycle."""

AF_MANUAL, AF_AUTO = 0, 1
"""libcamera's AfModeEnum values (Manual, Auto): numbers, so no libcamera import is needed."""

INSTALL_HINT = (
    "on Raspberry Pi OS run `sudo apt install python3-picamera2` and create the virtual"
    " environment with `python3 -m venv --system-site-packages`"
)


@dataclass(frozen=True)
class CameraSettings:
    """Exposure and white balance to lock, so that every roll is lit the same way."""

    exposure_time: int
    """Exposure in microseconds."""
    analogue_gain: float
    colour_gains: tuple[float, float]
    """Red and blue gains of the white balance."""
    lens_position: float | None = None
    """Where a camera with a focus motor (Camera Module 3) was focused on the tray, in
    dioptres (1 / metres); None for a fixed-focus camera."""
    flicker_period: int | None = None
    """Microseconds between the flickers of the room's mains lamps (``MAINS_FLICKER``), when
    exposures are kept to whole multiples of it; None when they are not."""

    def with_light(
        self, total: float, *, shortest: int, longest: int, max_gain: float
    ) -> CameraSettings:
        """These settings with ``total`` light (exposure times gain, in microseconds).

        Exposure first (gain adds noise), within ``shortest`` .. ``longest``; gain only for the
        rest, up to ``max_gain``. With a ``flicker_period``, the exposure is a whole number of
        flickers whenever the light allows one: each row of a rolling shutter then gathers the
        same light, and the picture shows no bands. The gain makes up the difference (at most
        twice the light, with one flicker). Shorter than one flicker, nothing can avoid them.
        """
        exposure = min(max(total, shortest), longest)
        period = self.flicker_period
        if period is not None and period <= total and period <= longest:
            exposure = period * min(total // period, longest // period)
        gain = min(max(total / exposure, 1.0), max_gain)
        return replace(self, exposure_time=int(round(exposure)), analogue_gain=round(gain, 3))

    def controls(self) -> dict[str, Any]:
        """Return the picamera2 controls that lock these settings."""
        controls: dict[str, Any] = {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": self.exposure_time,
            "AnalogueGain": self.analogue_gain,
            "ColourGains": self.colour_gains,
        }
        if self.lens_position is not None:
            # Manual focus at the tray: a lens left to hunt between rolls blurs them.
            controls |= {"AfMode": AF_MANUAL, "LensPosition": self.lens_position}
        return controls

    def to_json(self) -> dict[str, object]:
        """Return the settings as a JSON object (for the calibration file)."""
        data: dict[str, object] = {
            "exposure_time": self.exposure_time,
            "analogue_gain": self.analogue_gain,
            "colour_gains": list(self.colour_gains),
        }
        if self.lens_position is not None:
            data["lens_position"] = self.lens_position
        if self.flicker_period is not None:
            data["flicker_period"] = self.flicker_period
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CameraSettings:
        """Build settings from :meth:`to_json`'s object; ``KeyError`` or ``ValueError`` if bad."""
        red, blue = (float(g) for g in data["colour_gains"])
        lens = data.get("lens_position")
        period = data.get("flicker_period")
        if period is not None and int(period) <= 0:
            raise ValueError(f"flicker_period {period} is not a positive number of microseconds")
        return cls(
            exposure_time=int(data["exposure_time"]),
            analogue_gain=float(data["analogue_gain"]),
            colour_gains=(red, blue),
            lens_position=None if lens is None else float(lens),
            flicker_period=None if period is None else int(period),
        )


class PiCameraSource(BaseSource):
    """A Raspberry Pi camera (picamera2), optionally with exposure and white balance locked."""

    def __init__(
        self,
        *,
        size: tuple[int, int] | None = None,
        settings: CameraSettings | None = None,
        mode: Literal["still", "video"] = "still",
        camera_num: int = 0,
    ) -> None:
        """Open and start the camera; raise :class:`CameraUnavailable` if there is none.

        ``size`` is the frame size; ``None`` takes :func:`default_size` of this camera's sensor.
        A size beyond the sensor's full resolution raises :class:`BadCameraSpec` (a ``ValueError``).
        """
        try:
            from picamera2 import Picamera2
        except ImportError as err:
            raise CameraUnavailable(
                f"the Pi camera needs picamera2, which cannot be imported ({err}): {INSTALL_HINT}"
            ) from err
        try:
            # picamera2 raises IndexError when libcamera lists no camera, RuntimeError when the
            # camera is busy or fails to start.
            self._camera = Picamera2(camera_num)
        except (IndexError, RuntimeError, OSError) as err:
            self._closed = True
            raise CameraUnavailable(
                f"no Pi camera {camera_num} found ({err}): check the ribbon cable and"
                f" `rpicam-hello --list-cameras`"
            ) from err
        full_width, full_height = (int(n) for n in self._camera.sensor_resolution)
        self.sensor = (full_width, full_height)
        """The sensor's full resolution (width, height)."""
        width, height = default_size((full_width, full_height)) if size is None else size
        if not (16 <= width <= full_width and 16 <= height <= full_height):
            self.close()
            raise BadCameraSpec(
                f"camera size {width}x{height} is outside 16x16 .. {full_width}x{full_height}"
                f" (this camera's full resolution): ask for a size within it"
                f" (--camera picamera:WxH), or calibrate again if the camera was changed"
            )
        self.size = (width, height)
        self.settings = settings
        """The exposure and white balance locked now (None: the camera's automatic ones)."""
        try:
            make = (
                self._camera.create_still_configuration
                if mode == "still"
                else self._camera.create_video_configuration
            )
            config = make(main={"size": (width, height), "format": "RGB888"})
            self._camera.configure(config)
            if settings is not None:
                self._camera.set_controls(settings.controls())
            self._camera.start()
        except (RuntimeError, OSError, ValueError) as err:
            self.close()
            raise CameraUnavailable(f"the Pi camera could not be started: {err}") from err

    def __repr__(self) -> str:
        return f"PiCameraSource(size={self.size})"

    def capture(self) -> Frame:
        """Return the next frame as BGR uint8 HxWx3."""
        self._check_open()
        try:
            array = self._camera.capture_array("main")
        except (RuntimeError, OSError) as err:
            raise CameraUnavailable(f"the Pi camera gave no frame: {err}") from err
        array = np.asarray(array)
        if array.ndim == 3 and array.shape[2] == 4:
            # XRGB8888 arrives as BGRX: drop the padding byte.
            array = array[:, :, :3]
        return as_bgr(array)

    @property
    def max_gain(self) -> float:
        """The highest analogue gain the camera takes (as ``camera_controls`` says; else 16)."""
        limits: Any = getattr(self._camera, "camera_controls", {}).get("AnalogueGain")
        try:
            return float(limits[1])
        except (TypeError, IndexError, ValueError):
            return 16.0

    @property
    def has_focus(self) -> bool:
        """Whether the camera has a focus motor (Camera Module 3; not the v2 or the HQ camera)."""
        return "AfMode" in getattr(self._camera, "camera_controls", {})

    def focus(self) -> float | None:
        """Focus once on what the camera sees (the empty tray) and return the lens position in
        dioptres; None for a camera without a focus motor."""
        self._check_open()
        if not self.has_focus:
            return None
        try:
            self._camera.set_controls({"AfMode": AF_AUTO})
            focused = self._camera.autofocus_cycle()
            position = float(self._camera.capture_metadata()["LensPosition"])
        except (RuntimeError, OSError, KeyError, TypeError, ValueError) as err:
            raise CameraUnavailable(f"the Pi camera could not focus: {err!r}") from err
        if not focused:
            raise CameraUnavailable(
                "the Pi camera could not focus on the tray: light it better, or check that the"
                " tray is at least 10 cm from the lens"
            )
        return position

    def current_settings(self) -> CameraSettings:
        """Return the exposure, white balance and focus the camera's automatic controls have
        settled on."""
        self._check_open()
        metadata = self._camera.capture_metadata()
        try:
            red, blue = (float(g) for g in metadata["ColourGains"])
            lens = metadata.get("LensPosition") if self.has_focus else None
            return CameraSettings(
                exposure_time=int(metadata["ExposureTime"]),
                analogue_gain=float(metadata["AnalogueGain"]),
                colour_gains=(red, blue),
                lens_position=None if lens is None else float(lens),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise CameraUnavailable(f"the Pi camera reported no exposure metadata: {err}") from err

    def lock(self, settings: CameraSettings | None = None) -> CameraSettings:
        """Lock exposure, gain and white balance (to the current automatic ones by default)."""
        if settings is None:
            settings = self.current_settings()
        self._check_open()
        try:
            self._camera.set_controls(settings.controls())
        except (RuntimeError, OSError, ValueError) as err:
            raise CameraUnavailable(f"the Pi camera refused its settings: {err}") from err
        self.settings = settings
        return settings

    def _release(self) -> None:
        camera = getattr(self, "_camera", None)
        if camera is None:
            return
        try:
            camera.stop()
        finally:
            camera.close()

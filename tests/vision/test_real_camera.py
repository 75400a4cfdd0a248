"""The real Pi camera through picamera2 (deselected by default; on a Pi with a camera and the
apt ``python3-picamera2``, run with ``pytest -m hardware``)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.calibrate import calibrate_frame
from vision.picam import PiCameraSource, default_size
from vision.source import make_source

pytestmark = pytest.mark.hardware


def test_the_pi_camera_gives_bgr_frames_at_its_binned_size() -> None:
    pytest.importorskip("picamera2", reason="the Pi camera needs the apt python3-picamera2")
    with PiCameraSource() as camera:
        frame = camera.capture()
    assert min(camera.sensor) >= 480
    assert camera.size == default_size(camera.sensor)
    assert frame.shape == (camera.size[1], camera.size[0], 3)
    assert frame.dtype == np.uint8
    assert frame.std() > 0, "an all-flat frame: is the lens cap on?"


def test_locked_settings_hold_and_calibrate_the_tray() -> None:
    """Lock what the automatic controls chose; a camera reopened with those settings reports
    them back (within the sensor's steps), so every roll is lit as the calibration was."""
    pytest.importorskip("picamera2", reason="the Pi camera needs the apt python3-picamera2")
    with PiCameraSource() as camera:
        for _ in range(10):
            camera.capture()
        locked = camera.lock()
        frame = camera.capture()
    calibration = calibrate_frame(frame, camera=locked)
    source = make_source("picamera", size=calibration.frame_size, settings=locked)
    assert isinstance(source, PiCameraSource)
    with source:
        for _ in range(5):
            source.capture()
        now = source.current_settings()
    assert now.exposure_time == pytest.approx(locked.exposure_time, rel=0.05)
    assert now.analogue_gain == pytest.approx(locked.analogue_gain, rel=0.05)
    assert now.colour_gains == pytest.approx(locked.colour_gains, rel=0.05)

"""PiCameraSource against a fake picamera2 module with picamera2's API."""

from __future__ import annotations

import sys
import types
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from vision.errors import BadCameraSpec, CameraUnavailable, SourceClosed
from vision.picam import MAINS_FLICKER, CameraSettings, PiCameraSource
from vision.source import make_source


class FakePicamera2:
    """Records every call the way picamera2's Picamera2 would receive it."""

    instances: list[FakePicamera2] = []
    fail_open: BaseException | None = None
    sensor = (3280, 2464)
    """What ``sensor_resolution`` reports (the v2 camera's IMX219 unless a test changes it)."""
    focus_motor = False
    """Whether the camera has a focus motor (Camera Module 3), as ``camera_controls`` says."""
    focuses = True
    """What ``autofocus_cycle`` reports."""

    def __init__(self, camera_num: int = 0) -> None:
        if FakePicamera2.fail_open is not None:
            raise FakePicamera2.fail_open
        self.camera_num = camera_num
        self.sensor_resolution = FakePicamera2.sensor
        self.calls: list[tuple[str, Any]] = []
        self.controls: dict[str, Any] = {}
        self.frame = np.zeros((8, 10, 3), np.uint8)
        self.frame[:, :] = (10, 20, 30)  # B, G, R as libcamera's RGB888 lays them out
        self.metadata: dict[str, Any] = {
            "ExposureTime": 12000,
            "AnalogueGain": 1.5,
            "ColourGains": (1.8, 1.4),
        }
        # picamera2 lists the controls a camera has, with their (min, max, default).
        self.camera_controls: dict[str, Any] = {"ExposureTime": (75, 11766829, None)}
        if FakePicamera2.focus_motor:
            self.camera_controls |= {"AfMode": (0, 2, 0), "LensPosition": (0.0, 15.0, 1.0)}
            self.metadata["LensPosition"] = 1.0
        FakePicamera2.instances.append(self)

    def autofocus_cycle(self) -> bool:
        """Scan the lens and settle where the picture is sharpest: 40 cm here."""
        self.calls.append(("autofocus_cycle", None))
        assert "AfMode" in self.camera_controls, "Camera has no motorized lens"
        if FakePicamera2.focuses:
            self.metadata["LensPosition"] = 2.5
        return FakePicamera2.focuses

    def create_still_configuration(self, main: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("create_still_configuration", main))
        return {"use_case": "still", "main": dict(main)}

    def create_video_configuration(self, main: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("create_video_configuration", main))
        return {"use_case": "video", "main": dict(main)}

    def configure(self, config: dict[str, Any]) -> None:
        self.calls.append(("configure", config))

    def set_controls(self, controls: dict[str, Any]) -> None:
        self.calls.append(("set_controls", controls))
        self.controls.update(controls)

    def start(self) -> None:
        self.calls.append(("start", None))

    def capture_array(self, name: str = "main") -> np.ndarray[Any, Any]:
        self.calls.append(("capture_array", name))
        return self.frame.copy()

    def capture_metadata(self) -> dict[str, Any]:
        self.calls.append(("capture_metadata", None))
        return dict(self.metadata)

    def stop(self) -> None:
        self.calls.append(("stop", None))

    def close(self) -> None:
        self.calls.append(("close", None))


@pytest.fixture
def fake_picamera2(monkeypatch: pytest.MonkeyPatch) -> type[FakePicamera2]:
    """Install a fake ``picamera2`` module for the test."""
    module = types.ModuleType("picamera2")
    module.Picamera2 = FakePicamera2  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "picamera2", module)
    FakePicamera2.instances = []
    FakePicamera2.fail_open = None
    FakePicamera2.sensor = (3280, 2464)
    FakePicamera2.focus_motor = False
    FakePicamera2.focuses = True
    return FakePicamera2


def _names(camera: FakePicamera2) -> list[str]:
    return [name for name, _ in camera.calls]


def test_still_configuration_asks_for_rgb888_at_the_size(
    fake_picamera2: type[FakePicamera2],
) -> None:
    with PiCameraSource(size=(3280, 2464)) as source:
        camera = fake_picamera2.instances[0]
        assert camera.calls[0] == (
            "create_still_configuration",
            {"size": (3280, 2464), "format": "RGB888"},
        )
        assert _names(camera)[1:3] == ["configure", "start"]
        frame = source.capture()
    # RGB888 arrives in BGR byte order: the frame is passed on as is, not swapped.
    assert frame[0, 0].tolist() == [10, 20, 30]
    assert frame.shape == (8, 10, 3)
    assert _names(camera)[-2:] == ["stop", "close"]


def test_video_mode_uses_the_video_configuration(fake_picamera2: type[FakePicamera2]) -> None:
    PiCameraSource(mode="video").close()
    assert _names(fake_picamera2.instances[0])[0] == "create_video_configuration"


def test_settings_are_locked_before_start(fake_picamera2: type[FakePicamera2]) -> None:
    settings = CameraSettings(exposure_time=8000, analogue_gain=2.0, colour_gains=(1.9, 1.2))
    PiCameraSource(settings=settings).close()
    camera = fake_picamera2.instances[0]
    assert _names(camera)[:4] == [
        "create_still_configuration",
        "configure",
        "set_controls",
        "start",
    ]
    assert camera.controls == {
        "AeEnable": False,
        "AwbEnable": False,
        "ExposureTime": 8000,
        "AnalogueGain": 2.0,
        "ColourGains": (1.9, 1.2),
    }


def test_lock_freezes_what_the_automatic_controls_chose(
    fake_picamera2: type[FakePicamera2],
) -> None:
    with PiCameraSource() as source:
        settings = source.lock()
        camera = fake_picamera2.instances[0]
    assert settings == CameraSettings(
        exposure_time=12000, analogue_gain=1.5, colour_gains=(1.8, 1.4)
    )
    assert camera.controls["ExposureTime"] == 12000
    assert camera.controls["AeEnable"] is False


def test_the_source_says_what_it_is_locked_to_and_a_refused_lock_is_a_camera_fault(
    fake_picamera2: type[FakePicamera2], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The light keeper (vision.light) reads the settings a source is locked to and locks new
    ones; a camera that refuses them is reported as unavailable (the loop reopens it)."""
    first = CameraSettings(exposure_time=8000, analogue_gain=2.0, colour_gains=(1.9, 1.2))
    later = CameraSettings(exposure_time=2000, analogue_gain=1.0, colour_gains=(1.9, 1.2))
    with PiCameraSource() as source:
        assert source.settings is None  # automatic exposure
    with PiCameraSource(settings=first) as source:
        assert source.settings == first
        assert source.lock(later) == later
        assert source.settings == later
        camera = fake_picamera2.instances[-1]
        assert camera.controls["ExposureTime"] == 2000

        def refuse(controls: dict[str, Any]) -> None:
            raise RuntimeError(f"control ExposureTime out of range in {controls}")

        monkeypatch.setattr(camera, "set_controls", refuse)
        with pytest.raises(CameraUnavailable, match="refused its settings: control Exposure"):
            source.lock(first)
        assert source.settings == later


@pytest.mark.parametrize("motor", [True, False], ids=["camera-module-3", "fixed-focus"])
def test_a_camera_with_a_focus_motor_focuses_once_and_is_locked_there(
    fake_picamera2: type[FakePicamera2], motor: bool
) -> None:
    """Camera Module 3 focuses on the tray when calibrating and keeps that lens position (a
    lens left to hunt between rolls blurs them); a fixed-focus camera is never sent a focus
    control."""
    fake_picamera2.focus_motor = motor
    with PiCameraSource() as source:
        assert source.focus() == (2.5 if motor else None)
        settings = source.lock()
        camera = fake_picamera2.instances[-1]
    assert settings.lens_position == (2.5 if motor else None)
    assert ("autofocus_cycle", None) in camera.calls if motor else "AfMode" not in camera.controls
    if motor:
        assert (camera.controls["AfMode"], camera.controls["LensPosition"]) == (0, 2.5)
    assert CameraSettings.from_json(settings.to_json()) == settings
    # The table opens the camera as calibrated: focused there, not hunting.
    PiCameraSource(settings=settings).close()
    assert fake_picamera2.instances[-1].controls == settings.controls()


def test_a_focus_that_fails_is_said(fake_picamera2: type[FakePicamera2]) -> None:
    fake_picamera2.focus_motor, fake_picamera2.focuses = True, False
    with PiCameraSource() as source, pytest.raises(CameraUnavailable, match="could not focus"):
        source.focus()


def test_settings_written_before_focus_was_kept_still_load() -> None:
    """A calibration file from before lens positions were kept has no ``lens_position``."""
    old = {"exposure_time": 9000, "analogue_gain": 1.25, "colour_gains": [1.7, 1.3]}
    assert CameraSettings.from_json(old) == CameraSettings(9000, 1.25, (1.7, 1.3))
    assert "AfMode" not in CameraSettings.from_json(old).controls()


def test_padded_xrgb_frames_lose_the_padding(fake_picamera2: type[FakePicamera2]) -> None:
    with PiCameraSource() as source:
        fake_picamera2.instances[0].frame = np.full((4, 4, 4), 9, np.uint8)
        assert source.capture().shape == (4, 4, 3)


def test_close_is_idempotent_and_capture_after_close_fails(
    fake_picamera2: type[FakePicamera2],
) -> None:
    source = PiCameraSource()
    source.close()
    source.close()
    camera = fake_picamera2.instances[0]
    assert _names(camera).count("close") == 1
    with pytest.raises(SourceClosed):
        source.capture()


def test_missing_picamera2_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(CameraUnavailable) as err:
        PiCameraSource()
    assert str(err.value).startswith("the Pi camera needs picamera2, which cannot be imported")
    assert str(err.value).endswith(
        "on Raspberry Pi OS run `sudo apt install python3-picamera2` and create the virtual"
        " environment with `python3 -m venv --system-site-packages`"
    )


def test_absent_camera_is_reported(fake_picamera2: type[FakePicamera2]) -> None:
    fake_picamera2.fail_open = IndexError("list index out of range")
    with pytest.raises(CameraUnavailable) as err:
        PiCameraSource()
    assert str(err.value) == (
        "no Pi camera 0 found (list index out of range): check the ribbon cable and"
        " `rpicam-hello --list-cameras`"
    )


@pytest.mark.parametrize(
    ("sensor", "size"),
    [
        ((3280, 2464), (3281, 2464)),
        ((3280, 2464), (3280, 2465)),
        ((3280, 2464), (8, 8)),
        ((4608, 2592), (4608, 2593)),
        ((4056, 3040), (4057, 100)),
    ],
)
def test_sizes_beyond_the_sensor_are_refused_and_the_camera_closed(
    fake_picamera2: type[FakePicamera2], sensor: tuple[int, int], size: tuple[int, int]
) -> None:
    fake_picamera2.sensor = sensor
    with pytest.raises(BadCameraSpec, match="this camera.s full resolution") as err:
        PiCameraSource(size=size)
    assert str(err.value) == (
        f"camera size {size[0]}x{size[1]} is outside 16x16 .. {sensor[0]}x{sensor[1]}"
        " (this camera's full resolution): ask for a size within it (--camera picamera:WxH),"
        " or calibrate again if the camera was changed"
    )
    camera = fake_picamera2.instances[0]
    assert "configure" not in _names(camera)
    assert _names(camera)[-1] == "close"


@pytest.mark.parametrize(
    ("sensor", "expected"),
    [
        ((3280, 2464), (1640, 1232)),  # v2, IMX219
        ((4608, 2592), (2304, 1296)),  # Camera Module 3, IMX708
        ((4056, 3040), (2028, 1520)),  # HQ camera, IMX477
        ((2592, 1944), (1296, 972)),  # v1, OV5647
    ],
)
def test_the_default_size_is_the_sensors_binned_mode(
    fake_picamera2: type[FakePicamera2], sensor: tuple[int, int], expected: tuple[int, int]
) -> None:
    fake_picamera2.sensor = sensor
    with PiCameraSource() as source:
        assert source.sensor == sensor
        assert source.size == expected
        assert fake_picamera2.instances[0].calls[0] == (
            "create_still_configuration",
            {"size": expected, "format": "RGB888"},
        )


def test_the_full_resolution_of_a_larger_sensor_is_allowed(
    fake_picamera2: type[FakePicamera2],
) -> None:
    fake_picamera2.sensor = (4608, 2592)
    with PiCameraSource(size=(4608, 2592)) as source:
        assert source.size == (4608, 2592)


def test_make_source_picamera_opens_the_pi_camera(fake_picamera2: type[FakePicamera2]) -> None:
    source = make_source("picamera")
    assert isinstance(source, PiCameraSource)
    source.close()
    assert len(fake_picamera2.instances) == 1


def test_make_source_picamera_spec_names_the_camera_and_its_size(
    fake_picamera2: type[FakePicamera2],
) -> None:
    settings = CameraSettings(exposure_time=8000, analogue_gain=2.0, colour_gains=(1.9, 1.2))
    source = make_source("picamera:1:2028x1520", size=(640, 480), settings=settings)
    assert isinstance(source, PiCameraSource)
    source.close()
    assert source.size == (2028, 1520)  # the spec's size wins over the one given beside
    camera = fake_picamera2.instances[0]
    assert camera.camera_num == 1
    assert camera.controls == settings.controls()
    source = make_source("picamera", size=(640, 480))
    assert isinstance(source, PiCameraSource)
    source.close()
    assert source.size == (640, 480)
    assert fake_picamera2.instances[1].camera_num == 0


def test_camera_settings_round_trip_through_json() -> None:
    settings = CameraSettings(exposure_time=5000, analogue_gain=1.25, colour_gains=(2.0, 1.5))
    assert CameraSettings.from_json(settings.to_json()) == settings
    mains = replace(settings, flicker_period=MAINS_FLICKER[60])
    assert CameraSettings.from_json(mains.to_json()) == mains
    assert "flicker_period" not in settings.to_json()
    with pytest.raises(ValueError, match="flicker_period -1 is not a positive number"):
        CameraSettings.from_json(mains.to_json() | {"flicker_period": -1})


@pytest.mark.parametrize(
    ("total", "period", "expected"),
    [
        (18_000, None, (18_000, 1.0)),  # exposure first
        (18_000, 10_000, (10_000, 1.8)),  # one whole flicker, the gain makes up the rest
        (25_000, 8_333, (24_999, 1.0)),  # three flickers of 60 Hz lamps
        (9_000, 10_000, (9_000, 1.0)),  # shorter than a flicker: as it is
        (200_000, None, (33_000, 6.061)),  # the longest exposure, then gain
        (200_000, 10_000, (30_000, 6.667)),  # the longest whole flickers, then gain
        (900_000, 10_000, (30_000, 8.0)),  # the gain stops at its maximum
        (50, None, (100, 1.0)),  # never shorter than the shortest
    ],
)
def test_settings_with_a_light_keep_whole_flickers_when_they_can(
    total: float, period: int | None, expected: tuple[int, float]
) -> None:
    settings = CameraSettings(12000, 1.5, (1.8, 1.4), flicker_period=period)
    lit = settings.with_light(total, shortest=100, longest=33_000, max_gain=8.0)
    assert (lit.exposure_time, lit.analogue_gain) == expected
    assert (lit.colour_gains, lit.flicker_period) == (settings.colour_gains, period)

"""The light keeper: a locked camera follows the room's light back to the calibrated tray."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from tests.vision.lit_scene import REFERENCE, expose
from vision.calibrate import Calibration, calibrate_frame
from vision.light import (
    BANDS,
    LightKeeper,
    LightOptions,
    flicker_bands,
    lighting_advice,
    tray_light,
    tray_rgb,
)
from vision.picam import CameraSettings
from vision.source import Frame
from vision.srgb import to_levels, to_linear
from vision.synthetic import draw_hand, make_frame, make_tray, six_dice

W, H = 640, 480


def _scene(colour: str, seed: int = 5) -> tuple[Frame, Calibration]:
    """Six dice on a tray, and the calibration of the same tray empty."""
    calibration = calibrate_frame(make_tray(W, H, colour=colour, seed=seed))
    return make_frame(W, H, six_dice(W, H, seed=seed), tray=colour, seed=seed), calibration


def _ratio(frame: Frame, calibration: Calibration) -> npt.NDArray[np.float64]:
    """The bare tray's linear blue, green and red now against the calibration's."""
    seen = tray_light(frame, calibration.zone)
    assert seen is not None
    ratio: npt.NDArray[np.float64] = np.array(tray_rgb(seen)) / np.array(tray_rgb(calibration.tray))
    return ratio


@dataclass
class Table:
    """A locked camera over ``scene`` in a room whose light may change, watched by a keeper."""

    scene: Frame
    calibration: Calibration
    room: float = 1.0
    cast: tuple[float, float, float] = (1.0, 1.0, 1.0)
    reference: CameraSettings = REFERENCE
    """The settings the camera was calibrated with."""
    now: float = 0.0
    flicker: float = 0.0
    """How deep the room's lamps flicker (``lit_scene.expose``)."""

    def __post_init__(self) -> None:
        self.linear = to_linear(self.scene)
        self.settings = self.reference
        self.notices: list[str] = []
        self.keeper = LightKeeper(
            self.calibration.tray,
            self.reference,
            self._lock,
            zone=self.calibration.zone,
            clock=lambda: self.now,
            notice=self.notices.append,
        )

    def _lock(self, settings: CameraSettings) -> None:
        self.settings = settings

    def frame(self) -> Frame:
        return expose(
            self.linear,
            self.settings,
            room=self.room,
            cast=self.cast,
            reference=self.reference,
            flicker=self.flicker,
            # Frames do not keep time with the mains: the bands lie elsewhere in each.
            phase=self.now * 2.0,
        )

    def watch(self, seconds: float, every: float = 1.0) -> None:
        """The dice lie still for ``seconds``; the keeper sees a frame every ``every``."""
        end = self.now + seconds
        while self.now < end:
            self.keeper.observe(self.frame())
            self.now += every


@pytest.mark.parametrize("colour", ["green", "brown", "grey"])
@pytest.mark.parametrize(
    ("room", "cast"),
    [
        (4.0, (1.0, 1.0, 1.0)),  # calibrated under a lamp, played by day
        (10.0, (1.0, 1.0, 1.0)),  # direct sun: the tray blown out at first
        (0.15, (1.0, 1.0, 1.0)),  # calibrated by day, played under a dim lamp
        (3.0, (1.3, 1.0, 0.8)),  # daylight, bluer than the lamp of the calibration
        (1.0, (0.75, 1.0, 1.3)),  # a warm lamp instead of daylight, as bright
    ],
    ids=["day", "sun", "dim-lamp", "bluer-day", "warm-lamp"],
)
def test_the_tray_is_brought_back_to_its_calibrated_light(
    colour: str, room: float, cast: tuple[float, float, float]
) -> None:
    scene, calibration = _scene(colour)
    table = Table(scene, calibration, room=room, cast=cast)
    before = _ratio(table.frame(), calibration)
    assert np.abs(np.log(before)).max() > np.log(1.2)  # the change is one worth making
    table.watch(30)
    after = _ratio(table.frame(), calibration)
    assert np.abs(np.log(after)).max() < np.log(1.2), (before, after)
    assert 1 <= table.keeper.changes <= 3
    table.watch(30)  # and there it stays
    assert table.keeper.changes <= 3


def _bands(table: Table) -> float:
    """How far the light of a row moves from one frame to the next, at most (0: no bands):
    two frames at once, the flicker elsewhere in each."""
    first = table.frame()
    table.now += 0.75
    second = table.frame()
    grey = [to_linear(np.asarray(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY))) for f in (first, second)]
    rows = np.median(grey[1] / np.maximum(grey[0], 1e-4), axis=1)
    return float(np.abs(rows / np.median(rows) - 1.0).max())


@pytest.mark.parametrize(
    ("room", "exposure", "gain"),
    [
        (0.5, 30000, 1.6),  # evening: three whole flickers, the gain makes up the rest
        (0.4, 30000, 2.0),
        (1.5, 10000, 1.6),  # brighter: one flicker at a higher gain, not 16 ms
        (3.0, 8000, 1.0),  # shorter than a flicker: nothing avoids the bands
    ],
)
@pytest.mark.parametrize("period", [10_000, None], ids=["50Hz", "no-mains"])
def test_under_mains_lamps_the_keeper_keeps_whole_flickers(
    room: float, exposure: int, gain: float, period: int | None
) -> None:
    scene, calibration = _scene("green")
    # Calibrated at two flickers (20 ms at gain 1.2); then the lamps' light changes.
    reference = CameraSettings(20000, 1.2, (1.8, 1.4), flicker_period=period)
    table = Table(scene, calibration, room=room, reference=reference, flicker=0.6)
    assert _bands(table) < 0.02
    table.watch(30)
    after = _ratio(table.frame(), calibration)
    assert np.abs(np.log(after)).max() < np.log(1.2), after
    settings = table.settings
    if period is None:
        # Exposure first, whatever the flicker: bands across the picture.
        assert settings.analogue_gain == 1.0 or settings.exposure_time == 33_000
        assert settings.exposure_time % 10_000 != 0
        assert _bands(table) > 0.05
        return
    assert (settings.exposure_time, settings.analogue_gain) == pytest.approx(
        (exposure, gain), rel=0.1
    )
    assert settings.flicker_period == period
    banded = settings.exposure_time % period != 0
    assert _bands(table) > 0.1 if banded else _bands(table) < 0.02


def test_a_small_drift_moves_nothing() -> None:
    """Within the tolerance a locked camera stays locked: the picture of a turn is steady."""
    scene, calibration = _scene("green")
    table = Table(scene, calibration, room=1.15, cast=(1.05, 1.0, 0.97))
    table.watch(30)
    assert (table.keeper.changes, table.settings) == (0, REFERENCE)


def test_a_passing_shadow_moves_nothing() -> None:
    """The drift must last ``hold`` seconds: a light dimmed for less is left alone."""
    scene, calibration = _scene("brown")
    hold = LightOptions().hold
    table = Table(scene, calibration, room=0.3)
    table.watch(hold - 1.0)
    table.room = 1.0
    table.watch(10)
    table.room = 0.3
    table.watch(hold - 1.0)
    assert table.keeper.changes == 0
    table.watch(2.0)
    assert table.keeper.changes == 1


def test_dice_and_hands_are_not_taken_for_tray() -> None:
    """The tray's light is measured around what lies on it; a tray mostly under a hand is not
    measured at all."""
    scene, calibration = _scene("green")
    empty = make_tray(W, H, colour="green", seed=5)
    with_dice, bare = _ratio(scene, calibration), _ratio(empty, calibration)
    assert np.abs(np.log(with_dice / bare)).max() < np.log(1.03)
    covered = scene.copy()
    for x in range(80, 600, 70):
        draw_hand(covered, x, 240, 300)
    assert tray_light(covered, calibration.zone, like=calibration.tray) is None
    # Without the calibrated hue a hand that fills the frame passes for the tray.
    assert tray_light(covered, calibration.zone) is not None


@pytest.mark.parametrize(
    ("room", "exposure", "gain", "said"),
    [
        (0.002, 33_000, 8.0, "too dark"),  # longest exposure and highest gain, still dark
        (800.0, 100, 1.0, "too bright"),  # shortest exposure, still blown out
    ],
)
def test_at_its_limits_the_camera_says_so_once(
    caplog: pytest.LogCaptureFixture, room: float, exposure: int, gain: float, said: str
) -> None:
    caplog.set_level(logging.INFO, logger="vision.light")
    scene, calibration = _scene("grey")
    table = Table(scene, calibration, room=room)
    table.watch(120)
    assert (table.settings.exposure_time, table.settings.analogue_gain) == (exposure, gain)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert said in warnings[0]
    # The phones say it too, until the light is back within the camera's reach.
    assert table.notices == ["dark" if said == "too dark" else "bright"]
    table.room = 1.0
    table.watch(60)
    assert table.notices[-1] == ""


def test_a_calibration_longer_than_the_usual_longest_exposure_stays_allowed() -> None:
    """A tray calibrated in a dim room at 1/15 s may go back to it, not be held at 1/30 s."""
    scene, calibration = _scene("grey")
    slow = CameraSettings(exposure_time=66_000, analogue_gain=1.0, colour_gains=(1.8, 1.4))
    table = Table(scene, calibration, room=0.5, reference=slow)
    table.watch(30)
    assert table.settings.exposure_time == 66_000
    assert table.settings.analogue_gain == pytest.approx(2.0, rel=0.1)


def _glare(tray: Frame) -> None:
    """A lamp's reflection on the felt: a small blown-out spot."""
    cv2.circle(tray, (420, 160), 24, (255, 255, 255), -1)


def _shadow(tray: Frame) -> None:
    """The left third of the tray in a shadow, a quarter of the light."""
    left = tray[:, : W // 3].astype(np.float32)
    tray[:, : W // 3] = to_levels(to_linear(left.astype(np.uint8)) * np.float32(0.25))


def _dim(tray: Frame) -> None:
    tray[:] = to_levels(to_linear(tray.copy()) * np.float32(0.01))


@pytest.mark.parametrize(
    ("colour", "mend", "settings", "said"),
    [
        ("green", None, REFERENCE, []),
        ("grey", None, None, []),
        ("brown", _glare, REFERENCE, ["glare: 0.6 % of the tray is blown out"]),
        ("grey", _shadow, None, ["the tray is lit unevenly: its darkest part gets 4"]),
        ("green", _dim, None, ["the tray is dark: add light"]),
        (
            "green",
            None,
            CameraSettings(33_000, 7.5, (1.8, 1.4)),
            ["the tray is dark (the camera needs a gain of 7.5)"],
        ),
        ("white", _glare, None, []),  # a white tray is at the top of the range by itself
    ],
    ids=["even", "even-no-camera", "glare", "shadow", "dark", "high-gain", "white-tray"],
)
def test_calibration_advice_on_the_light(
    colour: str,
    mend: Callable[[Frame], None] | None,
    settings: CameraSettings | None,
    said: list[str],
) -> None:
    tray = make_tray(W, H, colour=(235, 235, 235) if colour == "white" else colour, seed=3)
    if mend is not None:
        mend(tray)
    advice = lighting_advice(tray, None, settings)
    assert [a[: len(s)] for a, s in zip(advice, said, strict=False)] == said
    assert len(advice) == len(said), advice


@pytest.mark.parametrize(
    ("exposure", "flicker", "noise", "banded"),
    [
        (12_000, 0.0, 0.0, False),  # steady light
        (12_000, 0.0, 4.0, False),  # sensor noise is no band
        (20_000, 0.6, 4.0, False),  # two whole flickers
        (12_000, 0.6, 0.0, True),
        (12_000, 0.3, 4.0, True),
        (4_000, 0.3, 4.0, True),
    ],
)
def test_a_flickering_lamps_bands_are_seen_between_frames(
    exposure: int, flicker: float, noise: float, banded: bool
) -> None:
    scene = to_linear(make_frame(W, H, six_dice(W, H, seed=4), tray="brown", seed=4))
    settings = replace(REFERENCE, exposure_time=exposure)
    rng = np.random.default_rng(4)
    frames = []
    for k in range(5):
        frame = expose(scene, settings, flicker=flicker, phase=2.1 * k).astype(np.float32)
        frame += rng.normal(0.0, noise, frame.shape).astype(np.float32)
        frames.append(np.clip(frame, 0, 255).astype(np.uint8))
    assert (flicker_bands(frames) > BANDS) == banded

"""The buttons on MockFactory pins: one event per press, debounce, hold, and a clean close."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gpiozero.exc import GPIOPinInUse
from gpiozero.pins.mock import MockFactory

from device.errors import DeviceClosedError, UnknownButton
from device.panel import EVENTS, Panel
from device.pins import DEFAULT_PINS, PinMap
from tests.device.support import FakeClock, Recorder, mock_factory

__all__ = ["mock_factory"]  # a fixture, used by name


@pytest.fixture
def clock() -> FakeClock:
    """A fake clock for press lengths."""
    return FakeClock()


@pytest.fixture
def recorder() -> Recorder:
    """The on_button callback of the test."""
    return Recorder()


@pytest.fixture
def panel(mock_factory: Any, clock: FakeClock, recorder: Recorder) -> Iterator[Panel]:
    """The default panel on mock pins, with the fake clock."""
    with Panel(DEFAULT_PINS, pin_factory=mock_factory, on_button=recorder, clock=clock) as p:
        yield p


def pin_of(panel: Panel, name: str) -> Any:
    return panel.button(name).pin


def wait_for(condition: Callable[[], bool], *, timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not condition():
        time.sleep(0.002)
    return condition()


@pytest.mark.parametrize("name", ["bank", "confirm", "undo", "keep"])
def test_a_press_gives_exactly_one_event_on_release(
    panel: Panel, clock: FakeClock, recorder: Recorder, name: str
) -> None:
    pin = pin_of(panel, name)
    pin.drive_low()
    assert recorder.events == []
    clock.now += 0.2
    pin.drive_high()
    assert recorder.events == [name]


def test_buttons_pull_up_so_a_press_connects_the_pin_to_ground(panel: Panel) -> None:
    for name in ("bank", "confirm", "undo", "keep"):
        assert pin_of(panel, name).pull == "up"
        assert panel.button(name).is_pressed is False


def test_chatter_of_the_contacts_gives_one_press(
    panel: Panel, clock: FakeClock, recorder: Recorder
) -> None:
    pin = pin_of(panel, "bank")
    for _ in range(5):
        pin.drive_low()
        clock.now += 0.002
        pin.drive_high()
        clock.now += 0.002
    assert recorder.events == ["bank"]
    clock.now += 0.05
    pin.drive_low()
    pin.drive_high()
    assert recorder.events == ["bank", "bank"]


def test_chatter_on_release_is_ignored_until_the_bounce_time_is_over(
    panel: Panel, clock: FakeClock, recorder: Recorder
) -> None:
    pin = pin_of(panel, "keep")
    pin.drive_low()
    clock.now += 0.3
    pin.drive_high()
    clock.now += 0.049
    pin.drive_low()
    clock.now += 0.3
    pin.drive_high()
    assert recorder.events == ["keep"]


@pytest.mark.parametrize(
    ("name", "event"),
    [("undo", "redo"), ("confirm", "new_game"), ("bank", "bank"), ("keep", "keep")],
)
def test_a_hold_gives_the_hold_event_and_not_the_press(
    panel: Panel, clock: FakeClock, recorder: Recorder, name: str, event: str
) -> None:
    pin = pin_of(panel, name)
    pin.drive_low()
    clock.now += 1.0
    pin.drive_high()
    assert recorder.events == [event]


def test_a_press_just_short_of_the_hold_time_is_a_press(
    panel: Panel, clock: FakeClock, recorder: Recorder
) -> None:
    pin = pin_of(panel, "undo")
    pin.drive_low()
    clock.now += 0.99
    pin.drive_high()
    assert recorder.events == ["undo"]


def test_gpiozero_hold_timer_fires_redo_while_the_button_is_still_down(
    mock_factory: Any, recorder: Recorder
) -> None:
    with Panel(DEFAULT_PINS, pin_factory=mock_factory, hold_time=0.05, on_button=recorder) as p:
        pin = pin_of(p, "undo")
        pin.drive_low()
        assert wait_for(lambda: recorder.events == ["redo"])
        assert p.button("undo").is_held
        pin.drive_high()
        time.sleep(0.02)
    assert recorder.events == ["redo"]
    assert recorder.threads[0] != threading.current_thread().name


def test_a_failing_handler_is_logged_and_the_buttons_keep_working(
    mock_factory: Any, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[str] = []

    def handler(event: str) -> None:
        seen.append(event)
        if len(seen) == 1:
            raise RuntimeError("boom")

    with Panel(DEFAULT_PINS, pin_factory=mock_factory, on_button=handler, clock=clock) as p:
        pin = pin_of(p, "bank")
        with caplog.at_level(logging.ERROR, logger="device.panel"):
            pin.drive_low()
            pin.drive_high()
        clock.now += 1
        pin.drive_low()
        pin.drive_high()
    assert seen == ["bank", "bank"]
    assert "the handler of button event 'bank' failed" in caplog.text


def test_emit_sends_an_event_without_a_pin(panel: Panel, recorder: Recorder) -> None:
    for event in EVENTS:
        panel.emit(event)
    assert recorder.events == list(EVENTS)
    with pytest.raises(UnknownButton) as caught:
        panel.emit("roll")
    assert str(caught.value) == (
        "unknown button event 'roll'; allowed: bank, confirm, undo, redo, keep, new_game"
    )


def test_a_table_without_a_keep_button(mock_factory: Any, recorder: Recorder) -> None:
    with Panel(PinMap(keep=None), pin_factory=mock_factory, on_button=recorder) as p:
        with pytest.raises(UnknownButton) as caught:
            p.button("keep")
        assert str(caught.value) == "no button 'keep' on this table; fitted: bank, confirm, undo"
        # The keep button's pin (BCM 23) is free for something else.
        assert mock_factory.pin(23).function == "input"


def test_close_is_idempotent_and_frees_the_pins(mock_factory: Any, recorder: Recorder) -> None:
    p = Panel(DEFAULT_PINS, pin_factory=mock_factory, on_button=recorder)
    pin = pin_of(p, "bank")
    p.close()
    p.close()
    assert p.closed
    assert p.leds.status == "off"
    pin.drive_low()
    pin.drive_high()
    assert recorder.events == []
    with pytest.raises(DeviceClosedError):
        p.emit("bank")
    with Panel(DEFAULT_PINS, pin_factory=mock_factory, on_button=recorder) as again:
        pin_of(again, "bank").drive_low()
        pin_of(again, "bank").drive_high()
    assert recorder.events == ["bank"]


def test_a_failed_construction_releases_what_it_took(mock_factory: Any, recorder: Recorder) -> None:
    small = PinMap(bank=2, confirm=3, undo=4, keep=None, led_ready=None, led_moving=None)
    blocker = Panel(small, pin_factory=mock_factory, on_button=recorder)
    with pytest.raises(GPIOPinInUse, match="GPIO13"):
        Panel(DEFAULT_PINS, pin_factory=mock_factory, on_button=recorder)
    blocker.close()
    # Nothing of the failed panel is still reserved: the full default panel now fits.
    Panel(DEFAULT_PINS, pin_factory=mock_factory, on_button=recorder).close()


def test_without_a_factory_the_environment_chooses(
    monkeypatch: pytest.MonkeyPatch, recorder: Recorder
) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    with Panel(DEFAULT_PINS, on_button=recorder) as p:
        assert isinstance(p.factory, MockFactory)
        pin_of(p, "confirm").drive_low()
        pin_of(p, "confirm").drive_high()
    assert recorder.events == ["confirm"]


@pytest.mark.parametrize(
    ("bounce_time", "hold_time", "message"),
    [
        (-0.1, 1.0, "bounce_time must be 0 or more seconds, got -0.1"),
        (0.05, 0.0, "hold_time must be more than 0 seconds, got 0.0"),
    ],
)
def test_bad_timings_are_refused(
    mock_factory: Any, recorder: Recorder, bounce_time: float, hold_time: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        Panel(
            DEFAULT_PINS,
            pin_factory=mock_factory,
            on_button=recorder,
            bounce_time=bounce_time,
            hold_time=hold_time,
        )
    assert str(caught.value) == message

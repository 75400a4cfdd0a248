"""The LEDs on MockFactory pins: statuses, blinking, the OK flash and the seat LEDs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from device.errors import DeviceClosedError, UnknownSeat, UnknownStatus
from device.leds import Leds
from device.pins import DEFAULT_PINS, PinMap
from tests.device.support import mock_factory

__all__ = ["mock_factory"]  # a fixture, used by name

SEATS = PinMap(seat_leds=(26, 16, 20))
STATUS_LEDS = ("led_ready", "led_moving", "led_ok", "led_attention")


@pytest.fixture
def leds(mock_factory: Any) -> Iterator[Leds]:
    """The default LEDs plus three seat LEDs, blinking fast so tests need not wait."""
    with Leds(SEATS, pin_factory=mock_factory, blink_time=(0.01, 0.01), ok_time=0.01) as lights:
        yield lights


def lit(leds: Leds) -> dict[str, bool]:
    return {name: bool(leds.led(name).pin.state) for name in STATUS_LEDS}


def seats(leds: Leds) -> list[bool]:
    return [bool(leds.led(f"seat{i}").pin.state) for i in range(3)]


def wait_for(condition: Callable[[], bool], *, timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not condition():
        time.sleep(0.002)
    return condition()


def test_all_leds_start_dark(leds: Leds) -> None:
    assert leds.status == "off"
    assert leds.turn is None
    assert lit(leds) == dict.fromkeys(STATUS_LEDS, False)
    assert seats(leds) == [False, False, False]


@pytest.mark.parametrize(("status", "led"), [("ready", "led_ready"), ("moving", "led_moving")])
def test_a_steady_status_lights_its_led_alone(leds: Leds, status: str, led: str) -> None:
    leds.set_status("attention")
    leds.set_status(status)
    assert leds.status == status
    assert lit(leds) == {name: name == led for name in STATUS_LEDS}


def test_setting_the_same_status_again_changes_nothing(leds: Leds) -> None:
    leds.set_status("ready")
    leds.set_status("ready")
    leds.led("led_ready").pin.assert_states([False, True])
    assert len(leds.led("led_ready").pin.states) == 2


def test_attention_blinks(leds: Leds) -> None:
    leds.set_status("attention")
    pin = leds.led("led_attention").pin
    assert wait_for(lambda: len(pin.states) >= 6)
    pin.assert_states([False, True, False, True, False, True])
    assert not lit(leds)["led_ready"]


def test_attention_again_keeps_the_blink_rhythm(mock_factory: Any) -> None:
    with Leds(DEFAULT_PINS, pin_factory=mock_factory, blink_time=(0.01, 30.0)) as slow:
        slow.set_status("attention")
        pin = slow.led("led_attention").pin
        assert wait_for(lambda: len(pin.states) == 3)  # off, on, off: now in the long off phase
        slow.set_status("attention")
        time.sleep(0.03)
        assert [s.state for s in pin.states] == [False, True, False]


def test_leaving_attention_stops_the_blinking(leds: Leds) -> None:
    leds.set_status("attention")
    pin = leds.led("led_attention").pin
    assert wait_for(lambda: len(pin.states) >= 3)
    leds.set_status("ready")
    count = len(pin.states)
    time.sleep(0.05)
    assert len(pin.states) == count
    assert lit(leds) == {name: name == "led_ready" for name in STATUS_LEDS}


def test_flash_ok_pulses_once_over_the_status(leds: Leds) -> None:
    leds.set_status("moving")
    leds.flash_ok()
    pin = leds.led("led_ok").pin
    assert wait_for(lambda: len(pin.states) == 3)
    time.sleep(0.03)
    assert [s.state for s in pin.states] == [False, True, False]
    assert leds.status == "moving"
    assert lit(leds)["led_moving"]


def test_ok_status_is_ready_plus_a_flash(leds: Leds) -> None:
    leds.set_status("ok")
    assert leds.status == "ready"
    assert lit(leds)["led_ready"]
    pin = leds.led("led_ok").pin
    assert wait_for(lambda: [s.state for s in pin.states] == [False, True, False])


def test_off_darkens_every_status_led(leds: Leds) -> None:
    leds.set_status("moving")
    leds.set_status("off")
    assert lit(leds) == dict.fromkeys(STATUS_LEDS, False)


def test_unknown_status_is_refused(leds: Leds) -> None:
    with pytest.raises(UnknownStatus) as caught:
        leds.set_status("rolling")
    assert str(caught.value) == (
        "unknown LED status 'rolling'; allowed: off, ready, moving, attention, ok"
    )


def test_turn_lights_one_seat(leds: Leds) -> None:
    leds.set_turn(1)
    assert seats(leds) == [False, True, False]
    leds.set_turn(2)
    assert seats(leds) == [False, False, True]
    leds.set_turn(None)
    assert seats(leds) == [False, False, False]
    assert leds.turn is None


def test_turn_again_changes_nothing(leds: Leds) -> None:
    leds.set_turn(0)
    leds.set_turn(0)
    assert len(leds.led("seat0").pin.states) == 2


def test_a_seat_without_an_led_lights_none(leds: Leds) -> None:
    leds.set_turn(0)
    leds.set_turn(4)
    assert leds.turn == 4
    assert seats(leds) == [False, False, False]


@pytest.mark.parametrize("seat", [-1, True, 1.0])
def test_a_bad_seat_is_refused(leds: Leds, seat: Any) -> None:
    with pytest.raises(UnknownSeat) as caught:
        leds.set_turn(seat)
    assert str(caught.value) == f"seat {seat!r} is not a seat; seats are numbered from 0"


def test_parts_not_fitted_are_skipped(mock_factory: Any) -> None:
    pins = PinMap(led_ok=None, led_attention=None)
    with Leds(pins, pin_factory=mock_factory) as bare:
        bare.set_status("attention")
        bare.flash_ok()
        bare.set_turn(0)
        assert bare.status == "attention"
        assert not bare.led("led_ready").pin.state


def test_close_is_idempotent_darkens_and_refuses_later_use(mock_factory: Any) -> None:
    lights = Leds(SEATS, pin_factory=mock_factory)
    lights.set_status("ready")
    lights.set_turn(0)
    pin = lights.led("led_ready").pin
    lights.close()
    lights.close()
    assert pin.states[-1].state is False
    calls: list[Callable[[], None]] = [
        lambda: lights.set_status("ready"),
        lights.flash_ok,
        lambda: lights.set_turn(1),
    ]
    for call in calls:
        with pytest.raises(DeviceClosedError, match="the LEDs are closed"):
            call()
    Leds(SEATS, pin_factory=mock_factory).close()  # the pins are free again


def test_calls_from_many_threads_leave_a_consistent_state(leds: Leds) -> None:
    statuses = ("ready", "moving", "attention", "off")

    def worker(offset: int) -> None:
        for i in range(40):
            leds.set_status(statuses[(i + offset) % 4])
            leds.set_turn((i + offset) % 3)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    leds.set_status("moving")
    leds.set_turn(2)
    assert lit(leds) == {name: name == "led_moving" for name in STATUS_LEDS}
    assert seats(leds) == [False, False, True]

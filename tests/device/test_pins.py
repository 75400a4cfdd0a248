"""The pin map: documented defaults, validation of the [pins] section, and the wiring table."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from gpiozero.pins.mock import MockFactory
from hypothesis import given, settings
from hypothesis import strategies as st

from device.errors import DeviceError, PinConflict, PinMapError
from device.pins import BCM_TO_PHYSICAL, DEFAULT_PINS, GROUND_PINS, PinMap, wiring_table

ALLOWED = "bank, confirm, undo, keep, led_ready, led_moving, led_ok, led_attention, seat_leds"


def test_default_map_is_the_documented_one() -> None:
    assert asdict(DEFAULT_PINS) == {
        "bank": 17,
        "confirm": 27,
        "undo": 22,
        "keep": 23,
        "led_ready": 5,
        "led_moving": 6,
        "led_ok": 13,
        "led_attention": 19,
        "seat_leds": (),
    }


def test_from_dict_overrides_only_the_given_names() -> None:
    pins = PinMap.from_dict({"bank": 4, "seat_leds": [26, 16, 20, 21]})
    assert pins.bank == 4
    assert pins.seat_leds == (26, 16, 20, 21)
    assert pins.confirm == 27
    assert PinMap.from_dict({}) == DEFAULT_PINS


@pytest.mark.parametrize("name", ["keep", "led_ready", "led_moving", "led_ok", "led_attention"])
def test_optional_parts_can_be_left_out(name: str) -> None:
    pins = PinMap.from_dict({name: "None"})
    assert getattr(pins, name) is None
    assert name not in {**pins.buttons(), **pins.leds()}


def test_buttons_and_leds_list_the_fitted_parts_in_order() -> None:
    pins = PinMap(keep=None, led_ok=None)
    assert pins.buttons() == {"bank": 17, "confirm": 27, "undo": 22}
    assert pins.leds() == {"led_ready": 5, "led_moving": 6, "led_attention": 19}


@pytest.mark.parametrize(
    ("section", "message"),
    [
        pytest.param(
            {"roll": 5}, f"[pins] unknown name 'roll'; allowed: {ALLOWED}", id="unknown-name"
        ),
        pytest.param(
            {"bank": "17a"},
            "[pins] bank must be a BCM pin number 0-27, got '17a'",
            id="not-an-integer",
        ),
        pytest.param(
            {"bank": 17.0}, "[pins] bank must be a BCM pin number 0-27, got 17.0", id="float"
        ),
        pytest.param(
            {"undo": True}, "[pins] undo must be a BCM pin number 0-27, got True", id="boolean"
        ),
        pytest.param(
            {"bank": "none"},
            "[pins] bank must be a BCM pin number 0-27, got 'none'",
            id="required-button-left-out",
        ),
        pytest.param(
            {"keep": "x"},
            "[pins] keep must be a BCM pin number 0-27 or \"none\", got 'x'",
            id="optional-not-an-integer",
        ),
        pytest.param(
            {"led_ok": 28},
            "[pins] led_ok = 28 is not a GPIO pin; BCM pin numbers are 0-27",
            id="above-27",
        ),
        pytest.param(
            {"bank": -1},
            "[pins] bank = -1 is not a GPIO pin; BCM pin numbers are 0-27",
            id="negative",
        ),
        pytest.param(
            {"seat_leds": 26},
            "[pins] seat_leds must be a list of BCM pin numbers 0-27, got 26",
            id="seats-not-a-list",
        ),
        pytest.param(
            {"seat_leds": [26, "x"]},
            "[pins] seat_leds[1] must be a BCM pin number 0-27, got 'x'",
            id="seat-not-an-integer",
        ),
        pytest.param(
            {"seat_leds": [26, 40]},
            "[pins] seat_leds[1] = 40 is not a GPIO pin; BCM pin numbers are 0-27",
            id="seat-out-of-range",
        ),
    ],
)
def test_bad_sections_name_the_key_and_what_is_allowed(
    section: dict[str, object], message: str
) -> None:
    with pytest.raises(PinMapError) as caught:
        PinMap.from_dict(section)
    assert str(caught.value) == message
    assert not isinstance(caught.value, PinConflict)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        pytest.param(
            {"led_ok": 17},
            "[pins] pin 17 is used twice: bank and led_ok; every button and LED needs its own pin",
            id="button-and-led",
        ),
        pytest.param(
            {"seat_leds": [26, 26]},
            "[pins] pin 26 is used twice: seat_leds[0] and seat_leds[1]; "
            "every button and LED needs its own pin",
            id="two-seats",
        ),
        pytest.param(
            {"seat_leds": [5]},
            "[pins] pin 5 is used twice: led_ready and seat_leds[0]; "
            "every button and LED needs its own pin",
            id="seat-and-status-led",
        ),
    ],
)
def test_a_pin_used_twice_is_a_conflict(section: dict[str, object], message: str) -> None:
    with pytest.raises(PinConflict) as caught:
        PinMap.from_dict(section)
    assert str(caught.value) == message
    assert isinstance(caught.value, DeviceError)
    assert isinstance(caught.value, ValueError)


def test_a_section_that_is_not_a_table_is_refused() -> None:
    with pytest.raises(PinMapError) as caught:
        PinMap.from_dict([17, 27])  # type: ignore[arg-type]
    assert str(caught.value) == "[pins] must be a table of name = BCM pin number, got list"


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(PinConflict) as caught:
        PinMap(bank=27)
    assert str(caught.value) == (
        "PinMap pin 27 is used twice: bank and confirm; every button and LED needs its own pin"
    )
    assert PinMap(seat_leds=[26, 16]).seat_leds == (26, 16)  # type: ignore[arg-type]


_PARTS = ("bank", "confirm", "undo", "keep", "led_ready", "led_moving", "led_ok", "led_attention")


@settings(max_examples=60, deadline=None)
@given(
    pins=st.lists(st.integers(0, 27), min_size=12, max_size=12, unique=True),
    seats=st.integers(0, 4),
)
def test_any_map_of_distinct_pins_round_trips_through_a_section(
    pins: list[int], seats: int
) -> None:
    section: dict[str, object] = dict(zip(_PARTS, pins, strict=False))
    section["seat_leds"] = pins[len(_PARTS) : len(_PARTS) + seats]
    pin_map = PinMap.from_dict(section)
    assert PinMap.from_dict({**asdict(pin_map), "seat_leds": list(pin_map.seat_leds)}) == pin_map
    assert [*pin_map.buttons().values(), *pin_map.leds().values(), *pin_map.seat_leds] == (
        pins[: len(_PARTS) + seats]
    )


def test_header_mapping_agrees_with_gpiozero_board_data() -> None:
    header = MockFactory().board_info.headers["J8"]
    gpio = {
        int(info.name[4:]): number
        for number, info in header.pins.items()
        if info.name.startswith("GPIO")
    }
    ground = tuple(sorted(number for number, info in header.pins.items() if info.name == "GND"))
    assert gpio == BCM_TO_PHYSICAL
    assert ground == GROUND_PINS


def test_wiring_table_of_the_default_map() -> None:
    led = "330 Ω resistor to LED anode (long leg); cathode to GND"
    assert wiring_table(DEFAULT_PINS) == (
        "| Function | BCM pin | Header pin | Wire to |\n"
        "|---|---|---|---|\n"
        "| Bank button | GPIO17 | 11 | push button, other leg to GND (pin 9) |\n"
        "| Confirm button (hold: new game) | GPIO27 | 13 "
        "| push button, other leg to GND (pin 9) |\n"
        "| Undo button (hold: redo) | GPIO22 | 15 | push button, other leg to GND (pin 9) |\n"
        "| Keep button | GPIO23 | 16 | push button, other leg to GND (pin 14) |\n"
        f"| Ready LED (green) | GPIO5 | 29 | {led} (pin 25) |\n"
        f"| Dice moving LED (yellow) | GPIO6 | 31 | {led} (pin 25) |\n"
        f"| Read OK LED (blue, flashes) | GPIO13 | 33 | {led} (pin 39) |\n"
        f"| Needs attention LED (red, blinks) | GPIO19 | 35 | {led} (pin 39) |\n"
    )


def test_wiring_table_lists_seats_and_skips_parts_not_fitted() -> None:
    rows = wiring_table(PinMap(keep=None, led_ok=None, seat_leds=(26, 16))).splitlines()
    assert len(rows) == 2 + 3 + 3 + 2
    assert not any("Keep" in row or "Read OK" in row for row in rows)
    assert rows[-2].startswith("| Seat 1 LED (whose turn) | GPIO26 | 37 |")
    assert rows[-1].startswith("| Seat 2 LED (whose turn) | GPIO16 | 36 |")
    assert rows[-1].endswith("cathode to GND (pin 34) |")

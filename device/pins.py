"""The pin map of the table: which GPIO pin (BCM number) each button and LED is wired to.

The default map puts the four buttons on header pins 11, 13, 15 and 16 (BCM 17, 27, 22, 23) and
the four status LEDs on header pins 29, 31, 33 and 35 (BCM 5, 6, 13, 19): each group sits
together on the header, near a ground pin, and none of them is an I2C, SPI or UART pin.
Per-seat LEDs are not fitted by default; BCM 26, 16, 20 and 21 (header pins 37, 36, 38 and 40)
are free for them.

The config file overrides any of it in its ``[pins]`` section::

    [pins]
    bank = 17
    keep = "none"            # optional parts may be left out of the table
    seat_leds = [26, 16, 20, 21]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

from device.errors import PinConflict, PinMapError

__all__ = [
    "BCM_TO_PHYSICAL",
    "BUTTON_NAMES",
    "DEFAULT_PINS",
    "GROUND_PINS",
    "LED_NAMES",
    "OPTIONAL_NAMES",
    "PinMap",
    "wiring_table",
]

BUTTON_NAMES = ("bank", "confirm", "undo", "keep")
"""The buttons of the table, in the order of the wiring table."""
LED_NAMES = ("led_ready", "led_moving", "led_ok", "led_attention")
"""The status LEDs of the table, in the order of the wiring table."""
OPTIONAL_NAMES = frozenset({"keep", *LED_NAMES})
"""Parts a table may go without (``"none"`` in the config file)."""
_NAMES = (*BUTTON_NAMES, *LED_NAMES, "seat_leds")

BCM_TO_PHYSICAL: dict[int, int] = {
    0: 27,
    1: 28,
    2: 3,
    3: 5,
    4: 7,
    5: 29,
    6: 31,
    7: 26,
    8: 24,
    9: 21,
    10: 19,
    11: 23,
    12: 32,
    13: 33,
    14: 8,
    15: 10,
    16: 36,
    17: 11,
    18: 12,
    19: 35,
    20: 38,
    21: 40,
    22: 15,
    23: 16,
    24: 18,
    25: 22,
    26: 37,
    27: 13,
}
"""BCM GPIO number -> physical pin of the 40-pin header (every Pi since the B+)."""
GROUND_PINS = (6, 9, 14, 20, 25, 30, 34, 39)
"""The physical ground pins of the 40-pin header."""

_LABELS = {
    "bank": "Bank button",
    "confirm": "Confirm button (hold: new game)",
    "undo": "Undo button (hold: redo)",
    "keep": "Keep button",
    "led_ready": "Ready LED (green)",
    "led_moving": "Dice moving LED (yellow)",
    "led_ok": "Read OK LED (blue, flashes)",
    "led_attention": "Needs attention LED (red, blinks)",
}


@dataclass(frozen=True)
class PinMap:
    """BCM pin numbers of the table's buttons and LEDs; ``None`` means the part is not fitted."""

    bank: int = 17
    """Bank button (header pin 11)."""
    confirm: int = 27
    """Confirm button, accepts the offered choice; hold it to start a new game (pin 13)."""
    undo: int = 22
    """Undo button; hold it to redo (pin 15)."""
    keep: int | None = 23
    """Keep button (pin 16); optional, dice taken out of the roll zone are a keep too."""
    led_ready: int | None = 5
    """Ready LED: the table waits for a roll (pin 29)."""
    led_moving: int | None = 6
    """Dice moving LED (pin 31)."""
    led_ok: int | None = 13
    """Read OK LED, flashes once per accepted reading (pin 33)."""
    led_attention: int | None = 19
    """Needs attention LED, blinks (pin 35)."""
    seat_leds: tuple[int, ...] = ()
    """One LED per seat, lit for the player whose turn it is; none by default."""

    def __post_init__(self) -> None:
        if isinstance(self.seat_leds, list):
            # A list straight from a config parser is the obvious thing to pass; keep it hashable.
            object.__setattr__(self, "seat_leds", tuple(self.seat_leds))
        _check(asdict(self), where="PinMap")

    @classmethod
    def from_dict(cls, mapping: Mapping[str, object]) -> PinMap:
        """Build a map from the ``[pins]`` section of the config file; missing names keep defaults.

        >>> PinMap.from_dict({"bank": 4, "keep": "none", "seat_leds": [26, 16]}).keep is None
        True
        """
        if not isinstance(mapping, Mapping):
            raise PinMapError(
                f"[pins] must be a table of name = BCM pin number, got {type(mapping).__name__}"
            )
        values: dict[str, object] = {f.name: getattr(DEFAULT_PINS, f.name) for f in fields(cls)}
        for key, value in mapping.items():
            if key not in values:
                raise PinMapError(f"[pins] unknown name {key!r}; allowed: {', '.join(_NAMES)}")
            if key in OPTIONAL_NAMES and isinstance(value, str) and value.lower() == "none":
                value = None
            if key == "seat_leds" and isinstance(value, list):
                value = tuple(value)
            values[key] = value
        _check(values, where="[pins]")
        return cls(**values)  # type: ignore[arg-type]  # _check has vetted every type

    def buttons(self) -> dict[str, int]:
        """The fitted buttons, name -> BCM pin, in wiring-table order."""
        return {n: p for n in BUTTON_NAMES if (p := getattr(self, n)) is not None}

    def leds(self) -> dict[str, int]:
        """The fitted status LEDs, name -> BCM pin, in wiring-table order."""
        return {n: p for n in LED_NAMES if (p := getattr(self, n)) is not None}


def _is_pin(value: object) -> bool:
    # bool is an int subclass, but `bank = true` in a config file is a mistake, not pin 1.
    return isinstance(value, int) and not isinstance(value, bool)


def _check(values: Mapping[str, object], *, where: str) -> None:
    """Raise PinMapError naming the first bad entry and what is allowed."""
    used: dict[int, str] = {}

    def claim(key: str, value: object, *, optional: bool) -> None:
        if value is None and optional:
            return
        if not _is_pin(value):
            allowed = 'a BCM pin number 0-27 or "none"' if optional else "a BCM pin number 0-27"
            raise PinMapError(f"{where} {key} must be {allowed}, got {value!r}")
        assert isinstance(value, int)
        if value not in BCM_TO_PHYSICAL:
            raise PinMapError(
                f"{where} {key} = {value} is not a GPIO pin; BCM pin numbers are 0-27"
            )
        if value in used:
            raise PinConflict(
                f"{where} pin {value} is used twice: {used[value]} and {key}; "
                "every button and LED needs its own pin"
            )
        used[value] = key

    for name in (*BUTTON_NAMES, *LED_NAMES):
        claim(name, values[name], optional=name in OPTIONAL_NAMES)
    seats = values["seat_leds"]
    if not isinstance(seats, tuple):
        raise PinMapError(
            f"{where} seat_leds must be a list of BCM pin numbers 0-27, got {seats!r}"
        )
    for index, pin in enumerate(seats):
        claim(f"seat_leds[{index}]", pin, optional=False)


DEFAULT_PINS = PinMap()
"""The documented default wiring."""


def _nearest_ground(physical: int) -> int:
    # Same header row (odd/even side) first, so a wire never has to cross the header.
    same_side = [g for g in GROUND_PINS if g % 2 == physical % 2]
    return min(same_side, key=lambda g: (abs(g - physical), g))


def wiring_table(pins: PinMap = DEFAULT_PINS) -> str:
    """A Markdown table of every fitted part: function, BCM pin, header pin and what to wire to.

    >>> print(wiring_table(PinMap(keep=None, led_moving=None, led_ok=None)).splitlines()[2])
    | Bank button | GPIO17 | 11 | push button, other leg to GND (pin 9) |
    """
    rows = ["| Function | BCM pin | Header pin | Wire to |", "|---|---|---|---|"]
    parts: list[tuple[str, int, bool]] = [(_LABELS[n], p, True) for n, p in pins.buttons().items()]
    parts += [(_LABELS[n], p, False) for n, p in pins.leds().items()]
    parts += [(f"Seat {i + 1} LED (whose turn)", p, False) for i, p in enumerate(pins.seat_leds)]
    for label, bcm, is_button in parts:
        physical = BCM_TO_PHYSICAL[bcm]
        ground = _nearest_ground(physical)
        if is_button:
            wire = f"push button, other leg to GND (pin {ground})"
        else:
            wire = f"330 Ω resistor to LED anode (long leg); cathode to GND (pin {ground})"
        rows.append(f"| {label} | GPIO{bcm} | {physical} | {wire} |")
    return "\n".join(rows) + "\n"

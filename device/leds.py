"""The LEDs of the table: one status at a time, a flash per good reading, and whose turn it is.

Statuses (``Leds.set_status``), each lighting its own LED and no other status LED:

- ``ready``: steady; the table waits for a roll or a button.
- ``moving``: steady; dice are moving (no reading is taken until they settle).
- ``attention``: blinking; something needs a person: a reading that is not a legal outcome,
  a camera unplugged, a full disk.
- ``off``: all status LEDs dark (start-up and shut-down).
- ``ok``: shorthand for ``ready`` plus ``flash_ok()``.

The read OK LED is not a status: ``flash_ok()`` pulses it once on top of whatever status is shown.
Every method takes a lock, so the camera loop, the button threads and the web server may all call
them; setting what is already shown changes nothing (a blinking LED keeps its rhythm).
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

from gpiozero import LED

from device.errors import DeviceClosedError, UnknownSeat, UnknownStatus
from device.factory import PinFactory, make_pin_factory
from device.pins import PinMap

__all__ = ["STATUSES", "Leds"]

STATUSES = ("off", "ready", "moving", "attention", "ok")
"""Names accepted by Leds.set_status."""
_STATUS_LED = {"ready": "led_ready", "moving": "led_moving", "attention": "led_attention"}


class Leds:
    """The status LEDs and per-seat LEDs of a PinMap; a context manager, close() is idempotent."""

    def __init__(
        self,
        pins: PinMap,
        *,
        pin_factory: PinFactory | None = None,
        blink_time: tuple[float, float] = (0.5, 0.5),
        ok_time: float = 0.3,
    ) -> None:
        self._own_factory = pin_factory is None
        self._factory = make_pin_factory() if pin_factory is None else pin_factory
        self._blink_time = blink_time
        self._ok_time = ok_time
        self._lock = threading.RLock()
        self._closed = False
        self._status = "off"
        self._turn: int | None = None
        self._leds: dict[str, Any] = {}
        self._seats: list[Any] = []
        try:
            for name, pin in pins.leds().items():
                self._leds[name] = LED(pin, pin_factory=self._factory)
            for pin in pins.seat_leds:
                self._seats.append(LED(pin, pin_factory=self._factory))
        except BaseException:
            self.close()
            raise

    @property
    def status(self) -> str:
        """The status shown: off, ready, moving or attention."""
        return self._status

    @property
    def turn(self) -> int | None:
        """The seat whose LED is lit (0-based), or None."""
        return self._turn

    def led(self, name: str) -> Any:
        """The gpiozero LED called ``name`` (``led_ready``, ...), or ``seat<N>``; for tests."""
        if name.startswith("seat") and name[4:].isdigit():
            return self._seats[int(name[4:])]
        return self._leds[name]

    def set_status(self, status: str) -> None:
        """Show ``status`` (see the module docstring); showing the current one again is a no-op."""
        if status not in STATUSES:
            raise UnknownStatus(f"unknown LED status {status!r}; allowed: {', '.join(STATUSES)}")
        with self._lock:
            self._check_open()
            if status == "ok":
                self._show("ready")
                self._flash()
            else:
                self._show(status)

    def set_turn(self, seat: int | None) -> None:
        """Light the LED of ``seat`` (0-based) alone; None or a seat without an LED lights none."""
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or seat < 0):
            raise UnknownSeat(f"seat {seat!r} is not a seat; seats are numbered from 0")
        with self._lock:
            self._check_open()
            if seat == self._turn:
                return
            for index, led in enumerate(self._seats):
                if index == seat:
                    led.on()
                else:
                    led.off()
            self._turn = seat

    def flash_ok(self) -> None:
        """Pulse the read OK LED once; a flash while one is shown starts it afresh."""
        with self._lock:
            self._check_open()
            self._flash()

    def close(self) -> None:
        """Turn every LED off and release its pin; calling it again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for led in (*self._leds.values(), *self._seats):
                # Released pins float, which leaves most LEDs dark, but not all drivers agree.
                led.off()
                led.close()
            if self._own_factory:
                self._factory.close()

    def __enter__(self) -> Leds:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise DeviceClosedError("the LEDs are closed")

    def _show(self, status: str) -> None:
        if status == self._status:
            return
        lit = _STATUS_LED.get(status)
        for name, led in self._leds.items():
            if name == "led_ok":
                continue
            if name != lit:
                led.off()
            elif name == "led_attention":
                on_time, off_time = self._blink_time
                led.blink(on_time=on_time, off_time=off_time, background=True)
            else:
                led.on()
        self._status = status

    def _flash(self) -> None:
        led = self._leds.get("led_ok")
        if led is not None:
            led.blink(on_time=self._ok_time, off_time=0, n=1, background=True)

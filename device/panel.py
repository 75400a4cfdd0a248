"""The buttons of the table, and the LEDs beside them.

Each button acts when it is released, so that holding a button can mean something else without
the short press firing first:

==========  ==================  =========================================================
button      short press         hold (``hold_time``, default 1 s)
==========  ==================  =========================================================
bank        ``bank``            ``bank`` (no hold action)
confirm     ``confirm``         ``new_game``, fired as soon as the hold time is reached
undo        ``undo``            ``redo``, fired as soon as the hold time is reached
keep        ``keep``            ``keep`` (no hold action)
==========  ==================  =========================================================

``new_game`` sits behind a hold of the confirm button because it ends the game on the table:
the table should start one at once only when the game is over, and otherwise ask for the hold
again (or a press of confirm) before it abandons a game.

Debounce: gpiozero's ``bounce_time`` filters edges where the pin driver supports it (lgpio);
on top of that, edges within ``bounce_time`` after a release are ignored, which is what makes a
chattering switch give one press with every driver, MockFactory included.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from functools import partial
from types import TracebackType
from typing import Any

from gpiozero import Button

from device.errors import DeviceClosedError, UnknownButton
from device.factory import PinFactory, make_pin_factory
from device.leds import Leds
from device.pins import PinMap

__all__ = ["EVENTS", "HOLD_EVENTS", "Panel"]

log = logging.getLogger(__name__)

HOLD_EVENTS = {"undo": "redo", "confirm": "new_game"}
"""Button -> event sent when the button is held rather than pressed."""
EVENTS = ("bank", "confirm", "undo", "redo", "keep", "new_game")
"""Every name the on_button callback can receive."""


class Panel:
    """The buttons of a PinMap, reporting events to ``on_button``, plus its LEDs as ``leds``.

    ``on_button`` runs on gpiozero's threads (or on the thread that drives a mock pin) and gets
    the event name; an exception it raises is logged, never allowed to kill a button thread.
    A context manager; close() is idempotent.
    """

    def __init__(
        self,
        pins: PinMap,
        *,
        pin_factory: PinFactory | None = None,
        bounce_time: float = 0.05,
        hold_time: float = 1.0,
        on_button: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if bounce_time < 0:
            raise ValueError(f"bounce_time must be 0 or more seconds, got {bounce_time!r}")
        if hold_time <= 0:
            raise ValueError(f"hold_time must be more than 0 seconds, got {hold_time!r}")
        self.pins = pins
        self.bounce_time = bounce_time
        self.hold_time = hold_time
        self._on_button = on_button
        self._clock = clock
        self._own_factory = pin_factory is None
        self._factory = make_pin_factory() if pin_factory is None else pin_factory
        self._lock = threading.Lock()
        self._closed = False
        self._buttons: dict[str, Any] = {}
        self._pressed_at: dict[str, float | None] = {}
        self._released_at: dict[str, float] = {}
        self._held: dict[str, bool] = {}
        self._leds: Leds | None = None
        try:
            for name, pin in pins.buttons().items():
                button = Button(
                    pin,
                    pull_up=True,
                    bounce_time=bounce_time or None,
                    hold_time=hold_time,
                    pin_factory=self._factory,
                )
                self._buttons[name] = button
                self._pressed_at[name] = None
                self._released_at[name] = -math.inf
                self._held[name] = False
                button.when_pressed = partial(self._pressed, name)
                button.when_released = partial(self._released, name)
                if name in HOLD_EVENTS:
                    button.when_held = partial(self._held_down, name)
            self._leds = Leds(pins, pin_factory=self._factory)
        except BaseException:
            self.close()
            raise

    @property
    def leds(self) -> Leds:
        """The LEDs of the same pin map, on the same pin factory."""
        assert self._leds is not None  # only None while __init__ fails
        return self._leds

    @property
    def factory(self) -> PinFactory:
        """The gpiozero pin factory the buttons and LEDs use."""
        return self._factory

    @property
    def closed(self) -> bool:
        """True once close() has been called."""
        return self._closed

    def button(self, name: str) -> Any:
        """The gpiozero Button called ``name`` (bank, confirm, undo or keep, when fitted)."""
        try:
            return self._buttons[name]
        except KeyError:
            raise UnknownButton(
                f"no button {name!r} on this table; fitted: {', '.join(self._buttons)}"
            ) from None

    def emit(self, event: str) -> None:
        """Send ``event`` to on_button as if pressed; for inputs that are not GPIO pins."""
        if event not in EVENTS:
            raise UnknownButton(f"unknown button event {event!r}; allowed: {', '.join(EVENTS)}")
        if self._closed:
            raise DeviceClosedError("the button panel is closed")
        self._dispatch(event)

    def close(self) -> None:
        """Release every button and LED pin; calling it again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for button in self._buttons.values():
            # Each gpiozero hold thread polls every 0.1 s and close() joins them one by one;
            # telling them all to stop first makes closing a panel take one poll, not four.
            stopping = getattr(getattr(button, "_hold_thread", None), "stopping", None)
            if stopping is not None:
                stopping.set()
        for button in self._buttons.values():
            button.close()
        if self._leds is not None:
            self._leds.close()
        if self._own_factory:
            self._factory.close()

    def __enter__(self) -> Panel:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _pressed(self, name: str) -> None:
        with self._lock:
            now = self._clock()
            if self._closed or self._pressed_at[name] is not None:
                return
            if now - self._released_at[name] < self.bounce_time:
                return  # the contacts still chatter after the last release
            self._pressed_at[name] = now
            self._held[name] = False

    def _held_down(self, name: str) -> None:
        with self._lock:
            if self._closed or self._pressed_at[name] is None or self._held[name]:
                return
            self._held[name] = True
        self._dispatch(HOLD_EVENTS[name])

    def _released(self, name: str) -> None:
        with self._lock:
            started = self._pressed_at[name]
            if self._closed or started is None:
                return
            now = self._clock()
            self._pressed_at[name] = None
            self._released_at[name] = now
            if self._held[name]:
                return  # the hold event has already been sent
            # gpiozero's hold timer runs on wall time; the clock decides when it has not fired yet.
            held = name in HOLD_EVENTS and now - started >= self.hold_time
            event = HOLD_EVENTS[name] if held else name
        self._dispatch(event)

    def _dispatch(self, event: str) -> None:
        try:
            self._on_button(event)
        except Exception:
            log.exception("the handler of button event %r failed", event)

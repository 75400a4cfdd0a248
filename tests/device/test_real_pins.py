"""Real GPIO on a Raspberry Pi (deselected by default; run with ``pytest -m hardware``)."""

from __future__ import annotations

import pytest

from device.factory import make_pin_factory
from device.panel import Panel
from device.pins import DEFAULT_PINS

pytestmark = pytest.mark.hardware


def test_the_default_panel_opens_on_lgpio_and_closes() -> None:
    factory = make_pin_factory("lgpio")
    events: list[str] = []
    with Panel(DEFAULT_PINS, pin_factory=factory, on_button=events.append) as panel:
        # Nothing is pressed on an idle table: every button reads released through its pull-up.
        assert not any(panel.button(name).is_pressed for name in DEFAULT_PINS.buttons())
        panel.leds.set_status("ready")
        assert panel.leds.led("led_ready").is_lit
    assert events == []
    factory.close()

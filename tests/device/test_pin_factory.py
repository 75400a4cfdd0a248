"""Choosing the pin factory: MockFactory off a Pi, the environment respected, clear errors."""

from __future__ import annotations

import logging
import sys

import pytest
from gpiozero.pins.mock import MockFactory

from device.errors import DeviceError, PinFactoryError
from device.factory import make_pin_factory

LGPIO_MISSING = (
    'pin factory "lgpio" needs the lgpio module, which is not installed: on Raspberry Pi OS run '
    '"sudo apt install python3-lgpio" and make the venv with --system-site-packages; '
    "off a Pi, use GPIOZERO_PIN_FACTORY=mock"
)


@pytest.fixture
def no_lgpio(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import lgpio`` fail, as on a laptop (even when the tests run on a Pi)."""
    monkeypatch.setitem(sys.modules, "lgpio", None)


@pytest.mark.parametrize("name", ["mock", "MOCK", " mock "])
def test_mock_by_name(name: str) -> None:
    made = make_pin_factory(name)
    assert isinstance(made, MockFactory)
    made.close()


def test_the_environment_chooses_when_no_name_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    made = make_pin_factory(None)
    assert isinstance(made, MockFactory)
    made.close()


@pytest.mark.usefixtures("no_lgpio")
def test_a_name_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "lgpio")
    assert isinstance(make_pin_factory("mock"), MockFactory)
    with pytest.raises(PinFactoryError) as caught:
        make_pin_factory(None)
    assert str(caught.value) == LGPIO_MISSING


@pytest.mark.usefixtures("no_lgpio")
def test_lgpio_asked_for_but_not_installed() -> None:
    with pytest.raises(PinFactoryError) as caught:
        make_pin_factory("lgpio")
    assert str(caught.value) == LGPIO_MISSING
    assert isinstance(caught.value, DeviceError)
    assert isinstance(caught.value, RuntimeError)


def test_an_unknown_name_lists_the_factories(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "gpio2000")
    with pytest.raises(PinFactoryError) as caught:
        make_pin_factory(None)
    assert str(caught.value) == (
        "unknown pin factory 'gpio2000' (from GPIOZERO_PIN_FACTORY); allowed: lgpio, mock, "
        "native, pigpio, rpigpio, or unset to choose automatically"
    )


def test_without_gpio_chips_the_automatic_choice_is_mock(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr("device.factory.glob.glob", lambda _pattern: [])
    with caplog.at_level(logging.INFO, logger="device.factory"):
        made = make_pin_factory()
    assert isinstance(made, MockFactory)
    assert "no GPIO chip on this machine: buttons and LEDs are simulated" in caplog.text


@pytest.mark.usefixtures("no_lgpio")
def test_a_gpio_chip_without_lgpio_falls_back_to_mock_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr("device.factory.glob.glob", lambda _pattern: ["/dev/gpiochip0"])
    with caplog.at_level(logging.WARNING, logger="device.factory"):
        made = make_pin_factory()
    assert isinstance(made, MockFactory)
    assert "GPIO chip found but not usable" in caplog.text
    assert "sudo apt install python3-lgpio" in caplog.text

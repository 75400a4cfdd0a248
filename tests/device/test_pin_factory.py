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


def _chosen_on_a_gpio_chip(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> str:
    """The automatic choice on a machine with a GPIO chip that lgpio cannot drive: simulated
    pins, and the warning it logged."""
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr("device.factory.glob.glob", lambda _pattern: ["/dev/gpiochip0"])
    with caplog.at_level(logging.WARNING, logger="device.factory"):
        made = make_pin_factory()
    assert isinstance(made, MockFactory)
    assert "GPIO chip found but not usable" in caplog.text
    return caplog.text


@pytest.mark.usefixtures("no_lgpio")
def test_a_gpio_chip_without_lgpio_falls_back_to_mock_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert "sudo apt install python3-lgpio" in _chosen_on_a_gpio_chip(monkeypatch, caplog)


@pytest.fixture
def lgpio_import_fails_in_read_only_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import lgpio`` as in a read-only working directory: it cannot make its FIFO there."""
    import builtins

    real_import = builtins.__import__

    def fake_import(name: str, *args: object, **kwargs: object) -> object:
        if name == "lgpio":
            raise FileNotFoundError(2, "No such file or directory", ".lgd-nfy0")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.delitem(sys.modules, "lgpio", raising=False)
    monkeypatch.setattr(builtins, "__import__", fake_import)
    monkeypatch.chdir("/")


@pytest.mark.usefixtures("lgpio_import_fails_in_read_only_cwd")
def test_lgpio_failing_to_import_in_a_read_only_folder_is_a_pin_factory_error() -> None:
    with pytest.raises(PinFactoryError) as caught:
        make_pin_factory("lgpio")
    assert str(caught.value) == (
        'pin factory "lgpio" cannot be loaded: importing lgpio failed ([Errno 2] No such file or'
        " directory: '.lgd-nfy0'); lgpio makes a file .lgd-nfy* in the working directory (/),"
        " so start pipcam in a folder this user can write (the service sets"
        " WorkingDirectory=/var/lib/pipcam)"
    )


@pytest.mark.usefixtures("lgpio_import_fails_in_read_only_cwd")
def test_lgpio_failing_to_import_falls_back_to_mock_when_chosen_automatically(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert ".lgd-nfy" in _chosen_on_a_gpio_chip(monkeypatch, caplog)

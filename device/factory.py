"""Choose the GPIO backend (gpiozero pin factory): real pins on a Pi, MockFactory anywhere else."""

from __future__ import annotations

import glob
import logging
import os
from importlib.metadata import entry_points
from typing import Any

from gpiozero.pins.mock import MockFactory

from device.errors import PinFactoryError

__all__ = ["ENV_VAR", "PinFactory", "make_pin_factory"]

log = logging.getLogger(__name__)

PinFactory = Any
"""A gpiozero pin factory (gpiozero is untyped)."""
ENV_VAR = "GPIOZERO_PIN_FACTORY"
"""gpiozero's own variable; the service sets it to ``lgpio``."""

_LGPIO_MISSING = (
    'pin factory "lgpio" needs the lgpio module, which is not installed: on Raspberry Pi OS run '
    '"sudo apt install python3-lgpio" and make the venv with --system-site-packages; '
    "off a Pi, use GPIOZERO_PIN_FACTORY=mock"
)


def make_pin_factory(name: str | None = None) -> PinFactory:
    """Make the pin factory ``name``, else ``$GPIOZERO_PIN_FACTORY``, else the best one available.

    Automatic choice: lgpio when it is installed and the machine has a GPIO chip, otherwise
    gpiozero's MockFactory (so the table runs on a laptop with simulated buttons and LEDs).
    A factory asked for by name is never silently replaced: failing to load it is an error.
    """
    chosen = name if name is not None else os.environ.get(ENV_VAR)
    if chosen is None or not chosen.strip():
        return _automatic()
    key = chosen.strip().lower()
    if key == "mock":
        return MockFactory()
    if key == "lgpio":
        return _lgpio()
    for entry in entry_points(group="gpiozero_pin_factories"):
        if entry.name == key:
            try:
                return entry.load()()
            except Exception as exc:
                raise PinFactoryError(f"pin factory {chosen!r} cannot be loaded: {exc}") from exc
    known = sorted({e.name for e in entry_points(group="gpiozero_pin_factories")} | {"mock"})
    raise PinFactoryError(
        f"unknown pin factory {chosen!r} (from {'the caller' if name is not None else ENV_VAR}); "
        f"allowed: {', '.join(known)}, or unset to choose automatically"
    )


def _lgpio() -> PinFactory:
    try:
        import lgpio  # noqa: F401  # only to tell "not installed" from "cannot open the chip"
    except ImportError as exc:
        raise PinFactoryError(_LGPIO_MISSING) from exc
    except Exception as exc:
        # Importing lgpio makes a notification FIFO (.lgd-nfyN) in the working directory, so a
        # read-only one (systemd's / under ProtectSystem=strict) fails the import itself
        # (gpiozero#1106, joan2937/lg#22).
        raise PinFactoryError(
            f'pin factory "lgpio" cannot be loaded: importing lgpio failed ({exc}); lgpio makes'
            f" a file .lgd-nfy* in the working directory ({_cwd()}), so start pipcam in a"
            " folder this user can write (the service sets WorkingDirectory=/var/lib/pipcam)"
        ) from exc
    try:
        from gpiozero.pins.lgpio import LGPIOFactory

        return LGPIOFactory()
    except Exception as exc:
        raise PinFactoryError(
            f'pin factory "lgpio" cannot open the GPIO chip: {exc}; is this a Raspberry Pi, '
            "and is the user in the gpio group?"
        ) from exc


def _cwd() -> str:
    """The working directory, or what stands for it when it is gone."""
    try:
        return os.getcwd()
    except OSError:
        return "a folder that no longer exists"


def _automatic() -> PinFactory:
    if glob.glob("/dev/gpiochip*"):
        try:
            return _lgpio()
        except PinFactoryError as exc:
            log.warning("GPIO chip found but not usable (%s); buttons and LEDs are simulated", exc)
    else:
        log.info("no GPIO chip on this machine: buttons and LEDs are simulated (MockFactory)")
    return MockFactory()

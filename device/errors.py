"""The one error tree of ``device``: every leaf is also a builtin exception."""

from __future__ import annotations

__all__ = [
    "DeviceClosedError",
    "DeviceError",
    "PinConflict",
    "PinFactoryError",
    "PinMapError",
    "UnknownButton",
    "UnknownSeat",
    "UnknownStatus",
]


class DeviceError(Exception):
    """Root of every error raised by the buttons, LEDs and pin factories of the table."""


class PinMapError(DeviceError, ValueError):
    """A ``[pins]`` section or a PinMap that names no known function or no usable GPIO pin."""


class PinConflict(PinMapError):
    """Two functions of the pin map are wired to the same GPIO pin."""


class PinFactoryError(DeviceError, RuntimeError):
    """The requested GPIO backend (pin factory) cannot be loaded on this machine."""


class UnknownButton(DeviceError, LookupError):
    """A button or button event name that the panel does not have."""


class UnknownStatus(DeviceError, ValueError):
    """An LED status name that the table does not show."""


class UnknownSeat(DeviceError, ValueError):
    """A seat number that is not a seat (negative, or not an integer)."""


class DeviceClosedError(DeviceError, RuntimeError):
    """A panel or LED set used after close()."""

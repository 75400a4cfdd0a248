"""sRGB encoding: a camera's 8-bit levels to the linear light that made them, and back.

A camera's picture is encoded (about the 1/2.4 power of the light), so doubling the light does
not double a level, and a dark level moves more, in proportion, than a bright one. Whatever
scales light (exposure, a lamp, a flicker band) is applied in linear light.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["LINEAR", "decode", "encode", "row_gains", "to_levels", "to_linear"]

Values = TypeVar("Values", float, npt.NDArray[np.float64], npt.NDArray[np.float32])


def decode(encoded: Values) -> Values:
    """sRGB-encoded values (0..1) to linear light (0..1)."""
    x = np.clip(encoded, 0.0, 1.0)
    linear = np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)
    return linear if isinstance(encoded, np.ndarray) else float(linear)


def encode(linear: Values) -> Values:
    """Linear light (0..1; beyond it clips) to sRGB-encoded values (0..1)."""
    x = np.clip(linear, 0.0, 1.0)
    encoded = np.where(x <= 0.0031308, 12.92 * x, 1.055 * x ** (1 / 2.4) - 0.055)
    return encoded if isinstance(linear, np.ndarray) else float(encoded)


LINEAR: npt.NDArray[np.float32] = decode(np.arange(256, dtype=np.float64) / 255.0).astype(
    np.float32
)
"""The linear light (0..1) of each 8-bit level."""

_STEPS = 4096
# Back to levels through a table of 4096 steps: a power of every pixel of a 12 MP frame is slow,
# and 4096 steps are finer than a level even near black.
_LEVELS = np.round(255.0 * encode(np.arange(_STEPS, dtype=np.float64) / (_STEPS - 1))).astype(
    np.uint8
)


def to_linear(frame: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """8-bit levels to linear light (0..1), the same shape."""
    return LINEAR[frame]


def to_levels(linear: npt.NDArray[np.floating]) -> npt.NDArray[np.uint8]:
    """Linear light to 8-bit levels, clipped as a sensor clips."""
    steps = np.clip(np.rint(np.asarray(linear, np.float32) * (_STEPS - 1)), 0, _STEPS - 1)
    return _LEVELS[steps.astype(np.intp)]


def row_gains(
    now: npt.NDArray[np.float32], before: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """How many times brighter each row of ``now`` is than the same row of ``before`` (both in
    linear light, one channel): the median over the row, which a die or a hand covering part of
    it does not move. A flickering lamp seen by a rolling shutter lights whole rows alike."""
    # A level or two of noise near black would make any ratio.
    floor = LINEAR[8]
    ratio = np.median((now + floor) / (before + floor), axis=1, keepdims=True)
    return np.asarray(ratio, np.float32)

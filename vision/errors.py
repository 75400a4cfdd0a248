"""The one error tree of ``vision``: every leaf is also a builtin exception."""

from __future__ import annotations

__all__ = [
    "BadCameraSpec",
    "CalibrationError",
    "CameraUnavailable",
    "LabelsError",
    "ModelLoadError",
    "SourceClosed",
    "SourceExhausted",
    "TuneError",
    "UnreadableImage",
    "VisionError",
]


class VisionError(Exception):
    """Root of every error raised by the camera, locating and reading code."""


class CameraUnavailable(VisionError, RuntimeError):
    """The camera cannot be opened or stopped giving frames (missing driver, unplugged, busy)."""


class ModelLoadError(VisionError, RuntimeError):
    """The face model file is missing, damaged or not the model the reader expects."""


class UnreadableImage(VisionError, ValueError):
    """An image file that does not exist or that OpenCV cannot decode."""


class LabelsError(VisionError, ValueError):
    """A ``labels.jsonl`` line that is not a record of the shared data format."""


class BadCameraSpec(VisionError, ValueError):
    """A ``--camera`` spec that cannot be used: no known kind of camera, or a bad number or size."""


class SourceExhausted(VisionError, EOFError):
    """A finite source (a folder of images, a list of frames) has given all its frames."""


class SourceClosed(VisionError, RuntimeError):
    """A frame was asked of a source after it was closed."""


class CalibrationError(VisionError, ValueError):
    """A calibration file that cannot be read or written, or a tray that cannot be calibrated."""


class TuneError(VisionError, ValueError):
    """The model cannot be tuned: not a face model this code wrote, or no photos to tune on."""

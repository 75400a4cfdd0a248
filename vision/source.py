"""Where frames come from: image files, folders, USB cameras, memory, and the ``--camera`` spec.

Every source hands out BGR ``uint8`` frames (OpenCV's order), is a context manager, and has an
idempotent ``close()``. The Pi camera lives in :mod:`vision.picam` so that nothing here needs a Pi.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self

import cv2
import numpy as np
import numpy.typing as npt

from vision.errors import (
    BadCameraSpec,
    CameraUnavailable,
    SourceClosed,
    SourceExhausted,
    UnreadableImage,
)

if TYPE_CHECKING:
    from vision.picam import CameraSettings

__all__ = [
    "CAMERA_ENV",
    "IMAGE_SUFFIXES",
    "BaseSource",
    "CameraSpec",
    "FileSource",
    "FolderSource",
    "Frame",
    "FrameSource",
    "StaticSource",
    "UsbSource",
    "VideoCaptureLike",
    "as_bgr",
    "make_source",
    "parse_camera_spec",
    "read_image",
]

log = logging.getLogger("vision.source")

Frame = npt.NDArray[np.uint8]
"""An image as OpenCV holds it: ``uint8`` HxWx3 in BGR order."""

CAMERA_ENV = "PIPCAM_CAMERA"
"""Environment variable holding the camera spec used when no ``--camera`` is given."""

DEFAULT_CAMERA = "picamera"

IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"})
"""File name endings that :class:`FolderSource` treats as images (case-insensitive)."""


class FrameSource(Protocol):
    """Anything that hands out frames: a context manager with ``capture()`` and ``close()``."""

    def __enter__(self) -> Self:
        """Return the source itself, ready to capture."""
        ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the source."""
        ...

    def capture(self) -> Frame:
        """Return the next frame (BGR, uint8, HxWx3)."""
        ...

    def close(self) -> None:
        """Release the device; calling it again does nothing."""
        ...


def as_bgr(image: npt.NDArray[np.generic]) -> Frame:
    """Return ``image`` as a contiguous BGR uint8 HxWx3 array (grey and BGRA are converted)."""
    array = np.asarray(image)
    if array.dtype != np.uint8:
        raise UnreadableImage(f"expected 8-bit pixels, got {array.dtype}")
    if array.ndim == 2:
        return np.asarray(cv2.cvtColor(array, cv2.COLOR_GRAY2BGR), dtype=np.uint8)
    if array.ndim == 3 and array.shape[2] == 4:
        return np.asarray(cv2.cvtColor(array, cv2.COLOR_BGRA2BGR), dtype=np.uint8)
    if array.ndim == 3 and array.shape[2] == 3:
        return np.ascontiguousarray(array)
    raise UnreadableImage(f"expected an HxWx3 colour image, got shape {array.shape}")


# What to do about a file OpenCV cannot decode: phones save HEIC by default (iPhones), which
# OpenCV's wheels do not read; anything else is a damaged file or not a photo at all.
_UNDECODABLE_HINT = "; give a whole JPEG, PNG, WebP, TIFF or BMP file"
_HEIC_HINT = (
    "; save HEIC photos as JPEG first (on an iPhone: Settings > Camera > Formats > Most Compatible)"
)
_UNDECODABLE_HINTS = dict.fromkeys((".heic", ".heif"), _HEIC_HINT)


def read_image(path: str | os.PathLike[str]) -> Frame:
    """Read an image file as a BGR frame, turned upright by its EXIF orientation tag.

    OpenCV 4's ``IMREAD_COLOR`` applies the EXIF orientation of JPEGs itself (phone photos are
    stored sideways with a tag that says so); tests/vision/test_source.py checks that it does.
    """
    file = Path(path)
    if not file.exists():
        raise UnreadableImage(f"cannot read image {str(file)!r}: no such file")
    if file.is_dir():
        # A user who names the folder of a recorded table means its images: say how to give them.
        raise UnreadableImage(
            f"cannot read image {str(file)!r}: it is a folder; give the images in it,"
            f" as {str(file / '*')!r}"
        )
    # imdecode on the bytes, not imread on the name: imread cannot open non-ASCII paths on Windows.
    try:
        data = np.fromfile(file, dtype=np.uint8)
    except OSError as err:
        raise UnreadableImage(f"cannot read image {str(file)!r}: {err.strerror}") from err
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise UnreadableImage(
            f"cannot read image {str(file)!r}: not an image format OpenCV can decode"
            f"{_UNDECODABLE_HINTS.get(file.suffix.lower(), _UNDECODABLE_HINT)}"
        )
    return as_bgr(image)


class BaseSource:
    """Shared context-manager and close bookkeeping of the sources."""

    _closed = False

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called."""
        return self._closed

    def close(self) -> None:
        """Release the source; calling it again does nothing."""
        if not self._closed:
            self._closed = True
            self._release()

    def _release(self) -> None:
        """Free whatever the source holds (called once)."""

    def _check_open(self) -> None:
        if self._closed:
            raise SourceClosed(f"{self!r} is closed")


class FileSource(BaseSource):
    """One image file, served again on every capture (how single photos are read)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Read the image now, so a bad file fails at once with :class:`UnreadableImage`."""
        self.path = Path(path)
        self._frame = read_image(self.path)

    def __repr__(self) -> str:
        return f"FileSource({str(self.path)!r})"

    def capture(self) -> Frame:
        """Return a copy of the image."""
        self._check_open()
        return self._frame.copy()


class _SequenceSource(BaseSource):
    """Frames served in order, then either again from the start or :class:`SourceExhausted`."""

    def __init__(self, count: int, *, loop: bool) -> None:
        self.loop = loop
        self._count = count
        self._next = 0

    @property
    def position(self) -> int:
        """Index of the frame the next capture returns."""
        return self._next

    def _advance(self) -> int:
        self._check_open()
        if self._next >= self._count:
            if not self.loop:
                raise SourceExhausted(f"{self!r}: all {self._count} frames were read")
            self._next = 0
        index = self._next
        self._next += 1
        return index


class FolderSource(_SequenceSource):
    """The images of a folder in file-name order: a recorded table played back."""

    def __init__(self, path: str | os.PathLike[str], *, loop: bool = False) -> None:
        """List the folder's images; raise :class:`CameraUnavailable` if it holds none."""
        self.path = Path(path)
        if not self.path.is_dir():
            raise CameraUnavailable(f"cannot open folder {str(self.path)!r}: no such folder")
        self.files = tuple(
            sorted(
                (f for f in self.path.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES),
                key=lambda f: f.name,
            )
        )
        if not self.files:
            raise CameraUnavailable(f"folder {str(self.path)!r} holds no images")
        super().__init__(len(self.files), loop=loop)
        self.last_file: Path | None = None
        self.skipped: set[Path] = set()

    def __repr__(self) -> str:
        return f"FolderSource({str(self.path)!r})"

    def capture(self) -> Frame:
        """Return the next image that can be read; at the end start again (``loop=True``) or
        raise. An image that cannot be read is skipped with a warning (once per file): one bad
        file must not stop a recorded table, since reopening the folder would meet it again."""
        for _ in range(len(self.files)):
            file = self.files[self._advance()]
            try:
                frame = read_image(file)
            except UnreadableImage as err:
                if file not in self.skipped:
                    self.skipped.add(file)
                    log.warning("%s; skipped", err)
                continue
            self.last_file = file
            return frame
        raise UnreadableImage(
            f"none of the {len(self.files)} images of folder {str(self.path)!r} can be read"
        )


class StaticSource(_SequenceSource):
    """Frames held in memory, served in order (tests, replays)."""

    def __init__(self, frames: Sequence[Frame], *, loop: bool = False) -> None:
        """Keep the frames; raise ``ValueError`` if there are none."""
        if not frames:
            raise ValueError("StaticSource needs at least one frame")
        self._frames = tuple(as_bgr(f) for f in frames)
        super().__init__(len(self._frames), loop=loop)

    def __repr__(self) -> str:
        return f"StaticSource({len(self._frames)} frames)"

    def capture(self) -> Frame:
        """Return a copy of the next frame; at the end start again (``loop=True``) or raise."""
        return self._frames[self._advance()].copy()


class VideoCaptureLike(Protocol):
    """The part of ``cv2.VideoCapture`` that :class:`UsbSource` uses."""

    def isOpened(self) -> bool:
        """Return True if the device was opened."""
        ...

    def read(self) -> tuple[bool, Any]:
        """Grab and decode the next frame."""
        ...

    def set(self, prop_id: int, value: float) -> bool:
        """Set a capture property."""
        ...

    def get(self, prop_id: int) -> float:
        """Read a capture property."""
        ...

    def release(self) -> None:
        """Close the device."""
        ...


class UsbSource(BaseSource):
    """A USB (UVC) camera through OpenCV's VideoCapture."""

    def __init__(
        self,
        index: int = 0,
        *,
        size: tuple[int, int] | None = None,
        open_capture: Callable[[int], VideoCaptureLike] | None = None,
    ) -> None:
        """Open camera ``index`` (``/dev/video<index>``), optionally asking for ``size`` (w, h)."""
        self.index = index
        # cv2.VideoCapture is the real device; tests pass a fake with the same methods.
        self._capture: VideoCaptureLike = (
            _open_quietly(index) if open_capture is None else open_capture(index)
        )
        if not self._capture.isOpened():
            self._capture.release()
            self._closed = True
            raise CameraUnavailable(
                f"USB camera {index} could not be opened: is it plugged in and not used by another"
                f" program? (try another number: --camera usb:N)"
            )
        if size is not None:
            self._capture.set(cv2.CAP_PROP_FRAME_WIDTH, float(size[0]))
            self._capture.set(cv2.CAP_PROP_FRAME_HEIGHT, float(size[1]))
            # A webcam takes the nearest size it has without a word: say so, once, at opening.
            got = (
                int(self._capture.get(cv2.CAP_PROP_FRAME_WIDTH)),
                int(self._capture.get(cv2.CAP_PROP_FRAME_HEIGHT)),
            )
            if got != tuple(size):
                log.warning(
                    "USB camera %d gives %dx%d frames, not the %dx%d asked for (it has no such"
                    " size; v4l2-ctl --list-formats-ext lists the ones it has)",
                    index,
                    *got,
                    *size,
                )

    def __repr__(self) -> str:
        return f"UsbSource({self.index})"

    def capture(self) -> Frame:
        """Return the camera's next frame; raise :class:`CameraUnavailable` if it gives none."""
        self._check_open()
        ok, frame = self._capture.read()
        if not ok or frame is None:
            raise CameraUnavailable(f"USB camera {self.index} gave no frame (was it unplugged?)")
        return as_bgr(frame)

    def _release(self) -> None:
        self._capture.release()


def _open_quietly(index: int) -> VideoCaptureLike:
    """``cv2.VideoCapture(index)`` without OpenCV's own warnings for a device that is missing.

    Those warnings (one per backend tried) go to stderr on every retry of the run loop, filling
    the journal while the camera is unplugged; the error raised for a closed device says more.
    """
    previous = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
    try:
        return cv2.VideoCapture(index)
    finally:
        cv2.utils.logging.setLogLevel(previous)


SPECS_HELP = (
    "picamera[:N][:WxH], usb[:N][:WxH], file:PATH, folder:PATH or none"
    " (for example picamera:2028x1520 or usb:1:1280x960)"
)
"""The spec forms, for error messages."""

_SIZE = re.compile(r"(\d+)[xX](\d+)")


@dataclass(frozen=True)
class CameraSpec:
    """A parsed ``--camera`` spec: which camera, which number, which file, which frame size."""

    kind: Literal["picamera", "usb", "file", "folder", "none"]
    number: int = 0
    """The Pi camera's (``Picamera2(N)``, the port on a Pi 5) or the USB camera's (/dev/videoN)."""
    path: str = ""
    size: tuple[int, int] | None = None
    """The frame size asked for, (width, height); ``None`` leaves it to the camera."""


def parse_camera_spec(spec: str) -> CameraSpec:
    """Parse a spec (see ``SPECS_HELP``); :class:`BadCameraSpec` says what is wrong with it."""
    kind, _, arg = spec.strip().partition(":")
    kind = kind.lower()
    if kind == "none" and not arg:
        return CameraSpec("none")
    if kind in ("file", "folder") and arg:
        return CameraSpec("file" if kind == "file" else "folder", path=arg)
    if kind not in ("picamera", "usb"):
        raise BadCameraSpec(f"unknown camera spec {spec!r}: use {SPECS_HELP}")
    number: int | None = None
    size: tuple[int, int] | None = None
    for part in arg.split(":") if arg else []:
        match = _SIZE.fullmatch(part.strip())
        if match and size is None:
            size = (int(match[1]), int(match[2]))
        elif part.strip().isdigit() and number is None and size is None:
            number = int(part)
        else:
            raise BadCameraSpec(
                f"bad camera spec {spec!r}: after {kind} come a camera number N and a frame size"
                f" WxH, each optional, in that order ({kind}:1:1280x960); {part!r} is neither"
            )
    if size is not None and min(size) < 16:
        raise BadCameraSpec(
            f"bad camera spec {spec!r}: a frame of {size[0]}x{size[1]} is too small to read dice"
            f" in; ask for at least 16x16 (the Pi camera's binned mode is a good start)"
        )
    return CameraSpec("picamera" if kind == "picamera" else "usb", number or 0, size=size)


def make_source(
    spec: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    size: tuple[int, int] | None = None,
    settings: CameraSettings | None = None,
) -> FrameSource | None:
    """Open the camera a spec names; ``None`` means ``$PIPCAM_CAMERA``, else ``picamera``.

    Specs: see ``SPECS_HELP``; ``none`` (no camera: the rolls are typed) returns ``None``.
    ``size`` is the frame size of a camera whose spec names none (a calibration's), and
    ``settings`` the exposure and white balance a Pi camera is locked to; image files ignore both.
    """
    if spec is None:
        spec = (os.environ if env is None else env).get(CAMERA_ENV) or DEFAULT_CAMERA
    parsed = parse_camera_spec(spec)
    size = parsed.size or size
    if parsed.kind == "none":
        return None
    if parsed.kind == "picamera":
        # Imported here: vision.picam is cheap, but keeping the Pi camera out of this module's
        # imports keeps source.py free of any Pi concern.
        from vision.picam import PiCameraSource

        return PiCameraSource(size=size, settings=settings, camera_num=parsed.number)
    if parsed.kind == "usb":
        return UsbSource(parsed.number, size=size)
    if parsed.kind == "file":
        return FileSource(parsed.path)
    return FolderSource(parsed.path)

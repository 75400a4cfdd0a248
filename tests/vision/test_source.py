"""Frame sources: files (with EXIF orientation), folders, memory, USB against a fake, specs."""

from __future__ import annotations

import logging
import struct
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from vision.errors import (
    BadCameraSpec,
    CameraUnavailable,
    SourceClosed,
    SourceExhausted,
    UnreadableImage,
)
from vision.source import (
    CameraSpec,
    FileSource,
    FolderSource,
    StaticSource,
    UsbSource,
    make_source,
    parse_camera_spec,
    read_image,
)

RED = (0, 0, 255)
BLUE = (255, 0, 0)


def _exif_app1(orientation: int) -> bytes:
    """An APP1 Exif segment holding only the orientation tag (little-endian TIFF)."""
    ifd = struct.pack("<H", 1) + struct.pack("<HHIHH", 0x0112, 3, 1, orientation, 0)
    tiff = b"II*\x00" + struct.pack("<I", 8) + ifd + struct.pack("<I", 0)
    payload = b"Exif\x00\x00" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload


def _two_colour_image() -> npt.NDArray[np.uint8]:
    """A 40x20 (w x h) image: left half red, right half blue."""
    image = np.zeros((20, 40, 3), np.uint8)
    image[:, :20] = RED
    image[:, 20:] = BLUE
    return image


def _jpeg_with_orientation(path: Path, orientation: int) -> None:
    ok, encoded = cv2.imencode(".jpg", _two_colour_image(), [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    data = encoded.tobytes()
    assert data[:2] == b"\xff\xd8"
    path.write_bytes(data[:2] + _exif_app1(orientation) + data[2:])


def _is(pixel: npt.NDArray[np.uint8], colour: tuple[int, int, int]) -> bool:
    return bool(np.all(np.abs(pixel.astype(int) - np.array(colour)) < 40))


def test_jpeg_without_exif_reads_as_stored(tmp_path: Path) -> None:
    path = tmp_path / "plain.jpg"
    _jpeg_with_orientation(path, 1)
    frame = read_image(path)
    assert frame.shape == (20, 40, 3)
    assert _is(frame[10, 2], RED)
    assert _is(frame[10, 37], BLUE)


def test_exif_orientation_6_is_turned_upright(tmp_path: Path) -> None:
    # Orientation 6: the stored picture must be turned 90 degrees clockwise to be upright, so
    # its left (red) half ends up on top.
    path = tmp_path / "rotated.jpg"
    _jpeg_with_orientation(path, 6)
    frame = FileSource(path).capture()
    assert frame.shape == (40, 20, 3)
    assert _is(frame[2, 10], RED)
    assert _is(frame[37, 10], BLUE)


def test_exif_orientation_3_is_turned_half_round(tmp_path: Path) -> None:
    path = tmp_path / "upside_down.jpg"
    _jpeg_with_orientation(path, 3)
    frame = read_image(path)
    assert frame.shape == (20, 40, 3)
    assert _is(frame[10, 2], BLUE)
    assert _is(frame[10, 37], RED)


def test_missing_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "nope.jpg"
    with pytest.raises(UnreadableImage) as err:
        read_image(path)
    assert str(err.value) == f"cannot read image {str(path)!r}: no such file"


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("text.jpg", "give a whole JPEG, PNG, WebP, TIFF or BMP file"),
        ("empty.png", "give a whole JPEG, PNG, WebP, TIFF or BMP file"),
        ("IMG_0001.HEIC", "save HEIC photos as JPEG first"),
        ("photo.heif", "save HEIC photos as JPEG first"),
    ],
)
def test_undecodable_file_is_named_with_what_to_do(tmp_path: Path, name: str, hint: str) -> None:
    path = tmp_path / name
    path.write_text("" if name.startswith("empty") else "not a picture")
    with pytest.raises(UnreadableImage) as err:
        FileSource(path)
    assert str(err.value).startswith(
        f"cannot read image {str(path)!r}: not an image format OpenCV can decode; {hint}"
    )
    assert isinstance(err.value, ValueError)


def test_folder_given_as_an_image_says_to_give_its_images(tmp_path: Path) -> None:
    with pytest.raises(UnreadableImage) as err:
        read_image(tmp_path)
    assert str(err.value) == (
        f"cannot read image {str(tmp_path)!r}: it is a folder;"
        f" give the images in it, as {str(tmp_path / '*')!r}"
    )


def test_grey_png_becomes_bgr(tmp_path: Path) -> None:
    path = tmp_path / "grey.png"
    cv2.imwrite(str(path), np.full((5, 7), 99, np.uint8))
    frame = read_image(path)
    assert frame.shape == (5, 7, 3)
    assert frame.dtype == np.uint8
    assert int(frame[0, 0, 1]) == 99


def test_file_source_serves_copies_and_closes_once(tmp_path: Path) -> None:
    path = tmp_path / "a.png"
    cv2.imwrite(str(path), _two_colour_image())
    with FileSource(path) as source:
        first = source.capture()
        first[:] = 0
        assert _is(source.capture()[10, 2], RED)
    source.close()
    assert source.closed
    with pytest.raises(SourceClosed):
        source.capture()


def _folder(tmp_path: Path) -> Path:
    for name, value in (("b.png", 20), ("a.png", 10), ("c.jpg", 30)):
        cv2.imwrite(str(tmp_path / name), np.full((4, 4, 3), value, np.uint8))
    (tmp_path / "notes.txt").write_text("not an image")
    return tmp_path


def test_folder_source_plays_images_in_name_order_then_ends(tmp_path: Path) -> None:
    source = FolderSource(_folder(tmp_path))
    seen = [int(source.capture()[0, 0, 0]) for _ in range(3)]
    assert seen == [10, 20, 30]
    assert source.last_file == tmp_path / "c.jpg"
    with pytest.raises(SourceExhausted) as err:
        source.capture()
    assert str(err.value) == f"FolderSource({str(tmp_path)!r}): all 3 frames were read"


def test_folder_source_loops_when_asked(tmp_path: Path) -> None:
    source = FolderSource(_folder(tmp_path), loop=True)
    seen = [int(source.capture()[0, 0, 0]) for _ in range(5)]
    assert seen == [10, 20, 30, 10, 20]


def test_folder_source_skips_an_unreadable_image_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _folder(tmp_path)
    (folder / "b2.jpg").write_text("a damaged photo")
    source = FolderSource(folder, loop=True)
    with caplog.at_level(logging.WARNING, logger="vision.source"):
        seen = [int(source.capture()[0, 0, 0]) for _ in range(6)]
    assert seen == [10, 20, 30, 10, 20, 30]  # b2.jpg never served, the order kept
    assert source.skipped == {folder / "b2.jpg"}
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [
        f"cannot read image {str(folder / 'b2.jpg')!r}: not an image format OpenCV can decode;"
        " give a whole JPEG, PNG, WebP, TIFF or BMP file; skipped"
    ]


def test_folder_source_ends_after_a_last_unreadable_image(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "z.png").write_bytes(b"")
    source = FolderSource(folder)
    assert [int(source.capture()[0, 0, 0]) for _ in range(3)] == [10, 20, 30]
    with pytest.raises(SourceExhausted):
        source.capture()


def test_folder_of_unreadable_images_is_refused_when_read(tmp_path: Path) -> None:
    for name in ("a.jpg", "b.png"):
        (tmp_path / name).write_text("not a picture")
    source = FolderSource(tmp_path, loop=True)
    with pytest.raises(UnreadableImage) as err:
        source.capture()
    assert str(err.value) == f"none of the 2 images of folder {str(tmp_path)!r} can be read"


def test_folder_without_images_is_refused(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("x")
    with pytest.raises(CameraUnavailable) as err:
        FolderSource(tmp_path)
    assert str(err.value) == f"folder {str(tmp_path)!r} holds no images"


def test_static_source_serves_in_order_and_ends() -> None:
    frames = [np.full((2, 2, 3), v, np.uint8) for v in (1, 2)]
    source = StaticSource(frames)
    assert [int(source.capture()[0, 0, 0]) for _ in range(2)] == [1, 2]
    with pytest.raises(SourceExhausted):
        source.capture()


class FakeVideoCapture:
    """Stands in for cv2.VideoCapture: serves queued frames, records what was asked."""

    def __init__(self, index: int, *, opened: bool = True, frames: list[Any] | None = None):
        self.index = index
        self.opened = opened
        self.frames = list(frames or [])
        self.props: dict[int, float] = {}
        self.releases = 0
        self.sizes: list[tuple[int, int]] | None = None  # None: takes any size asked

    def isOpened(self) -> bool:  # noqa: N802 - OpenCV's name
        return self.opened

    def read(self) -> tuple[bool, Any]:
        if not self.frames:
            return False, None
        return True, self.frames.pop(0)

    def set(self, prop_id: int, value: float) -> bool:
        if self.sizes is None or prop_id not in (
            cv2.CAP_PROP_FRAME_WIDTH,
            cv2.CAP_PROP_FRAME_HEIGHT,
        ):
            self.props[prop_id] = value
            return True
        # A webcam with a few sizes: the nearest one in that dimension, as V4L2 drivers do.
        axis = 0 if prop_id == cv2.CAP_PROP_FRAME_WIDTH else 1
        self.props[prop_id] = float(
            min((s[axis] for s in self.sizes), key=lambda v: abs(v - value))
        )
        return True

    def get(self, prop_id: int) -> float:
        return self.props.get(prop_id, 0.0)

    def release(self) -> None:
        self.releases += 1


def test_usb_source_reads_frames_and_releases_once() -> None:
    colour = np.full((3, 4, 3), (1, 2, 3), np.uint8)
    grey = np.full((3, 4), 7, np.uint8)
    fake = FakeVideoCapture(2, frames=[colour, grey])
    with UsbSource(2, size=(640, 480), open_capture=lambda _index: fake) as source:
        assert source.capture()[0, 0].tolist() == [1, 2, 3]
        assert source.capture().shape == (3, 4, 3)
        with pytest.raises(CameraUnavailable) as err:
            source.capture()
        assert str(err.value) == "USB camera 2 gave no frame (was it unplugged?)"
    source.close()
    assert fake.releases == 1
    assert fake.props == {cv2.CAP_PROP_FRAME_WIDTH: 640.0, cv2.CAP_PROP_FRAME_HEIGHT: 480.0}


def test_usb_camera_that_does_not_open_is_reported() -> None:
    fake = FakeVideoCapture(5, opened=False)
    with pytest.raises(CameraUnavailable) as err:
        UsbSource(5, open_capture=lambda _index: fake)
    assert str(err.value) == (
        "USB camera 5 could not be opened: is it plugged in and not used by another program?"
        " (try another number: --camera usb:N)"
    )
    assert fake.releases == 1


def test_missing_usb_camera_opens_quietly_with_the_real_opencv(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # No /dev/video99 here: OpenCV's backends would each warn on stderr, on every retry of
    # the run loop; only our error remains, and OpenCV's log level is as it was.
    level = cv2.utils.logging.getLogLevel()
    with pytest.raises(CameraUnavailable, match="USB camera 99 could not be opened"):
        UsbSource(99)
    assert capfd.readouterr().err == ""
    assert cv2.utils.logging.getLogLevel() == level


def test_make_source_opens_each_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    image = tmp_path / "x.png"
    cv2.imwrite(str(image), np.zeros((3, 3, 3), np.uint8))
    opened: list[int] = []

    def fake_capture(index: int) -> FakeVideoCapture:
        opened.append(index)
        return FakeVideoCapture(index)

    monkeypatch.setattr("vision.source.cv2.VideoCapture", fake_capture)
    assert isinstance(make_source(f"file:{image}"), FileSource)
    assert isinstance(make_source(f"folder:{tmp_path}"), FolderSource)
    assert isinstance(make_source("usb:3"), UsbSource)
    assert opened == [3]
    assert make_source("none") is None
    assert isinstance(make_source(None, env={"PIPCAM_CAMERA": f"file:{image}"}), FileSource)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("picamera", CameraSpec("picamera")),
        (" PiCamera ", CameraSpec("picamera")),
        ("picamera:1", CameraSpec("picamera", 1)),
        ("picamera:2028x1520", CameraSpec("picamera", size=(2028, 1520))),
        ("picamera:1:4608X2592", CameraSpec("picamera", 1, size=(4608, 2592))),
        ("usb", CameraSpec("usb")),
        ("usb:", CameraSpec("usb")),
        ("usb:2", CameraSpec("usb", 2)),
        ("usb:0:1280x960", CameraSpec("usb", size=(1280, 960))),
        ("file:/tmp/a:b.jpg", CameraSpec("file", path="/tmp/a:b.jpg")),
        ("folder:table", CameraSpec("folder", path="table")),
        ("none", CameraSpec("none")),
    ],
)
def test_specs_parse(spec: str, expected: CameraSpec) -> None:
    assert parse_camera_spec(spec) == expected


ALLOWED = (
    "use picamera[:N][:WxH], usb[:N][:WxH], file:PATH, folder:PATH or none"
    " (for example picamera:2028x1520 or usb:1:1280x960)"
)


def _after(spec: str, kind: str, part: str) -> str:
    return (
        f"bad camera spec {spec!r}: after {kind} come a camera number N and a frame size WxH,"
        f" each optional, in that order ({kind}:1:1280x960); {part!r} is neither"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("webcam", f"unknown camera spec 'webcam': {ALLOWED}"),
        ("file:", f"unknown camera spec 'file:': {ALLOWED}"),
        ("none:1", f"unknown camera spec 'none:1': {ALLOWED}"),
        ("usb:front", _after("usb:front", "usb", "front")),
        ("usb:-1", _after("usb:-1", "usb", "-1")),
        ("picamera:1280*960", _after("picamera:1280*960", "picamera", "1280*960")),
        ("picamera:1280x960:1", _after("picamera:1280x960:1", "picamera", "1")),
        ("usb:1:2", _after("usb:1:2", "usb", "2")),
        ("usb:0:", _after("usb:0:", "usb", "")),
        (
            "picamera:8x8",
            "bad camera spec 'picamera:8x8': a frame of 8x8 is too small to read dice in; ask for"
            " at least 16x16 (the Pi camera's binned mode is a good start)",
        ),
    ],
)
def test_bad_specs_say_what_is_allowed(spec: str, message: str) -> None:
    with pytest.raises(BadCameraSpec) as err:
        make_source(spec)
    assert str(err.value) == message


def test_a_usb_camera_without_the_size_asked_says_what_it_gives(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = FakeVideoCapture(1)
    fake.sizes = [(640, 480), (1280, 720)]
    caplog.set_level("WARNING", logger="vision.source")
    UsbSource(1, size=(1280, 960), open_capture=lambda _: fake).close()
    assert [r.getMessage() for r in caplog.records] == [
        "USB camera 1 gives 1280x720 frames, not the 1280x960 asked for (it has no such size;"
        " v4l2-ctl --list-formats-ext lists the ones it has)"
    ]
    caplog.clear()
    UsbSource(1, size=(640, 480), open_capture=lambda _: fake).close()
    assert caplog.records == []


def test_usb_spec_asks_for_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    captures: list[FakeVideoCapture] = []

    def fake_capture(index: int) -> FakeVideoCapture:
        captures.append(FakeVideoCapture(index))
        return captures[-1]

    monkeypatch.setattr("vision.source.cv2.VideoCapture", fake_capture)
    make_source("usb:1:1280x960", size=(640, 480))
    make_source("usb:2", size=(640, 480))  # a size given beside the spec: the spec has none
    make_source("usb:3")
    asked = {
        c.index: {
            prop: value
            for prop, value in c.props.items()
            if prop in (cv2.CAP_PROP_FRAME_WIDTH, cv2.CAP_PROP_FRAME_HEIGHT)
        }
        for c in captures
    }
    assert asked == {
        1: {cv2.CAP_PROP_FRAME_WIDTH: 1280.0, cv2.CAP_PROP_FRAME_HEIGHT: 960.0},
        2: {cv2.CAP_PROP_FRAME_WIDTH: 640.0, cv2.CAP_PROP_FRAME_HEIGHT: 480.0},
        3: {},
    }


def test_picamera_spec_without_picamera2_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes `import picamera2` fail as it does on a PC.
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(CameraUnavailable) as err:
        make_source(None, env={})
    assert "sudo apt install python3-picamera2" in str(err.value)

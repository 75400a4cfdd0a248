"""``pipcam run``: the camera loop, the buttons, the LEDs, the store and the web server together."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

import uvicorn

from pipcam.config import Config, ConfigError, calibration_path, port_number, table_config
from pipcam.store import Store, StoreError
from pipcam.table import Table
from scoring.core import JSON, Action
from scoring.errors import IllegalAction, InvalidAction, ScoringError

if TYPE_CHECKING:
    from device.leds import Leds
    from device.pins import PinMap
    from pipcam.teach import Teacher
    from vision.calibrate import Calibration, TrayFollower
    from vision.light import LightKeeper
    from vision.picam import CameraSettings

log = logging.getLogger("pipcam.run")

RECORDED = "recorded"
# Exit statuses of `pipcam run`. A start refused for the configuration (the config file, the
# camera spec, the pin factory, the game, the face model) exits EX_CONFIG, the sysexits(3)
# code systemd shows as "CONFIG": the unit does not restart it (RestartPreventExitStatus=78),
# since retrying every few seconds cannot mend an edit. A port in use, a table lock held or a
# store that cannot be opened (a full disk) exit 2 and are retried: they clear by themselves.
EXIT_RETRY = 2
EXIT_CONFIG = 78


class FrameSourceLike(Protocol):
    """What the camera loop needs of a source (vision.source.FrameSource, RecordedSource)."""

    def capture(self) -> Any: ...
    def close(self) -> None: ...


def _boxes(reading: Any) -> list[tuple[int, int, int, int]]:
    """Where a reading found dice: in the roll zone and out of it."""
    return [tuple(d.box) for d in (*reading.dice, *getattr(reading, "set_aside", ()))]


class CameraLoop:
    """Reads frames, waits for the dice to settle, and hands each settled reading to the table.

    A camera that fails (unplugged mid-game) is reported to the table and opened again every few
    seconds; the table, the buttons and the phones carry on meanwhile.
    """

    def __init__(
        self,
        open_source: Callable[[], FrameSourceLike | None],
        table: Table,
        reader: Any,
        *,
        settle_seconds: float,
        interval: float = 0.1,
        retry: float = 2.0,
        repeat_log: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        keep_photo: Callable[[int, Any, Any], object] | None = None,
        calibration: Calibration | None = None,
        light_file: Path | None = None,
        photos: Path | None = None,
    ) -> None:
        """``calibration`` is the tray's (``pipcam calibrate``): frames of another shape are
        said, the roll zone follows a pushed tray, and a Pi camera locked to its settings
        follows the room's light (vision.light). ``light_file`` keeps the settings that
        following last chose, for a camera opened again or a restart (:class:`KeptLight`).
        ``photos``: the folder ``keep_photo`` keeps them in, where :meth:`photo` finds the
        frames of earlier throws."""
        from vision.focus import FocusWatch
        from vision.settle import SettleDetector

        self.keep_photo = keep_photo  # (reading id, frame, dice set aside): pipcam.photos
        self.photos = photos
        self.open_source = open_source
        self.table = table
        self.reader = reader
        self.settle = SettleDetector(settle_seconds=settle_seconds, clock=clock)
        self.interval = interval
        self.retry = retry
        self.clock = clock
        self.heartbeat = clock()
        self.frames = 0
        self.ended = False  # a recording (folder:) played to its last frame
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._source: FrameSourceLike | None = None
        self._last_status = ""
        self.repeat_log = repeat_log
        self._failures = 0  # failed attempts since the camera last gave a frame
        self._failure_message = ""
        self._failure_logged = 0.0
        self.calibration = calibration
        self._light: LightKeeper | None = None  # for a source locked to settings
        self._kept = KeptLight(light_file, calibration)
        self._tray = self._tray_follower()
        self._size_seen: tuple[int, int] | None = None
        # When a settled roll could not be stored (a full disk): it is read and handed to the
        # table again every ``retry`` seconds while the dice lie still, until it is stored.
        self._unstored_at: float | None = None
        # The light keeper or the tray follower set the camera right while the dice of the last
        # roll lay still: they are read again (``_look_again``).
        self._look_pending = False
        # The frame of the last settled reading the table took in, for the phones (``photo``).
        self._photo: tuple[int, Any] | None = None
        # Most dice of roll after roll too blurred to read: the phones say to focus the camera.
        self._focus = FocusWatch(notice=lambda notice: self.table.camera_notice("focus", notice))

    def start(self) -> None:
        """Run on a daemon thread."""
        self._thread = threading.Thread(target=self.run, name="camera-loop", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop and close the camera; calling it again does nothing."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._close_source()

    def _close_source(self) -> None:
        self._light = None
        if self._source is not None:
            with contextlib.suppress(Exception):
                self._source.close()
            self._source = None

    def healthy(self, max_age: float = 10.0) -> bool:
        """Whether the loop is alive (it beats even while the camera is missing)."""
        return self.clock() - self.heartbeat < max_age

    def run(self) -> None:
        """Capture, settle, read, until stopped; an unexpected error is said, not swallowed."""
        try:
            self._run()
        except Exception:
            # A fault of ours, not the camera's: retrying would only repeat it. The phones and
            # the LED say the camera stopped (the dice can be typed), and the heartbeat stops, so
            # systemd's watchdog restarts the service.
            log.exception("camera: the camera loop stopped on an unexpected error")
            self._close_source()
            self.table.camera_status("failed")

    def _run(self) -> None:
        while not self._stop.is_set():
            wait = self.tick()
            if wait is None:
                return  # --camera none: the dice are typed
            self._stop.wait(wait)

    def tick(self) -> float | None:
        """One turn of the loop: a frame captured and looked at (the camera opened first if it
        is not); return the seconds to wait before the next, None when there is no camera."""
        from vision.errors import SourceExhausted, VisionError

        self.heartbeat = self.clock()
        if self.ended:
            return self.interval  # beating, so the watchdog sees a live table
        try:
            if self._source is None:
                self._source = self.open_source()
                if self._source is None:
                    return None
                self.table.camera_status("ok")
                self._light = self._light_keeper(self._source)
                self.table.camera_notice("light", "")  # a new keeper starts within its limits
            self.step(self._source.capture())
        except SourceExhausted as exc:
            # A folder played to its end: the tray stays as its last frame left it. Opening
            # the folder again would replay its rolls into the game as new ones.
            log.warning("camera: %s; the recording has ended, type the dice from now", exc)
            self._close_source()
            self.ended = True
            return 0.0
        except (VisionError, OSError) as exc:
            self._report_failure(str(exc))
            self._close_source()
            self.table.camera_status("missing")
            return self.retry
        if self._failures:
            log.warning("camera: working again after %d failed attempts", self._failures)
            self._failures, self._failure_message = 0, ""
        return self.interval

    def _report_failure(self, message: str) -> None:
        """Log a camera failure: a new one at once, the same one again once every ``repeat_log``
        seconds with how often it happened, so an unplugged camera does not fill the journal
        with a line every retry."""
        now = self.clock()
        self._failures += 1
        if message != self._failure_message or now - self._failure_logged >= self.repeat_log:
            again = f" ({self._failures} failed attempts so far)" if self._failures > 1 else ""
            log.warning("camera: %s%s", message, again)
            self._failure_message, self._failure_logged = message, now

    def step(self, frame: Any) -> None:
        """One frame: statuses go to the table as they change; a settled roll is read."""
        self.frames += 1
        self._check_size(frame)
        update = self.settle.update(frame)
        retry = (
            self._unstored_at is not None
            and update.status == "settled"
            and self.clock() - self._unstored_at >= self.retry
        )
        if update.status != "settled":
            self._unstored_at = None  # the dice moved: the next roll is read when it settles
        if self._light is not None and update.status in ("settled", "empty"):
            # The tray lies still: is it lit as calibrated? When the light was set right under
            # dice already read, they are read again once it is steady (``_look_again``).
            changed = self._light.observe(frame) is not None
            self._look_pending |= changed and update.status == "settled"
        steady = self._light is None or self._light.steady
        if update.status == "empty":
            self._look_pending = False
        elif self._look_pending and update.status == "settled" and steady and not update.roll:
            self._look_again(frame)  # (a roll reported now is read so: ``_read_settled``)
        if update.check:
            self._check_empty(frame)
            return
        if self._tray is not None and update.status in ("settled", "empty"):
            self._tray.observe(frame)  # the tray at rest: is it where it was?
        if update.roll or retry:
            self._read_settled(frame)
            self._last_status = "settled"
        elif update.status != self._last_status:
            self._last_status = update.status
            self.table.on_reading(_StatusOnly(update.status), settled_now=False)

    def _check_empty(self, frame: Any) -> None:
        """The tray came to rest looking empty: the reader says whether it is, or holds dice of
        the tray's colour (black dice on black felt show only their pips), a roll if they are
        not the dice it found there last."""
        reading = self.reader.read(frame, status="settled")
        dice = _boxes(reading)
        if dice and self.settle.saw_dice(dice):
            self._hand_over(frame, reading)
            self._last_status = "settled"
            self._watch_focus(frame, reading)
            return
        if not dice:
            self.settle.saw_empty()
        status = "settled" if dice else "empty"
        if status != self._last_status:
            self._last_status = status
            self.table.on_reading(_StatusOnly(status), settled_now=False)

    def _look_again(self, frame: Any) -> None:
        """Read the dice of the last roll again, now lit as calibrated and with the roll zone on
        the tray: the table corrects a die the first picture misread, or takes a roll it
        refused or let pass (``Table.look_again``)."""
        self._look_pending = False
        reading = self.reader.read(frame, status="settled")
        try:
            self.table.look_again(reading)
        except StoreError as exc:
            log.warning("camera: a die read again could not be stored: %s", exc)

    def _read_settled(self, frame: Any) -> None:
        """Read a settled roll and hand it to the table.

        After the light keeper set the camera right under still dice, the settle detector may
        see them anew (their faces look otherwise in the new light): the dice of the last roll
        found where they lay are that roll read again, not a throw."""
        reading = self.reader.read(frame, status="settled")
        self.settle.read(_boxes(reading))
        first = self._unstored_at is None  # a roll read the first time, not tried again
        self._take(frame, reading)
        if first:
            self._watch_focus(frame, reading)

    def _take(self, frame: Any, reading: Any) -> None:
        """Hand a settled reading to the table: the last roll's dice read again in the new
        light when the light keeper set the camera right under them, else a throw."""
        if self._look_pending:
            try:
                if self.table.look_again(reading):
                    return
            except StoreError as exc:
                log.warning("camera: a die read again could not be stored: %s", exc)
                return
            self._look_pending = False  # other dice: a throw, read in the new light
        self._hand_over(frame, reading)

    def _watch_focus(self, frame: Any, reading: Any) -> None:
        """Show a roll's reading to the focus watch, once the table has it: looking for dice
        blurred past finding (:func:`vision.focus.unseen_blurred`, done only when the watch
        asks) takes a classical search of the frame (20 ms at 1280x960 on the development
        machine, several times that on a Pi), which the players should not wait for."""
        from vision.focus import unseen_blurred

        zone, tray = getattr(self.reader, "zone", None), getattr(self.reader, "tray", None)
        self._focus.observe(reading, lambda: unseen_blurred(frame, reading, zone=zone, tray=tray))

    def _hand_over(self, frame: Any, reading: Any) -> None:
        """Hand a settled roll to the table; one the store cannot keep (the table says why,
        e.g. a full disk) is tried again while the dice lie still."""
        try:
            # Where the tray changed while the dice moved: a thrown die landing where a die lay,
            # showing its face, is no die left lying.
            reading_id = self.table.on_reading(
                reading, settled_now=True, touched=self.settle.touched
            )
        except StoreError:
            self._unstored_at = self.clock()
            return
        self._unstored_at = None
        if reading_id is not None:
            self._photo = (reading_id, frame)
        if self.keep_photo is not None and reading_id is not None:
            # The dice set aside as the table took them: a place said to hold no die is no
            # label for the photo.
            last = self.table.last_reading
            aside = last.aside if last is not None and last.id == reading_id else ()
            self.keep_photo(reading_id, frame, aside)

    def photo(self, reading_id: int | None = None) -> tuple[bytes, tuple[int, int]] | None:
        """The frame of the last throw read, drawn (:func:`drawn_reading`), and its size; None
        before the first, or when the table's last reading is another.

        ``reading_id``: the frame of that reading instead (an earlier throw, from the
        history), its dice as the players left them; None when it was not kept. The roll zone
        is not drawn on it: the tray may have moved since."""
        seen = self._photo
        if reading_id is not None:
            return earlier_photo(self.table, reading_id, seen, self.photos)
        if seen is None:
            return None
        return drawn_reading(self.table, *seen, getattr(self.reader, "zone", None))

    def _tray_follower(self) -> TrayFollower | None:
        """A follower of the tray for a calibration that found one (a zone smaller than the
        frame) and a reader that reads with it."""
        from vision.calibrate import TrayFollower
        from vision.reader import Zone

        if self.calibration is None or self.calibration.zone == Zone():
            return None
        if getattr(self.reader, "zone", None) != self.calibration.zone:
            return None

        def move(zone: Zone) -> None:
            if self._size_seen is not None:
                width, height = self._size_seen
                self.table.tray_moved(
                    self.reader.zone.pixels(width, height), zone.pixels(width, height)
                )
            self.reader.zone = zone
            if self._light is not None:
                self._light.zone = zone
            # Dice lying in the tray were read with the old zone: some may have been taken for
            # dice set aside.
            self._look_pending = True

        return TrayFollower(
            self.calibration.zone,
            move,
            clock=self.clock,
            notice=lambda notice: self.table.camera_notice("tray", notice),
        )

    def _light_keeper(self, source: FrameSourceLike) -> LightKeeper | None:
        """A keeper of the calibrated light for a camera locked to settings it can change (a
        Pi camera opened as calibrated); None for any other source."""
        from vision.picam import CameraSettings

        settings = getattr(source, "settings", None)
        lock = getattr(source, "lock", None)
        if self.calibration is None or not isinstance(settings, CameraSettings) or lock is None:
            return None
        from vision.light import LightKeeper

        zone = self.calibration.zone if self._tray is None else self._tray.zone
        kept = self._kept.settings()
        if kept is not None and kept != settings:
            # The room's light as last followed (before the camera was unplugged, or before a
            # restart): nearer the light now than the calibration's, which may be hours old.
            log.info(
                "camera: taking back the light followed last: exposure %d us, gain %.2f,"
                " colour gains %.2f, %.2f (calibrated: %d us, %.2f)",
                kept.exposure_time,
                kept.analogue_gain,
                *kept.colour_gains,
                settings.exposure_time,
                settings.analogue_gain,
            )
            lock(kept)
            settings = kept

        def apply(new: CameraSettings) -> None:
            lock(new)
            self._kept.remember(new)

        return LightKeeper(
            self.calibration.tray,
            settings,
            apply,
            zone=zone,
            clock=self.clock,
            notice=lambda notice: self.table.camera_notice("light", notice),
        )

    def _check_size(self, frame: Any) -> None:
        """Log once per frame size when it does not fit the tray's calibration."""
        shape = getattr(frame, "shape", None)
        if self.calibration is None or shape is None:
            return
        size = (int(shape[1]), int(shape[0]))
        if size != self._size_seen:
            from vision.calibrate import size_mismatch  # only when the size changes

            self._size_seen = size
            problem = size_mismatch(self.calibration.frame_size, size)
            if problem is not None:
                log.warning("camera: %s", problem)


class _StatusOnly:
    """A reading that only carries the frame status (moving, empty) between rolls."""

    def __init__(self, status: str) -> None:
        self.status = status
        self.dice: tuple[()] = ()
        self.set_aside: tuple[()] = ()


def drawn_reading(
    table: Table, reading_id: int, frame: Any, zone: Any = None
) -> tuple[bytes, tuple[int, int]] | None:
    """``frame`` of reading ``reading_id`` with its dice drawn as ``table`` holds them now
    (corrections made; numbered as the phones number them) and the roll zone (a
    ``vision.reader.Zone``), as a JPEG, with the frame's width and height (the dice's boxes
    are in its pixels; the JPEG may be smaller); None when the table's last reading is
    another."""
    from vision.annotate import annotate, to_jpeg

    marks = table.marks(reading_id)
    if marks is None:
        return None
    height, width = frame.shape[:2]
    box = None if zone is None else zone.pixels(width, height)
    return to_jpeg(annotate(frame, *marks, zone=box)), (int(width), int(height))


def earlier_photo(
    table: Table, reading_id: int, seen: tuple[int, Any] | None, photos: Path | None
) -> tuple[bytes, tuple[int, int]] | None:
    """The frame of reading ``reading_id`` (an earlier throw's, from the history) with its dice
    drawn as the players left them, as a JPEG, and the frame's size: ``seen`` when it is that
    reading's (id, frame), else its photo kept in ``photos``; None when neither has it. The
    roll zone is not drawn: the tray may have moved since."""
    import cv2

    from pipcam.photos import photo_path
    from vision.annotate import annotate, to_jpeg

    frame = seen[1] if seen is not None and seen[0] == reading_id else None
    if frame is None and photos is not None:
        path = photo_path(photos, reading_id)
        frame = cv2.imread(str(path), cv2.IMREAD_COLOR) if path.is_file() else None
    marks = table.stored_marks(reading_id)
    if frame is None or marks is None:
        return None
    height, width = frame.shape[:2]
    return to_jpeg(annotate(frame, *marks)), (int(width), int(height))


class KeptLight:
    """The camera settings the light keeper chose last, for this calibration, kept in a file.

    A camera opened again (unplugged mid-game) or a table restarted (a power cut) starts from
    the room's light as last followed, not from the calibration's, and reads at once instead of
    after a few changes. The file names the calibrated settings it follows from: a new
    calibration makes it void. Without a file (or a calibration) it keeps nothing; a file that
    cannot be read or written is said in the log and the table goes on without it.
    """

    def __init__(self, path: Path | None, calibration: Calibration | None) -> None:
        self.path = path
        self._from = None if calibration is None else calibration.camera
        self._settings: CameraSettings | None = None
        if path is not None and self._from is not None and path.exists():
            self._settings = self._load(path)

    def settings(self) -> CameraSettings | None:
        """The settings chosen last for this calibration, or None."""
        return self._settings

    def remember(self, settings: CameraSettings) -> None:
        """Keep ``settings`` (and write them down, replacing the file whole)."""
        self._settings = settings
        if self.path is None or self._from is None:
            return
        data = {"calibrated": self._from.to_json(), "settings": settings.to_json()}
        temporary = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError as exc:
            log.warning("camera: cannot keep the light followed in %s: %s", self.path, exc)

    def _load(self, path: Path) -> CameraSettings | None:
        from vision.picam import CameraSettings

        assert self._from is not None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data["calibrated"] != self._from.to_json():
                log.info("camera: %s follows another calibration; starting from this one", path)
                return None
            return CameraSettings.from_json(data["settings"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("camera: %s cannot be read (%s); starting from the calibration", path, exc)
            return None


def _open_camera(
    spec: str, on_press: Callable[[str], None], calibration: Calibration | None
) -> tuple[Callable[[], FrameSourceLike | None], dict[str, Any], Calibration | None]:
    """A function opening the camera a spec names, the recording's header, and the calibration
    to read with (``calibration``, the table's, else a recorded table's own).

    A Pi camera calibrated by ``pipcam calibrate`` opens as it was calibrated: at the frame size
    and with the exposure and white balance locked then, so that the tray looks as it did.
    The spec is checked here, once: a bad one is refused with :class:`BadCameraSpec`.
    """
    from pipcam.recording import RecordedSource, demo_folder
    from vision.calibrate import Calibration
    from vision.errors import BadCameraSpec
    from vision.source import make_source, parse_camera_spec

    kind, _, arg = spec.partition(":")
    if kind == RECORDED:
        folder = Path(arg) if arg else demo_folder()
        probe = RecordedSource(folder)
        header, recorded = probe.header, probe.calibration
        probe.close()
        if calibration is None and recorded is not None:
            calibration = Calibration.from_json(recorded)
        return (lambda: RecordedSource(folder, on_press=on_press)), header, calibration
    parsed = parse_camera_spec(spec)
    # A file or folder that is not there is a typo, not a camera that may be plugged in later:
    # refused now rather than retried for ever.
    wanted = {"file": Path.is_file, "folder": Path.is_dir}.get(parsed.kind)
    if wanted is not None and not wanted(Path(parsed.path)):
        raise BadCameraSpec(
            f"camera spec {spec!r}: there is no {parsed.kind} {parsed.path}; give the path of"
            f" {'an image' if parsed.kind == 'file' else 'a folder of images'}"
        )
    settings = size = None
    # Only a calibration made with the Pi camera (it has locked settings) says how to open one.
    if calibration is not None and calibration.camera is not None and parsed.kind == "picamera":
        settings, size = calibration.camera, calibration.frame_size
    return (lambda: make_source(spec, size=size, settings=settings)), {}, calibration


def default_camera() -> str:
    """The Pi camera where picamera2 is installed, else the embedded recorded table."""
    try:
        import picamera2  # noqa: F401
    except ImportError:
        return RECORDED
    return "picamera"


LIGHT_FILE = "light.json"
"""In the data folder: the camera settings the light keeper chose last (:class:`KeptLight`)."""

MODEL_NAME = "dice_faces.onnx"
"""The face model as training made it, and the name a table's tuned model is installed by."""

SHIPPED_NAME = "dice_faces.int8.onnx"
"""The face model a table reads with: the int8 copy of ``MODEL_NAME`` (vision.train.quantize)."""


def find_model(name: str = SHIPPED_NAME) -> Path:
    """The shipped face model: $PIPCAM_MODEL, the checkout's models/, or the install's.

    ``name`` is the file looked for: the int8 model tables read with, or :data:`MODEL_NAME`,
    the float one tuning the whole model starts from.

    An editable install and the repository use ``<checkout>/models``; systemd/install.sh puts the
    venv inside the checkout (/opt/pipcam/.venv), so ``<venv>/../models`` finds it there.
    """
    env = os.environ.get("PIPCAM_MODEL")
    if env:
        return Path(env)
    candidates = [
        Path(__file__).resolve().parent.parent / "models" / name,
        Path(sys.prefix).resolve().parent / "models" / name,
    ]
    for path in candidates:
        if path.is_file():
            return path
    return candidates[0]  # the loader's error names it and says what to do


def table_model(data: Path) -> Path:
    """Where ``pipcam tune`` installs the model tuned on this table's own photos."""
    return data / MODEL_NAME


def names_a_model(config: Config) -> bool:
    """Whether the config's ``model`` or $PIPCAM_MODEL fixes the model, whatever is tuned."""
    return config.model is not None or bool(os.environ.get("PIPCAM_MODEL"))


def file_stamp(path: Path) -> tuple[int, int] | None:
    """What changes when a file is replaced (modification time, size); None if there is none."""
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def chosen_model(config: Config, data: Path | None) -> tuple[Path, str]:
    """The face model the table reads with, and why: the config's ``model``, $PIPCAM_MODEL, the
    model tuned on this table (``pipcam tune``), else the shipped one."""
    if config.model is not None:
        return config.model, f"model in {config.source}"
    if os.environ.get("PIPCAM_MODEL"):
        return find_model(), "PIPCAM_MODEL"
    if data is not None and table_model(data).is_file():
        return table_model(data), "tuned on this table's photos (pipcam tune --revert undoes it)"
    return find_model(), "shipped"


def _model_trouble(config: Config, data: Path | None, exc: Exception) -> str:
    """What to say when the table cannot start for its face model: a model the config or
    $PIPCAM_MODEL names is the setting to mend (``pipcam run`` has no ``--model``)."""
    if not names_a_model(config):
        return str(exc)
    path, _ = chosen_model(config, data)
    setting = f"table.model in {config.source}" if config.model is not None else "$PIPCAM_MODEL"
    trouble = "not found" if not path.is_file() else "cannot be loaded (damaged or not ONNX)"
    return (
        f"face model {path} ({setting}) {trouble}; mend {setting}, or remove it to read with"
        " the shipped model"
    )


def load_chosen_model(config: Config, data: Path | None) -> tuple[Path, str, Any]:
    """Load the table's face model (``chosen_model``): its path, why, and the one-thread
    classifier. A tuned model that cannot be loaded is reported on stderr and the shipped one
    loaded instead; a model named by the config or $PIPCAM_MODEL raises ``ModelLoadError``."""
    from vision.classify import OnnxClassifier
    from vision.errors import ModelLoadError

    path, why = chosen_model(config, data)
    try:
        return path, why, OnnxClassifier(path, threads=1)
    except ModelLoadError as exc:
        if names_a_model(config) or data is None or path != table_model(data):
            raise
        # A table must still read dice when its tuned model is unusable: say so, use the
        # shipped one. The loader's advice is for the shipped file; tune mends the tuned one.
        reason = exc.__cause__ or exc
        print(
            f"pipcam: the model tuned on this table, {path}, cannot be loaded ({reason});"
            " reading with the shipped model instead (pipcam tune makes a new one, pipcam tune"
            " --revert sets this one aside)",
            file=sys.stderr,
        )
        path = find_model()
        return path, "shipped", OnnxClassifier(path, threads=1)


class TableModel:
    """The face model a running table reads with (``chosen_model``), picked again when
    ``pipcam tune`` installs or reverts the table's tuned model: the next roll reads with it.

    A classifier for :class:`vision.reader.DiceReader`. Only the tuned model's file is watched
    (one ``stat`` per call), and only when neither the config nor $PIPCAM_MODEL names a model. A
    tuned model that cannot be loaded is reported and the shipped one read with instead.
    """

    def __init__(
        self,
        config: Config,
        data: Path | None,
        on_change: Callable[[str | None], object] | None = None,
    ) -> None:
        """Load the chosen model; raise ``ModelLoadError`` if no model can be loaded.

        ``on_change`` hears, at once and after every change, the day the model read with was
        tuned on this table (ISO), or None (:meth:`pipcam.table.Table.model_in_use`).
        """
        self._on_change = on_change
        self._config = config
        self._watched = None if names_a_model(config) or data is None else table_model(data)
        self._data = data
        self._seen = self._stamp()
        self.path, self._classifier = self._load()

    def _stamp(self) -> tuple[int, int] | None:
        return None if self._watched is None else file_stamp(self._watched)

    def _load(self) -> tuple[Path, Any]:
        path, why, classifier = load_chosen_model(self._config, self._data)
        print(f"pipcam: face model {path} ({why})", flush=True)
        if self._on_change is not None:
            tuned = None
            if path == self._watched:
                with contextlib.suppress(OSError):  # reverted meanwhile: the next call says so
                    tuned = time.strftime("%Y-%m-%d", time.localtime(path.stat().st_mtime))
            self._on_change(tuned)
        return path, classifier

    def predict(self, crops: Any) -> Any:
        """The chosen model's class probabilities; a newly installed or reverted model first."""
        stamp = self._stamp()
        if stamp != self._seen:
            self._seen = stamp
            self.path, self._classifier = self._load()
        return self._classifier.predict(crops)


def make_reader(
    config: Config,
    calibration: Calibration | None,
    data: Path | None = None,
    on_model: Callable[[str | None], object] | None = None,
) -> Any:
    """The dice reader with the table's face model (``TableModel``, telling ``on_model`` when it
    was tuned here) and the calibration."""
    from vision.reader import DiceReader

    classifier = TableModel(config, data, on_model)
    if calibration is None:
        return DiceReader(classifier)
    return DiceReader(classifier, zone=calibration.zone, tray=calibration.tray)


def typed_line(table: Table, line: str, out: TextIO) -> None:
    """A line typed at the terminal: dice or an action, as in ``pipcam play``."""
    from pipcam.play import parse_command

    with table.lock:
        if table.history is None:
            out.write("! no game: start one on a phone\n")
            return
        try:
            command = parse_command(line, table.game, table.history.state)
            if isinstance(command, str):
                if command == "undo":
                    table.undo(source="keyboard")
                elif command == "redo":
                    table.redo(source="keyboard")
                return
            action: Action = command
            table.act(action, source="keyboard")
        except (IllegalAction, InvalidAction, StoreError) as exc:
            out.write(f"! {exc}\n")


CAMERA_FINE = frozenset({"ok", "none"})
"""Camera statuses that need nobody's attention: working, or no camera at all (dice typed)."""


def led_status(state: dict[str, JSON]) -> str:
    """The status LED for a table state: attention, moving or ready. Attention for a problem,
    a lost camera, or something to mend at the table (the phones say what)."""
    view = state.get("table") or {}
    if (
        view.get("problem")
        or view.get("camera", "ok") not in CAMERA_FINE
        or view.get("camera_notices")
    ):
        return "attention"
    return "moving" if view.get("reading") == "moving" else "ready"


def summary_line(state: dict[str, JSON]) -> str:
    """One line for the console after every change."""
    players = "  ".join(f"{p['name']} {p['score']}" for p in state.get("players", []))
    table = state.get("table") or {}
    bits = [f"[{state.get('game')}] {players}"]
    if state.get("to_move"):
        bits.append(f"{state['to_move']} to play")
    if state.get("finished"):
        bits.append("game over: " + ", ".join(state.get("winners", [])))
    if state.get("last_event"):
        bits.append(str(state["last_event"]))
    if table.get("problem"):
        bits.append(f"! {table['problem']}")
    return " | ".join(bits)


def _tuning_keeper(
    keep: Callable[[int, Any, Sequence[Any]], Path | None],
    data: Path,
    config: Config,
    stack: contextlib.ExitStack,
) -> Callable[[int, Any, Sequence[Any]], Path | None]:
    """``keep``, counting each photo kept toward the table's own tuning (``AutoTune``)."""
    from pipcam.tune import AutoTune

    auto = AutoTune(data, config.source, every=config.auto_tune)
    stack.callback(auto.close)
    print(
        f"pipcam: the face model's last layer is tuned on the kept photos every"
        f" {config.auto_tune} photos, and read with when it reads the table's own games better"
        " (auto_tune = false in the config stops it)"
    )

    def keep_and_count(reading_id: int, frame: Any, aside: Sequence[Any]) -> Path | None:
        path = keep(reading_id, frame, aside)
        if path is not None:
            auto.kept()
        return path

    return keep_and_count


# syslog priorities (sd-daemon(3)) of the logging levels, for the journal's line prefixes.
_PRIORITY = {
    logging.CRITICAL: 2,
    logging.ERROR: 3,
    logging.WARNING: 4,
    logging.INFO: 6,
    logging.DEBUG: 7,
}


class JournalFormatter(logging.Formatter):
    """Lines for journald's stdout/stderr stream: each line (a traceback's too) starts with
    ``<N>``, the syslog priority journald files it at; the journal adds the time itself."""

    def __init__(self) -> None:
        super().__init__("%(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """The record's lines, each prefixed with its priority."""
        priority = next((p for level, p in _PRIORITY.items() if record.levelno >= level), 7)
        return "\n".join(f"<{priority}>{line}" for line in super().format(record).splitlines())


def to_journal(stream: TextIO, environ: dict[str, str] | os._Environ[str]) -> bool:
    """Whether ``stream`` is connected to the journal: ``$JOURNAL_STREAM`` names its device and
    inode (systemd sets it for a service's stdout and stderr)."""
    device, _, inode = environ.get("JOURNAL_STREAM", "").partition(":")
    try:
        info = os.fstat(stream.fileno())
        return (info.st_dev, info.st_ino) == (int(device), int(inode))
    except (OSError, ValueError, AttributeError):
        return False  # not set, malformed, or a stream without a file descriptor


def log_handler(stream: TextIO, environ: dict[str, str] | os._Environ[str]) -> logging.Handler:
    """The handler of ``pipcam run``'s log: priority prefixes for the journal, else the level
    name (a terminal, a file)."""
    handler = logging.StreamHandler(stream)
    if to_journal(stream, environ):
        handler.setFormatter(JournalFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    return handler


class _CannotStart(Exception):
    """A start refused: what to say on stderr, and the exit status (``EXIT_CONFIG`` or
    ``EXIT_RETRY``) that tells systemd whether to try again."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def cmd_run(args: argparse.Namespace) -> int:
    """Start the table: camera loop, buttons, LEDs, store and web server."""
    # Once, for every module's logger (uvicorn's too: log_config=None below); a program that
    # set up logging before calling this keeps its own.
    logging.basicConfig(level=logging.INFO, handlers=[log_handler(sys.stderr, os.environ)])
    try:
        _run_table(args)
    except _CannotStart as exc:
        print(f"pipcam run: {exc}", file=sys.stderr)
        return exc.status
    return 0


def _table_settings(
    args: argparse.Namespace,
) -> tuple[Config, Path, PinMap, str, Calibration | None]:
    """The table's configuration, data folder, pin map, camera spec and tray calibration."""
    from device.pins import PinMap
    from vision.calibrate import load_calibration

    try:
        config, data = table_config(args.config, args.data)
        pins = PinMap.from_dict(config.pins) if config.pins else PinMap()
        spec = args.camera or config.camera or os.environ.get("PIPCAM_CAMERA") or default_camera()
        # The file `pipcam calibrate` wrote for this table; a recorded table brings its own.
        calibration_file = calibration_path(config, data)
        calibration = None
        if config.calibration is not None or (
            calibration_file.exists() and spec.partition(":")[0] != RECORDED
        ):
            calibration = load_calibration(calibration_file)
            print(f"pipcam: tray calibration {calibration_file} (pipcam calibrate)")
    except (ConfigError, ValueError) as exc:  # PinMapError, CalibrationError are ValueErrors
        raise _CannotStart(str(exc), EXIT_CONFIG) from exc
    return config, data, pins, spec, calibration


def _start_game(table: Table, wanted: JSON) -> None:
    """Resume the unfinished game, or start the configured one."""
    try:
        # Checked also when an unfinished game resumes: a typo found only once that game
        # ends would stop the next start, far from the edit that made it.
        check_header(wanted)
        if not table.resume():
            table.new_game(wanted)
    except (ScoringError, ValueError) as exc:
        raise _CannotStart(f"the configured game cannot start: {exc}", EXIT_CONFIG) from exc
    except StoreError:
        # The last game ended and its store cannot take a new one (a full disk): the table's
        # problem, said on the phones and the LED (Table._storing), not a failed start that
        # systemd repeats. It serves without a game; a phone starts one once space is freed.
        log.warning("no game is being played: a phone starts one once the store can be written")


class _Mirror:
    """The game's state on the LEDs (status, turn, a flash for each action accepted) and its
    summary line on stdout when it changes."""

    def __init__(self, leds: Leds) -> None:
        self.leds = leds
        self.last_line = ""
        self.last_count = -1

    def __call__(self, state: dict[str, JSON]) -> None:
        leds = self.leds
        leds.set_status(led_status(state))
        count = state.get("actions", 0)
        if self.last_count >= 0 and count > self.last_count:
            leds.flash_ok()  # an action was accepted: the table may go on
        self.last_count = count
        names = [p["name"] for p in state.get("players", [])]
        mover = state.get("to_move")
        leds.set_turn(names.index(mover) if mover in names else None)
        line = summary_line(state)
        if line != self.last_line:  # statuses change often; print what a person needs to see
            self.last_line = line
            print(line, flush=True)


def _start_camera(
    args: argparse.Namespace,
    config: Config,
    data: Path,
    table: Table,
    store: Store,
    open_source: Callable[[], FrameSourceLike | None],
    calibration: Calibration | None,
    stack: contextlib.ExitStack,
) -> tuple[CameraLoop, Teacher | None]:
    """The camera loop, started (stopped by ``stack``), and the teach sheet when the table
    keeps its photos (else None)."""
    from vision.errors import ModelLoadError

    try:
        reader = make_reader(config, calibration, data, on_model=table.model_in_use)
    except ModelLoadError as exc:
        raise _CannotStart(_model_trouble(config, data, exc), EXIT_CONFIG) from exc
    keeper: Callable[[int, Any, Sequence[Any]], Path | None] | None = None
    teacher: Teacher | None = None
    if args.keep_photos or config.keep_photos:
        from pipcam.photos import PhotoKeeper

        keeper = PhotoKeeper(
            data / "photos", limit=config.photo_limit, on_count=table.photos_kept
        ).keep
        print(f"pipcam: keeping each settled frame in {data / 'photos'} (pipcam photos)")
        from pipcam.teach import DISPUTES, Teacher

        # The phones' teach sheet asks about the dice read unsurely in those photos.
        teacher = Teacher(
            store,
            data / "photos",
            in_play=table.reading_in_play,
            disputes=data / "tune" / DISPUTES,
            locator=reader.locator,  # boxes the missed dice the players point at
        )
        # A model named by the config or $PIPCAM_MODEL is read with whatever is tuned.
        if config.auto_tune and not names_a_model(config):
            keeper = _tuning_keeper(keeper, data, config, stack)
    loop = CameraLoop(
        open_source,
        table,
        reader,
        settle_seconds=config.settle_seconds,
        keep_photo=keeper,
        calibration=calibration,
        light_file=data / LIGHT_FILE,
        photos=None if keeper is None else data / "photos",
    )
    loop.start()
    stack.callback(loop.stop)
    return loop, teacher


def _run_table(args: argparse.Namespace) -> None:
    """Open everything the table needs, serve until stopped, and close it all again."""
    from device.errors import DeviceError
    from device.factory import make_pin_factory
    from device.keyboard import KeyboardButtons, help_text
    from device.panel import Panel
    from pipcam.notify import Notifier, WatchdogFeeder, watchdog_interval_seconds
    from pipcam.qr import listen_host, qr_text, scoreboard_url
    from web.app import create_app

    config, data, pins, spec, calibration = _table_settings(args)
    port = args.port or config.port
    pin = os.environ.get("PIPCAM_PIN") or config.pin or f"{secrets.randbelow(10000):04d}"

    with contextlib.ExitStack() as stack:
        try:
            # Bound before anything is opened or printed: a port in use is said plainly, not
            # after the scoreboard's URL and QR code have been shown.
            listener = stack.enter_context(bind_scoreboard(config.host, port))
            stack.enter_context(table_lock(data))
            store = stack.enter_context(Store(data / "pipcam.db"))
        except (StoreError, ScoreboardError, TableLocked) as exc:
            raise _CannotStart(str(exc), EXIT_RETRY) from exc
        table = Table(store, coach=args.coach or config.coach)

        def press(button: str) -> None:
            table.press(button)

        try:
            open_source, header, calibration = _open_camera(spec, press, calibration)
        except ValueError as exc:  # BadCameraSpec: refused now, not retried every few seconds
            raise _CannotStart(str(exc), EXIT_CONFIG) from exc
        try:
            panel = stack.enter_context(
                Panel(pins, pin_factory=make_pin_factory(), on_button=press)
            )
        except DeviceError as exc:  # PinFactoryError: a backend that cannot load here
            raise _CannotStart(str(exc), EXIT_CONFIG) from exc
        _start_game(table, header or config.header())

        mirror = _Mirror(panel.leds)
        stack.callback(table.subscribe(mirror))
        mirror(table.state_json())
        loop: CameraLoop | None = None
        teacher: Teacher | None = None
        if spec == "none":
            table.camera_status("none")  # phones then offer typing, not a camera's reading
        else:
            loop, teacher = _start_camera(
                args, config, data, table, store, open_source, calibration, stack
            )
        keyboard = KeyboardButtons(
            panel, sys.stdin, on_line=lambda line: typed_line(table, line, sys.stdout)
        )
        keyboard.start()
        stack.callback(keyboard.close)

        app = create_app(
            table,
            pin=pin,
            teacher=teacher,
            unavailable=(StoreError,),
            photo=None if loop is None else loop.photo,
        )
        server = _QuietServer(
            uvicorn.Config(
                app,
                host=config.host,
                port=port,
                log_level="warning",
                log_config=None,  # through the handler above, with the journal's priorities
                access_log=False,
                # A request still running this long after a stop is cut off: systemd's stop
                # timeout (20 s) must find the table closed, not kill it mid-cleanup.
                timeout_graceful_shutdown=GRACEFUL_STOP_SECONDS,
            ),
            before_shutdown=app.state.end_streams,
        )
        url = scoreboard_url(port, listen_host(config.host))
        print(f"pipcam: scoreboard at {url}  (table PIN {pin})")
        print(qr_text(url))
        print(help_text())
        notifier = stack.enter_context(Notifier())
        feeder = WatchdogFeeder(
            notifier,
            watchdog_interval_seconds(),
            healthy=lambda: server.started and (loop is None or loop.healthy()),
        )

        def announce() -> None:
            while not server.started and not server.should_exit:
                time.sleep(0.05)
            if server.started:
                notifier.ready(f"serving {url}")
                feeder.start()

        threading.Thread(target=announce, name="announce", daemon=True).start()
        stack.callback(feeder.stop)
        stack.callback(lambda: notifier.stopping("shutting down"))
        with _stop_on_signals(server):
            server.run(sockets=[listener])


def check_header(header_json: JSON) -> None:
    """Refuse a game header that could not start a game (``ScoringError``), storing nothing."""
    from scoring.transcript import check_new_players, parse_header, start

    header = parse_header(header_json)
    check_new_players(header.players)
    start(header)


class TableLocked(RuntimeError):
    """Another ``pipcam run`` keeps its games in the same data folder."""


LOCK_NAME = "table.lock"
"""The file in the data folder that one running table holds a lock on (its pid inside)."""


@contextlib.contextmanager
def table_lock(data: Path) -> Iterator[None]:
    """Hold the data folder's table lock while the table runs; :class:`TableLocked` if another
    table holds it. Two tables on one store would write their actions into the same game, which
    then replays for neither. Readers (``pipcam tune``, ``pipcam photos``) take no lock."""
    import fcntl

    path = data / LOCK_NAME
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError:
        yield  # the store's own checks say what is wrong with the folder
        return
    writable = True
    try:
        handle = path.open("a+", encoding="utf-8")
    except OSError as exc:
        # A lock file this user cannot write (left by a run with sudo): a lock needs no
        # writing, so it is taken on a read-only handle, only the pid is not written.
        writable = False
        try:
            handle = path.open(encoding="utf-8")
        except FileNotFoundError:
            yield  # a folder this user cannot write: the store's own checks say so
            return
        except OSError as again:
            raise TableLocked(
                f"cannot take the table lock {path} ({again.strerror}); give this user access to"
                f" it (sudo chown $USER {path}) or remove it, or give this table another --data"
            ) from again
        log.warning(
            "the table lock %s cannot be written by this user (%s; left by a run with sudo?):"
            " it is held read-only",
            path,
            exc.strerror,
        )
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "?"
            raise TableLocked(
                f"another pipcam run (pid {holder}) keeps its games in {data}: stop it (sudo"
                " systemctl stop pipcam, if it is the service), or give this one another --data"
            ) from None
        if writable:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
        yield  # the lock goes with the file's closing, also when the process is killed


_HOST = "set table.host in the configuration to an address of this machine, or leave it out"


class ScoreboardError(OSError):
    """The scoreboard cannot listen where it was asked to; the message says what to change."""


def bind_scoreboard(host: str, port: int) -> socket.socket:
    """The scoreboard's listening socket on ``host``:``port``; :class:`ScoreboardError` if the
    port is taken, not allowed, or the host is no address of this machine."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        return socket.create_server((host, port), family=family[0][0], backlog=2048)
    except socket.gaierror as exc:
        why = f"the scoreboard cannot listen on {host!r}: {exc.strerror};"
        raise ScoreboardError(f"{why} {_HOST}") from exc
    except OSError as exc:
        other = "pick another port with --port N or table.port in the configuration"
        if exc.errno == errno.EADDRINUSE:
            why = f"port {port} is in use by another program (another pipcam run?): stop it, or"
        elif exc.errno == errno.EACCES:
            why = f"port {port} needs root (ports below 1024):"
        elif exc.errno == errno.EADDRNOTAVAIL:
            why, other = (
                f"the scoreboard cannot listen on {host!r}: no address of this machine;",
                _HOST,
            )
        else:
            why = f"the scoreboard cannot listen on port {port} ({exc.strerror}):"
        raise ScoreboardError(f"{why} {other}") from exc


GRACEFUL_STOP_SECONDS = 3


class _QuietServer(uvicorn.Server):
    """uvicorn's server without its signal handling, which re-raises SIGTERM after shutdown and
    so would kill the process before the table closes the store, the LEDs and the terminal.

    ``before_shutdown`` runs on the server's loop as it stops: the scoreboard ends its event
    streams there, since uvicorn waits for every open response (a phone's stream never ends).
    """

    def __init__(self, config: uvicorn.Config, before_shutdown: Callable[[], None]) -> None:
        super().__init__(config)
        self._before_shutdown = before_shutdown

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._before_shutdown()
        await super().shutdown(sockets)


@contextlib.contextmanager
def _stop_on_signals(server: Any) -> Iterator[None]:
    """SIGTERM (systemd) and SIGINT (Ctrl-C) ask the server to stop; cleanup then runs."""

    def stop(*_: object) -> None:
        server.should_exit = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def add_run_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``pipcam run [--camera SPEC] [--port 8000] [--data DIR] [--config FILE]``."""
    p = subparsers.add_parser("run", help="run the table: camera, buttons, LEDs and scoreboard")
    p.add_argument(
        "--camera",
        help="picamera[:N][:WxH], usb[:N][:WxH], file:PATH, folder:PATH, recorded[:FOLDER] or"
        " none (default: the Pi camera, as calibrated, else the embedded recorded table)",
    )
    p.add_argument("--port", type=port_number, default=None, help="scoreboard port (default 8000)")
    p.add_argument("--data", help="where games are kept (default: a per-user data folder)")
    p.add_argument("--config", help="a TOML configuration file")
    p.add_argument(
        "--keep-photos",
        action="store_true",
        help="save each settled frame beside the games, for `pipcam photos` (eval, training)",
    )
    p.add_argument(
        "--coach",
        action="store_true",
        help="the phones get a Hint button: the coach's best play (Generał and the 10 000 games)",
    )
    p.set_defaults(func=cmd_run)

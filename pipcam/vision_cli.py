"""The vision commands of ``pipcam``: read, bench, calibrate, focus and eval.

``add_vision_commands(subparsers)`` adds them to the main parser; each sets ``func`` to a function
that takes the parsed arguments and returns the exit status.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

import cv2
import numpy as np

from vision.calibrate import (
    Calibration,
    calibrate_frame,
    check_empty,
    load_calibration,
    save_calibration,
    size_mismatch,
)
from vision.camera_effects import EFFECTS, with_effect
from vision.classify import (
    DEFAULT_LOCATOR_MODEL,
    DEFAULT_MODEL,
    Classifier,
    OnnxClassifier,
    OnnxLocator,
    onnxruntime_version,
    processor,
)
from vision.errors import VisionError
from vision.evaluate import (
    box_reader,
    crop_reader,
    evaluate_folder,
    format_report,
    split_view,
    write_confusion_png,
)
from vision.light import LightOptions, lighting_advice
from vision.locate import Box, ClassicalLocator, LearnedLocator, Locator
from vision.picam import MAINS_FLICKER, CameraSettings, PiCameraSource
from vision.preprocess import crops_for_model
from vision.reader import DiceReader, DiceReading
from vision.settle import SettleDetector
from vision.source import Frame, FrameSource, make_source, read_image
from vision.synthetic import make_frame, six_dice

__all__ = [
    "LOCATORS",
    "add_vision_commands",
    "build_reader",
    "cmd_bench",
    "cmd_calibrate",
    "cmd_eval",
    "cmd_focus",
    "cmd_read",
    "describe_reading",
    "make_locator",
]

# Frames a live camera gives while its automatic exposure settles are thrown away.
WARMUP_FRAMES = 5

# Frames of the locked camera compared for a flickering lamp's bands when calibrating.
FLICKER_FRAMES = 4

LOCATORS = ("learned", "classical")
"""The ``--locator`` choices; learned is the default when its model file exists."""

SPLITS = ("all", "train", "val")
"""The ``eval --split`` choices: every photo, or one side of the training split."""


def _write(stream: TextIO, text: str) -> None:
    stream.write(text + "\n")


def _error(command: str, message: str) -> None:
    _write(sys.stderr, f"pipcam {command}: {message}")


def add_vision_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``read``, ``bench``, ``calibrate``, ``focus`` and ``eval`` to the ``pipcam``
    subparsers."""
    read = subparsers.add_parser("read", help="read the dice in photos (or one camera frame)")
    read.add_argument("images", nargs="*", metavar="IMAGE", help="image files to read")
    read.add_argument("--json", action="store_true", help="one JSON object per image")
    read.add_argument(
        "--camera", metavar="SPEC", help="also read one frame from this camera (after the images)"
    )
    read.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="face model (ONNX)")
    read.add_argument("--calibration", type=Path, metavar="FILE", help="roll zone and tray colour")
    read.add_argument(
        "--annotate",
        type=Path,
        metavar="DIR",
        help="also draw what was read on each image, as DIR/NAME.read.jpg (the camera's frame:"
        " camera.read.jpg): the roll zone, each die's box, number and face",
    )
    _add_locator_options(read)
    read.set_defaults(func=cmd_read)

    bench = subparsers.add_parser("bench", help="time reading a synthetic frame on one thread")
    bench.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="face model (ONNX)")
    bench.add_argument("--repeat", type=int, default=30, help="frames timed per size")
    _add_locator_options(bench)
    bench.set_defaults(func=cmd_bench)

    calibrate = subparsers.add_parser("calibrate", help="learn the empty tray's zone and colour")
    calibrate.add_argument(
        "--camera",
        metavar="SPEC",
        help="camera spec, as for pipcam run but a real camera or image: picamera, usb, file or"
        " folder (default: the config's camera, else $PIPCAM_CAMERA, else picamera)",
    )
    calibrate.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="where to write it (default: the config's calibration, else calibration.json beside"
        " the games, where pipcam run reads it)",
    )
    calibrate.add_argument(
        "--mains",
        choices=["50", "60", "none"],
        default="50",
        help="the mains frequency of the room's lamps, in Hz: the Pi camera's exposure is kept to"
        " whole flickers of them, so a rolling shutter shows no bands (default 50: Europe, most"
        " of Asia, Africa and Australia; 60: the Americas, Korea, Taiwan, western Japan; none:"
        " no such lamps)",
    )
    calibrate.add_argument("--data", help="the table's data folder (as pipcam run --data)")
    calibrate.add_argument("--config", help="the table's TOML configuration file (as pipcam run)")
    calibrate.set_defaults(func=cmd_calibrate)

    focus = subparsers.add_parser(
        "focus", help="measure how sharp the dice in the tray are, frame after frame"
    )
    focus.add_argument(
        "--camera",
        metavar="SPEC",
        help="camera spec, as for pipcam calibrate (default: the config's camera, else"
        " $PIPCAM_CAMERA, else picamera); stop pipcam run first, it holds the camera",
    )
    focus.add_argument(
        "--frames",
        type=int,
        default=0,
        metavar="N",
        help="stop after N frames (default: run until Ctrl-C, or the last image of a folder)",
    )
    focus.add_argument("--calibration", type=Path, metavar="FILE", help="roll zone and tray colour")
    focus.add_argument("--data", help="the table's data folder (as pipcam run --data)")
    focus.add_argument("--config", help="the table's TOML configuration file (as pipcam run)")
    focus.set_defaults(func=cmd_focus)

    evaluate = subparsers.add_parser("eval", help="measure the reader on labelled photo folders")
    evaluate.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    evaluate.add_argument(
        "--png-dir",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="where the confusion-matrix PNGs go, one per folder and effect (default: here)",
    )
    evaluate.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="face model (ONNX)")
    evaluate.add_argument(
        "--split",
        choices=SPLITS,
        default="all",
        help="only the photos the training code puts in this split (val: never trained on)",
    )
    evaluate.add_argument(
        "--effect",
        action="append",
        choices=list(EFFECTS),
        metavar="NAME",
        help="read the photos as another camera would see them (repeat to compare): "
        + ", ".join(f"{e.name} ({e.description})" for e in EFFECTS.values()),
    )
    _add_locator_options(evaluate)
    evaluate.set_defaults(func=cmd_eval)


def _add_locator_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--locator",
        choices=LOCATORS,
        default=None,
        help="how dice are found (default: learned if its model exists, else classical)",
    )
    parser.add_argument(
        "--locator-model",
        type=Path,
        default=DEFAULT_LOCATOR_MODEL,
        metavar="PATH",
        help="learned locator model (ONNX)",
    )


def make_locator(kind: str | None = None, model: Path | str = DEFAULT_LOCATOR_MODEL) -> Locator:
    """Return the locator named by ``--locator``.

    None means learned if ``model`` exists or was named (so a wrong path is an error, not a silent
    fallback), else classical.
    """
    if kind is None:
        named = Path(model) != DEFAULT_LOCATOR_MODEL
        kind = "learned" if named or Path(model).is_file() else "classical"
    if kind == "classical":
        return ClassicalLocator()
    if kind != "learned":
        raise ValueError(f"unknown locator {kind!r}; choose one of {', '.join(LOCATORS)}")
    return LearnedLocator(OnnxLocator(model, threads=1))


def build_reader(
    model: Path | str = DEFAULT_MODEL,
    calibration: Calibration | None = None,
    *,
    classifier: Classifier | None = None,
    locator: Locator | None = None,
) -> DiceReader:
    """Return a reader with the ONNX model (one thread), the locator and the calibration."""
    if classifier is None:
        classifier = OnnxClassifier(model, threads=1)
    if locator is None:
        locator = make_locator()
    if calibration is None:
        return DiceReader(classifier, locator=locator)
    return DiceReader(classifier, locator=locator, zone=calibration.zone, tray=calibration.tray)


def _reader_from(args: argparse.Namespace, calibration: Calibration | None = None) -> DiceReader:
    """The reader the command line asks for (raises VisionError when a model cannot load)."""
    locator = make_locator(args.locator, args.locator_model)
    return build_reader(args.model, calibration, locator=locator)


def describe_reading(reading: DiceReading) -> str:
    """Return a short human line for a reading, e.g. ``settled: 1 3 3 5? cocked blurred hidden``
    (``cut``: a die hidden by the edge of the camera's view)."""
    if not reading.dice and not reading.set_aside:
        return f"{reading.status}: no dice"
    text = f"{reading.status}: " + (" ".join(d.text for d in reading.dice) or "no dice")
    if reading.set_aside:
        text += "; set aside: " + " ".join(d.text for d in reading.set_aside)
    return text


def _reading_json(name: str, reading: DiceReading) -> dict[str, object]:
    result: dict[str, object] = {
        "image": name,
        "status": reading.status,
        "dice": [d.to_json() for d in reading.dice],
    }
    if reading.set_aside:
        result["set_aside"] = [d.to_json() for d in reading.set_aside]
    return result


def _out_of_focus(frame: Frame, reading: DiceReading, reader: DiceReader) -> str | None:
    """What says a photo's camera is out of focus (as the table's focus watch counts it:
    vision.focus), None when nothing does."""
    from vision.focus import out_of_focus, unfound, unseen_blurred

    hidden = unfound(
        reading, lambda: unseen_blurred(frame, reading, zone=reader.zone, tray=reader.tray)
    )
    if not out_of_focus(reading, hidden):
        return None
    blurred = sum(1 for die in reading.dice + reading.set_aside if die.blurred)
    said = []
    if blurred:
        said.append(f"{blurred} {'die' if blurred == 1 else 'dice'} blurred past reading")
    if hidden:
        shapes = "soft shape" if hidden == 1 else "soft shapes"
        said.append(f"{hidden} {shapes} where no die was found (dice blurred past finding?)")
    return (
        " and ".join(said) + ": the camera looks out of focus; `pipcam focus` measures it while"
        " you turn the lens"
    )


def _camera_frame(spec: str | None) -> Frame:
    source: FrameSource | None = make_source(spec)
    if source is None:
        raise VisionError("no camera: --camera none was given")
    with source:
        frame = source.capture()
        if not (spec or "").startswith(("file:", "folder:")):
            for _ in range(WARMUP_FRAMES):
                frame = source.capture()
    return frame


def cmd_read(args: argparse.Namespace) -> int:
    """``pipcam read``: print the reading of each image (or a camera frame); 1 if any failed."""
    if not args.images and args.camera is None:
        _error("read", "give IMAGE files to read, or --camera SPEC")
        return 2
    try:
        calibration = load_calibration(args.calibration) if args.calibration else None
        reader = _reader_from(args, calibration)
    except VisionError as err:
        _error("read", str(err))
        return 1
    status = 0
    jobs: list[tuple[str, Callable[[], Frame]]] = [
        (name, functools.partial(read_image, name)) for name in args.images
    ]
    if args.camera is not None:
        jobs.append((args.camera, functools.partial(_camera_frame, args.camera)))
    drawn: set[Path] = set()
    for index, (name, load) in enumerate(jobs):
        try:
            frame = load()
            if calibration is not None:
                # A photo of another shape still reads, but its roll zone may be in the wrong
                # place: said on stderr, as `pipcam run` logs it, without failing the image.
                size = (int(frame.shape[1]), int(frame.shape[0]))
                problem = size_mismatch(calibration.frame_size, size)
                if problem is not None:
                    _error("read", f"warning: {name}: {problem}")
            reading = reader.read(frame)
        except VisionError as err:
            _error("read", str(err))
            status = 1
            continue
        blur = _out_of_focus(frame, reading, reader)
        if blur is not None:
            _error("read", f"warning: {name}: {blur}")
        if args.json:
            _write(sys.stdout, json.dumps(_reading_json(name, reading)))
        else:
            _write(sys.stdout, f"{name}: {describe_reading(reading)}")
        sys.stdout.flush()
        if args.annotate is not None:
            stem = "camera" if index >= len(args.images) else Path(name).stem
            try:
                _draw_reading(args.annotate, stem, frame, reading, reader, drawn)
            except OSError as err:
                _error("read", f"{name}: cannot write the drawn reading: {err}")
                status = 1
    return status


def _draw_reading(
    folder: Path,
    stem: str,
    frame: Frame,
    reading: DiceReading,
    reader: DiceReader,
    drawn: set[Path],
) -> Path:
    """Write ``frame`` with ``reading`` drawn on it as ``folder/stem.read.jpg`` (``stem-2`` and
    on when two images of a run share a name); return the path."""
    from vision.annotate import annotate, to_jpeg

    folder.mkdir(parents=True, exist_ok=True)
    path, n = folder / f"{stem}.read.jpg", 1
    while path in drawn:
        n += 1
        path = folder / f"{stem}-{n}.read.jpg"
    drawn.add(path)
    height, width = frame.shape[:2]
    picture = annotate(
        frame,
        [d.to_json() for d in reading.dice],
        [d.to_json() for d in reading.set_aside],
        zone=None if reader.zone is None else reader.zone.pixels(width, height),
    )
    path.write_bytes(to_jpeg(picture, longest=max(width, height), quality=90))
    return path


def _median_ms(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall-clock and CPU milliseconds of ``run``.

    The CPU figure is what the frame costs even when other programs share the cores.
    """
    run()  # the first call pays for lazy allocations
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append((time.perf_counter() - start) * 1000.0)
        cpu.append((time.process_time() - start_cpu) * 1000.0)
    return statistics.median(wall), statistics.median(cpu)


def _classify_boxes(classifier: Classifier, frame: Frame, boxes: Sequence[Box]) -> object:
    return classifier.predict(crops_for_model(frame, boxes))


def cmd_bench(args: argparse.Namespace) -> int:
    """``pipcam bench``: median milliseconds per frame (locate + classify) on one thread."""
    cv2.setNumThreads(1)
    started = time.perf_counter()
    try:
        reader = _reader_from(args)
    except VisionError as err:
        _error("bench", str(err))
        return 1
    load_ms = (time.perf_counter() - started) * 1000
    # Which files were timed: the int8 copies by default, the float ones when named.
    locator_file = getattr(getattr(reader.locator, "model", None), "path", None)
    _write(
        sys.stdout,
        f"onnxruntime {onnxruntime_version()}, OpenCV {cv2.__version__}, numpy {np.__version__};"
        f" {processor()}; one thread; face model {Path(args.model).name};"
        f" {type(reader.locator).__name__}"
        + (f" {Path(locator_file).name}" if locator_file is not None else ""),
    )
    # The two sizes, and between them the frame `pipcam run` takes from a Pi camera v2
    # (vision.picam.default_size), which scales by no whole factor.
    for width, height in ((1280, 960), (1640, 1232), (3280, 2464)):
        dice = six_dice(width, height, seed=1)
        frame = make_frame(width, height, dice, tray="green", seed=1)
        locator = reader.locator
        footprints = ""
        if isinstance(locator, LearnedLocator):
            # A read takes the footprints only when a die is unsure: timed apart.
            plain = locator.without_footprints(frame)
            boxes = [d.box for d in plain]
            locate_ms, _ = _median_ms(
                functools.partial(locator.without_footprints, frame), args.repeat
            )
            footprint_ms, _ = _median_ms(
                functools.partial(locator.with_footprints, frame, plain), args.repeat
            )
            footprints = f"; footprints {footprint_ms:.1f} ms more when a die is unsure"
        else:
            boxes = [d.box for d in reader.locate(frame)]
            locate_ms, _ = _median_ms(functools.partial(reader.locate, frame), args.repeat)
        classify_ms, _ = _median_ms(
            functools.partial(_classify_boxes, reader.classifier, frame, boxes), args.repeat
        )
        total_ms, total_cpu = _median_ms(functools.partial(reader.read, frame), args.repeat)
        reading = reader.read(frame)
        right = sorted(d.value or 0 for d in reading.dice) == sorted(d.value for d in dice)
        # What `pipcam run` spends on every frame it captures, read or not (ten a second): a
        # frame like the last one (the tray at rest, most frames), and one that moved.
        still_ms, _ = _median_ms(functools.partial(SettleDetector().update, frame), args.repeat)
        moved = SettleDetector(still_levels=None)
        settle_ms, _ = _median_ms(functools.partial(moved.update, frame), args.repeat)
        _write(
            sys.stdout,
            f"{width}x{height}, six dice: {total_ms:.1f} ms per frame, CPU {total_cpu:.1f} ms"
            f" (locate {locate_ms:.1f} ms, crop+classify {classify_ms:.1f} ms{footprints});"
            f" read {len(reading.dice)} dice,"
            f" {'all right' if right else 'NOT all right'};"
            f" settle detection {settle_ms:.1f} ms a frame that moved,"
            f" {still_ms:.1f} ms a still one",
        )
    # What a Pi with little memory cares for: the start of `pipcam run`, and what it holds.
    resident = _resident_mb()
    _write(
        sys.stdout,
        f"reader loaded in {load_ms:.0f} ms; process resident "
        + ("memory not known on this system" if resident is None else f"{resident:.0f} MB")
        + " after these frames",
    )
    return 0


def _resident_mb() -> float | None:
    """This process's resident memory in MB (Linux's /proc), None where it cannot be read."""
    try:
        status = Path("/proc/self/status").read_text("utf-8")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def cmd_focus(args: argparse.Namespace) -> int:
    """``pipcam focus``: one line a frame with how sharp the dice in the tray are, and the best
    so far, while the owner turns the lens; 0 when stopped (Ctrl-C, --frames, a folder's end)."""
    from pipcam.config import ConfigError, table_config
    from vision.errors import SourceExhausted
    from vision.focus import SHARP_DICE, dice_sharpness, edge_width, soft_shapes

    if args.frames < 0:
        _error("focus", f"--frames must be 0 (no end) or more, got {args.frames}")
        return 2
    try:
        config, _ = table_config(args.config, args.data)
    except ConfigError as err:
        _error("focus", str(err))
        return 2
    try:
        calibration = load_calibration(args.calibration) if args.calibration else None
        reader = build_reader(calibration=calibration)
        source = make_source(args.camera or config.camera)
        if source is None:
            _error("focus", "focusing needs a camera (--camera none was given)")
            return 2
    except VisionError as err:
        _error("focus", str(err))
        return 1
    _write(
        sys.stdout,
        f"put a few dice in the tray and turn the lens slowly: the sharpness rises to a top and"
        f" falls past it (dice in focus measure about {SHARP_DICE:g} or more)",
    )
    if getattr(source, "has_focus", False):
        _write(sys.stdout, "this camera focuses itself: pipcam calibrate focuses it on the tray")
    best: tuple[float, int] | None = None
    narrowest: tuple[float, int] | None = None  # the edges of dice blurred past finding
    count = 0
    try:
        with source:
            if isinstance(source, PiCameraSource):
                for _ in range(WARMUP_FRAMES):
                    source.capture()
            while not args.frames or count < args.frames:
                frame = source.capture()
                count += 1
                reading = reader.read(frame)
                dice = reading.dice + reading.set_aside
                value = dice_sharpness(frame, reading)
                if value is None:
                    soft = soft_shapes(frame, reading, zone=reader.zone, tray=reader.tray)
                    if not soft:
                        _write(
                            sys.stdout,
                            f"frame {count}: no dice found: put a few in the tray (if they lie"
                            " there, the picture is too blurred to find them: turn the lens)",
                        )
                        continue
                    # Too blurred for a sharpness: how wide their edges are falls as the lens
                    # turns toward focus, all the way from far off.
                    edges = float(np.median([edge_width(frame, box) for box in soft]))
                    if narrowest is None or edges < narrowest[0]:
                        narrowest = (edges, count)
                    _write(
                        sys.stdout,
                        f"frame {count}: no dice found, but {len(soft)} soft"
                        f" {'shape' if len(soft) == 1 else 'shapes'} (dice blurred past"
                        f" finding?), edges {edges:.0f} px wide (narrowest {narrowest[0]:.0f},"
                        f" frame {narrowest[1]}): turn the lens until the dice are found",
                    )
                    continue
                if best is None or value > best[0]:
                    best = (value, count)
                read = sum(1 for d in dice if d.status == "ok")
                _write(
                    sys.stdout,
                    f"frame {count}: {len(dice)} dice, {read} read; sharpness {value:.3f}"
                    f" (best {best[0]:.3f}, frame {best[1]})",
                )
    except SourceExhausted:
        pass
    except KeyboardInterrupt:
        _write(sys.stdout, "")
    except VisionError as err:
        _error("focus", str(err))
        return 1
    if best is not None:
        _write(sys.stdout, f"best sharpness {best[0]:.3f}, at frame {best[1]}")
    elif narrowest is not None:
        _write(
            sys.stdout,
            f"no dice found; the narrowest edges, {narrowest[0]:.0f} px, at frame {narrowest[1]}:"
            " turn the lens on the way it went there",
        )
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    """``pipcam calibrate``: capture the empty tray, lock the Pi camera, write the file."""
    from pipcam.config import ConfigError, calibration_path, table_config
    from pipcam.run import load_chosen_model

    try:
        config, data = table_config(args.config, args.data)
    except ConfigError as err:
        _error("calibrate", str(err))
        return 2
    out: Path = args.out or calibration_path(config, data)
    try:
        source = make_source(args.camera or config.camera)
        if source is None:
            _error("calibrate", "calibration needs a camera (--camera none was given)")
            return 2
        settings: CameraSettings | None = None
        later: list[Frame] = []
        with source:
            frame = source.capture()
            if isinstance(source, PiCameraSource):
                for _ in range(WARMUP_FRAMES):
                    source.capture()
                source.focus()  # a camera with a focus motor focuses on the tray, once
                settings = source.lock(_flicker_free(source, args.mains))
                frame = source.capture()
                # A few more of the still tray: a flickering lamp's bands move between them.
                later = [source.capture() for _ in range(FLICKER_FRAMES)]
        calibration = calibrate_frame(frame, camera=settings)
        # The face model the table reads with (the shipped one if its tuned model is unusable, as
        # in pipcam run), so the check sees what pipcam run will see.
        model = load_chosen_model(config, data)[2]
        check_empty(frame, build_reader(calibration=calibration, classifier=model))
        save_calibration(out, calibration)
    except VisionError as err:
        _error("calibrate", str(err))
        return 1
    zone = calibration.zone
    width, height = calibration.frame_size
    _write(
        sys.stdout,
        f"calibrated {width}x{height}: roll zone {list(zone.pixels(width, height))}, written to"
        f" {out}",
    )
    if settings is not None:
        red, blue = settings.colour_gains
        whole = (
            f" (whole flickers of {args.mains} Hz lamps)"
            if settings.flicker_period and settings.exposure_time >= settings.flicker_period
            else ""
        )
        _write(
            sys.stdout,
            f"camera locked: exposure {settings.exposure_time} us{whole}, gain"
            f" {settings.analogue_gain:.2f}, colour gains {red:.2f} / {blue:.2f}"
            + (
                ""
                if settings.lens_position is None
                else f", focused at {_distance(settings.lens_position)}"
            ),
        )
    for advice in lighting_advice(frame, zone, settings, later=later):
        _write(sys.stdout, f"advice: {advice}")
    if args.out is not None and args.out != calibration_path(config, data):
        _write(
            sys.stdout,
            f"pipcam run reads {calibration_path(config, data)}: name this file as calibration"
            " in its config to use it",
        )
    return 0


def _flicker_free(source: PiCameraSource, mains: str) -> CameraSettings:
    """The camera's automatic settings, with the exposure kept to whole flickers of ``mains``
    (Hz, or "none") lamps and the gain making up the difference."""
    auto = source.current_settings()
    period = MAINS_FLICKER.get(int(mains)) if mains.isdigit() else None
    if period is None:
        return auto
    return replace(auto, flicker_period=period).with_light(
        auto.exposure_time * auto.analogue_gain,
        shortest=1,
        # The automatic exposure may be longer than the table's own limit in a dim room.
        longest=max(auto.exposure_time, LightOptions().max_exposure),
        max_gain=source.max_gain,
    )


def _distance(dioptres: float) -> str:
    """A lens position as the distance it focuses at."""
    return "infinity" if dioptres <= 0 else f"{100 / dioptres:.0f} cm"


def cmd_eval(args: argparse.Namespace) -> int:
    """``pipcam eval``: per-folder recall, precision, exact rolls and confusion matrix (PNG)."""
    try:
        reader = _reader_from(args)
    except VisionError as err:
        _error("eval", str(err))
        return 1
    status = 0
    plain = box_reader(reader)
    crops = crop_reader(reader)
    effects = [EFFECTS[name] for name in (args.effect or ["none"])]
    for folder in args.dirs:
        stem = Path(folder).resolve().name + ("" if args.split == "all" else f"-{args.split}")
        try:
            with split_view(Path(folder), args.split) as view:
                for effect in effects:
                    report = evaluate_folder(
                        view, with_effect(plain, effect), with_effect(crops, effect)
                    )
                    # The report names the folder asked for, not the temporary view of a split.
                    report.folder = Path(folder)
                    if report.images == 0:
                        # Nothing measured is no result: a script must not read it as 100 %.
                        split = "" if args.split == "all" else f" in the {args.split} split"
                        _error(
                            "eval",
                            f"{folder}: no labelled photo to measure{split}"
                            f" ({report.skipped} left out for known_issue)",
                        )
                        status = 1
                    if args.effect:
                        _write(sys.stdout, f"effect {effect.name}: {effect.description}")
                    _write(sys.stdout, format_report(report))
                    suffix = "" if effect.name == "none" else f"-{effect.name}"
                    png = args.png_dir / f"{stem}{suffix}-confusion.png"
                    png.parent.mkdir(parents=True, exist_ok=True)
                    write_confusion_png(report, png)
                    _write(sys.stdout, f"confusion matrix written to {png}")
        except (OSError, ValueError, KeyError) as err:
            _error("eval", f"{folder}: {err}")
            status = 1
    return status

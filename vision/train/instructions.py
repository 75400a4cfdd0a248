"""What one frame costs, stage by stage: ``python -m vision.train.instructions [--repeat N]``.

Natively it prints milliseconds, as ``pipcam bench`` does. Its purpose is the other way:
under qemu with an instruction-counting plugin (``scripts/pi-instructions.sh``, which emulates
a Pi 4's Cortex-A72 and a Pi 5's Cortex-A76), qemu's speed says nothing of a Pi's, but the
number of instructions a processor of that kind executes is the same, emulated or not. Before
and after each stage the program calls ``getppid``, which it makes no other use of; the plugin
appends the count so far to the file named by ``PIPCAM_COUNT_FILE``, which this module reads
back. A count becomes a time only through the instructions a core retires a cycle (IPC), which
the emulator cannot give: the Cortex-A72 decodes at most three a cycle.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import cv2

from vision.calibrate import TrayFollower, calibrate_frame
from vision.classify import DEFAULT_MODEL, processor
from vision.light import LightKeeper
from vision.locate import LearnedLocator
from vision.picam import CameraSettings
from vision.preprocess import crops_for_model
from vision.reader import Box, DiceReader, Frame
from vision.settle import SettleDetector
from vision.synthetic import make_frame, make_tray, six_dice
from vision.train.readers import reader_from

__all__ = ["Meter", "main"]

SIZES = ((1280, 960), (1640, 1232), (3280, 2464))
"""`pipcam bench`'s frames: the issue's two sizes and a Pi camera v2's, which pipcam run reads."""


class Meter:
    """Measures a stage: instructions under the counting plugin, else milliseconds."""

    def __init__(self, count_file: Path | None) -> None:
        self.count_file = count_file
        self.unit = "M instructions" if count_file is not None else "ms"
        self.started: int | None = None
        """Instructions counted at the first mark: the interpreter's start and the imports."""

    def _mark(self) -> int:
        os.getppid()  # the plugin's signal: it appends the count so far
        assert self.count_file is not None
        try:
            lines = self.count_file.read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        if not lines or not lines[-1].startswith("mark "):
            raise SystemExit(
                f"PIPCAM_COUNT_FILE names {str(self.count_file)!r}, but no instruction count was"
                " written there: this runs under scripts/pi-instructions.sh's counting qemu;"
                " unset PIPCAM_COUNT_FILE to time the stages in milliseconds instead"
            )
        count = int(lines[-1].split()[1])
        if self.started is None:
            self.started = count
        return count

    def once(self, run: Callable[[], object]) -> tuple[float, object]:
        """What one call of ``run`` costs (millions of instructions, or milliseconds), and what
        it returned."""
        if self.count_file is None:
            start = time.perf_counter()
            result = run()
            return (time.perf_counter() - start) * 1000.0, result
        before = self._mark()
        result = run()
        return (self._mark() - before) / 1e6, result

    def measure(self, run: Callable[[], object], repeat: int) -> float:
        """Instructions (millions) a call, over ``repeat`` calls; or the median milliseconds."""
        run()  # the first call pays for lazy allocations
        if self.count_file is None:
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                run()
                times.append((time.perf_counter() - start) * 1000.0)
            return statistics.median(times)
        before = self._mark()
        for _ in range(repeat):
            run()
        return (self._mark() - before) / repeat / 1e6


def _table(width: int, height: int) -> Frame:
    """A bare green tray on a brown table, the tray five eighths of the frame each way."""
    frame = make_tray(width, height, colour="brown", seed=1)
    w, h = width * 5 // 8, height * 5 // 8
    x0, y0 = (width - w) // 2, (height - h) // 2
    frame[y0 : y0 + h, x0 : x0 + w] = make_tray(w, h, colour="green", seed=2)
    return frame


def _looks(table: Frame) -> tuple[Callable[[], object], Callable[[], object]]:
    """The table's two looks at a tray at rest, each looking every call: its light (the keeper
    of a Pi camera's locked settings, at most once a second) and where it lies (the tray
    follower, every two seconds)."""
    calibration = calibrate_frame(table)
    now = [0.0]

    def later() -> float:
        now[0] += 100.0  # past both looks' intervals: every call is a look
        return now[0]

    settings = CameraSettings(exposure_time=20000, analogue_gain=1.0, colour_gains=(1.6, 1.4))
    keeper = LightKeeper(
        calibration.tray, settings, lambda _new: None, zone=calibration.zone, clock=later
    )
    follower = TrayFollower(calibration.zone, lambda _zone: None, clock=later)
    return partial(keeper.observe, table), partial(follower.observe, table)


def _classify(reader: DiceReader, frame: Frame, boxes: Sequence[Box]) -> object:
    """The face model on the crops of ``boxes``, as the reader cuts them."""
    return reader.classifier.predict(crops_for_model(frame, boxes))


def main(argv: Sequence[str] | None = None) -> int:
    """Print each stage's cost for each frame size."""
    parser = argparse.ArgumentParser(
        prog="python -m vision.train.instructions", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--repeat", type=int, default=5, help="calls measured a stage")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be 1 or more, got {args.repeat}")
    named = os.environ.get("PIPCAM_COUNT_FILE")
    meter = Meter(Path(named) if named else None)
    cv2.setNumThreads(1)
    load, reader = meter.once(partial(reader_from, DEFAULT_MODEL))
    assert isinstance(reader, DiceReader)
    before = (
        ""
        if meter.started is None
        else f" (before it, Python and imports {meter.started / 1e6:.1f})"
    )
    print(f"{processor()}; one thread; {meter.unit} a call; loading the reader {load:.1f}{before}")  # noqa: T201
    locator = reader.locator
    if not isinstance(locator, LearnedLocator):
        parser.error("the reader's own locator is not the learned one: models/ is incomplete")
    for width, height in SIZES:
        dice = six_dice(width, height, seed=1)
        frame = make_frame(width, height, dice, tray="green", seed=1)
        reading = reader.read(frame)
        right = sorted(d.value or 0 for d in reading.dice) == sorted(d.value for d in dice)
        plain = locator.without_footprints(frame)
        # What `pipcam run` spends on each frame it reads; on every frame it captures (the
        # settle detection, on a frame like the last one and on one that moved); and, with a
        # calibrated tray and camera, on its looks at the tray at rest.
        stages: dict[str, Callable[[], object]] = {
            "read": partial(reader.read, frame),
            "locate": partial(locator.without_footprints, frame),
            "classify": partial(_classify, reader, frame, [d.box for d in plain]),
            "footprints": partial(locator.with_footprints, frame, plain),
            "settle-still": partial(SettleDetector().update, frame),
            "settle-moved": partial(SettleDetector(still_levels=None).update, frame),
        }
        stages["light-look"], stages["tray-look"] = _looks(_table(width, height))
        figures = [f"{name} {meter.measure(run, args.repeat):.1f}" for name, run in stages.items()]
        said = "read right" if right else "NOT read right"
        print(f"{width}x{height}, six dice {said}: {', '.join(figures)}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

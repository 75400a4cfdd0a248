"""What reading the face model member by member saves, on real photos and the bench's frames.

Run with ``make bench``; the figures are printed. The shipped face model is a CNN and a 3.5 times
costlier EfficientNet; the CNN's sure readings stand alone (``vision.classify.FIRST_SURE``). Both
ways are timed interleaved, one thread, on the committed photos (three sources) and on
``pipcam bench``'s synthetic frames, and must report the same dice. ``pipcam bench`` itself gives
the frame's figure against the 20 ms target.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from vision.classify import DEFAULT_MODEL, OnnxClassifier
from vision.reader import DiceReader, default_locator
from vision.synthetic import make_frame, six_dice

TEST_DATA = Path(__file__).resolve().parents[1] / "data" / "dice"
ROUNDS = 15


def _frames() -> dict[str, npt.NDArray[np.uint8]]:
    frames: dict[str, npt.NDArray[np.uint8]] = {}
    for line in (TEST_DATA / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            name = json.loads(line)["image"]
            image = cv2.imread(str(TEST_DATA / name))
            assert image is not None, name
            frames[Path(name).name] = np.asarray(image, np.uint8)
    for width, height in ((1280, 960), (3280, 2464)):
        dice = six_dice(width, height, seed=1)
        frames[f"bench {width}x{height}"] = make_frame(width, height, dice, tray="green", seed=1)
    return frames


@pytest.mark.benchmark
def test_bench_reading_member_by_member() -> None:
    cv2.setNumThreads(1)
    locator = default_locator()
    readers = {
        "member by member": DiceReader(OnnxClassifier(DEFAULT_MODEL), locator=locator),
        "whole pair": DiceReader(OnnxClassifier(DEFAULT_MODEL, first_sure=None), locator=locator),
    }
    lines = []
    for name, frame in _frames().items():
        readings = {k: r.read(frame) for k, r in readers.items()}
        first, second = ([(d.value, d.status, d.box) for d in x.dice] for x in readings.values())
        assert first == second, name
        times: dict[str, list[float]] = {k: [] for k in readers}
        for _ in range(ROUNDS):
            for key, reader in readers.items():
                start = time.perf_counter()
                reader.read(frame)
                times[key].append((time.perf_counter() - start) * 1000)
        fast, whole = (statistics.median(t) for t in times.values())
        lines.append(
            f"  {name}: {len(first)} dice, {fast:.1f} ms member by member, {whole:.1f} ms whole"
        )
    print("\nwhole reads, median of", ROUNDS, "interleaved, one thread:\n" + "\n".join(lines))

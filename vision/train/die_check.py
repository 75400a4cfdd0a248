"""Fit the die check (vision/die_check.py) to the shipped face model and measure it.

    python -m vision.train.die_check [--data ../shared/data/dice] [--out models/die_check.json]

The rows are the boxes the reader would drop: the shipped locator's boxes that the face model
calls "no face". A die: such a box on a rendered die that leans (no face within 28 degrees of
the camera; ``render_scene`` with half the dice cocked) or on a labelled real die. None: such a
box clear of every rendered or labelled die. Renders of the first ``--scenes`` seeds and the
training photos fit the check; later seeds and the held-out photos measure it, and the figures
are printed per kind of box. Needs no torch; about five minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tqdm import tqdm

from vision.classify import DEFAULT_MODEL, OnnxClassifier
from vision.detect import iou
from vision.die_check import (
    DEFAULT_DIE_CHECK,
    DieCheck,
    DieChecker,
    fit_die_check,
    model_features,
)
from vision.preprocess import crops_for_model
from vision.reader import DiceReader
from vision.train.data import DEFAULT_DATA, die_boxes, load_sources, read_image
from vision.train.synth import render_scene

FloatBox = tuple[float, float, float, float]
SCENE_SIZE = (480, 640)


@dataclass
class Rows:
    """Features of class-0 boxes, whether each is a die, its kind and split."""

    features: list[npt.NDArray[np.float32]]
    is_die: list[bool]
    kind: list[str]
    split: list[str]

    def add(
        self,
        checker: DieChecker,
        crops: npt.NDArray[np.float32],
        labels: Sequence[tuple[bool, str] | None],
        split: str,
    ) -> None:
        """Add the crops labelled (is a die, kind); those labelled None are left out."""
        keep = [i for i, label in enumerate(labels) if label is not None]
        for row, i in zip(checker.features(crops[keep]), keep, strict=True):
            die, kind = labels[i] or (False, "")
            self.features.append(row)
            self.is_die.append(die)
            self.kind.append(kind)
            self.split.append(split)


def _nofaces(
    reader: DiceReader, image: npt.NDArray[np.uint8]
) -> tuple[list[FloatBox], npt.NDArray[np.float32]]:
    """The locator's boxes that the face model calls "no face", and their crops."""
    located = reader.locate(image)
    if not located:
        return [], np.zeros((0, 3, 64, 64), np.float32)
    crops = crops_for_model(image, [d.box for d in located])
    probs = reader.read_crops(crops)
    keep = np.flatnonzero(probs.argmax(axis=1) == 0)
    boxes: list[FloatBox] = []
    for i in keep:
        x0, y0, x1, y1 = located[i].box
        boxes.append((float(x0), float(y0), float(x1), float(y1)))
    return boxes, crops[keep]


def _render_rows(
    reader: DiceReader, checker: DieChecker, seeds: Iterator[int], rows: Rows, split: str
) -> None:
    """Add the "no face" boxes of one rendered scene a seed: on a leaning die, or on none."""
    for seed in seeds:
        scene = render_scene(
            np.random.default_rng(seed),
            size=SCENE_SIZE,
            dice=6,
            scatter=True,
            cocked_share=0.5,
            half_range=(14.0, 30.0),
            rim_share=0.3,
        )
        image = np.ascontiguousarray(scene.image)
        boxes, crops = _nofaces(reader, image)
        labels: list[tuple[bool, str] | None] = []
        for box in boxes:
            near = [d for d in scene.dice if iou(box, d.box) >= 0.3]
            if not near:
                labels.append((False, "render: no die"))
                continue
            die = near[0]
            inside = (
                die.box[0] >= 0
                and die.box[1] >= 0
                and die.box[2] <= SCENE_SIZE[1]
                and die.box[3] <= SCENE_SIZE[0]
            )
            if not inside or die.label not in (0, None):
                labels.append(None)  # cut by the picture's edge, or a flat die: neither is asked
            else:
                labels.append((True, "render: leaning die"))
        rows.add(checker, crops, labels, split)


def _photo_rows(reader: DiceReader, checker: DieChecker, data: Path, rows: Rows) -> None:
    """Add the "no face" boxes of every photo under ``data``: on a labelled die, or on none."""
    records = [r for r in load_sources(data) if not r.is_crop and r.dice]
    for record in tqdm(records, desc="photos", unit="photo"):
        image = read_image(record.path)
        boxes, crops = _nofaces(reader, image)
        truth = die_boxes(record, image)
        labels: list[tuple[bool, str] | None] = []
        for box in boxes:
            best = max((iou(box, t) for t in truth), default=0.0)
            if best >= 0.3:
                labels.append((True, f"{record.source}: die"))
            elif best < 0.05:
                labels.append((False, f"{record.source}: no die"))
            else:
                labels.append(None)
        rows.add(checker, crops, labels, record.split)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vision.train.die_check", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared photo folders")
    parser.add_argument(
        "--model", type=Path, default=DEFAULT_MODEL, help="the face model to fit to"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_DIE_CHECK)
    parser.add_argument("--scenes", type=int, default=500, help="rendered scenes to fit on")
    parser.add_argument("--val-scenes", type=int, default=200, help="rendered scenes to measure on")
    parser.add_argument("--seed", type=int, default=5000, help="the first scene's seed")
    parser.add_argument("--l2", type=float, default=0.01)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    reader = DiceReader(OnnxClassifier(args.model, threads=args.threads))
    name, sha = model_features(args.model)
    probe = DieCheck(
        sha,
        name,
        np.zeros(1, np.float32),
        np.ones(1, np.float32),
        np.zeros(1, np.float32),
        0.0,
        1.0,
    )
    checker = DieChecker(args.model, probe, threads=args.threads)
    rows = Rows([], [], [], [])
    fit_seeds = range(args.seed, args.seed + args.scenes)
    val_seeds = range(args.seed + args.scenes, args.seed + args.scenes + args.val_scenes)
    _render_rows(
        reader, checker, iter(tqdm(fit_seeds, desc="renders", unit="scene")), rows, "train"
    )
    _render_rows(
        reader, checker, iter(tqdm(val_seeds, desc="held-out renders", unit="scene")), rows, "val"
    )
    _photo_rows(reader, checker, args.data, rows)

    features = np.stack(rows.features)
    is_die = np.array(rows.is_die)
    fit = np.array([s == "train" for s in rows.split])
    check = fit_die_check(
        features[fit],
        is_die[fit],
        features_sha256=sha,
        features_name=name,
        l2=args.l2,
        threshold=args.threshold,
    )
    said = check.probability(features) >= check.threshold
    lines = [f"fitted on {int(fit.sum())} boxes; boxes the check takes for dice / boxes:"]
    for split in ("train", "val"):
        counts: Counter[str] = Counter()
        taken: Counter[str] = Counter()
        for kind, s, yes in zip(rows.kind, rows.split, said, strict=True):
            if s == split:
                counts[kind] += 1
                taken[kind] += int(yes)
        lines.append(f"  {split}:")
        lines += [f"    {kind}: {taken[kind]} / {counts[kind]}" for kind in sorted(counts)]
    args.out.write_text(json.dumps(check.to_json(), indent=1) + "\n", "utf-8")
    lines.append(f"wrote {args.out}")
    print("\n".join(lines))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())

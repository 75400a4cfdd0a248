"""Fit the die check (vision/die_check.py) to the shipped face model and measure it.

    python -m vision.train.die_check [--data ../shared/data/dice] [--out models/die_check.json]

The rows are the boxes the reader would drop: the shipped locator's boxes that the face model
calls "no face". A die: such a box on a rendered die that leans (no face within 28 degrees of
the camera; ``render_scene`` with half the dice cocked) or on a labelled real die. None: such a
box clear of every rendered or labelled die. Renders of the first ``--scenes`` seeds and the
training photos fit the check; later seeds and the held-out photos measure it, and the figures
are printed per kind of box.

A second check, for boxes blurred past reading (:data:`vision.die_check.BLURRED_BELOW`), is
fitted on the "no face" boxes of out-of-focus renders (:func:`blurred`; seeds from ``--seed``
plus 100000) and of the photos' labelled dice blurred by us, against every phantom (sharp and
blurred), random boxes clear of any die, and a box on a hand drawn over each render and photo
out of focus (:func:`_hand`), all of them below the sharpness line, where it alone judges; the
leaning-die check is fitted without those rows, as before them.

A third check, for the boxes the face model reads as a face (:func:`vision.die_check.hidden_rows`),
is fitted on dice partly hidden as training hides them (:func:`vision.train.data.occlude`, 30 to
65 % of the box; two dice a scene, renders from seeds ``--seed`` plus 200000 with many dice
touching, and two a training photo) against the whole dice of the same pictures, hidden or not;
the held-out photos and later seeds measure it. A fourth, for the boxes of the same pictures
that the reader would drop (:func:`vision.die_check.dropped`: training's face model calls a die
so hidden "no face"), is fitted on the hidden dice among them against the phantoms (boxes
clear of every die). ``--only-hidden`` refits those two alone and keeps the others of
``--out``.

A fifth, for the boxes read as a face, tells a die that leans from one lying flat, on the same
rows but the crop's edges: the leaning dice of renders with most dice cocked (seeds ``--seed``
plus 300000) that the face model reads as a face, against the flat dice of the same renders and
of the photos (every labelled die is flat). ``--only-leaning`` refits it alone. Needs no torch;
thirty to forty minutes on two cores for the first four (ten to fifteen with
``--only-hidden``), and about thirteen more for the fifth (``--only-leaning``: 12.5).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
from tqdm import tqdm

from vision.classify import CLASSES, DEFAULT_MODEL
from vision.detect import iou
from vision.die_check import (
    BLURRED_BELOW,
    DEFAULT_DIE_CHECK,
    DieCheck,
    DieChecker,
    dropped,
    fit_die_check,
    hidden_rows,
    load_die_check,
    model_features,
)
from vision.errors import ModelLoadError
from vision.preprocess import EDGE_FEATURES, crops_for_model, sharpness
from vision.reader import DiceReader
from vision.train.data import (
    DEFAULT_DATA,
    FloatBox,
    Record,
    UInt8Image,
    die_boxes,
    load_sources,
    occlude,
    read_image,
)
from vision.train.readers import reader_from
from vision.train.synth import Scene, _draw_hand, render_scene

SCENE_SIZE = (480, 640)
TOUCHING = 0.4
"""The share of the dice pushed against another in the partly-hidden check's renders, as dice
come to rest in a tray: the edge of a die beside is no card's edge. It barely changed how many
dice pressed together the check asks about (at 0.9, 14 of 360 fitted without, 13 with); the
threshold does that (models/EXPERIMENTS.md, "Dice partly hidden, asked about")."""


@dataclass
class Rows:
    """Features of class-0 boxes, whether each is a die, its kind and split."""

    features: list[npt.NDArray[np.float32]]
    sharpness: list[float]
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
        sharp = sharpness(crops[keep])
        for row, edge, i in zip(checker.features(crops[keep]), sharp, keep, strict=True):
            die, kind = labels[i] or (False, "")
            self.features.append(row)
            self.sharpness.append(float(edge))
            self.is_die.append(die)
            self.kind.append(kind)
            self.split.append(split)


def _no_face(reader: DiceReader, crops: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """Whether the face model calls each crop "no face": the only boxes a check is asked about."""
    return np.asarray(reader.read_crops(crops).argmax(axis=1) == 0, np.bool_)


def _no_face_crops(
    reader: DiceReader, image: UInt8Image, boxes: Sequence[FloatBox]
) -> npt.NDArray[np.float32]:
    """The crops of ``boxes`` that the face model calls "no face"."""
    if not boxes:
        return np.zeros((0, 3, 64, 64), np.float32)
    crops = crops_for_model(image, boxes)
    return np.asarray(crops[_no_face(reader, crops)], np.float32)


def _nofaces(
    reader: DiceReader, image: npt.NDArray[np.uint8]
) -> tuple[list[FloatBox], npt.NDArray[np.float32]]:
    """The locator's boxes that the face model calls "no face", and their crops."""
    located = reader.locate(image)
    if not located:
        return [], np.zeros((0, 3, 64, 64), np.float32)
    crops = crops_for_model(image, [d.box for d in located])
    keep = np.flatnonzero(_no_face(reader, crops))
    boxes: list[FloatBox] = []
    for i in keep:
        x0, y0, x1, y1 = located[i].box
        boxes.append((float(x0), float(y0), float(x1), float(y1)))
    return boxes, crops[keep]


def blurred(scene: Scene, rng: np.random.Generator) -> tuple[UInt8Image, FloatBox]:
    """``scene``'s image out of focus, and the part blurred: a Gaussian of 8 to 25 % of the
    dice's median side, over the whole picture (a camera focused elsewhere) or, one time in two,
    over one die and its surround (a die nearer the camera than the others)."""
    sides = [max(d.box[2] - d.box[0], d.box[3] - d.box[1]) for d in scene.dice]
    sigma = float(rng.uniform(0.08, 0.25) * np.median(sides))
    image = np.asarray(cv2.GaussianBlur(scene.image, (0, 0), sigma), np.uint8)
    height, width = image.shape[:2]
    if rng.random() < 0.5:
        return image, (0.0, 0.0, float(width), float(height))
    x0, y0, x1, y1 = scene.dice[int(rng.integers(len(scene.dice)))].box
    pad = (x1 - x0) * 0.6 + 3 * sigma
    ix0, iy0 = max(int(x0 - pad), 0), max(int(y0 - pad), 0)
    ix1, iy1 = min(int(x1 + pad), width), min(int(y1 + pad), height)
    out = scene.image.copy()
    out[iy0:iy1, ix0:ix1] = image[iy0:iy1, ix0:ix1]
    return out, (float(ix0), float(iy0), float(ix1), float(iy1))


def _within(box: FloatBox, region: FloatBox) -> bool:
    return (
        region[0] <= box[0] and region[1] <= box[1] and box[2] <= region[2] and box[3] <= region[3]
    )


def _bare(
    reader: DiceReader,
    image: UInt8Image,
    avoid: Sequence[FloatBox],
    rng: np.random.Generator,
    count: int = 4,
) -> npt.NDArray[np.float32]:
    """Crops of up to ``count`` boxes drawn at random clear of every box in ``avoid`` (the
    dice), as large as those, that the face model calls "no face": bare table, a rim, a hand.

    The locator rarely boxes such places, so the phantoms alone never show the checks a plain
    smooth patch; and blur makes every die smooth.
    """
    height, width = image.shape[:2]
    sides = [max(b[2] - b[0], b[3] - b[1]) for b in avoid] or [min(height, width) / 8]
    boxes: list[FloatBox] = []
    for _ in range(count * 4):
        side = float(rng.uniform(min(sides), max(sides)))
        if side >= min(height, width):
            break
        x0, y0 = float(rng.uniform(0, width - side)), float(rng.uniform(0, height - side))
        box = (x0, y0, x0 + side, y0 + side)
        if all(iou(box, other) < 0.02 for other in [*avoid, *boxes]):
            boxes.append(box)
        if len(boxes) == count:
            break
    return _no_face_crops(reader, image, boxes)


def _hand(
    reader: DiceReader,
    image: UInt8Image,
    avoid: Sequence[FloatBox],
    rng: np.random.Generator,
    count: int,
) -> npt.NDArray[np.float32]:
    """Crops of up to ``count`` boxes on a hand drawn over ``image`` out of focus (a Gaussian of
    3 to 30 % of the dice's median side), most centred on its edge, clear of every box in
    ``avoid``, that the face model calls "no face".

    A hand reaching into a tray is the commonest thing a camera sees blurred, and a finger's
    rounded edge out of focus is as smooth as a blurred die; random bare boxes seldom fall on it.
    """
    height, width = image.shape[:2]
    sides = [max(b[2] - b[0], b[3] - b[1]) for b in avoid] or [min(height, width) / 8]
    drawn = image.copy()
    _draw_hand(drawn, rng)
    mask = np.any(drawn != image, axis=2).astype(np.uint8)
    if not mask.any():
        return np.zeros((0, 3, 64, 64), np.float32)
    sigma = max(float(rng.uniform(0.03, 0.3) * np.median(sides)), 0.5)
    soft = np.asarray(cv2.GaussianBlur(drawn, (0, 0), sigma), np.uint8)
    kernel = np.ones((5, 5), np.uint8)
    edge = cv2.dilate(mask, kernel) - cv2.erode(mask, kernel)
    places = [np.argwhere(edge > 0), np.argwhere(mask > 0)]
    boxes: list[FloatBox] = []
    for _ in range(count * 4):
        points = places[0] if rng.random() < 0.7 and len(places[0]) else places[1]
        cy, cx = points[int(rng.integers(len(points)))]
        half = float(rng.uniform(min(sides), max(sides))) / 2
        box = (float(cx) - half, float(cy) - half, float(cx) + half, float(cy) + half)
        inside = box[0] >= 0 and box[1] >= 0 and box[2] <= width and box[3] <= height
        if inside and all(iou(box, other) < 0.02 for other in [*avoid, *boxes]):
            boxes.append(box)
        if len(boxes) == count:
            break
    return _no_face_crops(reader, soft, boxes)


def _tray(rng: np.random.Generator, *, cocked_share: float, touching: float = 0.0) -> Scene:
    """A rendered tray of six dice, as the checks are fitted on: 14-30 px half sides, anywhere
    in the picture, a rim in three of ten."""
    return render_scene(
        rng,
        size=SCENE_SIZE,
        dice=6,
        scatter=True,
        cocked_share=cocked_share,
        half_range=(14.0, 30.0),
        rim_share=0.3,
        touching=touching,
    )


def _render_rows(
    reader: DiceReader,
    checker: DieChecker,
    seeds: Iterator[int],
    rows: Rows,
    split: str,
    *,
    blur: bool = False,
    hands: int = 0,
) -> None:
    """Add the "no face" boxes of one rendered scene a seed: on a leaning die, or on none.

    With ``blur`` the scenes are out of focus (:func:`blurred`) and their dice lie flat: a box
    on a die is a blurred die; one on a die left sharp is left out; and up to ``hands`` boxes
    on a blurred hand drawn over the scene (:func:`_hand`) are none.
    """
    source = "blurred render" if blur else "render"
    for seed in seeds:
        rng = np.random.default_rng(seed)
        scene = _tray(rng, cocked_share=0.0 if blur else 0.5)
        image, region = scene.image, (0.0, 0.0, 0.0, 0.0)
        if blur:
            image, region = blurred(scene, rng)
        image = np.ascontiguousarray(image)
        boxes, crops = _nofaces(reader, image)
        labels: list[tuple[bool, str] | None] = []
        for box in boxes:
            near = [d for d in scene.dice if iou(box, d.box) >= 0.3]
            if not near:
                labels.append((False, f"{source}: no die"))
                continue
            die = near[0]
            inside = (
                die.box[0] >= 0
                and die.box[1] >= 0
                and die.box[2] <= SCENE_SIZE[1]
                and die.box[3] <= SCENE_SIZE[0]
            )
            if not inside:
                labels.append(None)  # cut by the picture's edge: not asked
            elif blur:
                # A die beside the blurred one is sharp, and flat: not asked.
                labels.append(
                    (True, f"{source}: blurred die") if _within(die.box, region) else None
                )
            elif die.label not in (0, None):
                labels.append(None)  # a flat die the model calls no face: not asked
            else:
                labels.append((True, "render: leaning die"))
        rows.add(checker, crops, labels, split)
        # Their own generator, so the rows above stay what they were for a seed.
        bare = _bare(reader, image, [d.box for d in scene.dice], np.random.default_rng([seed, 1]))
        rows.add(checker, bare, [(False, f"{source}: bare")] * len(bare), split)
        if blur and hands:
            dice = [d.box for d in scene.dice]
            hand = _hand(reader, scene.image, dice, np.random.default_rng([seed, 2]), hands)
            rows.add(checker, hand, [(False, f"{source}: hand bare")] * len(hand), split)


def _photo_rows(
    reader: DiceReader, checker: DieChecker, data: Path, rows: Rows, *, hands: int = 0
) -> None:
    """Add the "no face" boxes of every photo under ``data``: on a labelled die, or on none;
    and up to ``hands`` boxes on a blurred hand drawn over each (:func:`_hand`)."""
    records = [r for r in load_sources(data) if not r.is_crop and r.dice]
    for index, record in enumerate(tqdm(records, desc="photos", unit="photo")):
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
        bare = _bare(reader, image, truth, np.random.default_rng([index, 2]))
        rows.add(checker, bare, [(False, f"{record.source}: bare")] * len(bare), record.split)
        # The same photo out of focus: a real die blurred is a blurred die, and a phantom
        # blurred (a screw head, a round mark) is still none, though as smooth as a die.
        phantoms = [b for b, label in zip(boxes, labels, strict=True) if label and not label[0]]
        _blurred_photo_rows(reader, checker, image, truth, phantoms, record, index, rows)
        if hands:
            hand = _hand(reader, image, truth, np.random.default_rng([index, 4]), hands)
            kind = f"{record.source}: blurred hand bare"
            rows.add(checker, hand, [(False, kind)] * len(hand), record.split)


def _blurred_photo_rows(
    reader: DiceReader,
    checker: DieChecker,
    image: UInt8Image,
    truth: Sequence[FloatBox],
    phantoms: Sequence[FloatBox],
    record: Record,
    index: int,
    rows: Rows,
) -> None:
    """Add the labelled dice and the phantoms of a photo blurred by 3 to 25 % of its dice's
    median side, those the face model calls "no face": blurred dice, and blurred phantoms."""
    if not truth:
        return
    rng = np.random.default_rng([index, 3])
    side = float(np.median([max(b[2] - b[0], b[3] - b[1]) for b in truth]))
    sigma = max(float(rng.uniform(0.03, 0.25)) * side, 0.5)
    soft = np.asarray(cv2.GaussianBlur(image, (0, 0), sigma), np.uint8)
    for boxes, label in ((truth, (True, "blurred die")), (phantoms, (False, "blurred no die"))):
        if not boxes:
            continue
        crops = crops_for_model(soft, boxes)
        crops = np.asarray(crops[_no_face(reader, crops)], np.float32)
        kind = (label[0], f"{record.source}: {label[1]}")
        rows.add(checker, crops, [kind] * len(crops), record.split)


@dataclass
class HiddenRows:
    """Rows of the boxes read as a face (:func:`vision.die_check.hidden_rows`), or of those the
    reader would drop (:meth:`add_dropped`): whether each is a die partly hidden (or, for the
    leaning check's rows, :func:`_leaning_rows`, leaning), its kind, split, and whether the
    face model read its value right (always False for dropped ones)."""

    rows: list[npt.NDArray[np.float32]] = dataclasses.field(default_factory=list)
    is_hidden: list[bool] = dataclasses.field(default_factory=list)
    kind: list[str] = dataclasses.field(default_factory=list)
    split: list[str] = dataclasses.field(default_factory=list)
    right: list[bool] = dataclasses.field(default_factory=list)

    def append(
        self, row: npt.NDArray[np.float32], *, label: bool, kind: str, split: str, right: bool
    ) -> None:
        """Add one row: whether it is what the check asks about, its kind and split, and
        whether the face model read its value right."""
        self.rows.append(row)
        self.is_hidden.append(label)
        self.kind.append(kind)
        self.split.append(split)
        self.right.append(right)

    def add(
        self,
        reader: DiceReader,
        checker: DieChecker,
        image: UInt8Image,
        dice: Sequence[tuple[FloatBox, int]],
        hidden: tuple[FloatBox, int] | None,
        kind: str,
        split: str,
        spilled: Sequence[tuple[FloatBox, int]] = (),
        dropped_rows: HiddenRows | None = None,
    ) -> None:
        """Add the boxes of ``image`` read as a face that lie on a die: the ``hidden`` one (its
        box holds the box's centre) or a whole one of ``dice`` (box and value; IoU 0.5 or more);
        and the ``spilled`` boxes (box and the value of the die they hold) that the face model
        reads right, as whole dice. To ``dropped_rows``, the located boxes the reader would
        drop (:func:`vision.die_check.dropped`): the hidden die's, or a phantom's (IoU under
        0.05 with every die)."""
        located = reader.locate(image)
        boxes = [
            (float(x0), float(y0), float(x1), float(y1))
            for x0, y0, x1, y1 in (d.box for d in located)
        ]
        count = len(boxes)
        boxes += [box for box, _ in spilled]
        if not boxes:
            return
        crops = crops_for_model(image, boxes)
        probs = reader.read_crops(crops)
        if dropped_rows is not None:
            dropped_rows.add_dropped(
                checker, crops[:count], boxes[:count], probs[:count], dice, hidden, kind, split
            )
        face = np.flatnonzero(probs.argmax(axis=1) != 0)
        if not len(face):
            return
        rows = hidden_rows(
            checker.features(crops[face]),
            [boxes[int(i)] for i in face],
            probs[face],
            crops=crops[face],
        )
        for row, i in zip(rows, face, strict=True):
            box = boxes[int(i)]
            cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            truth: tuple[bool, int] | None = None
            source = kind
            if i >= count:
                value = spilled[int(i) - count][1]
                if int(np.argmax(probs[i])) == value:
                    truth, source = (False, value), f"{kind} spilled"
            elif hidden is not None and _within((cx, cy, cx, cy), hidden[0]):
                truth = (True, hidden[1])
            else:
                overlaps = [iou(box, die) for die, _ in dice]
                if overlaps and max(overlaps) >= 0.5:
                    truth = (False, dice[int(np.argmax(overlaps))][1])
            if truth is None:
                continue
            kind_of = f"{source} {'hidden' if truth[0] else 'whole'}"
            right = int(np.argmax(probs[i])) == truth[1]
            self.append(row, label=truth[0], kind=kind_of, split=split, right=right)

    def add_dropped(
        self,
        checker: DieChecker,
        crops: npt.NDArray[np.float32],
        boxes: Sequence[FloatBox],
        probs: npt.NDArray[np.float32],
        dice: Sequence[tuple[FloatBox, int]],
        hidden: tuple[FloatBox, int] | None,
        kind: str,
        split: str,
    ) -> None:
        """Add the boxes of one picture that the reader would drop (:func:`dropped`) and that
        lie on the ``hidden`` die (its box holds the box's centre) or clear of every die."""
        drop = np.flatnonzero(dropped(probs))
        if not len(drop):
            return
        faces = [box for box, row in zip(boxes, probs, strict=True) if int(np.argmax(row)) != 0]
        rows = hidden_rows(
            checker.features(crops[drop]),
            [boxes[int(i)] for i in drop],
            probs[drop],
            reference=faces,
            crops=crops[drop],
        )
        every = [box for box, _ in dice] + ([] if hidden is None else [hidden[0]])
        for row, i in zip(rows, drop, strict=True):
            box = boxes[int(i)]
            cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            if hidden is not None and _within((cx, cy, cx, cy), hidden[0]):
                label = True
            elif all(iou(box, die) < 0.05 for die in every):
                label = False
            else:
                continue
            kind_of = f"{kind} {'hidden' if label else 'phantom'}"
            self.append(row, label=label, kind=kind_of, split=split, right=False)


def _hide(image: UInt8Image, box: FloatBox, rng: np.random.Generator) -> UInt8Image:
    """``image`` with the die in ``box`` partly hidden as training hides it
    (:func:`vision.train.data.occlude`: 30 to 65 % of its box)."""
    window, _ = occlude(image, box, rng, least=0.3)
    margin = 2.0 * max(box[2] - box[0], box[3] - box[1])
    x0, y0 = max(int(box[0] - margin), 0), max(int(box[1] - margin), 0)
    out = image.copy()
    out[y0 : y0 + window.shape[0], x0 : x0 + window.shape[1]] = window
    return out


def _spilled(
    dice: Sequence[tuple[FloatBox, int]], rng: np.random.Generator
) -> list[tuple[FloatBox, int]]:
    """Each die's box (and value) stretched on one side by 15 to 50 % of its side, as the
    locator boxes a die pressed against another when its box takes in a strip of the other."""
    out: list[tuple[FloatBox, int]] = []
    for (x0, y0, x1, y1), value in dice:
        grow = float(rng.uniform(0.15, 0.5)) * max(x1 - x0, y1 - y0)
        side = int(rng.integers(4))
        box = (
            x0 - grow * (side == 0),
            y0 - grow * (side == 1),
            x1 + grow * (side == 2),
            y1 + grow * (side == 3),
        )
        out.append((box, value))
    return out


def _hidden_pictures(
    reader: DiceReader,
    checker: DieChecker,
    image: UInt8Image,
    dice: Sequence[tuple[FloatBox, int]],
    rng: np.random.Generator,
    rows: HiddenRows,
    kind: str,
    split: str,
    spill: np.random.Generator | None = None,
    dropped_rows: HiddenRows | None = None,
) -> None:
    """Add the rows of ``image`` as it is (and with ``spill``, of its dice's boxes stretched:
    :func:`_spilled`), and of two copies each with one die hidden; the boxes the reader would
    drop to ``dropped_rows``."""
    spilled = [] if spill is None else _spilled(dice, spill)
    rows.add(reader, checker, image, dice, None, kind, split, spilled, dropped_rows)
    for index in list(rng.permutation(len(dice)))[:2]:
        rest = [die for i, die in enumerate(dice) if i != index]
        hidden = _hide(image, dice[int(index)][0], rng)
        rows.add(reader, checker, hidden, rest, dice[int(index)], kind, split, (), dropped_rows)


def _hidden_rows(
    reader: DiceReader,
    checker: DieChecker,
    data: Path,
    first: int,
    fitted: int,
    measured: int,
    *,
    spill: bool = False,
) -> tuple[HiddenRows, HiddenRows]:
    """The rows the partly-hidden checks are fitted and measured on, of the boxes read as a
    face and of those the reader would drop: rendered scenes from seed ``first`` (``fitted`` to
    fit, ``measured`` more to measure) and every labelled photo; with ``spill``, their dice's
    boxes stretched too (:func:`_spilled`), as whole dice."""
    rows, drops = HiddenRows(), HiddenRows()

    def spilling(*key: int) -> np.random.Generator | None:
        # Its own generator, so the other rows stay what they were for a seed.
        return np.random.default_rng([*key, 9]) if spill else None

    for seed in tqdm(range(first, first + fitted + measured), desc="hidden dice", unit="scene"):
        rng = np.random.default_rng(seed)
        scene = _tray(rng, cocked_share=0.0, touching=TOUCHING)
        whole = [
            (d.box, d.label)
            for d in scene.dice
            if d.label is not None and d.label > 0 and _within(d.box, (0, 0, *SCENE_SIZE[::-1]))
        ]
        split = "train" if seed < first + fitted else "val"
        _hidden_pictures(
            reader, checker, scene.image, whole, rng, rows, "render", split, spilling(seed), drops
        )
    records = [r for r in load_sources(data) if not r.is_crop and r.dice]
    for index, record in enumerate(tqdm(records, desc="hidden dice", unit="photo")):
        image = read_image(record.path)
        dice = list(zip(die_boxes(record, image), [d.value for d in record.dice], strict=True))
        rng = np.random.default_rng([index, 5])
        _hidden_pictures(
            reader,
            checker,
            image,
            dice,
            rng,
            rows,
            record.source,
            record.split,
            spilling(index),
            drops,
        )
    return rows, drops


LEANING_SHARE = 0.7
"""The share of the dice cocked in the leaning check's renders. In 150 scenes at 1.0, 20 of 396
leaning dice are read as a face, with 68 flat dice beside them; at 0.5, 13 of 187, with 398
flat. Between, both kinds come in numbers from the same scenes, so the check cannot tell them
apart by the scene."""


def _faces(
    reader: DiceReader, image: UInt8Image, extra: Sequence[FloatBox] = ()
) -> tuple[list[FloatBox], npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """The located boxes, and the ``extra`` ones, that the face model reads as a face: their
    crops and readings, and which are of ``extra``."""
    boxes = [
        (float(x0), float(y0), float(x1), float(y1))
        for x0, y0, x1, y1 in (d.box for d in reader.locate(image))
    ]
    count = len(boxes)
    boxes += extra
    if not boxes:
        crops = np.zeros((0, 3, 64, 64), np.float32)
        return [], crops, np.zeros((0, CLASSES), np.float32), np.zeros(0, np.bool_)
    crops = crops_for_model(image, boxes)
    probs = reader.read_crops(crops)
    face = np.flatnonzero(probs.argmax(axis=1) != 0)
    return [boxes[int(i)] for i in face], crops[face], probs[face], face >= count


def _add_leaning(
    rows: HiddenRows,
    reader: DiceReader,
    checker: DieChecker,
    image: UInt8Image,
    leaning: Sequence[FloatBox],
    flat: Sequence[tuple[FloatBox, int]],
    kind: str,
    split: str,
    spilled: Sequence[tuple[FloatBox, int]] = (),
) -> None:
    """Add the boxes of ``image`` read as a face that lie on a ``leaning`` die (IoU 0.4 or
    more: a leaning die's box holds its sides too) or on a ``flat`` one (IoU 0.5); and the
    ``spilled`` boxes (box and the value of the flat die they hold) read right, as flat."""
    boxes, crops, probs, extra = _faces(reader, image, [box for box, _ in spilled])
    if not boxes:
        return
    values = dict(spilled)
    found = hidden_rows(checker.features(crops), boxes, probs, crops=crops)
    for row, box, read, stretched in zip(found, boxes, probs, extra, strict=True):
        lean = max((iou(box, die) for die in leaning), default=0.0)
        overlaps = [iou(box, die) for die, _ in flat]
        if stretched:
            if int(np.argmax(read)) == values[box]:
                rows.append(row, label=False, kind=f"{kind} spilled flat", split=split, right=True)
            continue
        if lean >= 0.4:
            label, right = True, False
        elif overlaps and max(overlaps) >= 0.5:
            label, right = False, int(np.argmax(read)) == flat[int(np.argmax(overlaps))][1]
        else:
            continue
        kind_of = f"{kind} {'leaning' if label else 'flat'}"
        rows.append(row, label=label, kind=kind_of, split=split, right=right)


def _leaning_rows(
    reader: DiceReader,
    checker: DieChecker,
    data: Path,
    first: int,
    fitted: int,
    measured: int,
    *,
    touching: float = 0.0,
    spill: bool = False,
) -> HiddenRows:
    """The rows the leaning check is fitted and measured on: the faces read on rendered trays
    with :data:`LEANING_SHARE` of the dice cocked (and a ``touching`` share of the others pushed
    against a die, lying flat), from seed ``first`` (``fitted`` to fit, ``measured`` more to
    measure), and on every labelled photo (flat dice all); with ``spill``, the flat dice's
    boxes stretched too (:func:`_spilled`: as the locator boxes a die pressed against another)."""
    rows = HiddenRows()

    def spilling(flat: Sequence[tuple[FloatBox, int]], *key: int) -> list[tuple[FloatBox, int]]:
        # Its own generator, so the other rows stay what they were for a seed.
        return _spilled(flat, np.random.default_rng([*key, 9])) if spill else []

    frame = (0.0, 0.0, float(SCENE_SIZE[1]), float(SCENE_SIZE[0]))
    for seed in tqdm(range(first, first + fitted + measured), desc="leaning dice", unit="scene"):
        scene = _tray(np.random.default_rng(seed), cocked_share=LEANING_SHARE, touching=touching)
        # A die cut by the picture's edge is neither: the reader asks about those apart.
        leaning = [d.box for d in scene.dice if d.label == 0 and _within(d.box, frame)]
        flat = [(d.box, d.label) for d in scene.dice if d.label and _within(d.box, frame)]
        split = "train" if seed < first + fitted else "val"
        spilled = spilling(flat, seed)
        _add_leaning(rows, reader, checker, scene.image, leaning, flat, "render", split, spilled)
    records = [r for r in load_sources(data) if not r.is_crop and r.dice and not r.known_issue]
    for index, record in enumerate(tqdm(records, desc="leaning dice", unit="photo")):
        image = read_image(record.path)
        flat = list(zip(die_boxes(record, image), [d.value for d in record.dice], strict=True))
        spilled = spilling(flat, index)
        _add_leaning(rows, reader, checker, image, [], flat, record.source, record.split, spilled)
    return rows


def _parser() -> argparse.ArgumentParser:
    """The command's options: what to fit on, and each check's layer and threshold."""
    parser = argparse.ArgumentParser(
        prog="python -m vision.train.die_check", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared photo folders")
    parser.add_argument(
        "--model", type=Path, default=DEFAULT_MODEL, help="the face model to fit to"
    )
    parser.add_argument(
        "--locator-model",
        type=Path,
        help="the learned locator whose boxes the checks judge (default: the reader's)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_DIE_CHECK)
    parser.add_argument("--scenes", type=int, default=500, help="rendered scenes to fit on")
    parser.add_argument("--val-scenes", type=int, default=200, help="rendered scenes to measure on")
    parser.add_argument(
        "--blurred-scenes",
        type=int,
        default=300,
        help="out-of-focus scenes to fit on (half as many more measure)",
    )
    parser.add_argument(
        "--hand-boxes",
        type=int,
        default=1,
        help="boxes on a blurred hand per out-of-focus scene and per photo (0: none)",
    )
    parser.add_argument("--seed", type=int, default=5000, help="the first scene's seed")
    parser.add_argument("--l2", type=float, default=0.01)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument(
        "--blurred-threshold",
        type=float,
        default=0.85,
        help="the blurred-die check's threshold (0.85 takes as many of the training rows'"
        " blurred dice as the check fitted on every box took at 0.9)",
    )
    parser.add_argument(
        "--hidden-scenes",
        type=int,
        default=1200,
        help="rendered scenes with dice partly hidden to fit on (a third as many more measure)",
    )
    parser.add_argument(
        "--hidden-threshold",
        type=float,
        default=0.97,
        help="the partly-hidden check's threshold (0.97 with the layer: of the dice lying pressed"
        " together in vision.synthetic's renders, seeds 100-123, 2 of 360 asked about, and the"
        " hidden probe's wrong values as few as at 0.95; the linear check took 0.95)",
    )
    parser.add_argument(
        "--hidden-units",
        type=int,
        default=64,
        help="a layer of this many units in the partly-hidden check of the faces (0: none, the"
        " linear check shipped before; models/EXPERIMENTS.md, 'A partly-hidden check with a"
        " layer')",
    )
    parser.add_argument(
        "--edges",
        choices=("dropped", "both", "none"),
        default="dropped",
        help="which partly-hidden checks read the crop's edges too"
        " (vision.preprocess.edge_features): that of the boxes otherwise dropped, both, or none",
    )
    parser.add_argument(
        "--hidden-dropped-units",
        type=int,
        default=64,
        help="a layer of this many units in the partly-hidden check of the boxes otherwise"
        " dropped (0: none)",
    )
    parser.add_argument(
        "--hidden-dropped-threshold",
        type=float,
        default=0.985,
        help="the threshold of the partly-hidden check of the boxes the reader would drop"
        " (0.985 with the edges and the layer: no held-out phantom of the photos taken, 1 of"
        " 801 at 0.98; the linear check without the edges took 0.98)",
    )
    parser.add_argument(
        "--spilled",
        action="store_true",
        help="fit the partly-hidden check on dice boxed with a strip of the table or a neighbour"
        " too, read right, as whole dice",
    )
    parser.add_argument(
        "--leaning-scenes",
        type=int,
        default=3000,
        help="rendered scenes with most dice cocked to fit the leaning check of the faces on (a"
        " third as many more measure; 0: no leaning check)",
    )
    parser.add_argument(
        "--leaning-units",
        type=int,
        default=64,
        help="a layer of this many units in the leaning check of the faces (0: none)",
    )
    parser.add_argument(
        "--leaning-threshold",
        type=float,
        default=0.95,
        help="the leaning check's threshold (0.95: on the held-out renders, a wrong value"
        " counted three times a question, 0.9 and 0.95 cost alike, and 0.95 takes half the flat"
        " dice: 5 of 1355 against 10)",
    )
    parser.add_argument(
        "--leaning-touching",
        type=float,
        default=0.0,
        help="the share of the dice in the leaning check's renders pushed against another, flat"
        " (0.4, measured on 2026-12-05 and not shipped: no die pressed together lost, but few"
        " leaning ones caught; models/EXPERIMENTS.md, 'Leaning dice read as a face, checked')",
    )
    parser.add_argument(
        "--leaning-spilled",
        action="store_true",
        help="fit the leaning check on flat dice boxed with a strip of the table or a neighbour"
        " too, read right, as flat",
    )
    parser.add_argument(
        "--leaning-edges",
        action="store_true",
        help="the leaning check reads the crop's edges too (vision.preprocess.edge_features;"
        " measured on 2026-12-05: as many leaning dice called cocked, more right dice lost, a"
        " millisecond more a frame; models/EXPERIMENTS.md, 'Leaning dice read as a face, checked')",
    )
    only = parser.add_mutually_exclusive_group()
    only.add_argument(
        "--only-hidden",
        action="store_true",
        help="refit the partly-hidden checks alone, keeping the other checks of --out",
    )
    only.add_argument(
        "--only-leaning",
        action="store_true",
        help="refit the leaning check of the faces alone, keeping the other checks of --out",
    )
    parser.add_argument("--threads", type=int, default=2)
    return parser


def _refuse_what_cannot_be_fitted(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> None:
    """End the command with the parser's error on an option no check can be fitted with."""
    for option, units in (
        ("--hidden-units", args.hidden_units),
        ("--hidden-dropped-units", args.hidden_dropped_units),
        ("--leaning-units", args.leaning_units),
    ):
        if units < 0:
            parser.error(f"{option} {units}: give 0 (no layer) or more units")
    if not 0.0 <= args.leaning_touching <= 1.0:
        parser.error(f"--leaning-touching {args.leaning_touching}: give a share from 0 to 1")
    if args.leaning_scenes < 0 or (args.only_leaning and args.leaning_scenes == 0):
        parser.error(f"--leaning-scenes {args.leaning_scenes}: give 1 or more scenes")


@dataclasses.dataclass(frozen=True)
class _Fitter:
    """What every check is fitted with: the options, the reader whose boxes the checks judge,
    a checker that gives the face model's features, and the features' name and sha256."""

    args: argparse.Namespace
    reader: DiceReader
    checker: DieChecker
    name: str
    sha: str

    @classmethod
    def of(cls, args: argparse.Namespace, reader: DiceReader) -> _Fitter:
        name, sha = model_features(args.model)
        # A check that judges nothing: the checker is used for the face model's features alone.
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
        return cls(args, reader, checker, name, sha)

    def _check(
        self,
        features: npt.NDArray[np.float32],
        positive: npt.NDArray[np.bool_],
        threshold: float,
        *,
        units: int = 0,
    ) -> DieCheck:
        """A check fitted to tell the ``positive`` rows of ``features`` from the others, for
        this face model, with ``--l2``."""
        return fit_die_check(
            features,
            positive,
            features_sha256=self.sha,
            features_name=self.name,
            l2=self.args.l2,
            threshold=threshold,
            units=units,
        )

    def _fit(
        self,
        rows: HiddenRows,
        *,
        threshold: float,
        what: str = "partly-hidden check",
        units: int = 0,
        columns: int | None = None,
        positive: str = "hidden",
    ) -> tuple[DieCheck, list[str]]:
        """A check of the faces (partly hidden, or leaning: ``positive``) fitted on the rows of
        the training split (with a layer of ``units`` between features and output, if any; on
        their first ``columns`` numbers, if given), and the lines that say, per kind and split,
        how many boxes it asks about (and of the whole or flat dice, those the face model read
        right)."""
        features = np.stack(rows.rows)[:, :columns]
        is_hidden = np.array(rows.is_hidden)
        fit = np.array([s == "train" for s in rows.split])
        check = self._check(features[fit], is_hidden[fit], threshold, units=units)
        probability = check.probability(features)
        right = np.array(rows.right)
        lines = [
            f"{what} fitted on {int(fit.sum())} boxes ({int(is_hidden[fit].sum())}"
            f" {positive}); boxes asked about / boxes (whole or flat dice read right asked about /"
            " read right), at the threshold and beside it:"
        ]
        for split in ("train", "val"):
            in_split = np.array([s == split for s in rows.split])
            for kind in sorted(set(rows.kind)):
                these = in_split & np.array([k == kind for k in rows.kind])
                if not these.any():
                    continue
                cells = []
                for level in sorted({0.8, 0.9, 0.95, 0.98, 0.99, threshold}):
                    said = probability[these] >= level
                    mark = "*" if level == threshold else ""
                    cell = f"{mark}{level}: {int(said.sum())} / {int(these.sum())}"
                    if kind.endswith(("whole", "flat")):
                        ok = right[these]
                        cell += f" ({int(said[ok].sum())} / {int(ok.sum())})"
                    cells.append(cell)
                lines.append(f"  {split} {kind}: " + "; ".join(cells))
        return check, lines

    def hidden(self) -> tuple[DieCheck, DieCheck, list[str]]:
        """The partly-hidden checks of the faces and of the boxes otherwise dropped."""
        args = self.args
        first = args.seed + 200_000
        hidden, drops = _hidden_rows(
            self.reader,
            self.checker,
            args.data,
            first,
            args.hidden_scenes,
            args.hidden_scenes // 3,
            spill=args.spilled,
        )
        # The rows hold the crop's edges last; a check without them reads the numbers before.
        plain = len(hidden.rows[0]) - EDGE_FEATURES
        face, lines = self._fit(
            hidden,
            threshold=args.hidden_threshold,
            units=args.hidden_units,
            columns=None if args.edges == "both" else plain,
        )
        drop, more = self._fit(
            drops,
            threshold=args.hidden_dropped_threshold,
            what="partly-hidden check of the boxes otherwise dropped",
            units=args.hidden_dropped_units,
            columns=None if args.edges != "none" else plain,
        )
        return face, drop, lines + more

    def leaning(self) -> tuple[DieCheck | None, list[str]]:
        """The leaning check of the faces (None with no leaning scenes, or no leaning die read
        as a face in them)."""
        args = self.args
        if not args.leaning_scenes:
            return None, []
        first = args.seed + 300_000
        rows = _leaning_rows(
            self.reader,
            self.checker,
            args.data,
            first,
            args.leaning_scenes,
            args.leaning_scenes // 3,
            touching=args.leaning_touching,
            spill=args.leaning_spilled,
        )
        if not any(rows.is_hidden):
            return None, ["no leaning die was read as a face: no leaning check"]
        return self._fit(
            rows,
            threshold=args.leaning_threshold,
            what="leaning check of the faces",
            units=args.leaning_units,
            # The rows hold the crop's edges last; without them the check reads those before.
            columns=None if args.leaning_edges else len(rows.rows[0]) - EDGE_FEATURES,
            positive="leaning",
        )

    def box_rows(self) -> Rows:
        """The boxes of the renders (sharp and blurred, each with its held-out scenes) and of
        the photos, with the face model's features of each."""
        args = self.args
        rows = Rows([], [], [], [], [])
        renders = (
            (False, args.seed, args.scenes, args.val_scenes, "renders"),
            (
                True,
                args.seed + 100_000,
                args.blurred_scenes,
                args.blurred_scenes // 2,
                "blurred renders",
            ),
        )
        for blur, first, fitted, measured, what in renders:
            splits = (
                ("train", range(first, first + fitted), what),
                ("val", range(first + fitted, first + fitted + measured), f"held-out {what}"),
            )
            for split, seeds, desc in splits:
                scenes = iter(tqdm(seeds, desc=desc, unit="scene"))
                _render_rows(
                    self.reader, self.checker, scenes, rows, split, blur=blur, hands=args.hand_boxes
                )
        _photo_rows(self.reader, self.checker, args.data, rows, hands=args.hand_boxes)
        return rows

    def box_checks(self) -> tuple[DieCheck, list[str]]:
        """The check of the boxes the face model calls "no face" (a leaning die, or nothing)
        with its blurred-die check, fitted on :meth:`box_rows`; the lines that say how each
        kind of box fared."""
        rows = self.box_rows()
        features = np.stack(rows.features)
        is_die = np.array(rows.is_die)
        fit = np.array([s == "train" for s in rows.split])

        def fit_on(these: npt.NDArray[np.bool_], threshold: float) -> DieCheck:
            return self._check(features[these], is_die[these], threshold)

        # The leaning-die check is fitted without the blurred rows and the bare places, as it
        # was before them: blurred dice lie where its features put phantoms, and would cost it
        # dice.
        leaning = fit & np.array(["blurred" not in k and not k.endswith("bare") for k in rows.kind])
        check = fit_on(leaning, self.args.threshold)
        # The blurred-die check: blurred dice against every phantom, sharp or not, bare places
        # and hands; only the boxes below the sharpness line, the only ones it is asked about.
        # Fitted on every box as well, it spent its one line on telling sharp phantoms from
        # blurred dice, which the line does already: on the held-out rows it took 42 phantoms
        # and 19 hands of those below the line where this takes 33 and 1, for as many blurred
        # dice (753 then, 759 now).
        sharp = np.array(rows.sharpness, np.float32)
        blurry = fit & np.array([k.endswith(("blurred die", "no die", "bare")) for k in rows.kind])
        blurry &= sharp < BLURRED_BELOW
        check = dataclasses.replace(check, blurred=fit_on(blurry, self.args.blurred_threshold))
        head = (
            f"fitted on {int(leaning.sum())} boxes (leaning dice) and {int(blurry.sum())} (blurred"
            " ones); boxes reported cocked, uncertain (blurred) / boxes, and their sharpness"
            " (5th, 50th, 95th percentiles):"
        )
        return check, [head, *_box_lines(rows, check, features, sharp)]


def _box_lines(
    rows: Rows,
    check: DieCheck,
    features: npt.NDArray[np.float32],
    sharp: npt.NDArray[np.float32],
) -> list[str]:
    """How ``check`` (with its blurred-die check) judges each kind of box in each split, and
    what the blurred-die check would take at other thresholds."""
    assert check.blurred is not None
    dies, blurred = check.judge(features, sharp)
    is_die = np.array(rows.is_die)
    lines = []
    for split in ("train", "val"):
        lines.append(f"  {split}:")
        in_split = np.array([s == split for s in rows.split])
        for kind in sorted(set(rows.kind)):
            these = in_split & np.array([k == kind for k in rows.kind])
            if these.any():
                low, mid, high = np.percentile(sharp[these], [5.0, 50.0, 95.0])
                lines.append(
                    f"    {kind}: {int((dies & ~blurred)[these].sum())},"
                    f" {int(blurred[these].sum())} / {int(these.sum())};"
                    f" sharpness {low:.3f} {mid:.3f} {high:.3f}"
                )
    lines.append(
        "  the blurred-die check's threshold, boxes below the sharpness line:"
        " blurred dice it takes / of; phantoms and bare places it takes / of:"
    )
    for split in ("train", "val"):
        below = np.array([s == split for s in rows.split]) & (sharp < BLURRED_BELOW)
        p_blurred = check.blurred.probability(features[below])
        on_die = np.array([k.endswith("blurred die") for k in rows.kind])[below]
        phantom = ~is_die[below]
        for threshold in (0.5, 0.7, 0.8, 0.85, 0.9, 0.95):
            said = p_blurred >= threshold
            lines.append(
                f"    {split} {threshold}: {int(said[on_die].sum())} / {int(on_die.sum())};"
                f" {int(said[phantom].sum())} / {int(phantom.sum())}"
            )
    return lines


def _refit_one(parser: argparse.ArgumentParser, fitter: _Fitter) -> None:
    """Refit the check ``--only-hidden`` or ``--only-leaning`` names in ``--out``'s file,
    keeping the others (the parser's error if that file serves another face model)."""
    args = fitter.args
    try:
        kept = load_die_check(args.out)
    except ModelLoadError as error:
        parser.error(f"{error} (--only-* refits one check of an existing file)")
    if (kept.features, kept.features_sha256) != (fitter.name, fitter.sha):
        parser.error(f"{args.out} was fitted to another face model; fit every check again")
    if args.only_hidden:
        hidden_check, dropped_check, lines = fitter.hidden()
        kept = dataclasses.replace(kept, hidden=hidden_check, hidden_dropped=dropped_check)
    else:
        leaning_check, lines = fitter.leaning()
        kept = dataclasses.replace(kept, leaning=leaning_check)
    args.out.write_text(json.dumps(kept.to_json(), indent=1) + "\n", "utf-8")
    print("\n".join([*lines, f"wrote {args.out}"]))  # noqa: T201


def main(argv: list[str] | None = None) -> int:
    """Fit every check of the die check (or the one ``--only-*`` names) and write it."""
    parser = _parser()
    args = parser.parse_args(argv)
    _refuse_what_cannot_be_fitted(parser, args)
    try:
        reader = reader_from(args.model, locator_model=args.locator_model, threads=args.threads)
    except ModelLoadError as error:
        parser.error(str(error))
    fitter = _Fitter.of(args, reader)
    if args.only_hidden or args.only_leaning:
        _refit_one(parser, fitter)
        return 0
    check, lines = fitter.box_checks()
    hidden_check, dropped_check, hidden_lines = fitter.hidden()
    leaning_check, leaning_lines = fitter.leaning()
    check = dataclasses.replace(
        check, hidden=hidden_check, hidden_dropped=dropped_check, leaning=leaning_check
    )
    args.out.write_text(json.dumps(check.to_json(), indent=1) + "\n", "utf-8")
    lines += [*hidden_lines, *leaning_lines, f"wrote {args.out}"]
    print("\n".join(lines))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())

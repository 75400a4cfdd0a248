"""Load the shared dice photo format, split it per source and cut training crops.

The folder format is described in ``/work/shared/data/dice/README.md``: one ``labels.jsonl`` per
source with ``{"image", "width", "height", "split", "dice": [{"value", "box"}]}`` per photo, or
``{"image", "value"}`` per crop for crop folders. Everything here is numpy and OpenCV only, so it
can be tested without torch.
"""

from __future__ import annotations

import argparse
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect import centre_inside, covered_share, iou
from vision.labels import LABELS, read_labels
from vision.preprocess import MODEL_SIZE, crop_for_model, square_around
from vision.review import reviewed, untrusted

__all__ = [
    "DEFAULT_DATA",
    "CropSet",
    "LabelledDie",
    "Proposal",
    "Proposer",
    "Record",
    "Split",
    "UnknownSourceError",
    "SourceFolderError",
    "add_exclude_option",
    "add_source_option",
    "cut_crops",
    "die_boxes",
    "lay_cover",
    "load_folder",
    "load_sources",
    "read_image",
    "shown_box",
    "split_of",
    "train_and_val",
]

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "dice"
"""The shared photo folders: ``shared/data/dice`` beside the repository (as CI checks it out)."""

Split = Literal["train", "val"]
FloatBox = tuple[float, float, float, float]
UInt8Image = npt.NDArray[np.uint8]

# matteop65 labels only the top face or the pip cluster; see _whole_die_boxes.
TOP_FACE_SOURCES = frozenset({"matteop65_Dice_Detection_Recognition"})
# The skovy frames and crops come from the same recordings: they are split together, by day.
SKOVY_VAL_DAY = "20221210"
# nell-byler ships only its author's train split: we hold out a fixed share of photos.
NELL_VAL_PERCENT = 20


@dataclass(frozen=True)
class LabelledDie:
    """One labelled die: its face value and its box in pixels of the stored image."""

    value: int
    box: FloatBox
    suspect: bool = False


@dataclass(frozen=True)
class Record:
    """One photo (or one crop, with ``is_crop``) of a source, with the split we give it."""

    source: str
    path: Path
    split: Split
    dice: tuple[LabelledDie, ...]
    known_issue: str | None = None
    is_crop: bool = False
    crop_value: int | None = None
    group: str = field(default="")
    augmented: bool = False
    """A copy the source made of another photo, with noise or blur added (Epanemu's training
    photos), not a scene of its own."""


def _stable_percent(text: str) -> int:
    """Map a name to 0..99 the same way on every machine and Python run."""
    return zlib.crc32(text.encode("utf-8")) % 100


def split_of(source: str, image: str, source_split: str | None) -> Split:
    """Return our split for one photo: the source's own held-out splits where it has them.

    >>> split_of("Epanemu_GameDiceRecognition", "images/a.jpg", "test")
    'val'
    >>> split_of("skovy_tensorflow-dice-model_crops", "images/one__WIN_20221211_1.jpg", None)
    'train'
    """
    if source.startswith("skovy_"):
        return "val" if SKOVY_VAL_DAY in Path(image).name else "train"
    if source.startswith("nell-byler"):
        return "val" if _stable_percent(Path(image).name) < NELL_VAL_PERCENT else "train"
    if source_split is None or source_split.lower() == "train":
        return "train"
    return "val"


def load_folder(folder: Path) -> list[Record]:
    """Read one source folder's ``labels.jsonl`` into records (all of them, flagged ones too),
    with our review of the labels applied (vision/review.py)."""
    source = folder.name
    records: list[Record] = []
    for raw in (reviewed(source, record) for record in read_labels(folder)):
        image = str(raw["image"])
        split = split_of(source, image, raw.get("split"))
        if "dice" not in raw:
            records.append(
                Record(
                    source=source,
                    path=folder / image,
                    split=split,
                    dice=(),
                    is_crop=True,
                    crop_value=int(raw["value"]),
                    group=image,
                )
            )
            continue
        dice = tuple(
            LabelledDie(
                value=int(die["value"]),
                box=_float_box(die["box"]),
                suspect="suspect_value" in die or untrusted(die),
            )
            for die in raw["dice"]
        )
        records.append(
            Record(
                source=source,
                path=folder / image,
                split=split,
                dice=dice,
                known_issue=raw.get("known_issue"),
                group=str(raw.get("source_id", image)),
                augmented=bool(raw.get("augmented", False)),
            )
        )
    return records


def _float_box(values: Sequence[float]) -> FloatBox:
    """Turn a JSON box into a float tuple."""
    x0, y0, x1, y1 = (float(v) for v in values)
    return (x0, y0, x1, y1)


class SourceFolderError(ValueError):
    """A ``--source`` folder that cannot be added to the training data."""


def load_sources(root: Path = DEFAULT_DATA, extra: Sequence[Path] = ()) -> list[Record]:
    """Read every source folder under ``root`` (sorted by name, so the order is reproducible),
    then the ``extra`` source folders (a table's own photos from ``pipcam photos``).

    An extra folder with the name of a source already read is refused rather than merged.
    """
    folders = sorted(p for p in root.iterdir() if (p / LABELS).is_file())
    taken = {folder.name for folder in folders}
    for folder in extra:
        if folder.name in taken:
            raise SourceFolderError(
                f"--source {folder}: a source named {folder.name!r} is already loaded;"
                " rename the folder"
            )
        if not (folder / LABELS).is_file():
            raise SourceFolderError(
                f"--source {folder}: no labels.jsonl there; a source is a folder in the shared"
                " data format (pipcam photos OUT writes one)"
            )
        taken.add(folder.name)
    return [record for folder in [*folders, *extra] for record in load_folder(folder)]


def read_image(path: Path) -> UInt8Image:
    """Read an image as BGR uint8, raising ``FileNotFoundError`` when OpenCV cannot."""
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise FileNotFoundError(f"cannot read image {str(path)!r}")
    return np.asarray(image, dtype=np.uint8)


def _die_extent(image: UInt8Image, box: FloatBox) -> FloatBox | None:
    """Find the whole die around a top-face box by its colour against the local background."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    reach = max(x1 - x0, y1 - y0, 40.0) * 1.6 + 20
    height, width = image.shape[:2]
    wx0, wy0 = max(0, int(cx - reach)), max(0, int(cy - reach))
    wx1, wy1 = min(width, int(cx + reach)), min(height, int(cy + reach))
    window = image[wy0:wy1, wx0:wx1]
    if window.shape[0] < 8 or window.shape[1] < 8:
        return None
    lab = cv2.cvtColor(window, cv2.COLOR_BGR2LAB).astype(np.float32)
    border = np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]])
    background = np.median(border, axis=0)
    # Lightness counts less than colour: ivory dice and pale wood differ mostly in yellowness.
    distance = np.sqrt((((lab - background) ** 2) * np.array([0.3, 1.0, 1.5])).sum(-1))
    distance = cv2.GaussianBlur(distance, (5, 5), 0)
    scaled = np.clip(distance * 4, 0, 255).astype(np.uint8)
    threshold, _ = cv2.threshold(scaled, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = (scaled > threshold).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    inside = labels[
        max(int(y0) - wy0, 0) : max(int(y1) - wy0, 1), max(int(x0) - wx0, 0) : max(int(x1) - wx0, 1)
    ]
    votes = np.bincount(inside.ravel(), minlength=count)
    votes[0] = 0
    best = int(votes.argmax())
    if votes[best] == 0:
        return None
    bx, by, bw, bh = (int(v) for v in stats[best, :4])
    return (float(bx + wx0), float(by + wy0), float(bx + wx0 + bw), float(by + wy0 + bh))


# How much bigger than its top-face/pip-cluster label a whole die can be: a lone pip is a fifth of
# the die, a six's pip cluster about half. A larger extent is two touching dice merged.
_MAX_GROWTH = {1: 6.0, 2: 3.0, 3: 3.0, 4: 2.4, 5: 2.4, 6: 2.4}


def _whole_die_boxes(image: UInt8Image, dice: Sequence[LabelledDie]) -> list[FloatBox]:
    """Turn top-face/pip-cluster boxes into whole-die boxes (matteop65's convention differs).

    The extent found by colour is kept where its size agrees with the other dice of the photo
    (one dice set, one camera height); otherwise a square of the photo's typical die size is
    centred on the label, since pip clusters are centred on their face.
    """
    found = [_die_extent(image, die.box) for die in dice]
    sides = [
        max(f[2] - f[0], f[3] - f[1])
        for f, die in zip(found, dice, strict=True)
        if f is not None
        and 1.05
        <= max(f[2] - f[0], f[3] - f[1]) / max(_side(die.box), 1.0)
        <= _MAX_GROWTH[die.value]
    ]
    clusters = [_side(die.box) for die in dice if die.value >= 4]
    if sides:
        # Merged neighbours only ever make an extent bigger, so the smallest plausible one wins.
        typical = max(min(sides), 1.15 * max(_side(die.box) for die in dice))
    elif clusters:
        # A four-to-six pip cluster spans about half of the die seen at this camera's angle.
        typical = 1.9 * max(clusters)
    else:
        typical = 75.0
    boxes: list[FloatBox] = []
    for extent, die in zip(found, dice, strict=True):
        cx = (die.box[0] + die.box[2]) / 2
        cy = (die.box[1] + die.box[3]) / 2
        if extent is not None:
            width, height = extent[2] - extent[0], extent[3] - extent[1]
            contains = extent[0] <= cx <= extent[2] and extent[1] <= cy <= extent[3]
            sane = 0.75 * typical <= max(width, height) <= 1.3 * typical
            if contains and sane and min(width, height) >= 0.6 * typical:
                boxes.append(extent)
                continue
        side = max(typical, _side(die.box) * 1.15)
        boxes.append((cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2))
    return boxes


@dataclass(frozen=True)
class Proposal:
    """A box the reader's own locator finds in a training photo, and how sure the current face
    model is that it shows a readable face (its top probability among classes 1..6)."""

    box: FloatBox
    face_probability: float


Proposer = Callable[[UInt8Image], list[Proposal]]
"""Finds die boxes in a photo as the reader would (``vision.train.train.locator_proposer``)."""

# A proposal is the labelled die it overlaps this much; one overlapping no label by more than
# NEGATIVE_IOU is a phantom, cut as class 0 unless the current face model is sure it sees a face
# there (labels miss real dice now and then: that is no phantom). Between the two: skipped.
MATCH_IOU = 0.5
NEGATIVE_IOU = 0.05
SURE_FACE = 0.9
PHANTOM_COPIES = 3


def _side(box: FloatBox) -> float:
    """Longer side of a box."""
    return max(box[2] - box[0], box[3] - box[1])


def die_boxes(record: Record, image: UInt8Image) -> list[FloatBox]:
    """Return whole-die boxes for a photo's labelled dice, whatever the source's box convention."""
    if record.source in TOP_FACE_SOURCES:
        return _whole_die_boxes(image, record.dice)
    return [die.box for die in record.dice]


@dataclass
class CropSet:
    """Model crops as uint8 HWC RGB (compact in memory), their class and where they came from."""

    images: UInt8Image
    labels: npt.NDArray[np.int64]
    sources: list[str]

    def __len__(self) -> int:
        """Number of crops."""
        return int(self.labels.shape[0])

    @staticmethod
    def concat(parts: Sequence[CropSet]) -> CropSet:
        """Join several crop sets in order."""
        if not parts:
            return CropSet(
                np.zeros((0, MODEL_SIZE, MODEL_SIZE, 3), np.uint8), np.zeros(0, np.int64), []
            )
        return CropSet(
            np.concatenate([p.images for p in parts]),
            np.concatenate([p.labels for p in parts]),
            [s for p in parts for s in p.sources],
        )


def to_uint8(crop: npt.NDArray[np.float32]) -> UInt8Image:
    """Turn a ``crop_for_model`` result back into uint8 HWC RGB without loss."""
    return np.asarray(np.rint(crop.transpose(1, 2, 0) * 255.0), dtype=np.uint8)


def jitter_box(box: FloatBox, rng: np.random.Generator, *, shift: float, scale: float) -> FloatBox:
    """Move a box at random by up to ``shift`` of its side and scale it by ``1 +- scale``."""
    side = _side(box)
    cx = (box[0] + box[2]) / 2 + rng.uniform(-shift, shift) * side
    cy = (box[1] + box[3]) / 2 + rng.uniform(-shift, shift) * side
    factor = float(np.exp(rng.uniform(np.log(1 - scale), np.log(1 + scale))))
    half_w = (box[2] - box[0]) * factor / 2
    half_h = (box[3] - box[1]) * factor / 2
    return (cx - half_w, cy - half_h, cx + half_w, cy + half_h)


def occlude(
    image: UInt8Image, box: FloatBox, rng: np.random.Generator, *, least: float = 0.3
) -> tuple[UInt8Image, FloatBox]:
    """A window of ``image`` round the die in ``box``, the die partly hidden, and the box (in
    the window) of what still shows of it.

    Something lying over the die (a card, a cup, a box lid, the tray's wall seen askew) covers
    ``least`` to 65 % of its box with a straight edge from any direction, reaching to the window's
    edge: a colour of its own, lightly shaded and grained, with a soft shadow along its edge.
    A locator boxes the part that shows, and that part can look like another face (a three cut
    in half is a two), so such a crop is class 0: the reader must not guess it.
    """
    x0, y0, x1, y1 = box
    side = _side(box)
    height, width = image.shape[:2]
    margin = 2.0 * side
    wx0, wy0 = max(int(x0 - margin), 0), max(int(y0 - margin), 0)
    wx1, wy1 = min(int(x1 + margin) + 1, width), min(int(y1 + margin) + 1, height)
    window = image[wy0:wy1, wx0:wx1].astype(np.float32)
    cx, cy = (x0 + x1) / 2 - wx0, (y0 + y1) / 2 - wy0
    angle = float(rng.uniform(0, 2 * np.pi))
    nx, ny = np.cos(angle), np.sin(angle)
    extent = abs((x1 - x0) * nx) + abs((y1 - y0) * ny)
    # Points p with (p - centre) . n > edge are covered.
    edge = extent / 2 - float(rng.uniform(least, 0.65)) * extent
    yy, xx = np.mgrid[0 : wy1 - wy0, 0 : wx1 - wx0].astype(np.float32)
    depth = (xx - cx) * nx + (yy - cy) * ny - edge
    window = lay_cover(window, depth, side, rng)
    # The box of what shows: the die's box sampled on a grid, its uncovered points.
    gx, gy = np.meshgrid(np.linspace(x0, x1, 25) - wx0, np.linspace(y0, y1, 25) - wy0)
    shows = (gx - cx) * nx + (gy - cy) * ny - edge <= 0
    return np.asarray(np.clip(window, 0, 255), np.uint8), shown_box(gx, gy, shows)


def shown_box(
    gx: npt.NDArray[np.floating[Any]],
    gy: npt.NDArray[np.floating[Any]],
    shows: npt.NDArray[np.bool_],
) -> FloatBox:
    """The box of what shows of a die: the points of a grid over its box (``gx``, ``gy``) that
    ``shows`` marks uncovered (at least one)."""
    return (
        float(gx[shows].min()),
        float(gy[shows].min()),
        float(gx[shows].max()),
        float(gy[shows].max()),
    )


def lay_cover(
    image: npt.NDArray[np.float32],
    depth: npt.NDArray[np.float32],
    side: float,
    rng: np.random.Generator,
) -> npt.NDArray[np.floating[Any]]:
    """``image`` (float BGR) with something opaque lying where ``depth`` > 0.

    ``depth`` is how far each pixel lies inside the thing (negative outside), in pixels;
    ``side`` is a die's side, which sets how far the shading and the shadow reach. The thing
    has a colour of its own, lightly shaded and grained, and casts a soft shadow round it.
    """
    cover = np.clip(depth + 0.5, 0.0, 1.0)[..., None]
    colour = np.array([rng.uniform(0, 255) for _ in range(3)], np.float32)
    shade = 1.0 + float(rng.uniform(-0.3, 0.3)) * (depth / max(side, 1.0))[..., None]
    grain = rng.normal(0.0, float(rng.uniform(0, 8)), image.shape).astype(np.float32)
    thing = np.clip(colour * shade + grain, 0, 255)
    shadow = float(rng.uniform(0.0, 0.5)) * np.exp(np.minimum(depth, 0.0) / (0.12 * side))
    shaded = image * (1.0 - shadow * (depth < 0))[..., None]
    # Not cast back to float32: the crops of --occluded stay as they were before this helper.
    return np.asarray(shaded * (1.0 - cover) + thing * cover)


def rotated_crop(
    image: UInt8Image, box: FloatBox, angle: float, *, flip: bool = False
) -> npt.NDArray[np.float32]:
    """Crop as the model does after turning the photo about the box centre by ``angle`` deg."""
    sx0, sy0, sx1, sy1 = square_around(box)
    side = sx1 - sx0
    # Work on a window 1.5x the crop so the rotation has real pixels to pull in at the corners.
    margin = side // 2 + 2
    wx0, wy0 = sx0 - margin, sy0 - margin
    window = _window(image, wx0, wy0, side + 2 * margin)
    centre = (window.shape[1] / 2, window.shape[0] / 2)
    matrix = cv2.getRotationMatrix2D(centre, angle, 1.0)
    turned = cv2.warpAffine(
        window, matrix, (window.shape[1], window.shape[0]), borderMode=cv2.BORDER_REFLECT
    )
    if flip:
        turned = turned[:, ::-1]
    local = (
        box[0] - wx0,
        box[1] - wy0,
        box[2] - wx0,
        box[3] - wy0,
    )
    return crop_for_model(np.ascontiguousarray(turned), local)


def _window(image: UInt8Image, x0: int, y0: int, side: int) -> UInt8Image:
    """Cut a square window, replicating edges where it leaves the image."""
    height, width = image.shape[:2]
    cx0, cy0 = max(x0, 0), max(y0, 0)
    cx1, cy1 = min(x0 + side, width), min(y0 + side, height)
    if cx0 >= cx1 or cy0 >= cy1:
        return np.zeros((side, side, 3), np.uint8)
    inner = image[cy0:cy1, cx0:cx1]
    padded = cv2.copyMakeBorder(
        inner, cy0 - y0, y0 + side - cy1, cx0 - x0, x0 + side - cx1, cv2.BORDER_REPLICATE
    )
    return np.asarray(padded, dtype=np.uint8)


def _is_clear(candidate: FloatBox, dice: Sequence[FloatBox], *, allowed: float) -> bool:
    """True when no die has more than ``allowed`` of its area inside the candidate's model crop."""
    square = square_around(candidate)
    return all(covered_share(die, square) <= allowed for die in dice)


def iter_records(
    records: Sequence[Record], *, split: Split, skip_issues: bool = True
) -> Iterator[Record]:
    """Yield the records of one split, leaving out photos with a known labelling problem."""
    for record in records:
        if record.split == split and not (skip_issues and record.known_issue):
            yield record


class UnknownSourceError(ValueError):
    """``--exclude`` named a source the data folder does not have."""


def add_exclude_option(parser: argparse.ArgumentParser, *, unseen: str) -> None:
    """Add ``--exclude SOURCE`` (repeatable), the sources :func:`train_and_val` leaves out."""
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="SOURCE",
        help=f"leave a source out of training and measure it on all its photos (unseen {unseen})",
    )


def add_source_option(parser: argparse.ArgumentParser, *, also: str = "") -> None:
    """Add ``--source DIR`` (repeatable): a table's own photos, read by :func:`load_sources`."""
    parser.add_argument(
        "--source",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help=f"also train on this source folder (a table's own photos: pipcam photos DIR){also}",
    )


def train_and_val(
    records: Sequence[Record], *, exclude: Sequence[str] = ()
) -> tuple[list[Record], list[Record]]:
    """Return the training and validation records, leaving the ``exclude`` sources out of training.

    Photos with a known labelling problem are in neither. A source left out is validated on
    every photo it has, since training saw none of them: that measures dice and tables never seen.
    """
    sources = {r.source for r in records}
    unknown = sorted(set(exclude) - sources)
    if unknown:
        known = ", ".join(sorted(sources)) or "none (no photos were found)"
        raise UnknownSourceError(
            f"cannot leave out {', '.join(unknown)}: no such source; the sources are {known}"
        )
    train = [r for r in iter_records(records, split="train") if r.source not in exclude]
    val = [r for r in records if not r.known_issue and (r.split == "val" or r.source in exclude)]
    return train, val


def cut_crops(
    record: Record,
    rng: np.random.Generator,
    *,
    copies: int,
    negatives: bool,
    augment: bool,
    proposer: Proposer | None = None,
    occluded: float = 0.0,
    occluded_least: float = 0.3,
) -> CropSet:
    """Cut model crops from one photo: each die ``copies`` times, plus class-0 negatives
    (among them an ``occluded`` share of the dice partly hidden: :func:`occlude`).

    Without ``augment`` every die is cut once at its labelled box (validation). Negatives are
    background patches clear of every die, dice shifted half out of the crop, boxes spanning two
    dice, and dice blurred past reading. With a ``proposer`` (training only) the boxes the
    reader's locator finds are cut too: at a labelled die with its value, so the model learns
    the boxes it will be given, and elsewhere as class 0 (the knobs, shadows and pip-like spots
    a locator mistakes for dice, which random patches almost never hit).
    """
    image = read_image(record.path)
    if record.is_crop:
        return _cut_crop_record(record, image, rng, copies=copies, augment=augment)
    boxes = die_boxes(record, image)
    crops: list[UInt8Image] = []
    labels: list[int] = []
    for die, box in zip(record.dice, boxes, strict=True):
        if die.suspect:
            continue
        for _ in range(copies if augment else 1):
            if augment:
                jittered = jitter_box(box, rng, shift=0.08, scale=0.15)
                crop = rotated_crop(
                    image, jittered, float(rng.uniform(0, 360)), flip=bool(rng.random() < 0.5)
                )
            else:
                crop = crop_for_model(image, box)
            crops.append(to_uint8(crop))
            labels.append(die.value)
    if negatives:
        count = max(2, len(boxes))
        for negative in _negatives(
            image,
            boxes,
            rng,
            count=count,
            augment=augment,
            occluded=occluded,
            occluded_least=occluded_least,
        ):
            crops.append(negative)
            labels.append(0)
    if proposer is not None and augment:
        for proposed, label in _proposed_crops(
            image, record.dice, boxes, proposer(image), rng, copies=max(1, copies // 2)
        ):
            crops.append(proposed)
            labels.append(label)
    if not crops:
        return CropSet.concat([])
    return CropSet(np.stack(crops), np.asarray(labels, np.int64), [record.source] * len(labels))


def _proposed_crops(
    image: UInt8Image,
    dice: Sequence[LabelledDie],
    boxes: Sequence[FloatBox],
    proposals: Sequence[Proposal],
    rng: np.random.Generator,
    *,
    copies: int,
) -> Iterator[tuple[UInt8Image, int]]:
    """Crops at the locator's boxes: labelled dice keep their value, phantoms are class 0."""
    for proposal in proposals:
        overlaps = [iou(proposal.box, box) for box in boxes]
        best = int(np.argmax(overlaps)) if overlaps else -1
        if best >= 0 and overlaps[best] >= MATCH_IOU:
            if dice[best].suspect:
                continue
            label, count = dice[best].value, copies
        elif (
            max(overlaps, default=0.0) < NEGATIVE_IOU
            and not any(centre_inside(proposal.box, box) for box in boxes)
            and proposal.face_probability < SURE_FACE
        ):
            label, count = 0, PHANTOM_COPIES
        else:
            continue
        for _ in range(count):
            jittered = jitter_box(proposal.box, rng, shift=0.04, scale=0.08)
            angle = float(rng.uniform(0, 360))
            crop = rotated_crop(image, jittered, angle, flip=bool(rng.random() < 0.5))
            yield to_uint8(crop), label


def _cut_crop_record(
    record: Record, image: UInt8Image, rng: np.random.Generator, *, copies: int, augment: bool
) -> CropSet:
    """Cut a crop-folder image: undo its wide stretch, then crop the die it centres on."""
    height = image.shape[0]
    # The source's crops are stretched wider than tall; the die inside is square.
    square = np.asarray(cv2.resize(image, (height, height), interpolation=cv2.INTER_AREA), np.uint8)
    side = height * 0.8
    centre = height / 2
    box = (centre - side / 2, centre - side / 2, centre + side / 2, centre + side / 2)
    value = record.crop_value or 0
    crops: list[UInt8Image] = []
    for _ in range(copies if augment else 1):
        if augment:
            jittered = jitter_box(box, rng, shift=0.06, scale=0.12)
            crop = rotated_crop(
                square, jittered, float(rng.uniform(0, 360)), flip=bool(rng.random() < 0.5)
            )
        else:
            crop = crop_for_model(square, box)
        crops.append(to_uint8(crop))
    labels = np.full(len(crops), value, np.int64)
    return CropSet(np.stack(crops), labels, [record.source] * len(crops))


def _negatives(
    image: UInt8Image,
    boxes: Sequence[FloatBox],
    rng: np.random.Generator,
    *,
    count: int,
    augment: bool,
    occluded: float = 0.0,
    occluded_least: float = 0.3,
) -> list[UInt8Image]:
    """Class-0 crops of one photo: background, half-out dice, two-dice boxes and heavy blur;
    and an ``occluded`` share of its dice partly hidden (:func:`occlude`)."""
    height, width = image.shape[:2]
    sides = [_side(b) for b in boxes] or [min(height, width) / 8]
    out: list[UInt8Image] = []
    for _ in range(count * 4):
        if len(out) >= count:
            break
        side = float(rng.choice(sides)) * float(rng.uniform(0.7, 1.5))
        x0 = float(rng.uniform(0, max(width - side, 1)))
        y0 = float(rng.uniform(0, max(height - side, 1)))
        candidate = (x0, y0, x0 + side, y0 + side)
        if _is_clear(candidate, boxes, allowed=0.15):
            out.append(_maybe_rotated(image, candidate, rng, augment=augment))
    for index, box in enumerate(boxes):
        roll = rng.random()
        if roll < 0.35:
            # A die half outside the crop: the reader must not guess it from the part it sees.
            side = _side(box)
            angle = rng.uniform(0, 2 * np.pi)
            reach = rng.uniform(0.6, 0.9) * side
            dx, dy = reach * np.cos(angle), reach * np.sin(angle)
            moved = (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)
            others = [b for j, b in enumerate(boxes) if j != index]
            if _is_clear(moved, others, allowed=0.3):
                out.append(_maybe_rotated(image, moved, rng, augment=augment))
        elif roll < 0.5:
            crop = _maybe_rotated(image, box, rng, augment=augment)
            sigma = float(rng.uniform(7.0, 12.0))
            out.append(np.asarray(cv2.GaussianBlur(crop, (0, 0), sigma), np.uint8))
        elif roll < 0.65 and len(boxes) > 1:
            # A box around two neighbouring dice, as a locator that merged them would give.
            others = sorted(
                (b for j, b in enumerate(boxes) if j != index),
                key=lambda b: abs(b[0] - box[0]) + abs(b[1] - box[1]),
            )
            pair = others[0]
            union = (
                min(box[0], pair[0]),
                min(box[1], pair[1]),
                max(box[2], pair[2]),
                max(box[3], pair[3]),
            )
            if _side(union) < 2.4 * _side(box):
                out.append(_maybe_rotated(image, union, rng, augment=augment))
        # Asked only when wanted, so runs without it cut the crops they always cut for a seed.
        if occluded > 0 and rng.random() < occluded:
            hidden, visible = occlude(image, box, rng, least=occluded_least)
            out.append(_maybe_rotated(hidden, visible, rng, augment=augment))
    return out


def _maybe_rotated(
    image: UInt8Image, box: FloatBox, rng: np.random.Generator, *, augment: bool
) -> UInt8Image:
    """Crop a box, rotated at random when augmenting."""
    if augment:
        return to_uint8(rotated_crop(image, box, float(rng.uniform(0, 360))))
    return to_uint8(crop_for_model(image, box))

"""Real scenes with no die in them: ``python -m vision.train.empty [--model M ...] [--split S]
[--out DIR] [FOLDER ...]``.

The probes of ``vision.train.trays`` show bare trays that our own renderer drew. This one cuts
real ones out of the shared photos: beyond the dice of a photo (all its labelled boxes, and a
margin of ``MARGIN`` die sides around them, since some sources box only the top face) lie four
strips, left and right, and above and below between those two, of tables, boards, keyboards
and hands. Each strip at least ``MIN_SIDES`` die sides and ``MIN_PIXELS`` pixels each way is
read as a frame of its own, the whole of it the roll zone, as a single photo or a tray with no
calibration is. Every die reported there is one the players would be shown where the labels
have none: most are things taken for dice (a key, a glint, a game piece), some are real dice
the labels left out (one in a hand, one far off); the lines name each so that a person can
tell which (``--out`` writes the strips with what was read drawn on them). A strip has no dice
beside it to give the reader their size, so it is harder than the same place in the whole
photo.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.annotate import annotate
from vision.evaluate import match_dice
from vision.reader import DiceReader, Die
from vision.source import read_image
from vision.train.data import Record, load_folder
from vision.train.readers import (
    add_folder_options,
    add_reader_options,
    folder_errors,
    folders_from_args,
    readers_from_args,
)
from vision.train.tally import Tally

__all__ = ["EmptyCounts", "Strip", "dice_free_strips", "main", "read_strips"]

MARGIN = 1.5
"""Die sides kept clear around the labelled boxes (matteop65 boxes only a die's top face)."""
MIN_SIDES = 2.0
"""A strip narrower than this many die sides is left out: a die would not fit in it."""
MIN_PIXELS = 64
"""Nor one narrower than this many pixels (the locator's input would be mostly padding)."""

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Strip:
    """A part of a photo with no labelled die: which side of the dice it lies on, and where."""

    side: str
    box: Box


@dataclass(frozen=True)
class EmptyCounts(Tally):
    """Strips read, their pixels, and the dice reported on them: with a value, or asked about."""

    strips: int = 0
    pixels: int = 0
    valued: int = 0
    asked: int = 0

    def __str__(self) -> str:
        return (
            f"{self.strips} strips, {self.pixels / 1e6:.1f} Mpx: {self.valued} dice reported"
            f" with a value, {self.asked} asked about"
        )


@dataclass(frozen=True)
class Hit:
    """A die reported on a strip: the photo, the strip, the die (box in strip pixels), and
    whether the whole photo's reading reports a die there too (as a table reading it would)."""

    image: Path
    strip: Strip
    die: Die
    in_whole: bool = False


def dice_free_strips(
    width: int,
    height: int,
    boxes: Sequence[Sequence[float]],
    *,
    margin: float = MARGIN,
    min_sides: float = MIN_SIDES,
    min_pixels: int = MIN_PIXELS,
) -> list[Strip]:
    """The strips of a ``width`` x ``height`` photo beyond every box and ``margin`` median die
    sides more, wide and tall enough to hold a die, none overlapping another (none for a photo
    with no box: its dice are unknown, not absent).

    >>> dice_free_strips(1000, 400, [(400, 100, 450, 150)])[1:]
    [Strip(side='right', box=(525, 0, 1000, 400)), Strip(side='bottom', box=(325, 225, 525, 400))]
    """
    if not boxes:
        return []
    side = float(np.median([max(b[2] - b[0], b[3] - b[1]) for b in boxes]))
    clear = margin * side
    left = int(np.floor(min(b[0] for b in boxes) - clear))
    right = int(np.ceil(max(b[2] for b in boxes) + clear))
    top = int(np.floor(min(b[1] for b in boxes) - clear))
    bottom = int(np.ceil(max(b[3] for b in boxes) + clear))
    candidates = [
        Strip("left", (0, 0, left, height)),
        Strip("right", (right, 0, width, height)),
        # Above and below only between those two, so that no place is read twice.
        Strip("top", (max(left, 0), 0, min(right, width), top)),
        Strip("bottom", (max(left, 0), bottom, min(right, width), height)),
    ]
    least = max(min_sides * side, float(min_pixels))
    return [s for s in candidates if s.box[2] - s.box[0] >= least and s.box[3] - s.box[1] >= least]


def _photos(records: Sequence[Record], split: str) -> Iterator[Record]:
    """The photos of ``split`` ("all": every one) with dice, none with a known labelling problem
    and none a source's augmented copy: Epanemu's training photos carry 1 % salt-and-pepper
    noise, whose specks on a bare table read as tiny dice where no die gives the scale, and no
    camera makes that noise."""
    for record in records:
        if record.is_crop or record.known_issue or record.augmented or not record.dice:
            continue
        if split == "all" or record.split == split:
            yield record


def read_strips(
    reader: DiceReader, folder: Path, *, split: str = "all", out: Path | None = None
) -> tuple[EmptyCounts, list[Hit]]:
    """Read every dice-free strip of ``folder``'s photos in ``split``; the counts and each die
    reported. With ``out``, each strip on which a die was reported is written there, drawn."""
    total = EmptyCounts()
    hits: list[Hit] = []
    for record in _photos(load_folder(folder), split):
        image = read_image(record.path)
        height, width = image.shape[:2]
        whole: list[Die] | None = None  # the whole photo's dice, read once if needed
        for strip in dice_free_strips(width, height, [d.box for d in record.dice]):
            x0, y0, x1, y1 = strip.box
            part = np.ascontiguousarray(image[y0:y1, x0:x1])
            dice = list(reader.read(part).dice)
            valued = sum(1 for d in dice if d.value is not None and d.status == "ok")
            total = total + EmptyCounts(
                strips=1, pixels=part.shape[0] * part.shape[1], valued=valued,
                asked=len(dice) - valued,
            )  # fmt: skip
            if dice and whole is None:
                reading = reader.read(image)
                whole = [*reading.dice, *reading.set_aside]
            places = [d.box for d in whole or []]
            for die in dice:
                # pipcam eval's rule for two boxes of one die.
                seen = bool(match_dice([_moved(die.box, x0, y0)], places))
                hits.append(Hit(record.path, strip, die, in_whole=seen))
            if dice and out is not None:
                out.mkdir(parents=True, exist_ok=True)
                drawn = annotate(part, [d.to_json() for d in dice])
                cv2.imwrite(
                    str(out / f"{folder.name}__{record.path.stem}__{strip.side}.jpg"), drawn
                )
    return total, hits


def _moved(box: Box, dx: int, dy: int) -> Box:
    return (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)


def _hit_line(hit: Hit) -> str:
    die = hit.die
    face = "?" if die.value is None else str(die.value)
    whole = "also in the whole photo" if hit.in_whole else "not in the whole photo"
    return (
        f"  {hit.image.name} {hit.strip.side} strip {list(hit.strip.box)}: {face}"
        f" ({die.status}, {die.confidence:.2f}) at {list(die.box)}; {whole}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print each model's counts and hits, folder by folder; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.empty", description=__doc__)
    add_folder_options(parser, split="all", why="as pipcam eval")
    add_reader_options(parser, models=True)
    parser.add_argument("--out", type=Path, help="write the strips a die was reported on here")
    args = parser.parse_args(argv)
    folders = folders_from_args(parser, args)
    readers = readers_from_args(parser, args)
    for path, reader in readers:
        print(f"{path}, {args.split} photos:")  # noqa: T201
        for folder in folders:
            with folder_errors(parser):
                counts, hits = read_strips(reader, folder, split=args.split, out=args.out)
            print(f"{folder.name}: {counts}")  # noqa: T201
            for hit in hits:
                print(_hit_line(hit))  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How much a composed face model's first member may decide alone: ``FIRST_SURE`` measured.

    python -m vision.train.gate [--model models/dice_faces.onnx] [--data DIR]
        [--exclude SOURCE] [--logos N] [--threshold T ...]

The reader lets the first member (the cheap CNN) decide alone the crops it reads with at least
``vision.classify.FIRST_SURE``; the other members read only the rest. This prints, for each
threshold, what that would do on crops the models never trained on: the validation crops of
the held-out photos (each die cut once at its labelled box, and the class-0 patches cut beside
it, as training validates), or with ``--exclude SOURCE`` every photo of a source the members
were trained without (``python -m vision.train --exclude``: dice never seen), and ``--logos``
sixes rendered with logos training never draws. Per threshold: the crops and the dice decided
alone, how many of those the first member reads wrong, and how many it reads otherwise than
the whole model (the reading the gate changes). Needs no torch; about a minute.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from vision.classify import FIRST_SURE, FLOAT_MODEL, OnnxClassifier, softmax
from vision.train.data import (
    DEFAULT_DATA,
    CropSet,
    SourceFolderError,
    UnknownSourceError,
    add_exclude_option,
    cut_crops,
    load_sources,
    train_and_val,
)
from vision.train.synth import render_logo_sixes

__all__ = ["GateRow", "gate_rows", "member_readings"]

THRESHOLDS = (0.8, 0.9, 0.93, FIRST_SURE, 0.97, 0.99, 0.999)
"""The thresholds printed by default: the shipped one and some on either side."""


@dataclass(frozen=True)
class GateRow:
    """What the first member deciding alone from ``threshold`` up does to a set of crops."""

    threshold: float
    crops: int
    dice: int
    alone: int
    """Crops whose first-member top probability is at least the threshold."""
    dice_alone: int
    """Of those, crops of a die (label 1..6)."""
    wrong_alone: int
    """Crops decided alone whose first-member class is not the label."""
    changed: int
    """Crops decided alone whose first-member class is not the whole model's."""


def gate_rows(
    first: npt.NDArray[np.floating],
    whole: npt.NDArray[np.floating],
    labels: npt.NDArray[np.integer],
    thresholds: Sequence[float] = THRESHOLDS,
) -> list[GateRow]:
    """One :class:`GateRow` per threshold from (N, 7) probabilities of the first member and of
    the whole model and the N labels (0 = no readable face).

    >>> first = np.array([[0.0, 0.99, 0.01], [0.0, 0.6, 0.4], [0.0, 0.1, 0.9]])
    >>> whole = np.array([[0.0, 0.9, 0.1], [0.0, 0.3, 0.7], [0.0, 0.8, 0.2]])
    >>> [(r.alone, r.wrong_alone, r.changed) for r in gate_rows(first, whole, np.array([1, 2, 2]),
    ...                                                          [0.5, 0.95])]
    [(3, 1, 2), (1, 0, 0)]
    """
    if first.shape != whole.shape or first.ndim != 2 or len(labels) != len(first):
        raise ValueError(
            f"need (N, classes) probabilities of the same shape and N labels, got {first.shape},"
            f" {whole.shape} and {len(labels)} labels"
        )
    top, read, whole_read = first.max(axis=1), first.argmax(axis=1), whole.argmax(axis=1)
    die = labels > 0
    rows = []
    for threshold in thresholds:
        alone = top >= threshold
        rows.append(
            GateRow(
                threshold=float(threshold),
                crops=len(labels),
                dice=int(die.sum()),
                alone=int(alone.sum()),
                dice_alone=int((alone & die).sum()),
                wrong_alone=int((alone & (read != labels)).sum()),
                changed=int((alone & (read != whole_read)).sum()),
            )
        )
    return rows


def member_readings(
    model: Path, images: npt.NDArray[np.uint8], *, threads: int = 1
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The first member's and the whole model's (N, 7) probabilities for (N, 64, 64, 3) RGB
    crops; ``ValueError`` for a model that is not composed (nothing to decide alone)."""
    classifier = OnnxClassifier(model, threads=threads)
    if not classifier.has_members:
        raise ValueError(
            f"{model} is one model, not a composition of members: no member decides alone"
        )
    crops = images.transpose(0, 3, 1, 2).astype(np.float32) / 255.0
    return softmax(classifier.first_member_logp(crops)), classifier.predict_whole(crops)


def _crops(data: Path, exclude: str | None, logos: int) -> dict[str, CropSet]:
    """The crops to measure on, by name."""
    records = load_sources(data)
    _, val = train_and_val(records, exclude=[exclude] if exclude else [])
    if exclude:
        val = [r for r in val if r.source == exclude]
    rng = np.random.default_rng(0)
    sets = {}
    if val:
        name = f"{exclude} (all its photos)" if exclude else "held-out photos"
        sets[name] = CropSet.concat(
            [cut_crops(r, rng, copies=1, negatives=True, augment=False) for r in val]
        )
    if logos:
        sets["unseen logo sixes"] = render_logo_sixes(rng, logos)
    return sets


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m vision.train.gate", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--model", type=Path, default=FLOAT_MODEL, help="a composed face model")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared photo folders")
    parser.add_argument("--logos", type=int, default=0, help="unseen logo sixes to render")
    parser.add_argument(
        "--threshold", type=float, action="append", default=[], help="(repeat) thresholds"
    )
    add_exclude_option(parser, unseen="dice: give the members trained without it")
    args = parser.parse_args(argv)
    if len(args.exclude) > 1:
        parser.error("--exclude: one source at a time")
    try:
        sets = _crops(args.data, args.exclude[0] if args.exclude else None, args.logos)
    except UnknownSourceError as err:
        parser.error(f"--exclude: {err} (in {args.data})")
    except (SourceFolderError, OSError, ValueError) as err:
        parser.error(f"cannot read the photos in {str(args.data)!r}: {err}")
    if not sets:
        parser.error(f"no crops to measure: {str(args.data)!r} has no held-out photo")
    thresholds = sorted(args.threshold) or THRESHOLDS
    for name, crops in sets.items():
        try:
            first, whole = member_readings(args.model, crops.images)
        except ValueError as err:
            parser.error(str(err))
        print(  # noqa: T201
            f"{name}: {len(crops.labels)} crops, {int((crops.labels > 0).sum())} dice;"
            f" right: first member {np.mean(first.argmax(1) == crops.labels):.2%},"
            f" whole model {np.mean(whole.argmax(1) == crops.labels):.2%}"
        )
        for row in gate_rows(first, whole, crops.labels, thresholds):
            print(  # noqa: T201
                f"  from {row.threshold:g}: alone {row.alone} crops ({row.alone / row.crops:.1%}),"
                f" {row.dice_alone} dice ({row.dice_alone / max(row.dice, 1):.1%});"
                f" read wrong {row.wrong_alone}; read otherwise than the whole model"
                f" {row.changed}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

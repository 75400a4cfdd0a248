"""How the reader meets sixes with a logo: ``python -m vision.train.logos [--model M ...]``.

Renders single dice lying flat with a logo on the six (by default of the families training never
draws, ``vision.train.synth.HELD_OUT_LOGOS``: dice nobody showed the model) and reads each crop
by the reader's own rules (its thresholds, the turned second look): read 6 surely, asked about
(unsure, or no face), or read surely as another value, the harm to avoid. The same seeds give
the same renders, so two models are compared on the same dice.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.classify import DEFAULT_MODEL, OnnxClassifier
from vision.errors import ModelLoadError
from vision.reader import DiceReader
from vision.train.synth import HELD_OUT_LOGOS, LOGO_FAMILIES, render_logo_sixes

__all__ = ["LogoCounts", "read_logo_sixes"]

SEEDS = (5, 11, 2024)
COUNT = 400


@dataclass(frozen=True)
class LogoCounts:
    """How many logo sixes were read 6, asked about, or read as another value."""

    read: int
    asked: int
    wrong: int

    def __str__(self) -> str:
        total = self.read + self.asked + self.wrong
        shares = (100.0 * n / total if total else 0.0 for n in (self.read, self.asked, self.wrong))
        read, asked, wrong = shares
        return (
            f"{total} sixes: read 6 {read:.1f} %, asked about {asked:.1f} %,"
            f" another value {wrong:.1f} %"
        )


def read_logo_sixes(reader: DiceReader, images: np.ndarray) -> LogoCounts:
    """Read crops of sixes (uint8 [N, H, W, 3] RGB, as rendered) as ``reader`` reads a die: a
    sure face that the die check takes for a die partly hidden, or leaning, is asked about too
    (counted so: the players are asked about it either way)."""
    crops = np.ascontiguousarray(images.transpose(0, 3, 1, 2).astype(np.float32) / 255.0)
    probs = reader.read_crops(crops)
    best, confidence = probs.argmax(axis=1), probs.max(axis=1)
    sure = (best != 0) & (confidence >= reader.min_confidence)
    if reader.die_check is not None and len(crops):
        # Each crop is one die's whole picture: square boxes of one size.
        height, width = images.shape[1:3]
        boxes = [(0, 0, int(width), int(height))] * len(crops)
        judged = reader.die_check.judge_frame(crops, boxes, probs)
        # Partly hidden: asked about; leaning: called cocked, to be thrown again.
        sure &= ~(judged.hidden | judged.leaning)
    read = int(np.sum(sure & (best == 6)))
    wrong = int(np.sum(sure & (best != 6)))
    return LogoCounts(read=read, asked=len(crops) - read - wrong, wrong=wrong)


def main(argv: Sequence[str] | None = None) -> int:
    """Print each model's counts at each seed; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.logos", description=__doc__)
    parser.add_argument(
        "--model", type=Path, action="append", help="face model (repeat to compare; default: ours)"
    )
    parser.add_argument(
        "--seed", type=int, action="append", help=f"render seed (repeat; default {SEEDS})"
    )
    parser.add_argument("--count", type=int, default=COUNT, help="sixes a seed")
    parser.add_argument(
        "--families",
        choices=("unseen", "training"),
        default="unseen",
        help="logos training never draws (default), or the ones it draws",
    )
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error(f"--count must be at least 1, not {args.count}")
    families = HELD_OUT_LOGOS if args.families == "unseen" else LOGO_FAMILIES
    try:
        readers = [(p, DiceReader(OnnxClassifier(p))) for p in args.model or [DEFAULT_MODEL]]
    except ModelLoadError as error:
        parser.error(str(error))
    for seed in args.seed or SEEDS:
        rendered = render_logo_sixes(np.random.default_rng(seed), args.count, families)
        for path, reader in readers:
            counts = read_logo_sixes(reader, rendered.images)
            print(f"{path}: seed {seed}, {args.families} logos, {counts}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

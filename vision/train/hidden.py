"""How the reader meets a die partly hidden: ``python -m vision.train.hidden [--model M ...]
[--locator-model L] [--die-check C]``.

Draws trays of six dice (:func:`vision.synthetic.six_dice`, 1280x960) and lays a flat card over
one of them from a random side, covering a given share of its box, as a score card, a cup or a
box lid lying in the tray would; then reads the whole frame with the reader (locator, face
model, its rules). The hidden die is read right, asked about (any status but ``ok``), missing,
or **read wrong**: a value the players would be given, and the harm to avoid; a die reported
where no die lies (on the card, say) is **invented**, as harmful. The card is drawn
here and not by training's :func:`vision.train.data.occlude`, so a model trained on those crops
is not measured on its own augmentation. The same seeds draw the same trays.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.reader import DiceReader, DiceReading, Die
from vision.synthetic import DieSpec, make_frame, six_dice
from vision.train.readers import add_reader_options, readers_from_args
from vision.train.tally import Tally

__all__ = ["HiddenCounts", "hidden_tray", "judge", "main"]

WIDTH, HEIGHT = 1280, 960
SHARES = (0.2, 0.3, 0.4, 0.5, 0.6)
SEEDS = 48
CARDS = {
    "paper": (236, 238, 232),
    "red": (40, 40, 190),
    "blue": (170, 90, 30),
    "black": (30, 30, 30),
    "wood": (80, 130, 175),
    "yellow": (40, 200, 230),
}
"""Card colours (BGR): paper, a red and a blue card, a black cup, a wooden lid, a yellow note."""

Frame = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class HiddenCounts(Tally):
    """How the hidden dice were reported, the uncovered dice beside them read otherwise, and the
    dice reported where none lies."""

    right: int = 0
    asked: int = 0
    missing: int = 0
    wrong: int = 0
    others_wrong: int = 0
    invented: int = 0

    def __str__(self) -> str:
        return f"{self.right} / {self.asked} / {self.missing} / {self.wrong}"


def _card(spec: DieSpec, share: float, angle: float) -> npt.NDArray[np.int32]:
    """The corners of a card whose edge, square to ``angle``, covers ``share`` of the die's box.

    The edge is placed where ``share`` of the box's pixels lie beyond it; the card reaches two
    die sides from the die's centre, and a die's side and a quarter either way along the edge.
    """
    x0, y0, x1, y1 = spec.box
    ys, xs = np.mgrid[y0:y1, x0:x1]
    normal = np.array([math.cos(angle), math.sin(angle)])
    along = np.array([-normal[1], normal[0]])
    centre = np.array([spec.cx, spec.cy])
    reach = (xs - spec.cx) * normal[0] + (ys - spec.cy) * normal[1]
    edge = float(np.quantile(reach, 1.0 - share))
    start = centre + edge * normal
    end = centre + (spec.side * 2.0) * normal
    half = spec.side * 1.25
    corners = [start + half * along, start - half * along, end - half * along, end + half * along]
    return np.round(np.array(corners)).astype(np.int32)


def hidden_tray(seed: int, share: float) -> tuple[Frame, DieSpec, list[DieSpec]]:
    """A tray of six dice, one of them (by ``seed``) under a card covering ``share`` of its box.

    Returns the frame, the hidden die and the others. The card is turned away from the other
    dice: of the sides it could come from, one that covers none of them is taken.
    """
    rng = np.random.default_rng(seed)
    dice = six_dice(WIDTH, HEIGHT, seed=seed)
    index = seed % len(dice)
    hidden, others = dice[index], dice[:index] + dice[index + 1 :]
    colour = list(CARDS.values())[int(rng.integers(len(CARDS)))]
    frame = make_frame(WIDTH, HEIGHT, dice, seed=seed)
    first = float(rng.uniform(0, 2 * math.pi))
    for turn in range(36):
        corners = _card(hidden, share, first + turn * math.pi / 18)
        mask = np.zeros(frame.shape[:2], np.uint8)
        cv2.fillPoly(mask, [corners], 255)
        if not any(mask[d.box[1] : d.box[3], d.box[0] : d.box[2]].any() for d in others):
            break
    else:  # pragma: no cover - six_dice leaves room round every die
        raise ValueError(f"seed {seed}: no side of die {index} leaves the other dice uncovered")
    # A card casts a soft shadow on the tray and the die beside its edge.
    shade = cv2.GaussianBlur(mask, (0, 0), _shadow_sigma(hidden)).astype(np.float32) / 255.0
    frame[:] = np.clip(frame * (1.0 - 0.35 * shade[..., None]), 0, 255).astype(np.uint8)
    frame[mask > 0] = colour
    return frame, hidden, others


def _shadow_sigma(spec: DieSpec) -> float:
    """How soft a card's shadow is: a twentieth of the die's side."""
    return max(1.0, spec.side / 20.0)


def _on(die: Die, spec: DieSpec) -> bool:
    """Whether ``die``'s box centre lies in ``spec``'s box."""
    x0, y0, x1, y1 = spec.box
    return x0 <= (die.box[0] + die.box[2]) / 2 <= x1 and y0 <= (die.box[1] + die.box[3]) / 2 <= y1


def _nearest(spec: DieSpec, reported: Sequence[Die]) -> Die | None:
    """The reported die whose box centre lies in ``spec``'s box, nearest its centre, or None."""
    inside = [
        (math.hypot((d.box[0] + d.box[2]) / 2 - spec.cx, (d.box[1] + d.box[3]) / 2 - spec.cy), d)
        for d in reported
        if _on(d, spec)
    ]
    return min(inside, key=lambda pair: pair[0])[1] if inside else None


def judge(reading: DiceReading, hidden: DieSpec, others: Sequence[DieSpec]) -> HiddenCounts:
    """Count how ``reading`` reports the hidden die, the other dice it does not read right, and
    the dice it reports on no die."""
    reported = reading.dice + reading.set_aside
    die = _nearest(hidden, reported)
    others_wrong = 0
    for spec in others:
        other = _nearest(spec, reported)
        if other is None or other.status != "ok" or other.value != spec.value:
            others_wrong += 1
    invented = sum(not any(_on(d, spec) for spec in (hidden, *others)) for d in reported)
    rest = HiddenCounts(others_wrong=others_wrong, invented=invented)
    if die is None:
        return rest + HiddenCounts(missing=1)
    if die.status != "ok" or die.value is None:
        return rest + HiddenCounts(asked=1)
    if die.value == hidden.value:
        return rest + HiddenCounts(right=1)
    return rest + HiddenCounts(wrong=1)


def probe(
    reader: DiceReader, *, seeds: Sequence[int], shares: Sequence[float]
) -> dict[float, HiddenCounts]:
    """Per share, how the reader reports the hidden die of each seed's tray."""
    counts: dict[float, HiddenCounts] = {}
    for share in shares:
        total = HiddenCounts()
        for seed in seeds:
            frame, hidden, others = hidden_tray(seed, share)
            total = total + judge(reader.read(frame), hidden, others)
        counts[share] = total
    return counts


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text}: a share of the die's box is between 0 and 1")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Print each model's counts, share by share; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.hidden", description=__doc__)
    add_reader_options(parser, models=True)
    parser.add_argument("--seeds", type=int, default=SEEDS, help="trays a share (seeds 0..N-1)")
    parser.add_argument(
        "--share", type=_share, action="append", help=f"share of the box covered (default {SHARES})"
    )
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1, not {args.seeds}")
    shares = args.share or list(SHARES)
    readers = readers_from_args(parser, args)
    print(  # noqa: T201
        f"{args.seeds} trays a share; the hidden die read right / asked about / missing / wrong"
    )
    for path, reader in readers:
        counts = probe(reader, seeds=range(args.seeds), shares=shares)
        cells = "  ".join(f"{100 * share:.0f} %: {counts[share]}" for share in shares)
        wrong = sum(c.wrong for s, c in counts.items() if s >= 0.3)
        others = sum(c.others_wrong for c in counts.values())
        invented = sum(c.invented for c in counts.values())
        check = "on" if reader.die_check is not None else "off"
        print(  # noqa: T201
            f"{path} (die check {check}): {cells}; wrong at 30 % and more: {wrong};"
            f" uncovered dice not read right: {others}; dice reported on no die: {invented}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Two whole readers on the same held-out photos: which costs the players less, and by chance?

    python -m vision.train.compare BASELINE CANDIDATE [--baseline-check JSON]
        [--candidate-check JSON] [--locator-model PATH] [--data DIR] [--source NAME ...]
        [--split val|all] [--effect NAME ...]

Each face model is read as ``pipcam read`` runs it: the shipped locator (or ``--locator-model``)
and the die check given, or ours where it was fitted to that model. Per folder (and effect):
dice read right, values and questions reported, photos exact and the players' cost
(``vision.evaluate.reading_cost``: a wrong value 3, a die not read right otherwise 1) of each
reader, and how many photos each reads cheaper; then the totals, with an exact sign test over
the photos that changed (``vision.evaluate.sign_test``). A cost a few dice apart can come from a
few photos; the test says how often chance alone splits them so (models/EXPERIMENTS.md, "Hard
shadows: a second seed pair"). Needs no torch; two int8 readers read the held-out photos of
the public sources in about 8 seconds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from vision.camera_effects import EFFECTS, with_effect
from vision.errors import ModelLoadError
from vision.evaluate import (
    EvalReport,
    box_reader,
    chance_note,
    crop_reader,
    evaluate_folder,
    photos_cheaper,
    reading_cost,
    split_view,
)
from vision.reader import DiceReader
from vision.train.card import SOURCES
from vision.train.data import DEFAULT_DATA
from vision.train.readers import reader_from

__all__ = ["compare", "main", "pair_line"]


def pair_line(
    name: str, before: Sequence[EvalReport], after: Sequence[EvalReport], *, test: bool = False
) -> str:
    """One line: both readings of the same photos and how many each reads cheaper (with
    ``test``, and the sign test of that split)."""
    cheaper_after, cheaper_before = photos_cheaper(before, after)

    def total(reports: Sequence[EvalReport], field: str) -> int:
        return sum(int(getattr(r, field)) for r in reports)

    counts = " ".join(
        f"{label} {total(before, field)} -> {total(after, field)};"
        for label, field in (
            ("right", "matched"),
            ("reported", "reported"),
            ("unread", "unread"),
            ("exact", "exact"),
        )
    )
    return (
        f"{name} ({total(before, 'images')} photos): {counts}"
        f" cost {reading_cost(before)} -> {reading_cost(after)};"
        f" photos cheaper with the candidate {cheaper_after}, with the baseline {cheaper_before}"
        + (f"; {chance_note(cheaper_after, cheaper_before)}" if test else "")
    )


def compare(
    baseline: DiceReader, candidate: DiceReader, folders: Sequence[Path], split: str, effect: str
) -> tuple[list[EvalReport], list[EvalReport], list[str]]:
    """Read ``folders`` (their ``split``) through ``effect`` with both readers.

    Returns both readers' reports, folder by folder, and a line for each folder."""
    seen = EFFECTS[effect]
    before: list[EvalReport] = []
    after: list[EvalReport] = []
    lines = []
    for folder in folders:
        with split_view(folder, split) as view:
            pair = [
                evaluate_folder(
                    view, with_effect(box_reader(r), seen), with_effect(crop_reader(r), seen)
                )
                for r in (baseline, candidate)
            ]
        before.append(pair[0])
        after.append(pair[1])
        lines.append(pair_line(folder.name, pair[:1], pair[1:]))
    return before, after, lines


def main(argv: Sequence[str] | None = None) -> int:
    """Print both readers' costs on the photos, folder by folder; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.compare", description=__doc__)
    parser.add_argument("baseline", type=Path, help="the face model shipped (ONNX)")
    parser.add_argument("candidate", type=Path, help="the face model that might replace it")
    parser.add_argument("--baseline-check", type=Path, help="die check fitted to the baseline")
    parser.add_argument("--candidate-check", type=Path, help="die check fitted to the candidate")
    parser.add_argument("--locator-model", type=Path, help="learned locator (default: ours)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared photo folders")
    parser.add_argument(
        "--source",
        action="append",
        help="a folder under --data to read (repeat; default: every public source there)",
    )
    parser.add_argument(
        "--split", choices=("val", "all"), default="val", help="val: photos never trained on"
    )
    parser.add_argument(
        "--effect",
        action="append",
        choices=sorted(EFFECTS),
        help="read the photos as another camera would see them (repeat; default: none)",
    )
    args = parser.parse_args(argv)
    names = args.source or [name for name, *_ in SOURCES if (args.data / name).is_dir()]
    folders = [args.data / name for name in names]
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing or not folders:
        parser.error(
            f"no photo folder {', '.join(missing)}: pass --data with the shared photo folders"
            if missing
            else f"no public source under {args.data}: pass --data or --source"
        )
    try:
        readers = [
            reader_from(model, locator_model=args.locator_model, die_check=check)
            for model, check in (
                (args.baseline, args.baseline_check),
                (args.candidate, args.candidate_check),
            )
        ]
    except ModelLoadError as error:
        parser.error(str(error))
    out = sys.stdout
    for effect in args.effect or ["none"]:
        before, after, lines = compare(readers[0], readers[1], folders, args.split, effect)
        if effect != "none":
            out.write(f"effect {effect}: {EFFECTS[effect].description}\n")
        out.write("".join(line + "\n" for line in lines))
        out.write(pair_line("all", before, after, test=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A table played from a labelled photo folder: what a table that tunes itself learns.

``python -m pipcam.simulate SOURCE --model MODEL [--answer none|all|N] [--seed S] ...``

The photos of ``SOURCE`` (the shared data format) are shuffled with the seed. The first
``--played`` are played as a table plays them, through the product's own code: each is read by
the model the table reads with, stored as a reading of a game (``--game`` photos a game) and kept
as ``pipcam run --keep-photos`` keeps it. What stops a game the players mend in play: a die the
reader could not read is corrected with its true value, a box on no die is said to hold none
(``--phantoms-stay`` leaves them, as before phones could say so), and a throw the reader found
too few dice of is typed, which flags its photo (``--no-typing`` leaves the die unlabelled in
it, as before). A sure read is never corrected, which is the worst case for the labels. Every
``--every`` photos the players answer the teach sheet (``pipcam.teach``): every question, none,
or its first N, truly (a box on no die: "no die") but for a share ``--mistakes`` of wrong
answers; then the last layer is tuned as ``pipcam tune --head`` tunes it, from the export, and
installed by the same rule; the held-out dice it reads otherwise go on the sheet, as ``pipcam
tune`` puts them. The other photos are the test, read with their true labels by the untuned
model, by each stage's tuned layer and by the model in use.

It prints one line per stage. The figures of models/EXPERIMENTS.md ("A table that tunes
itself") come from it. Not a product command: it needs a labelled folder and measures the
product.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pipcam.config import whole_number
from pipcam.photos import (
    PhotoKeeper,
    export_photos,
    photo_path,
    split_of_game,
    write_atomically,
)
from pipcam.store import Store, die_json
from pipcam.teach import DISPUTES, Teacher, disputes_of
from pipcam.tune import MIN_HELD_OUT
from vision.classify import OnnxClassifier
from vision.errors import TuneError
from vision.evaluate import box_reader, evaluate_folder, match_dice, reading_cost
from vision.labels import read_label_lines
from vision.reader import DiceReader
from vision.review import TRUSTED_READ
from vision.train.data import Record, load_folder, read_image
from vision.tuning import FOLDS, HeadConfig, tune_heads


@dataclass
class Tally:
    """What the played photos gave the labels so far."""

    corrected: int = 0  # unread dice corrected in play
    phantoms: int = 0  # boxes on no die said "no die there" in play
    missed: int = 0  # dice the reader never reported, typed in play (their photos flagged)
    placed: int = 0  # of them, tapped on the teach sheet (their photos labelled again)
    answered: int = 0  # teach-sheet answers
    answered_wrong: int = 0  # of them, reads that were wrong or boxes on no die
    mistaken: int = 0  # answers the players got wrong (--mistakes)
    sure_wrong: int = 0  # sure misreads nobody corrected: wrong labels, as the export gives them


def _test_folder(source: Path, test: list[Record], work: Path) -> Path:
    """A folder of the test photos with the source's own labels (linked, not copied)."""
    folder = work / "test" / source.name
    (folder / "images").mkdir(parents=True)
    names = {record.path.relative_to(source).as_posix() for record in test}
    lines = [f"{line.text}\n" for line in read_label_lines(source) if line.record["image"] in names]
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).symlink_to(source / name)
    (folder / "labels.jsonl").write_text("".join(lines), encoding="utf-8")
    return folder


def _held_out_truth(
    work: Path, photos: Path, played: dict[int, tuple[int, Record]], stage: int
) -> Path:
    """The kept photos of the held-out games with their true labels: what the held-out decision
    would see if every label were true."""
    folder = work / f"held-out-{stage}"
    (folder / "images").mkdir(parents=True)
    lines = []
    for reading_id, (game, record) in played.items():
        if split_of_game(game) != "val":
            continue
        kept = photo_path(photos, reading_id)
        (folder / "images" / kept.name).symlink_to(kept)
        dice = [{"value": d.value, "box": list(d.box)} for d in record.dice]
        lines.append(json.dumps({"image": f"images/{kept.name}", "dice": dice}) + "\n")
    (folder / "labels.jsonl").write_text("".join(lines), encoding="utf-8")
    return folder


def _read_cost(folder: Path, model: Path, threads: int) -> int:
    reader = DiceReader(OnnxClassifier(model, threads=threads))
    return reading_cost(evaluate_folder(folder, box_reader(reader)))


def _cost(folder: Path, model: Path, threads: int) -> str:
    report = evaluate_folder(folder, box_reader(DiceReader(OnnxClassifier(model, threads=threads))))
    return (
        f"R {report.recall * 100:.1f} P {report.precision * 100:.1f} "
        f"exact {report.exact}/{report.images} cost {reading_cost(report)}"
    )


def simulate(args: argparse.Namespace) -> int:
    """Play, answer, tune and measure, one stage every ``args.every`` photos."""
    source = Path(args.source).resolve()
    records = [r for r in load_folder(source) if r.known_issue is None and not r.is_crop and r.dice]
    random.Random(args.seed).shuffle(records)
    played, test = records[: args.played], records[args.played :]
    if not test:
        print(f"pipcam simulate: {len(records)} photos leave none to test", file=sys.stderr)
        return 2
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    testdir = _test_folder(source, test, work)
    model, current = Path(args.model), Path(args.model)
    untuned = _cost(testdir, model, args.threads)
    print(f"seed {args.seed}, answers {args.answer}: untuned on the test: {untuned}", flush=True)
    tally = Tally()
    mistaken = random.Random(args.seed + 1)  # which answers the players get wrong
    truths: dict[tuple[int, int], int | None] = {}  # (reading, die) -> true value (None: no die)
    unplaced: dict[int, list[tuple[int, float, float]]] = {}  # missed dice: value, centre 0..1
    games: dict[int, tuple[int, Record]] = {}  # reading -> its game and its labelled photo
    with Store(work / "table" / "pipcam.db") as store:
        keeper = PhotoKeeper(work / "table" / "photos", limit=len(played) + 1)
        game = 0
        reader_of = (model, DiceReader(OnnxClassifier(model, threads=args.threads)))
        teacher = Teacher(
            store,
            work / "table" / "photos",
            disputes=work / DISPUTES,
            locator=reader_of[1].locator,
        )
        for index, record in enumerate(played):
            if index % args.game == 0:
                game = store.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
            image = read_image(record.path)
            if reader_of[0] != current:
                reader_of = (current, DiceReader(OnnxClassifier(current, threads=args.threads)))
            reading = reader_of[1].read(image)
            dice = list(reading.dice)
            reading_id = store.record_reading(
                game, [die_json(d) for d in dice], status=reading.status
            )
            keeper.keep(reading_id, image, reading.set_aside)
            games[reading_id] = (game, record)
            pairs = {
                j: i for i, j in match_dice([d.box for d in record.dice], [d.box for d in dice])
            }
            for j, die in enumerate(dice):
                true = record.dice[pairs[j]].value if j in pairs else None
                truths[(reading_id, j)] = true
                if die.status != "ok" and true is not None:
                    store.record_correction(reading_id, j, true, events=[], source="simulation")
                    tally.corrected += 1
                elif true is None and args.phantoms:
                    # A die too many stops the game: the players say no die is there.
                    store.record_correction(reading_id, j, 0, events=[], source="simulation")
                    tally.phantoms += 1
            missed = len(record.dice) - len(pairs)
            if missed and args.typing:
                # A die too few stops the game as well: the players type the throw, and the
                # photo, where that die has no label, is flagged.
                store.record_missed(reading_id, missed)
                tally.missed += missed
                height, width = image.shape[:2]
                matched = set(pairs.values())
                unplaced[reading_id] = [
                    (d.value, (d.box[0] + d.box[2]) / 2 / width, (d.box[1] + d.box[3]) / 2 / height)
                    for i, d in enumerate(record.dice)
                    if i not in matched
                ]
            if (index + 1) % args.every:
                continue
            _answer(
                teacher,
                truths,
                args.answer,
                tally,
                mistakes=(args.mistakes, mistaken),
                unplaced=unplaced,
            )
            tally.sure_wrong = _sure_misreads(store, truths)
            export = work / "export"
            export_photos(store, work / "table" / "photos", export, link=True)
            stage = f"stage {index + 1}: {tally}"
            try:
                result = tune_heads(
                    [export],
                    work / f"run{index + 1}",
                    HeadConfig(threads=args.threads, folds=args.folds),
                    model=current,
                    baseline=current,
                )
            except TuneError as exc:
                print(f"{stage}; not tuned: {exc}", flush=True)
                continue
            comparison = result.comparison
            disputed = []
            if args.disputes:
                disputed = disputes_of(export, result, threads=args.threads)
                write_atomically(work / DISPUTES, json.dumps(disputed).encode())
            truth = _held_out_truth(work, work / "table" / "photos", games, index + 1)
            true_before = _read_cost(truth, current, args.threads)
            true_after = _read_cost(truth, result.tuned, args.threads)
            installed = comparison.photos >= MIN_HELD_OUT and comparison.better
            if installed:
                current = result.tuned
            print(
                f"{stage}; held-out {comparison.photos} photos cost"
                f" {reading_cost(comparison.before)} -> {reading_cost(comparison.after)}"
                f" (true labels {true_before} -> {true_after}), {len(disputed)} disputed,"
                f" {'installed' if installed else 'not installed'}; test: tuned"
                f" {_cost(testdir, result.tuned, args.threads)}; in use"
                f" {_cost(testdir, current, args.threads)}",
                flush=True,
            )
    return 0


def _sure_misreads(store: Store, truths: dict[tuple[int, int], int | None]) -> int:
    """Dice read surely (``TRUSTED_READ`` or more), never corrected nor answered, whose value is
    wrong: the wrong labels the export gives."""
    answered = store.checks()
    wrong = 0
    for reading in store.readings():
        for j, die in enumerate(reading.dice):
            if j in reading.corrected or j in answered.get(reading.id, {}):
                continue
            confidence = die.get("confidence")
            sure = isinstance(confidence, float | int) and confidence >= TRUSTED_READ
            true = truths.get((reading.id, j))
            wrong += die["status"] == "ok" and sure and true is not None and true != die["value"]
    return wrong


def _answer(
    teacher: Teacher,
    truths: dict[tuple[int, int], int | None],
    answer: str,
    tally: Tally,
    *,
    mistakes: tuple[float, random.Random] | None = None,
    unplaced: dict[int, list[tuple[int, float, float]]] | None = None,
) -> None:
    """The players answer the teach sheet: all of it, none, or its first N questions; a share
    of their answers (``mistakes``: the share and the draw) is another value than the truth.
    A photo with missed dice is answered by tapping each at its true centre (``unplaced``)."""
    if answer == "none":
        return
    share, draw = mistakes or (0.0, random.Random(0))
    count, questions = teacher.questions(limit=10**9)
    take = count if answer == "all" else min(int(answer), count)
    for question in questions[:take]:
        if question.missing:
            left = (unplaced or {}).get(question.reading, [])
            for _ in range(min(question.missing, len(left))):
                true_value, x, y = left.pop(0)
                try:
                    teacher.place(question.reading, x, y, true_value, source="simulation")
                except ValueError:
                    continue  # nothing could be outlined there: the photo stays flagged
                tally.placed += 1
                tally.answered += 1
            continue
        true = truths.get((question.reading, question.die))
        value = true or 0
        if draw.random() < share:
            value = draw.choice([v for v in range(7) if v != value])
            tally.mistaken += 1
        teacher.answer(question.reading, question.die, value, source="simulation")
        tally.answered += 1
        tally.answered_wrong += true != question.value


def main(argv: list[str] | None = None) -> int:
    """``python -m pipcam.simulate``."""
    p = argparse.ArgumentParser(
        prog="python -m pipcam.simulate", description=__doc__.split("\n")[0]
    )
    p.add_argument("source", help="a labelled folder in the shared data format")
    p.add_argument("--model", required=True, help="the face model the table starts with")
    p.add_argument("--answer", default="all", help="teach-sheet answers per stage: none, all or N")
    p.add_argument("--seed", type=int, default=1, help="the order of the photos")
    p.add_argument("--played", type=int, default=150, help="photos played; the rest are the test")
    p.add_argument("--every", type=int, default=50, help="photos between tunings")
    p.add_argument("--game", type=int, default=5, help="photos a game")
    p.add_argument("--threads", type=whole_number(1), default=2)
    p.add_argument(
        "--folds",
        type=int,
        default=FOLDS,
        help="folds of the install decision's cross-validation, as pipcam tune --head (0: the"
        " held-out fifth of the games)",
    )
    p.add_argument(
        "--no-disputes",
        dest="disputes",
        action="store_false",
        help="do not put the held-out dice a tuned model reads otherwise on the sheet",
    )
    p.add_argument(
        "--mistakes",
        type=float,
        default=0.0,
        help="share of the players' answers that are wrong (another value, or no die)",
    )
    p.add_argument(
        "--phantoms-stay",
        dest="phantoms",
        action="store_false",
        help="never say in play that a box holds no die (as before a phone could)",
    )
    p.add_argument(
        "--no-typing",
        dest="typing",
        action="store_false",
        help="never type a throw the reader found too few dice of (its photo then goes unflagged,"
        " as before phones could type one)",
    )
    p.add_argument(
        "--work",
        help="a folder for the table and the runs, kept (default: a temporary one, deleted"
        " at the end)",
    )
    args = p.parse_args(argv)
    if args.answer not in ("none", "all") and not args.answer.isdigit():
        p.error(f"--answer takes none, all or a number of questions, not {args.answer!r}")
    if not 0.0 <= args.mistakes <= 1.0:
        p.error(f"--mistakes is a share from 0 to 1, not {args.mistakes}")
    if args.work is not None:
        return simulate(args)
    # A run's table, photos, exports and tuned layers take some 40 MB: gone when it ends.
    with tempfile.TemporaryDirectory(prefix="pipcam-simulate-") as work:
        args.work = work
        return simulate(args)


if __name__ == "__main__":
    sys.exit(main())

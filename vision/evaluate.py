"""Score a dice reader on folders of labelled photos (the shared ``labels.jsonl`` format).

Per folder: per-die recall and precision by multiset of values per photo, the share of photos
read exactly, a confusion matrix from dice matched by box and, when the reader gives each die its
confidence, how often the dice it read at each confidence were right (whether "97 %" on a phone
means 97 %). Photos with ``known_issue`` are left out. Where a die carries ``suspect_value`` (a
reviewer saw a different value than the source's label) the reviewer's value is taken as the
truth.
"""

from __future__ import annotations

import bisect
import contextlib
import math
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect import centre_inside, iou
from vision.labels import LABELS, read_label_lines, read_labels
from vision.review import reviewed, untrusted
from vision.source import read_image

if TYPE_CHECKING:
    from vision.reader import DiceReader, Die

__all__ = [
    "BANDS",
    "COLUMNS",
    "ROWS",
    "Comparison",
    "chance_note",
    "MIN_GAIN",
    "WRONG_COST",
    "EvalReport",
    "Found",
    "ImageResult",
    "ReadFn",
    "evaluate_folder",
    "format_report",
    "image_view",
    "match_dice",
    "merge_reports",
    "photo_cost",
    "photos_cheaper",
    "reading_cost",
    "sign_test",
    "write_confusion_png",
]

IntBox = tuple[int, int, int, int]
Found = tuple[int | None, IntBox] | tuple[int | None, IntBox, float]
"""A die a reader reports: its value (None: found but not read), its box, and its confidence."""
ReadFn = Callable[[npt.NDArray[np.uint8]], Sequence[Found]]

ROWS = ("1", "2", "3", "4", "5", "6", "extra")
"""Confusion rows: the labelled value, or ``extra`` for a reported die no label matches."""
COLUMNS = ("1", "2", "3", "4", "5", "6", "missed")
"""Confusion columns: the reported value, or ``missed`` for a labelled die not found or not read."""

EXTRA = 6
MISSED = 6
MATCH_IOU = 0.2
BANDS = (0.5, 0.7, 0.9, 0.99)
"""Lower edges of the confidence bands the report counts read dice in (the last one up to 1)."""


@dataclass(frozen=True)
class ImageResult:
    """One photo's labelled and reported values (sorted), for listing the misreads."""

    image: str
    labelled: tuple[int, ...]
    reported: tuple[int | None, ...]

    @property
    def exact(self) -> bool:
        """True when every die was reported, with its value, and nothing else."""
        return None not in self.reported and sorted(self.labelled) == sorted(
            v for v in self.reported if v is not None
        )


@dataclass
class EvalReport:
    """Counts for one folder; the rates are properties so they stay consistent with the counts."""

    folder: Path
    images: int = 0
    skipped: int = 0
    unscored: int = 0
    """Dice whose label is a table's unsure read that nobody corrected: not scored."""
    labelled: int = 0
    reported: int = 0
    unread: int = 0
    matched: int = 0
    exact: int = 0
    six_dice_rolls: int = 0
    six_dice_exact: int = 0
    confusion: list[list[int]] = field(default_factory=lambda: [[0] * 7 for _ in range(7)])
    results: list[ImageResult] = field(default_factory=list)
    bands: list[list[int]] = field(default_factory=lambda: [[0, 0] for _ in BANDS])
    """Per confidence band of ``BANDS``: dice read with a value there, and how many were right
    (matched by box to a labelled die of that value; a die no label matches is wrong)."""

    @property
    def recall(self) -> float:
        """Share of labelled dice whose value was reported (multiset intersection per photo)."""
        return self.matched / self.labelled if self.labelled else 1.0

    @property
    def precision(self) -> float:
        """Share of reported values that a labelled die of the photo carries."""
        valued = self.reported - self.unread
        return self.matched / valued if valued else 1.0

    @property
    def exact_rate(self) -> float:
        """Share of photos read exactly."""
        return self.exact / self.images if self.images else 1.0


def match_dice(
    labelled: Sequence[Sequence[float]], reported: Sequence[Sequence[float]]
) -> list[tuple[int, int]]:
    """Pair labelled and reported boxes one to one, best overlap first.

    Boxes match on IoU >= 0.2 or when one's centre lies inside the other, so a source that boxes
    only the top face (matteop65) still matches a whole-die box.

    >>> match_dice([(0, 0, 10, 10), (20, 0, 30, 10)], [(21, 1, 31, 11), (50, 50, 60, 60)])
    [(1, 0)]
    """
    candidates: list[tuple[float, int, int]] = []
    for i, truth in enumerate(labelled):
        for j, found in enumerate(reported):
            overlap = iou(truth, found)
            if overlap >= MATCH_IOU or centre_inside(truth, found) or centre_inside(found, truth):
                candidates.append((overlap, i, j))
    candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
    used_truth: set[int] = set()
    used_found: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for _, i, j in candidates:
        if i not in used_truth and j not in used_found:
            used_truth.add(i)
            used_found.add(j)
            pairs.append((i, j))
    return sorted(pairs)


def _load_labels(folder: Path) -> list[dict[str, object]]:
    """The records of a folder's labels.jsonl, with our review of the labels (vision/review.py)."""
    path = folder / LABELS
    if not folder.is_dir():
        raise FileNotFoundError(f"no folder {str(folder)!r}: give a folder of labelled photos")
    if not path.is_file():
        raise FileNotFoundError(
            f"no labels.jsonl in {str(folder)!r}: give a folder in the shared data format"
            " (images/ and labels.jsonl, as ../shared/data/dice/* or what `pipcam photos OUT`"
            " writes); to read unlabelled photos use `pipcam read`"
        )
    # split_view keeps the source's folder name, so the review applies there too.
    return [reviewed(folder.name, record) for record in read_labels(folder)]


def _truth(
    record: dict[str, object], image: npt.NDArray[np.uint8]
) -> tuple[list[tuple[int, IntBox]], list[IntBox]]:
    """Labelled (value, box) pairs to score, and the boxes of the dice not scored: a table's
    unsure reads that nobody corrected (:func:`vision.review.untrusted`). A crop-folder record
    is one die filling its image."""
    if "dice" not in record:
        height, width = image.shape[:2]
        return [(int(str(record["value"])), (0, 0, width, height))], []
    dice = record["dice"]
    assert isinstance(dice, list)
    scored: list[tuple[int, IntBox]] = []
    unscored: list[IntBox] = []
    for die in dice:
        x0, y0, x1, y1 = (int(round(float(v))) for v in die["box"])
        if untrusted(die):
            unscored.append((x0, y0, x1, y1))
        else:
            scored.append((int(die.get("suspect_value", die["value"])), (x0, y0, x1, y1)))
    return scored, unscored


def evaluate_folder(folder: Path, read: ReadFn, read_crop: ReadFn | None = None) -> EvalReport:
    """Run ``read`` on every photo of ``folder`` and count how well it did.

    A crop-folder record (one die filling its image, no box) goes to ``read_crop`` when given:
    a reader that takes the whole image as the die's box, since a locator looking for dice on a
    tray finds none in a photo that is all die.
    """
    report = EvalReport(folder=folder)
    for record in _load_labels(folder):
        if record.get("known_issue"):
            report.skipped += 1
            continue
        name = str(record["image"])
        image = read_image(folder / name)
        truth, unscored = _truth(record, image)
        read_this = read_crop if "dice" not in record and read_crop is not None else read
        found = list(read_this(image))
        if unscored:
            # The label is the model's own unsure guess: whatever a model reads there is neither
            # right nor wrong (else the model that guessed it would always be right).
            dropped = {j for _, j in match_dice(unscored, [f[1] for f in found])}
            found = [f for j, f in enumerate(found) if j not in dropped]
            report.unscored += len(unscored)
        _count(report, name, truth, found)
    return report


def _count(
    report: EvalReport,
    name: str,
    truth: Sequence[tuple[int, IntBox]],
    found: Sequence[Found],
) -> None:
    """Add one photo's outcome to the report."""
    values = [d[0] for d in found]
    labelled_values = Counter(v for v, _ in truth)
    reported_values = Counter(v for v in values if v is not None)
    result = ImageResult(
        image=name,
        labelled=tuple(sorted(v for v, _ in truth)),
        reported=tuple(sorted(v for v in values if v is not None))
        + tuple(None for v in values if v is None),
    )
    report.images += 1
    report.labelled += len(truth)
    report.reported += len(found)
    report.unread += sum(v is None for v in values)
    report.matched += sum((labelled_values & reported_values).values())
    report.exact += result.exact
    if len(truth) == 6:
        report.six_dice_rolls += 1
        report.six_dice_exact += result.exact
    report.results.append(result)
    pairs = match_dice([b for _, b in truth], [d[1] for d in found])
    matched_truth = {i for i, _ in pairs}
    matched_found = {j for _, j in pairs}
    for i, j in pairs:
        value = found[j][0]
        report.confusion[truth[i][0] - 1][MISSED if value is None else value - 1] += 1
    truth_of = {j: truth[i][0] for i, j in pairs}
    for j, die in enumerate(found):
        if len(die) == 3 and die[0] is not None:
            band = _band(die[2])
            if band is not None:
                report.bands[band][0] += 1
                report.bands[band][1] += truth_of.get(j) == die[0]
    for i, (value, _) in enumerate(truth):
        if i not in matched_truth:
            report.confusion[value - 1][MISSED] += 1
    for j, die in enumerate(found):
        if j not in matched_found:
            report.confusion[EXTRA][MISSED if die[0] is None else die[0] - 1] += 1


def _band(confidence: float) -> int | None:
    """The index of the band of ``BANDS`` that ``confidence`` falls in (None: below them all)."""
    index = bisect.bisect_right(BANDS, confidence) - 1
    return index if index >= 0 else None


WRONG_COST = 3
"""A wrong value costs as much as three dice the players are asked about (models/MODEL_CARD.md: the
same weighing chose the reader's ``ok`` threshold); ``pipcam tune`` installs a model by it."""

MIN_GAIN = 2
"""What a candidate must save the players on the same photos to count as better: one die asked
about less is within the noise of a few held-out photos (models/EXPERIMENTS.md, "A table that
tunes itself")."""


def photo_cost(photo: ImageResult) -> int:
    """What reading one photo costs the players: each wrong value ``WRONG_COST``, each labelled
    die not read right for another reason (missed, unread) 1."""
    read = Counter(v for v in photo.reported if v is not None)
    right = sum((Counter(photo.labelled) & read).values())
    wrong = sum(read.values()) - right  # misread dice and dice that are not there
    return WRONG_COST * wrong + max(0, len(photo.labelled) - right - wrong)


def reading_cost(reports: EvalReport | Sequence[EvalReport]) -> int:
    """What reading the photos costs the players: :func:`photo_cost` summed."""
    return sum(
        photo_cost(photo)
        for report in ([reports] if isinstance(reports, EvalReport) else reports)
        for photo in report.results
    )


def photos_cheaper(before: Sequence[EvalReport], after: Sequence[EvalReport]) -> tuple[int, int]:
    """The same photos read twice: how many cost less after, and how many cost less before.

    Photos pair by folder and name; a total of two or three dice either way can come from a
    few photos, and this says whether it did."""
    cheaper_after = cheaper_before = 0
    for old, new in zip(before, after, strict=True):
        costs = {photo.image: photo_cost(photo) for photo in old.results}
        for photo in new.results:
            if photo.image in costs:
                cost = photo_cost(photo)
                cheaper_after += cost < costs[photo.image]
                cheaper_before += cost > costs[photo.image]
    return cheaper_after, cheaper_before


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test: the chance of a split at least this uneven between ``wins``
    and ``losses`` if each changed photo were a coin toss (ties left out before)."""
    trials = wins + losses
    if not trials:
        return 1.0
    tail = sum(math.comb(trials, k) for k in range(min(wins, losses) + 1))
    return min(1.0, 2 * tail / (1 << trials))


def chance_note(wins: int, losses: int) -> str:
    """The sign test of ``wins`` and ``losses`` as the comparisons print it."""
    return (
        f"sign test p = {sign_test(wins, losses):.2f}: how often chance alone splits them that"
        " unevenly"
    )


@dataclass(frozen=True)
class Comparison:
    """The same photos read by a baseline model and a candidate, folder by folder."""

    baseline: Path
    candidate: Path
    before: list[EvalReport]
    after: list[EvalReport]
    by_folds: bool = False
    """``after`` read each photo with a candidate tuned without its game (cross-validation),
    rather than ``candidate`` reading held-out photos."""

    @property
    def measured(self) -> str:
        """What the photos compared are, for messages."""
        return "photos measured" if self.by_folds else "held-out photos"

    @property
    def photos(self) -> int:
        """Photos both read (none: nothing says which model is better)."""
        return sum(r.images for r in self.before)

    @property
    def better(self) -> bool:
        """The candidate costs the players at least ``MIN_GAIN`` less on the photos
        (``reading_cost``)."""
        return self.photos > 0 and reading_cost(self.after) <= reading_cost(self.before) - MIN_GAIN

    def lines(self) -> list[str]:
        """What to print: both readings of each folder, and both costs; or that none was read."""
        if not self.photos and self.by_folds:
            return [
                "no photo measured (each game is read by a layer tuned on the others, and one"
                " game leaves no other): check the tuned model with `pipcam eval --model` first"
            ]
        if not self.photos:
            return [
                "no held-out photo (pipcam photos holds out the photos of a fifth of the games):"
                " the tuned model is not measured; check it with `pipcam eval --model` first"
            ]
        lines = []
        later = (
            f"the same photos, each read by a layer tuned without its game ({self.candidate}"
            " is tuned on all of them):"
            if self.by_folds
            else f"the same photos read by {self.candidate}:"
        )
        for old, new in zip(self.before, self.after, strict=True):
            lines += [f"{self.measured} read by {self.baseline}:", format_report(old)]
            lines += [later, format_report(new)]
        after, before = photos_cheaper(self.before, self.after)
        lines.append(
            f"cost to the players (a wrong value {WRONG_COST}, a die not read 1):"
            f" {reading_cost(self.before)} before, {reading_cost(self.after)} after;"
            f" {after} photos cheaper after, {before} cheaper before"
            f" ({chance_note(after, before)})"
        )
        return lines


def _percent(part: int, whole: int) -> str:
    """A rate as the report prints it; "n/a" when there is nothing to count (never 100 %).

    >>> _percent(1, 4), _percent(0, 0)
    (' 25.00 %', '   n/a  ')
    """
    return f"{100 * part / whole:6.2f} %" if whole else "   n/a  "


def format_report(report: EvalReport) -> str:
    """A plain-text summary: rates, the confusion matrix and the photos read wrongly."""
    lines = [
        f"{report.folder}: {report.images} photos ({report.skipped} skipped for known_issue)"
        + (
            f"; {report.unscored} {'die' if report.unscored == 1 else 'dice'} not scored"
            " (read unsurely, nobody corrected them)"
            if report.unscored
            else ""
        ),
        f"  per-die recall    {_percent(report.matched, report.labelled)}"
        f"  ({report.matched}/{report.labelled})",
        f"  per-die precision {_percent(report.matched, report.reported - report.unread)}"
        f"  ({report.matched}/{report.reported - report.unread}; {report.unread} unread)",
        f"  exact rolls       {_percent(report.exact, report.images)}"
        f"  ({report.exact}/{report.images})",
    ]
    if report.six_dice_rolls:
        rate = report.six_dice_exact / report.six_dice_rolls
        lines.append(
            f"  six-dice exact    {100 * rate:6.2f} %"
            f"  ({report.six_dice_exact}/{report.six_dice_rolls})"
        )
    if any(read for read, _ in report.bands):
        lines.append("  confidence of the dice read (right / read):")
        edges = [*BANDS, 1.0]
        for (read, right), low, high in zip(report.bands, edges, edges[1:], strict=False):
            if read:
                share = f"{100 * right / read:6.2f} %"
                span = f"{low:.2f}-{high:.2f}" if high < 1 else f"{low:.2f}-1   "
                lines.append(f"    {span}  {share}  ({right}/{read})")
    lines.append("  confusion (rows labelled, columns reported):")
    lines.append("    " + " ".join(f"{c:>6}" for c in ("", *COLUMNS)))
    for name, row in zip(ROWS, report.confusion, strict=True):
        lines.append("    " + " ".join(f"{v:>6}" for v in (name, *row)))
    wrong = [r for r in report.results if not r.exact]
    if wrong:
        lines.append(f"  misread photos ({len(wrong)}):")
        for result in wrong[:20]:
            reported = ",".join("?" if v is None else str(v) for v in result.reported)
            lines.append(
                f"    {result.image}: labelled {','.join(map(str, result.labelled))}"
                f" reported {reported}"
            )
        if len(wrong) > 20:
            lines.append(f"    ... and {len(wrong) - 20} more")
    return "\n".join(lines)


def write_confusion_png(report: EvalReport, path: Path) -> None:
    """Draw the confusion matrix as a PNG (rows shaded by their share), with OpenCV only."""
    cell, margin = 56, 90
    size = margin + cell * 7
    canvas = np.full((size + 30, size + 10, 3), 255, np.uint8)
    font = cv2.FONT_HERSHEY_SIMPLEX
    title = f"{report.folder.name}: recall {100 * report.recall:.1f}%"
    title += f" precision {100 * report.precision:.1f}%"
    cv2.putText(canvas, title[:60], (6, 20), font, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
    cv2.putText(canvas, "reported", (margin + 3 * cell - 10, 44), font, 0.5, (0, 0, 0), 1)
    cv2.putText(canvas, "labelled", (4, margin - 8), font, 0.5, (0, 0, 0), 1)
    for k, name in enumerate(COLUMNS):
        x = margin + k * cell + 6
        cv2.putText(canvas, name, (x, margin - 8), font, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
    for r, (name, row) in enumerate(zip(ROWS, report.confusion, strict=True)):
        y = margin + r * cell
        cv2.putText(canvas, name, (margin - 56, y + cell // 2 + 5), font, 0.5, (0, 0, 0), 1)
        total = max(sum(row), 1)
        for c, value in enumerate(row):
            x = margin + c * cell
            share = value / total
            good = r == c and r < 6
            # Right readings shade green, every other cell red, by its share of the row.
            colour = (
                (255 * (1 - share), 255, 255 * (1 - share))
                if good
                else (255 * (1 - share), 255 * (1 - share), 255)
            )
            cv2.rectangle(canvas, (x, y), (x + cell, y + cell), colour, -1)
            cv2.rectangle(canvas, (x, y), (x + cell, y + cell), (160, 160, 160), 1)
            text = str(value)
            (tw, th), _ = cv2.getTextSize(text, font, 0.5, 1)
            origin = (x + (cell - tw) // 2, y + (cell + th) // 2)
            cv2.putText(canvas, text, origin, font, 0.5, (0, 0, 0), 1, cv2.LINE_AA)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), canvas):
        raise OSError(f"cannot write {str(path)!r}")


def box_reader(reader: DiceReader) -> ReadFn:
    """Adapt the reader to evaluate_folder: every die found, value None unless it is ``ok``.

    An uncertain or cocked die is one the table would ask the players about, so it counts as
    found but not read, never as its best guess.
    """

    def read(frame: npt.NDArray[np.uint8]) -> Sequence[Found]:
        reading = reader.read(frame)
        return [_found(d) for d in reading.dice + reading.set_aside]

    return read


def crop_reader(reader: DiceReader) -> ReadFn:
    """Adapt the reader to a crop folder's photos: the whole image is one die's box."""

    def read(frame: npt.NDArray[np.uint8]) -> Sequence[Found]:
        height, width = frame.shape[:2]
        die = reader.read_box(frame, (0, 0, width, height))
        return [] if die is None else [_found(die)]

    return read


def _found(die: Die) -> Found:
    """A die as the evaluator counts it: its value only if it is ``ok``, box and confidence."""
    return (die.value if die.status == "ok" else None, die.box, die.confidence)


@contextlib.contextmanager
def split_view(folder: Path, split: str) -> Iterator[Path]:
    """A folder with the photos of ``folder`` in ``split`` (by the training code's own rule).

    The photos are linked, not copied; the folder lives as long as the ``with`` block.
    """
    if split == "all":
        yield folder
        return
    from vision.train.data import split_of

    source = folder.resolve().name
    with image_view(
        folder, lambda record: split_of(source, str(record["image"]), record.get("split")) == split
    ) as view:
        yield view


@contextlib.contextmanager
def image_view(folder: Path, keep: Callable[[dict[str, Any]], bool]) -> Iterator[Path]:
    """A folder with the photos of ``folder`` whose label record ``keep`` accepts, linked, for
    the ``with`` block; it has the folder's name (the source a report names)."""
    source = folder.resolve().name
    kept = [line.text for line in read_label_lines(folder) if keep(line.record)]
    with tempfile.TemporaryDirectory(prefix="pipcam-eval-") as tmp:
        view = Path(tmp) / source
        view.mkdir()
        for entry in folder.resolve().iterdir():
            if entry.name != LABELS:
                (view / entry.name).symlink_to(entry)
        (view / LABELS).write_text("".join(f"{line}\n" for line in kept), "utf-8")
        yield view


def merge_reports(reports: Sequence[EvalReport], folder: Path) -> EvalReport:
    """One report of the photos of several (each photo read once, in one of them)."""
    merged = EvalReport(folder)
    for report in reports:
        for name in (
            "images", "skipped", "unscored", "labelled", "reported", "unread", "matched",
            "exact", "six_dice_rolls", "six_dice_exact",
        ):  # fmt: skip
            setattr(merged, name, getattr(merged, name) + getattr(report, name))
        for row, other in zip(merged.confusion, report.confusion, strict=True):
            row[:] = [a + b for a, b in zip(row, other, strict=True)]
        for band, other in zip(merged.bands, report.bands, strict=True):
            band[:] = [a + b for a, b in zip(band, other, strict=True)]
        merged.results.extend(report.results)
    return merged

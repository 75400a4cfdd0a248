"""Our review of the shared labels: where a photo's label is plainly wrong, what the photo shows.

The shared data is read as it is published; these corrections are applied as it is read, by
training (``vision.train.data.load_folder``) and ``pipcam eval`` alike, with the fields the data's
README defines: ``known_issue`` (leave the photo out), ``suspect_value`` (the value a reviewer
saw; evaluation takes it as the truth, training leaves the die out), and dice the source did not
label at all. Each entry was decided by looking at the photo. The photos looked at were those
where the shipped reader, sure of a die (``ok``), disagreed with the label: the held-out photos
of every source, and nell-byler's and matteop65's training photos (models/MODEL_CARD.md,
"Reading whole photos"). A label the reader agrees with was never questioned, so the review can
only raise the figures, and the card gives them before and after.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

__all__ = ["REVIEWS", "TRUSTED_READ", "Review", "reviewed", "untrusted"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Review:
    """What the review found in one photo."""

    known_issue: str | None = None
    """Why the photo cannot be scored or trained on at all."""
    values: tuple[tuple[int, int, int], ...] = ()
    """(die index in the source's list, the source's value, the value the photo shows)."""
    added: tuple[tuple[int, tuple[float, float, float, float]], ...] = ()
    """Dice the source did not label: (value, whole-die box in pixels)."""


REVIEWED = "reviewed 2026-11-27"

REVIEWS: dict[tuple[str, str], Review] = {
    ("Epanemu_GameDiceRecognition", "images/dice_90_jpg.rf.625ab9d128d45d6b6f333cea831ac146.jpg"): (
        Review(known_issue=f"all 36 dice are labelled 6, but they show every face ({REVIEWED})")
    ),
    ("nell-byler_dice_detection", "images/IMG_20191208_111246.jpg"): Review(
        values=((0, 2, 3),)  # the blue die by the left wall shows three red pips in a row
    ),
    ("nell-byler_dice_detection", "images/IMG_20191209_095533.jpg"): Review(
        added=((6, (321.0, 346.0, 356.0, 383.0)),)  # the green six below the centre
    ),
    # Training photos: a model that was trained on them and still disagrees, surely, is worth a
    # look. Among nell-byler's 161, these five were plain; four others were not, and stay.
    ("nell-byler_dice_detection", "images/IMG_20191208_111530.jpg"): Review(
        added=((6, (99.0, 558.0, 136.0, 597.0)),)  # the dark six with red pips, bottom left
    ),
    ("nell-byler_dice_detection", "images/IMG_20191208_112342.jpg"): Review(
        added=((3, (255.0, 132.0, 284.0, 170.0)),)  # the teal three beside the yellow four
    ),
    ("nell-byler_dice_detection", "images/IMG_20191208_112353.jpg"): Review(
        added=((3, (296.0, 361.0, 333.0, 398.0)),)  # the dark three with red pips
    ),
    ("nell-byler_dice_detection", "images/IMG_20191209_095439.jpg"): Review(
        values=((9, 5, 4),)  # the purple die shows four white pips and no middle one
    ),
    ("nell-byler_dice_detection", "images/IMG_20191209_100722.jpg"): Review(
        values=((4, 6, 5),)  # the white die's top face is a five; the row above it is a side
    ),
    ("matteop65_Dice_Detection_Recognition", "images/valid_valid_9.jpg"): Review(
        added=((2, (318.0, 284.0, 412.0, 378.0)),)  # the second, blurred die, rolling: a two
    ),
}


def reviewed(source: str, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` (one line of a source's labels.jsonl) with the review applied: a copy when
    the photo was reviewed, else the record itself."""
    review = REVIEWS.get((source, str(record.get("image"))))
    if review is None:
        return record
    record = dict(record)
    if review.known_issue and not record.get("known_issue"):
        record["known_issue"] = review.known_issue
    dice = [dict(d) for d in record.get("dice", [])]
    for index, was, seen in review.values:
        if index >= len(dice) or int(dice[index]["value"]) != was:
            # The source changed under the review: leave that die as the source has it.
            log.warning(
                "%s %s: die %d is no longer a %d; its review is not applied",
                source,
                record.get("image"),
                index,
                was,
            )
            continue
        dice[index].setdefault("suspect_value", seen)
    for value, box in review.added:
        dice.append({"value": value, "box": list(box), "added_by_review": True})
    if "dice" in record:
        record["dice"] = dice
    return record


TRUSTED_READ = 0.9
"""From this confidence a die a table read and nobody corrected is a labelled example."""


def untrusted(die: dict[str, Any]) -> bool:
    """A die of a table's export (``pipcam photos``) whose value is the model's own unsure read:
    nobody corrected it, and the model gave it less than ``TRUSTED_READ``.

    Such labels are where the model's misreads hide (a table's own photos, models/EXPERIMENTS.md,
    "A table that tunes itself": 20 of the 27 uncorrected misreads among 984 dice): training and
    tuning neither teach them nor teach against them, and ``pipcam eval`` does not score them. A
    die the players corrected or answered on the teach sheet (``checked``), and a die of a source
    with no ``confidence``, is trusted, unless the photo shows it blurred past reading
    (``blurred``, marked by the export): its value is the table's, not the picture's. A die the
    players said they could not tell from the photo (``unclear``) is never trusted, however sure
    the read.

    >>> untrusted({"value": 3, "confidence": 0.62}), untrusted({"value": 3, "confidence": 0.97})
    (True, False)
    >>> untrusted({"value": 3, "confidence": 0.62, "corrected": True}), untrusted({"value": 3})
    (False, False)
    >>> untrusted({"value": 3, "corrected": True, "blurred": True})
    True
    >>> untrusted({"value": 3, "confidence": 0.97, "unclear": True})
    True
    """
    if die.get("blurred") or die.get("unclear"):
        return True
    confidence = die.get("confidence")
    if die.get("corrected") or die.get("checked") or confidence is None:
        return False
    return float(confidence) < TRUSTED_READ

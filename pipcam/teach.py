"""The dice a table's reader was unsure of, asked about afterwards on the phones.

A table that tunes itself learns from its labels, and the labels of a kept photo are what the
players left standing: the model's own read where nobody corrected it. Where the model was unsure
(below ``vision.review.TRUSTED_READ``) those reads are left out of training, so the dice that would
teach it most teach nothing (models/EXPERIMENTS.md, "A table that tunes itself"). The phones' teach
sheet shows those dice one by one, cut from the kept photo, between games and at nobody's pace;
each answer is stored (``Store.record_check``) and labels the die in ``pipcam photos``'s export,
and so in the next tuning. Answers change no game. A die the players cannot tell from its photo
(blurred, lit past reading) is answered so (``Store.record_unclear``): it is asked no more, and
its face teaches nothing.

A die is asked about when it is in a kept photo, nobody corrected or answered it, and it was read
unsurely: ``ok`` below ``TRUSTED_READ``, or ``uncertain``/``cocked`` and never corrected (such a
photo is otherwise left out whole). Those come first, since one answer frees a whole photo for
training, then the rest by confidence, least sure first (most likely misread; newest first among
equals): players who answer only a few answer the ones that teach most.
The reading still in play is not asked about: the players correct it on the board, where a
correction also changes the game.

A photo whose throw the players typed because the camera missed dice (``Store.missed``) is asked
about first as a whole: the phone shows it and a player taps each missed die and says its value
(:meth:`Teacher.place`). The locator's faintest peak under the tap gives the die's box
(``vision.locate.die_at``), so the photo teaches the locator the die it missed; until every missed
die is placed, the photo is left out of training and its other dice are not asked about. A
missed die that is not in the photo at all (off the tray, out of view) is said so
(:meth:`Teacher.absent`): nothing is left unlabelled there.

Disputed dice come before all: after a tuning run, the held-out dice whose label is a sure read
nobody checked and which the tuned model reads otherwise (:func:`find_disputes`, kept in
``DATA/tune/disputed.json``). Such a label is the model in use's own read, so the held-out
comparison charges a tuned model for reading it otherwise even where it is right
(models/EXPERIMENTS.md, "The teach sheet"); an answer makes the next comparison fair.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipcam.photos import kept_photos, photo_path
from pipcam.store import NO_DIE, Store
from vision.classify import OnnxClassifier
from vision.evaluate import match_dice
from vision.labels import read_labels
from vision.locate import Locator, die_at
from vision.reader import DiceReader
from vision.review import TRUSTED_READ, untrusted
from vision.train.data import read_image
from vision.tuning import TuneResult

DISPUTES = "disputed.json"
"""The last tuning run's disputed dice, in ``DATA/tune`` (pipcam tune writes it)."""
CROP_SIDE = 240
"""Pixels of the square a phone shows: enough for pips, small enough to send at once."""
CONTEXT = 2.2
"""The crop's side in die-box sides: the die and what lies around it, so it can be told from a
neighbour; the die itself is outlined."""
PHOTO_SIDE = 960
"""The longer side of a whole photo sent to a phone to tap a missed die in."""
MISSED = "missed"
"""The status of a question about a photo's missed dice (``Question.missing`` of them)."""


class NoSuchDie(LookupError):
    """A question that is not (or no longer) on the teach sheet."""


@dataclass(frozen=True)
class Question:
    """One die to ask about: which photo and die, and how the camera read it."""

    reading: int
    die: int
    value: int | None
    confidence: float
    status: str
    box: tuple[int, int, int, int]
    time: str
    disputed: bool = False  # read surely, but a newly tuned model reads it otherwise
    missing: int = 0  # dice the camera missed in the photo, still to place; ``die`` the next's
    # Read otherwise at first, before the camera's light was set right (pipcam.table.look_again):
    # two sure looks that disagree are asked about (the photo carries the second until then).
    looked_again: bool = False
    first: int | None = None  # what the first look read
    # A fix of its throw said one of some dice showing this face was misread, not which.
    doubted: bool = False
    blurred: bool = False  # the camera saw it too blurred to read (a die still rolling, say)
    hidden: bool = False  # the camera saw it partly hidden (a card or a cup over part of it)
    cut: bool = False  # what hid it was the edge of the camera's view

    def as_json(self) -> dict[str, Any]:
        """What a phone gets (the box stays here: the phone gets the crop or the photo)."""
        return {
            "reading": self.reading,
            "die": self.die,
            "value": self.value,
            "confidence": round(self.confidence, 3),
            "status": self.status,
            "time": self.time,
            "disputed": self.disputed,
            "missing": self.missing,
            "looked_again": self.looked_again,
            "first": self.first,
            "doubted": self.doubted,
            "blurred": self.blurred,
            "hidden": self.hidden,
            "cut": self.cut,
        }


def _asked(die: dict[str, Any]) -> bool:
    """A die whose read is not a label as it stands."""
    if die.get("status") == NO_DIE:
        return False  # read as at a place the players had said holds no die (pipcam.table)
    if die.get("status") != "ok" or die.get("value") is None:
        return True
    return float(die.get("confidence", 1.0)) < TRUSTED_READ


class Teacher:
    """The teach sheet's questions over a table's store and kept photos; thread-safe."""

    def __init__(
        self,
        store: Store,
        photos: Path,
        *,
        in_play: Callable[[], int | None] = lambda: None,
        disputes: Path | None = None,
        locator: Locator | None = None,
    ) -> None:
        self.store = store
        self.photos = photos
        self.locator = locator  # the reader's, to box the missed dice players point at
        self.disputes = disputes  # the last tuning run's disputed dice (find_disputes)
        self.in_play = in_play  # the reading the board can still correct (pipcam.table)
        self._lock = threading.Lock()
        # A kept photo's sidecar never changes once written; read each once.
        self._aside: dict[int, list[dict[str, Any]] | None] = {}
        # The sheet as last listed, and what it was listed from: every phone asks for the count
        # after each kept photo, and one listing serves them all.
        self._listed: tuple[object, list[Question]] | None = None

    def _set_aside(self, reading_id: int, path: Path) -> list[dict[str, Any]] | None:
        """The dice set aside in a kept photo; None when its sidecar cannot be read (the export
        skips such a photo too, so asking about it would teach nothing)."""
        if reading_id not in self._aside:
            try:
                self._aside[reading_id] = list(
                    json.loads(path.with_suffix(".json").read_text())["set_aside"]
                )
            except (OSError, ValueError, KeyError, TypeError):
                return None  # perhaps written a moment later: not remembered
        return self._aside[reading_id]

    def _questions(
        self, kept: dict[int, Path], after: int, upto: int | None = None
    ) -> list[Question]:
        """The open questions about the kept photos of readings in (after, upto], in the order
        asked."""
        answered = self.store.checks(after, upto)
        unclear = self.store.unclear(after, upto)
        missed = self.store.missed()
        absent = self.store.absent()
        placed = self.store.placed()
        disputed = read_disputes(self.disputes) if self.disputes else set()
        doubts = self.store.doubted()
        playing = self.in_play()
        out: list[Question] = []
        for reading in reversed(self.store.readings(after, upto)):
            path = kept.get(reading.id)
            if path is None or reading.id == playing:
                continue
            aside = self._set_aside(reading.id, path)
            if aside is None:
                continue
            found = placed.get(reading.id, {})
            missing = missed.get(reading.id, 0) - len(found) - absent.get(reading.id, 0)
            if missing > 0:
                # Until its missed dice are placed the photo teaches nothing: ask only that.
                known = len(reading.dice) + len(aside) + len(found)
                out.append(
                    Question(
                        reading.id,
                        known,
                        None,
                        0.0,
                        MISSED,
                        (0, 0, 0, 0),
                        reading.time,
                        missing=missing,
                    )
                )
                continue
            done = answered.get(reading.id, {}).keys() | unclear.get(reading.id, set())
            for index, die in enumerate([*reading.dice, *aside]):
                doubted = index in doubts.get(reading.id, set())  # said after any word on it
                if (index in reading.corrected or index in done) and not doubted:
                    continue
                contested = (reading.id, index) in disputed
                again = index in reading.looked_again
                if not contested and not again and not doubted and not _asked(die):
                    continue
                x0, y0, x1, y1 = (int(v) for v in die["box"])
                out.append(
                    Question(
                        reading.id,
                        index,
                        die.get("value"),
                        float(die.get("confidence", 0.0)),
                        str(die.get("status")),
                        (x0, y0, x1, y1),
                        reading.time,
                        contested,
                        looked_again=again,
                        first=reading.looked_again.get(index),
                        doubted=doubted,
                        blurred=bool(die.get("blurred")),
                        hidden=bool(die.get("hidden")),
                        cut=bool(die.get("cut")),
                    )
                )
        # Python's sort is stable: among equals the newest photo stays first.
        out.sort(
            key=lambda q: (
                not (q.disputed or q.looked_again or q.doubted),
                not q.missing,
                q.value is not None and q.status == "ok",
                q.confidence,
            )
        )
        return out

    def _open(self) -> list[Question]:
        """Every open question, in the order asked."""
        kept = kept_photos(self.photos)
        for gone in self._aside.keys() - kept.keys():  # pruned by the table since
            del self._aside[gone]
        return self._questions(kept, min(kept) - 1) if kept else []

    def _inputs(self) -> object:
        """What the open questions are made of, cheaply: it changes when any of it does. A photo
        pruned changes the folder's time; the store counts what it adds. The folder's time has
        a clock tick's grain, and the newest reading's photo is written just after the reading
        is stored, so whether that photo is there yet is part of it too."""
        revision = self.store.revision()
        newest = photo_path(self.photos, revision[0]).is_file()
        disputes = _mtime(self.disputes) if self.disputes is not None else None
        return revision, _mtime(self.photos), newest, disputes, self.in_play()

    def _listing(self) -> list[Question]:
        """Every open question, listed again only when the store or the photos changed."""
        with self._lock:
            inputs = self._inputs()
            if self._listed is None or self._listed[0] != inputs:
                self._listed = (inputs, self._open())
            return self._listed[1]

    def questions(self, limit: int = 20) -> tuple[int, list[Question]]:
        """How many dice are open, and the first ``limit`` of them."""
        found = self._listing()
        return len(found), found[:limit]

    def missing(self) -> int:
        """The dice the camera missed that are still to place, over the whole sheet (one
        question a photo however many it missed)."""
        return sum(question.missing for question in self._listing())

    def _of_photo(self, reading: int) -> list[Question]:
        """The open questions about one reading (only its photo is looked at, not the folder)."""
        path = photo_path(self.photos, reading)
        kept = {reading: path} if path.is_file() else {}
        return self._questions(kept, reading - 1, reading)

    def _find(self, reading: int, die: int) -> Question:
        """The open question about one die."""
        for question in self._of_photo(reading):
            if question.die == die:
                return question
        raise NoSuchDie(
            f"die {die} of reading {reading} is not on the teach sheet (answered already, "
            "never asked, or its photo was deleted); fetch the sheet again"
        )

    def _frame(self, reading: int) -> Any:
        """A kept photo, BGR; ``NoSuchDie`` when it cannot be read any more."""
        try:
            return read_image(photo_path(self.photos, reading))
        except FileNotFoundError as exc:
            raise NoSuchDie(f"the photo of reading {reading} cannot be read any more") from exc

    def _find_missed(self, reading: int) -> Question:
        """The open question about a photo's missed dice."""
        for question in self._of_photo(reading):
            if question.missing:
                return question
        raise NoSuchDie(
            f"reading {reading} has no missed die left to place (placed already, or its photo "
            "was deleted); fetch the sheet again"
        )

    def _known_boxes(self, reading: int) -> list[tuple[int, int, int, int]]:
        """The boxes of a photo's dice: read in the roll zone, set aside, placed by players."""
        stored = self.store.readings(reading - 1, reading)
        aside = self._set_aside(reading, photo_path(self.photos, reading)) or []
        dice = [*(stored[0].dice if stored else []), *aside]
        boxes = [tuple(int(v) for v in d["box"]) for d in dice]
        boxes += [tuple(box) for _, box in self.store.placed().get(reading, {}).values()]
        return [(b[0], b[1], b[2], b[3]) for b in boxes]

    def photo(self, reading: int) -> bytes:
        """A JPEG of a photo with missed dice, its known dice outlined, at most ``PHOTO_SIDE``
        pixels on its longer side (the phone reports taps as fractions of it)."""
        with self._lock:
            self._find_missed(reading)
            boxes = self._known_boxes(reading)
        return photo_jpeg(self._frame(reading), boxes)

    def place(
        self,
        reading: int,
        x: float,
        y: float,
        value: int,
        *,
        source: str = "phone",
        limit: int = 20,
    ) -> tuple[int, list[Question]]:
        """Store a missed die a player tapped at (``x``, ``y``), fractions of the photo's width
        and height, showing ``value``; the sheet then, as :meth:`questions` gives it."""
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
            raise ValueError(f"a die shows 1 to 6, not {value!r}")
        if not (0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
            raise ValueError(f"a point in the photo is 0..1 across and down, not ({x}, {y})")
        with self._lock:
            question = self._find_missed(reading)
            frame = self._frame(reading)
            height, width = frame.shape[:2]
            point = (min(x * width, width - 1.0), min(y * height, height - 1.0))
            box = die_at(frame, point, self._known_boxes(reading), self.locator)
            if box is None:
                raise ValueError(
                    "no die could be outlined where you tapped (none was found there, or the "
                    "tap is on a die already known): tap the middle of the missed die"
                )
            self.store.record_placed(reading, question.die, value, box, source=source)
            self._listed = None
        return self.questions(limit)

    def absent(
        self, reading: int, *, source: str = "phone", limit: int = 20
    ) -> tuple[int, list[Question]]:
        """Store that one of the dice the camera missed in a photo is not in it (off the tray,
        out of the camera's view), so the photo lacks one label less; the sheet then, as
        :meth:`questions` gives it."""
        with self._lock:
            self._find_missed(reading)
            self.store.record_absent(reading, source=source)
            self._listed = None
        return self.questions(limit)

    def crop(self, reading: int, die: int) -> bytes:
        """A JPEG of the die, outlined, with some of the tray around it."""
        with self._lock:
            question = self._find(reading, die)
            if question.missing:
                raise NoSuchDie(
                    f"die {die} of reading {reading} is a missed die to place: fetch the photo"
                )
        return crop_jpeg(self._frame(reading), question.box)

    def answer(
        self, reading: int, die: int, value: int | None, *, source: str = "phone", limit: int = 20
    ) -> tuple[int, list[Question]]:
        """Store that the die shows ``value`` (0: no die there; None: the players cannot tell
        from the photo, which takes it off the sheet and teaches nothing of its face); the
        sheet then, as :meth:`questions` gives it."""
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 6
        ):
            raise ValueError(
                f"a die shows 1 to 6 (0: no die there, None: cannot tell), not {value!r}"
            )
        with self._lock:
            if self._find(reading, die).missing:
                raise NoSuchDie(
                    f"die {die} of reading {reading} is a missed die: place it on the photo"
                )
            if value is None:
                self.store.record_unclear(reading, die, source=source)
            else:
                self.store.record_check(reading, die, value, source=source)
            self._listed = None  # answering a die again leaves the store's counts as they were
        return self.questions(limit)


def _mtime(path: Path) -> int | None:
    """When ``path`` last changed (ns); None when it is not there."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def read_disputes(path: Path) -> set[tuple[int, int]]:
    """The (reading, die) pairs of a disputes file; none when it is missing or damaged (it is
    written again by the next run)."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        return {(int(e["reading"]), int(e["die"])) for e in entries}
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def disputes_of(export: Path, result: TuneResult, *, threads: int = 1) -> list[dict[str, Any]]:
    """The disputed dice of a tuning run on ``export``: on each photo, those that the layer which
    never saw it reads otherwise (each fold's, when the run cross-validated; else the tuned
    model on the held-out photos)."""
    folds = result.report.get("fold_photos")
    if not folds:
        return find_disputes(export, result.tuned, threads=threads)
    found: list[dict[str, Any]] = []
    for k, photos in enumerate(folds):
        layer = result.tuned.parent / "folds" / f"fold-{k}.onnx"
        found += find_disputes(export, layer, threads=threads, photos=set(photos))
    return found


def find_disputes(
    export: Path, tuned: Path, *, threads: int = 1, photos: set[str] | None = None
) -> list[dict[str, Any]]:
    """The held-out dice of a ``pipcam photos`` export (or those of ``photos``, paths as
    ``export / image``) whose label is a sure read nobody checked and which the ``tuned`` model
    reads otherwise (another value, or none): each with its reading, die, the label and the
    tuned model's value. Raises ``ModelLoadError`` for a model that does not load."""
    reader = DiceReader(OnnxClassifier(tuned, threads=threads))
    disputes: list[dict[str, Any]] = []
    for record in read_labels(export):
        if photos is None:
            if record.get("split") != "val":
                continue
        elif str(export / record["image"]) not in photos:
            continue
        if record.get("known_issue"):
            continue
        # A sure read nobody checked: the only labels that are a model's word alone.
        reads = [
            d
            for d in record["dice"]
            if "confidence" in d and "die" in d and not untrusted(d) and not d.get("corrected")
        ]
        if not reads:
            continue
        reading = reader.read(read_image(export / record["image"]))
        found = list(reading.dice) + list(reading.set_aside)
        pairs = dict(match_dice([d["box"] for d in reads], [d.box for d in found]))
        for i, label in enumerate(reads):
            die = found[pairs[i]] if i in pairs else None
            value = die.value if die is not None and die.status == "ok" else None
            if value != label["value"]:
                disputes.append(
                    {
                        "reading": record["reading"],
                        "die": label["die"],
                        "label": label["value"],
                        "tuned": value,
                    }
                )
    return disputes


def crop_jpeg(frame: Any, box: tuple[int, int, int, int]) -> bytes:
    """The square around ``box`` at ``CONTEXT`` sides, edge-replicated past the frame, outlined
    and scaled to ``CROP_SIDE``."""
    x0, y0, x1, y1 = box
    side = max(x1 - x0, y1 - y0, 1) * CONTEXT
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    left, top = round(cx - side / 2), round(cy - side / 2)
    size = max(round(side), 1)
    height, width = frame.shape[:2]
    pad = max(0, -left, -top, left + size - width, top + size - height)
    if pad:
        frame = cv2.copyMakeBorder(frame, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    square = frame[top + pad : top + pad + size, left + pad : left + pad + size]
    scale = CROP_SIDE / size
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    out = cv2.resize(square, (CROP_SIDE, CROP_SIDE), interpolation=interpolation)
    # The outline sits just outside the die's box, so it never covers a pip.
    a = (round((x0 - left) * scale) - 3, round((y0 - top) * scale) - 3)
    b = (round((x1 - left) * scale) + 2, round((y1 - top) * scale) + 2)
    cv2.rectangle(out, a, b, (0, 220, 255), 2)
    return _jpeg(out, "the crop")


def photo_jpeg(frame: Any, boxes: list[tuple[int, int, int, int]]) -> bytes:
    """The whole frame at most ``PHOTO_SIDE`` pixels long, the ``boxes`` outlined."""
    height, width = frame.shape[:2]
    scale = min(1.0, PHOTO_SIDE / max(height, width))
    out = frame
    if scale < 1.0:
        size = (max(round(width * scale), 1), max(round(height * scale), 1))
        out = cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
    else:
        out = frame.copy()
    for x0, y0, x1, y1 in boxes:
        a = (round(x0 * scale) - 2, round(y0 * scale) - 2)
        b = (round(x1 * scale) + 1, round(y1 * scale) + 1)
        cv2.rectangle(out, a, b, (0, 220, 255), 2)
    return _jpeg(out, "the photo")


def _jpeg(image: Any, what: str) -> bytes:
    """``image`` as a JPEG a phone shows (quality 85)."""
    ok, data = cv2.imencode(".jpg", np.ascontiguousarray(image), [cv2.IMWRITE_JPEG_QUALITY, 85])
    if not ok:
        raise ValueError(f"{what} could not be encoded as JPEG")
    return bytes(data.tobytes())

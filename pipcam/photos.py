"""Photos of this table's own dice, kept so the reader can be measured and trained on them.

No public photo set is a Raspberry Pi over a dice tray, and the dice a model has never seen are
where it is weakest (models/MODEL_CARD.md). The table itself is the best source: with
``pipcam run --keep-photos`` every settled frame is saved beside the game store as
``photos/reading-<id>.jpg``, with its size and the dice set aside in ``reading-<id>.json``; the
dice in the roll zone, as the players left them (their corrections applied), are in the store
already. ``pipcam photos OUT`` turns both into a folder in the shared data format (``images/``,
``labels.jsonl``, ``README.txt``) that ``pipcam eval OUT`` measures and ``python -m
vision.train --source OUT`` trains on.

Each die is labelled with the value the players left standing: a die they corrected is marked
``corrected``, the others were read surely by the model and nobody corrected them (the players
would have, for a roll that scored wrong), and carry the model's ``confidence`` (a misread that
changed nothing in the score may have gone uncorrected). A photo with a die nobody read or
corrected is flagged ``known_issue``, which training and scoring leave out.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipcam.config import PHOTO_LIMIT, ConfigError, table_config
from pipcam.store import BLURRED, CUT, HIDDEN, NO_DIE, Store, StoredReading, StoreError, die_json

log = logging.getLogger("pipcam.photos")

JPEG_QUALITY = 95
FREE_RESERVE = 512 * 2**20
"""Bytes the photos always leave free on their disk: the game store, its log and the system
need room more than the newest photo does (a full SD card stops every write)."""
VAL_PERCENT = 20
"""Share of games the export marks ``val``: whole games, since one game's rolls look alike."""

_NAME = re.compile(r"reading-(\d+)\.jpg")


def photo_path(folder: Path, reading_id: int) -> Path:
    """Where the frame of stored reading ``reading_id`` is kept."""
    return folder / f"reading-{reading_id:07d}.jpg"


def write_atomically(path: Path, data: bytes) -> None:
    """Write beside and rename over, so a crash never leaves half a file under the real name."""
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


class PhotoKeeper:
    """Saves the frame of each settled reading, and the dice set aside in it, under ``folder``.

    The newest ``limit`` photos stay, and only as many as leave ``reserve`` bytes free on the
    disk: to keep a photo where the disk is that full, the oldest are deleted first, and when
    even that cannot make room the photo is not kept. Failing to save is logged and skipped: the
    game must not stop for a photo. ``on_count`` hears how many photos are kept, at once and after
    each photo, so that every phone can say the table keeps them
    (:meth:`pipcam.table.Table.photos_kept`).
    """

    def __init__(
        self,
        folder: Path,
        *,
        limit: int = PHOTO_LIMIT,
        on_count: Callable[[int], object] | None = None,
        reserve: int = FREE_RESERVE,
        free_bytes: Callable[[Path], int] = lambda path: shutil.disk_usage(path).free,
    ) -> None:
        if limit < 1:
            raise ValueError(f"a photo limit must be at least 1, not {limit}")
        self.folder = folder
        self.limit = limit
        self.on_count = on_count
        self.reserve = reserve
        self.free_bytes = free_bytes  # injected by tests, which cannot fill a disk
        self._short = False  # said that the disk is too full to keep any photo
        self.count = len(kept_photos(folder))
        """Photos kept under ``folder`` now."""
        self._tell()

    def _tell(self) -> None:
        if self.on_count is not None:
            self.on_count(self.count)

    def keep(self, reading_id: int, frame: Any, set_aside: Sequence[Any] = ()) -> Path | None:
        """Save the frame (BGR) of reading ``reading_id``; its path, or None if it failed.

        ``set_aside``: the dice out of the roll zone, as read (``vision.reader.Die``) or as the
        table took them (JSON objects, with places said to hold no die marked so).
        """
        path = photo_path(self.folder, reading_id)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ok, encoded = cv2.imencode(
                ".jpg", np.asarray(frame), [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]
            )
            if not ok:
                raise OSError("OpenCV could not encode the frame as JPEG")
            aside = [d if isinstance(d, dict) else die_json(d) for d in set_aside]
            height, width = np.asarray(frame).shape[:2]
            sidecar = json.dumps({"width": int(width), "height": int(height), "set_aside": aside})
            if not self._make_room(len(encoded) + len(sidecar)):
                return None
            # The sidecar first: a photo is never found without its set-aside dice.
            write_atomically(path.with_suffix(".json"), sidecar.encode())
            write_atomically(path, encoded.tobytes())
            self._prune()
        except Exception as exc:  # noqa: BLE001 - whatever fails, the camera loop must go on
            log.warning("could not keep the photo of reading %d in %s: %s", reading_id, path, exc)
            return None
        self._tell()
        return path

    def _make_room(self, size: int) -> bool:
        """Delete the oldest photos until ``size`` more bytes leave the reserve free; False (said
        once until there is room again, and nothing deleted) when deleting them all would not do.
        """
        free = self.free_bytes(self.folder)
        if free - size >= self.reserve:
            self._short = False
            return True
        sizes = {}
        for reading_id in sorted(kept_photos(self.folder)):
            path = photo_path(self.folder, reading_id)
            sizes[reading_id] = sum(_size(part) for part in (path, path.with_suffix(".json")))
        if free + sum(sizes.values()) - size < self.reserve:
            if not self._short:
                log.warning(
                    "not keeping photos of the tray: %s has %d MB free, and %d MB stay free for "
                    "the game store; free some space (the newest photos are kept again then)",
                    self.folder,
                    free >> 20,
                    self.reserve >> 20,
                )
            self._short = True
            return False
        gone = 0
        for reading_id, taken in sizes.items():  # oldest first
            if free - size >= self.reserve:
                break
            path = photo_path(self.folder, reading_id)
            path.unlink(missing_ok=True)
            path.with_suffix(".json").unlink(missing_ok=True)
            free += taken
            gone += 1
        self.count = len(sizes) - gone
        log.info("deleted the %d oldest photos to leave %d MB free", gone, self.reserve >> 20)
        self._short = False
        return True

    def _prune(self) -> None:
        """Delete the oldest photos beyond the limit (reading ids grow with time)."""
        kept = sorted(kept_photos(self.folder))
        for reading_id in kept[: max(0, len(kept) - self.limit)]:
            path = photo_path(self.folder, reading_id)
            path.unlink(missing_ok=True)
            path.with_suffix(".json").unlink(missing_ok=True)
        self.count = min(len(kept), self.limit)


def _size(path: Path) -> int:
    """A file's size; 0 when it is gone."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def kept_photos(folder: Path) -> dict[int, Path]:
    """The photos under ``folder`` by reading id."""
    if not folder.is_dir():
        return {}
    found = {}
    for path in folder.iterdir():
        match = _NAME.fullmatch(path.name)
        if match:
            found[int(match.group(1))] = path
    return found


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote."""

    photos: int
    dice: int
    corrected: int
    flagged: int
    val_photos: int
    checked: int = 0

    def line(self) -> str:
        """One line for the terminal."""
        return (
            f"{self.photos} photos, {self.dice} dice labelled "
            f"({self.corrected} corrected by hand, {self.checked} answered on the teach sheet), "
            f"{self.flagged} photos flagged (a die nobody read or corrected), "
            f"{self.val_photos} photos in the val split"
        )


def split_of_game(game: int | None, val_percent: int = VAL_PERCENT) -> str:
    """``val`` for a stable ``val_percent`` share of games, else ``train``."""
    key = f"game-{game}".encode()
    return "val" if zlib.crc32(key) % 100 < val_percent else "train"


def _label(
    reading: StoredReading,
    aside: list[dict[str, Any]],
    answers: dict[int, int],
    placed: dict[int, tuple[int, list[int]]] | None = None,
    doubted: set[int] | frozenset[int] = frozenset(),
    unclear: set[int] | frozenset[int] = frozenset(),
) -> tuple[list[Any], list[str]]:
    """The labelled dice of one photo and what keeps it from being fully labelled.

    ``answers`` are the players' answers on the teach sheet (pipcam.teach), by die: the roll
    zone's dice first, then those set aside; 0 says no die is there, so the box is no label.
    ``placed`` are the missed dice the players pointed at there: die -> (value, box).
    ``doubted``: dice a fix of the throw said may be misread, not which (Store.doubted).
    ``unclear``: dice the players could not tell on the teach sheet (Store.unclear): a die is
    there, and its read value is marked ``unclear``, which training does not learn a face from.
    """
    placed = placed or {}
    dice: list[Any] = []
    problems: list[str] = []
    zone = len(reading.dice)
    for index, die in enumerate([*reading.dice, *aside]):
        where = (
            f"die {index} in the roll zone" if index < zone else f"a die set aside at {die['box']}"
        )
        # ``die`` names it for the teach sheet (pipcam.teach): the same numbering as answers.
        entry: dict[str, Any] = {"value": die["value"], "box": die["box"], "die": index}
        if index >= zone:
            entry["set_aside"] = True
        if index in doubted:
            # Recorded after whatever was said of the die before: a person's word since clears it.
            problems.append(f"{where} may be misread (a fix of its throw said so, not its face)")
            continue
        if index in answers:
            if answers[index] == 0:
                continue  # the players saw no die there
            entry.update(value=answers[index], checked=True)
        elif index < zone and index in reading.corrected:
            if die["value"] is None:
                continue  # corrected in play to "no die there" (store.NO_DIE)
            entry["corrected"] = True
        elif index >= zone and index - zone in reading.aside_corrected:
            value = reading.aside_corrected[index - zone]
            if value == 0:
                continue  # corrected in play: no die there
            entry.update(value=value, corrected=True)
        elif die["status"] == NO_DIE:
            continue  # read as at a place the players had said holds no die (pipcam.table)
        elif index in unclear:
            if die["value"] is None:
                # A die is there, but a label needs a face (the locator learns this photo's
                # other dice only when none is left out).
                problems.append(f"{where} ({die['status']}): the players could not tell it")
                continue
            entry.update(_as_read(die), unclear=True)
        elif die["status"] != "ok" or die["value"] is None:
            why = [key for key in (BLURRED, HIDDEN, CUT) if die.get(key)]
            said = ", ".join([die["status"], *why])
            problems.append(f"{where} ({said}) was never corrected")
            continue
        else:
            entry.update(_as_read(die))
        dice.append(entry)
    # Missed dice the players placed on the teach sheet: numbered after all the others.
    for index in sorted(placed):
        value, box = placed[index]
        dice.append({"value": value, "box": box, "die": index, "checked": True, "placed": True})
    return dice, problems


def _mark_blurred(photo: Path, dice: list[dict[str, Any]]) -> int:
    """Mark ``blurred`` the dice of ``photo`` that people labelled (corrected, answered on the
    teach sheet, placed) where the photo shows them blurred past reading; return how many.

    Their value came from the dice on the table, not from the picture (a camera out of focus, a
    die still spinning), and the face model is trained to call such a crop "no face": taught a
    value there, a tuned model would learn to guess. Only the photos with such labels are
    decoded (a table's export may hold thousands)."""
    from vision.die_check import BLURRED_BELOW
    from vision.preprocess import crops_for_model, sharpness

    told = [d for d in dice if d.get("corrected") or d.get("checked")]
    if not told:
        return 0
    image = cv2.imread(str(photo), cv2.IMREAD_COLOR)
    if image is None:
        return 0  # unreadable: training says so when it reads the photo
    values = sharpness(crops_for_model(np.asarray(image, np.uint8), [d["box"] for d in told]))
    marked = 0
    for die, value in zip(told, values, strict=True):
        if float(value) < BLURRED_BELOW:
            die["blurred"] = True
            marked += 1
    return marked


def _as_read(die: dict[str, Any]) -> dict[str, Any]:
    """The model's confidence in a label nobody checked (absent from photos kept before it was
    recorded): how far the label can be trusted."""
    # Rounded already where it was recorded (the store's and the sidecar's JSON).
    confidence = die.get("confidence")
    return {} if confidence is None else {"confidence": confidence}


def _place(source: Path, target: Path, *, link: bool) -> None:
    """Copy ``source`` to ``target``, or hard-link it when ``link`` and the filesystem allows."""
    if link:
        try:
            target.unlink(missing_ok=True)
            os.link(source, target)
            return
        except OSError:
            pass  # another filesystem, or one without hard links: copy
    shutil.copyfile(source, target)


def export_photos(
    store: Store, photos: Path, out: Path, *, val_percent: int = VAL_PERCENT, link: bool = False
) -> ExportSummary:
    """Write the kept photos with their labels to ``out`` in the shared data format.

    ``out`` must be new or a folder this function wrote before (it is then brought up to date):
    an export never mixes into another source's files. ``link`` hard-links the photos instead of
    copying them (``pipcam tune``'s own export beside them: up to 2000 photos on an SD card).
    """
    labels = out / "labels.jsonl"
    _check_export_folder(out, photos)
    kept = kept_photos(photos)
    answers = store.checks()
    missed = store.missed()
    absent = store.absent()
    placed = store.placed()
    doubted = store.doubted()
    unclear = store.unclear()
    (out / "images").mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    dice_n = corrected_n = checked_n = flagged_n = val_n = blurred_n = 0
    for reading in store.readings():
        source = kept.get(reading.id)
        if source is None:
            continue
        try:
            # The sidecar knows the frame's size: no photo is decoded just to measure it.
            sidecar = json.loads(source.with_suffix(".json").read_text())
        except (OSError, ValueError) as exc:
            # Without it the dice set aside are unknown and would sit in the photo unlabelled.
            log.warning("skipping %s: its sidecar cannot be read (%s)", source, exc)
            continue
        found = placed.get(reading.id, {})
        dice, problems = _label(
            reading,
            list(sidecar["set_aside"]),
            answers.get(reading.id, {}),
            found,
            doubted.get(reading.id, set()),
            unclear.get(reading.id, set()),
        )
        n = missed.get(reading.id, 0) - len(found) - absent.get(reading.id, 0)
        if n > 0:
            # The typed throw had dice the camera never found: they are in the photo unlabelled
            # (but for those the players said are not in it).
            problems.append(
                f"the camera missed {n} {'die' if n == 1 else 'dice'} of the throw typed on a phone"
                + (f" ({len(found)} placed on the teach sheet)" if found else "")
            )
        split = split_of_game(reading.game, val_percent)
        record: dict[str, Any] = {
            "image": f"images/{source.name}",
            "width": int(sidecar["width"]),
            "height": int(sidecar["height"]),
            "split": split,
            "dice": dice,
            "reading": reading.id,
            "game": reading.game,
            "time": reading.time,
        }
        try:
            _place(source, out / "images" / source.name, link=link)
        except FileNotFoundError:
            # A table running meanwhile deletes its oldest photos past photo_limit.
            log.warning("skipping %s: it was deleted since the export began", source)
            continue
        blurred_n += _mark_blurred(out / "images" / source.name, dice)
        if problems:
            record["known_issue"] = "; ".join(problems)
            flagged_n += 1
        lines.append(json.dumps(record))
        dice_n += len(dice)
        corrected_n += sum(1 for d in dice if d.get("corrected"))
        checked_n += sum(1 for d in dice if d.get("checked"))
        val_n += split == "val"
    if blurred_n:
        log.info(
            "%d %s labelled by the players %s blurred past reading in the photo: marked so, and"
            " not taught (vision.review.untrusted)",
            blurred_n,
            "die" if blurred_n == 1 else "dice",
            "is" if blurred_n == 1 else "are",
        )
    write_atomically(labels, "".join(line + "\n" for line in lines).encode())
    summary = ExportSummary(len(lines), dice_n, corrected_n, flagged_n, val_n, checked_n)
    (out / "README.txt").write_text(_readme(summary), encoding="utf-8")
    marker = json.dumps({"photos": str(photos.resolve())})
    (out / EXPORT_MARKER).write_text(marker + "\n", encoding="utf-8")
    return summary


EXPORT_MARKER = ".pipcam-export"
"""The file that makes a folder an export of one table's photos (which table's: inside)."""


def _check_export_folder(out: Path, photos: Path) -> None:
    """Refuse (``FileExistsError``) an ``out`` that is not new, empty, or this table's export.

    Another source's labels (a shared data folder, another table's export) would be replaced
    by this table's: an export writes only into its own folder.
    """
    if not out.exists():
        return
    if not out.is_dir():
        raise FileExistsError(f"{out} is a file, not a folder; name a new folder")
    if not any(out.iterdir()):
        return
    marker = out / EXPORT_MARKER
    if marker.is_file():
        try:
            table = json.loads(marker.read_text(encoding="utf-8"))["photos"]
        except (OSError, ValueError, KeyError, TypeError):
            table = None
        if table == str(photos.resolve()):
            return
        raise FileExistsError(
            f"{out} holds the photos of another table ({table or 'unknown'}); name a new folder"
        )
    readme = out / "README.txt"
    # An export written before the marker existed: its README says it is a table's.
    if (
        (out / "labels.jsonl").is_file()
        and readme.is_file()
        and readme.read_text(encoding="utf-8", errors="replace").startswith(_README_START)
    ):
        return
    raise FileExistsError(
        f"{out} exists and is not an export of this table's photos; name a new folder"
    )


_README_START = "Photos of one pipcam table:"


def _readme(summary: ExportSummary) -> str:
    return f"""Photos of one pipcam table: kept by `pipcam run --keep-photos`, exported by
`pipcam photos`.

Licence: the table owner's own photos; share them only if the players agree.
Statistics: {summary.line()}.
Scene: the table's camera over its tray, its lighting and its dice; boxes are whole dice in
frame pixels (the reader's own boxes).
Label quality: each die carries the value the players left standing. `corrected: true` marks a
die a person set by hand during play, `checked: true` one they answered afterwards on the
phones' teach sheet (a box they said holds no die, in play or afterwards, is not labelled); the
other dice of the roll
zone were read surely by the model and nobody corrected them; `set_aside: true` marks dice
outside the roll zone, as the model read them in this frame (or as answered). A die nobody
corrected or answered carries the model's `confidence`: players correct a misread that changes
the score, not always one that does not (a 3 read as 2 in a game that scores only 1s and 5s),
so such a label is as good as that confidence (on held-out photos, dice read at 0.9 or more
were right 99 % of the time, those at 0.5-0.7 about 61 %: `pipcam eval` prints these bands);
under 0.9 it is neither trained on nor scored, and the teach sheet asks about it. A photo with
a die nobody read, corrected or answered has `known_issue`, and so has one whose throw the
players typed with more dice than the camera found (a die in it has no label) until the
players place those dice on the teach sheet (or say one is not in the photo): a placed die is
`checked` and `placed`, its box the locator's faintest guess under the tap. `reading` and
`die` name each die as the table stores it (the roll zone's dice first, then those set aside,
then those placed). `blurred: true`
marks a die a person labelled that this photo shows blurred past reading (a die still
spinning, a lens out of focus): its value is the table's, not the picture's, so it is neither
trained on nor scored. `unclear: true` marks a die the players said on the teach sheet they
could not tell from the photo: its value is the model's unsure read, neither trained on nor
scored (its box still shows where a die lies).
`split` is by game
({VAL_PERCENT} % of games are `val`).
Use: `pipcam eval FOLDER` measures the reader on these photos; `python -m vision.train.tune
FOLDER --out DIR` tunes the face model on the `train` games and reads the `val` games with the
old and the new model. Uncorrected sure reads tune as well as checked labels; the answers to the
dice the table asked about are what teach it (models/MODEL_CARD.md, "Tuning on a table's own
photos").
"""


def kept_photos_or_say(data: Path, command: str, then: str) -> Path | None:
    """``DATA/photos`` when the table kept photos there; else None, having said how to keep them
    and ``then`` what to do."""
    photos = data / "photos"
    if kept_photos(photos):
        return photos
    print(
        f"pipcam {command}: no photos in {photos}; run the table with --keep-photos "
        f"(or keep_photos = true in its configuration) {then}",
        file=sys.stderr,
    )
    return None


def cmd_photos(args: argparse.Namespace) -> int:
    """``pipcam photos OUT``: export the kept photos as a labelled folder."""
    try:
        _, data = table_config(args.config, args.data)
    except ConfigError as exc:
        print(f"pipcam photos: {exc}", file=sys.stderr)
        return 2
    photos = kept_photos_or_say(data, "photos", "and play a while")
    if photos is None:
        return 1
    try:
        with Store(data / "pipcam.db") as store:
            summary = export_photos(store, photos, Path(args.out))
    except (StoreError, FileExistsError) as exc:
        print(f"pipcam photos: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        where = exc.filename or args.out
        print(
            f"pipcam photos: cannot write {where} ({exc.strerror}); name a folder you can write",
            file=sys.stderr,
        )
        return 2
    print(f"pipcam photos: {args.out}: {summary.line()}")
    return 0


def add_photos_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``pipcam photos OUT [--data DIR] [--config FILE]``."""
    p = subparsers.add_parser(
        "photos", help="export the table's kept photos, labelled, for pipcam eval and training"
    )
    p.add_argument("out", help="a new folder (or an earlier export, brought up to date)")
    p.add_argument("--data", help="where the table keeps its games (as pipcam run --data)")
    p.add_argument("--config", help="the table's TOML configuration file")
    p.set_defaults(func=cmd_photos)

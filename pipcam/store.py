"""The game store of ``pipcam run``: games, their event log and every die read, in SQLite.

An event (an action, an undo or a redo) is committed with WAL and ``synchronous=FULL`` before
``append`` returns, so what the LEDs or a phone acknowledged survives a kill -9 or a pulled plug.
Replaying a game's events through ``History`` (``replay_events``) rebuilds its exact state, the redo
stack included. A damaged, unwritable or foreign file is refused with a ``StoreError`` that names
the file and says what to do; nothing is silently dropped or recreated.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar

from scoring.core import JSON, action_from_json, action_to_json
from scoring.errors import InvalidOption, Reason, RefusalCode, ScoringError
from scoring.history import History
from scoring.transcript import dump, parse_header, start

__all__ = [
    "BLURRED",
    "CUT",
    "EVENT_KINDS",
    "HIDDEN",
    "NO_DIE",
    "DieLike",
    "corrected_die",
    "die_json",
    "SCHEMA_VERSION",
    "GameFinished",
    "GameSummary",
    "NoSuchGame",
    "Store",
    "StoreError",
    "StoreProblem",
    "StoredCorrection",
    "StoredEvent",
    "StoredGame",
    "in_effect",
    "replay_events",
]

T = TypeVar("T")

SCHEMA_VERSION = 5
"""``PRAGMA user_version`` of the layout below; a file with a higher one is refused, a lower one
is upgraded when opened (version 2: a correction may say no die is there, value 0; version 3: a
die read may say ``"blurred": true``, version 4 ``"hidden": true`` and version 5 ``"cut":
true``, which a pipcam before it refuses to read)."""

EVENT_KINDS = ("action", "undo", "redo")

_SCHEMA = (
    """CREATE TABLE games (
        id INTEGER PRIMARY KEY,
        game TEXT NOT NULL,
        header TEXT NOT NULL,
        started TEXT NOT NULL,
        finished TEXT
    )""",
    """CREATE TABLE players (
        game INTEGER NOT NULL REFERENCES games (id),
        seat INTEGER NOT NULL CHECK (seat >= 0),
        name TEXT NOT NULL,
        PRIMARY KEY (game, seat),
        UNIQUE (game, name)
    )""",
    """CREATE TABLE options (
        game INTEGER NOT NULL REFERENCES games (id),
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (game, name)
    )""",
    """CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        game INTEGER NOT NULL REFERENCES games (id),
        seq INTEGER NOT NULL CHECK (seq >= 1),
        kind TEXT NOT NULL CHECK (kind IN ('action', 'undo', 'redo')),
        action TEXT,
        source TEXT NOT NULL,
        time TEXT NOT NULL,
        UNIQUE (game, seq),
        CHECK ((kind = 'action') = (action IS NOT NULL))
    )""",
    """CREATE TABLE readings (
        id INTEGER PRIMARY KEY,
        game INTEGER REFERENCES games (id),
        time TEXT NOT NULL,
        status TEXT NOT NULL,
        dice TEXT NOT NULL
    )""",
    "CREATE INDEX readings_by_game ON readings (game)",
)
# Added after version 1 without a version bump: created in any file that lacks it, and an older
# pipcam opening a file that has it only sees one more table. Version 2 widened its values to
# 0..6 (0: no die there), which an older pipcam would misread; hence the bump for that.
_CORRECTIONS_TABLE = """CREATE TABLE IF NOT EXISTS {name} (
        id INTEGER PRIMARY KEY,
        reading INTEGER NOT NULL REFERENCES readings (id),
        game INTEGER REFERENCES games (id),
        die INTEGER NOT NULL CHECK (die >= 0),
        value INTEGER NOT NULL CHECK (value BETWEEN 0 AND 6),
        replaced TEXT NOT NULL,
        events TEXT NOT NULL,
        source TEXT NOT NULL,
        time TEXT NOT NULL
    )"""
_CORRECTIONS = _CORRECTIONS_TABLE.format(name="corrections")
# Version 1 to 2: SQLite cannot change a CHECK in place, so the table is copied into a new one.
_WIDEN_CORRECTIONS = (
    _CORRECTIONS_TABLE.format(name="corrections_v2"),
    "INSERT INTO corrections_v2 SELECT id, reading, game, die, value, replaced, events, source, "
    "time FROM corrections",
    "DROP TABLE corrections",
    "ALTER TABLE corrections_v2 RENAME TO corrections",
)
# Added the same way: what the players answered about a kept photo's die afterwards, on the
# phones' "teach" sheet (pipcam.teach). One answer per die, the last one standing; it labels the
# photo and changes no game. Value 0: no die there.
_CHECKS = """CREATE TABLE IF NOT EXISTS checks (
        reading INTEGER NOT NULL REFERENCES readings (id),
        die INTEGER NOT NULL CHECK (die >= 0),
        value INTEGER NOT NULL CHECK (value BETWEEN 0 AND 6),
        source TEXT NOT NULL,
        time TEXT NOT NULL,
        PRIMARY KEY (reading, die)
    )"""
# Added the same way: the dice a reading saw out of the roll zone (set aside, held), when it saw
# any. A correction's die numbers go on after the roll zone's to these. They count in no face
# tally (they lie there reading after reading); a photo's sidecar has them for its labels.
_ASIDES = """CREATE TABLE IF NOT EXISTS asides (
        reading INTEGER PRIMARY KEY REFERENCES readings (id),
        dice TEXT NOT NULL
    )"""
# Added the same way: readings whose throw a phone typed with more dice than the camera saw. The
# photo then shows a die without a label, which training must not take for background.
_MISSED = """CREATE TABLE IF NOT EXISTS missed (
        reading INTEGER PRIMARY KEY REFERENCES readings (id),
        dice INTEGER NOT NULL CHECK (dice >= 1),
        time TEXT NOT NULL
    )"""
# Added the same way: the missed dice the players then pointed at on the teach sheet, with their
# box and value. ``die`` numbers them after the roll zone's dice and those set aside.
_PLACED = """CREATE TABLE IF NOT EXISTS placed (
        reading INTEGER NOT NULL REFERENCES readings (id),
        die INTEGER NOT NULL CHECK (die >= 0),
        value INTEGER NOT NULL CHECK (value BETWEEN 1 AND 6),
        box TEXT NOT NULL,
        source TEXT NOT NULL,
        time TEXT NOT NULL,
        PRIMARY KEY (reading, die)
    )"""
# Added the same way: which reading's dice made an action event (the camera's throw, a set-aside
# it saw, the throw a correction of that reading put in its place, a throw typed as the reading
# showed it). A throw fixed from the history turns later, or after a restart, then corrects
# the die of the photo that showed it, so tuning learns the face the players said.
_MADE = """CREATE TABLE IF NOT EXISTS made (
        game INTEGER NOT NULL REFERENCES games (id),
        seq INTEGER NOT NULL CHECK (seq >= 1),
        reading INTEGER NOT NULL REFERENCES readings (id),
        PRIMARY KEY (game, seq)
    )"""
# Added the same way: dice of a reading that a fix of its throw said may be misread without
# saying which face each showed (one of two dice showing the face the fix took out). Their
# read value is no label: the photo is flagged, and the teach sheet asks, until answered.
_DICE_SAID = """CREATE TABLE IF NOT EXISTS {} (
        reading INTEGER NOT NULL REFERENCES readings (id),
        die INTEGER NOT NULL CHECK (die >= 0),
        source TEXT NOT NULL,
        time TEXT NOT NULL,
        PRIMARY KEY (reading, die)
    )"""
_DOUBTED = _DICE_SAID.format("doubted")
# Added the same way: dice of a kept photo the players could not tell on the teach sheet
# (blurred, lit past reading, hidden). The sheet asks no more; the die's read value stays no
# label, and a later answer or correction replaces this.
_UNCLEAR = _DICE_SAID.format("unclear")
# Added the same way: how many of a reading's missed dice the players said, on the teach sheet,
# are not in its photo (off the tray, out of the camera's view): nothing there is unlabelled.
_ABSENT = """CREATE TABLE IF NOT EXISTS absent (
        reading INTEGER PRIMARY KEY REFERENCES readings (id),
        dice INTEGER NOT NULL CHECK (dice >= 1),
        source TEXT NOT NULL,
        time TEXT NOT NULL
    )"""
_TABLES = frozenset({"games", "players", "options", "events", "readings"})
_LAST_ID = 2**63 - 1
"""SQLite's largest rowid: no bound."""
_DIE_KEYS = frozenset({"value", "confidence", "status", "box"})
# Written only when true: an ``uncertain`` die too blurred to read (vision.reader.Die.blurred),
# or one partly hidden (vision.reader.Die.hidden), by the edge of the camera's view when it
# says ``cut`` besides (vision.reader.Die.cut).
BLURRED = "blurred"
HIDDEN = "hidden"
CUT = "cut"
_WHY_UNREAD = (BLURRED, HIDDEN, CUT)
# The status of a die a person said is not there: a phantom the camera read (see _corrected).
NO_DIE = "no_die"


class StoreProblem(RefusalCode):
    """The store's failures while the table runs (a full disk), which the phones word in their
    language; the English message, with the file's path and the command to run, goes to the log."""

    DISK_FULL = "disk_full"
    """The disk of the game store is full."""
    STORE_READ_ONLY = "store_read_only"
    """The game store cannot be written (no write access, or it cannot be opened)."""
    STORE_BUSY = "store_busy"
    """Another program holds the game store."""
    STORE_DAMAGED = "store_damaged"
    """The game store is damaged: it is to be moved aside (the command is in the log)."""
    STORE_FAILED = "store_failed"
    """The game store cannot be read or written for another reason (a failing disk)."""


class StoreError(Exception):
    """The game store cannot be used; the message names the file and says what to do.

    A failure the phones word (a full disk) is made from a :class:`Reason` with its code.
    """

    @property
    def reason(self) -> str:
        """The message: the :class:`Reason` it was made from, when it has a code."""
        first = self.args[0] if self.args else ""
        return first if isinstance(first, Reason) else str(self)


class NoSuchGame(StoreError, LookupError):
    """A game id that the store does not hold."""


class GameFinished(StoreError, ValueError):
    """An event for a game that is already finished."""


@dataclass(frozen=True)
class StoredGame:
    """A game as stored: its transcript header and its events in order (kind, action or None)."""

    id: int
    header: dict[str, JSON]
    events: list[tuple[str, dict[str, JSON] | None]]


@dataclass(frozen=True)
class StoredEvent:
    """One row of a game's log, with where it came from and when (UTC ISO time)."""

    seq: int
    kind: str
    action: dict[str, JSON] | None
    source: str
    time: str


@dataclass(frozen=True)
class StoredCorrection:
    """A die of a reading corrected by hand: the dice as read before, and the events it caused."""

    id: int
    reading: int
    game: int | None
    die: int
    value: int
    replaced: list[dict[str, JSON]]
    events: list[int]
    source: str
    time: str


@dataclass(frozen=True)
class StoredReading:
    """A settled reading as the players left it: the dice read, with their corrections applied."""

    id: int
    game: int | None
    time: str
    status: str
    dice: list[dict[str, JSON]]
    corrected: tuple[int, ...]  # indices of the dice a person set by hand (not the camera)
    # Dice out of the roll zone (numbered from 0 after the zone's) that a person set in play, and
    # the value set (0: no die there); the photo's sidecar has the dice themselves.
    aside_corrected: dict[int, int] = field(default_factory=dict)
    # Dice (numbered as ``corrected``'s) that the camera read otherwise on a second look in
    # better light (pipcam.table.Table.look_again), with the value it read first.
    looked_again: dict[int, int | None] = field(default_factory=dict)


@dataclass(frozen=True)
class GameSummary:
    """A line of the list of games: who played what, when, and how many events were logged."""

    id: int
    game: str
    players: tuple[str, ...]
    started: str
    finished: str | None
    events: int


def in_effect(events: Iterable[tuple[str, T]]) -> list[T]:
    """What the action events of a log that are in effect carry (``(kind, item)`` pairs, oldest
    first): an undo drops the last action, a redo takes the last undone one back, and a new
    action forgets what was undone, as :class:`scoring.history.History` does."""
    done: list[T] = []
    undone: list[T] = []
    for kind, item in events:
        if kind == "action":
            done.append(item)
            undone.clear()
        elif kind == "undo" and done:
            undone.append(done.pop())
        elif kind == "redo" and undone:
            done.append(undone.pop())
    return done


def replay_events(stored: StoredGame) -> History[Any]:
    """The game's history after its events: the exact state, undone actions (redo) included."""
    try:
        history = start(parse_header(stored.header), stored=True)
    except (ScoringError, InvalidOption) as exc:
        raise StoreError(f"stored game {stored.id} has a bad header: {exc}") from exc
    for seq, (kind, action) in enumerate(stored.events, start=1):
        try:
            if kind == "action":
                history.push(action_from_json(action))
            elif kind == "undo":
                history.pop()
            elif kind == "redo":
                history.redo()
            else:
                raise ScoringError(f"unknown event kind {kind!r}")
        except (ScoringError, IndexError) as exc:
            what = json.dumps(action) if kind == "action" else kind
            raise StoreError(
                f"stored game {stored.id} does not replay at event {seq} ({what}): {exc}"
            ) from exc
    return history


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


def _corrected(
    dice: list[dict[str, JSON]], corrections: list[tuple[int, int]]
) -> list[dict[str, JSON]]:
    """The dice of a reading with its corrections (die index, value) applied, oldest first.

    A correction to 0 says no die is there (the camera took something for one): the entry stays,
    so the dice keep their numbers, with no value and the status :data:`NO_DIE`.
    """
    for die, value in corrections:
        if int(die) < len(dice):  # the numbers after the zone's are dice out of it (asides)
            dice[int(die)] = corrected_die(dice[int(die)], int(value))
    return dice


class DieLike(Protocol):
    """One die of a reading (vision.reader.Die)."""

    @property
    def value(self) -> int | None: ...
    @property
    def confidence(self) -> float: ...
    @property
    def status(self) -> str: ...
    @property
    def box(self) -> tuple[int, int, int, int]: ...
    @property
    def blurred(self) -> bool: ...
    @property
    def hidden(self) -> bool: ...
    @property
    def cut(self) -> bool: ...


def _dice_of_readings(rows: Iterable[tuple[int, int]]) -> dict[int, set[int]]:
    """(reading, die) rows as reading id -> dice."""
    out: dict[int, set[int]] = {}
    for reading, die in rows:
        out.setdefault(int(reading), set()).add(int(die))
    return out


def die_json(die: DieLike) -> dict[str, JSON]:
    """A die of a reading as JSON (the phones and the store); ``"blurred": true`` only on a
    die too blurred to read, ``"hidden": true`` only on one partly hidden, and ``"cut": true``
    besides when the edge of the camera's view hides it."""
    out: dict[str, JSON] = {
        "value": die.value,
        "confidence": round(float(die.confidence), 3),
        "status": die.status,
        "box": [int(v) for v in die.box],
    }
    if die.blurred:
        out[BLURRED] = True
    if die.hidden:
        out[HIDDEN] = True
    if die.cut:
        out[CUT] = True
    return out


def corrected_die(die: dict[str, JSON], value: int) -> dict[str, JSON]:
    """``die`` as a person set it: showing ``value``, or (0) not there at all (no longer a
    blurred or hidden die: a person said what it is)."""
    kept = {key: v for key, v in die.items() if key not in _WHY_UNREAD}
    if value == 0:
        return {**kept, "value": None, "status": NO_DIE}
    return {**kept, "value": value, "status": "ok"}


def _check_dice(dice: list[dict[str, JSON]]) -> None:
    if not isinstance(dice, list):
        raise ValueError(f"a reading's dice are a list of die objects, not {dice!r}")
    for die in dice:
        if not isinstance(die, dict) or not _DIE_KEYS <= set(die) <= _DIE_KEYS | {*_WHY_UNREAD}:
            raise ValueError(
                "a die read is an object with value, confidence, status and box (and"
                " blurred: true on a die too blurred to read, hidden: true on one partly"
                f" hidden, with cut: true when the frame's edge hides it), not {die!r}"
            )
        for why in _WHY_UNREAD:
            if why in die and (die[why] is not True or die["status"] != "uncertain"):
                raise ValueError(
                    f"only an uncertain die is {why}, and it says {why}: true, not {die!r}"
                )
        if CUT in die and HIDDEN not in die:
            raise ValueError(f"a die cut by the frame's edge is hidden: true too, not {die!r}")
        value = die["value"]
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ValueError(f"a die's value is a face number or null, not {value!r}")


class Store:
    """The SQLite file of games, events and readings; a context manager, ``close()`` idempotent.

    One connection serves every thread (camera loop, buttons, web server), guarded by a lock; each
    write is one transaction committed (and fsync'd) before the call returns.
    """

    def __init__(self, path: Path | str, *, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path).absolute()
        self.clock = clock
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        created = self._check_files()
        checked = created or self._inspect()
        db = self._connect(read_only=False)
        refusal: Callable[[], str] | None = None
        try:
            if not checked:
                refusal = self._refusal(db)
            if refusal is None:
                self._set_up(db)
        except BaseException as exc:
            db.close()
            if isinstance(exc, sqlite3.Error):
                raise self._failure(exc) from exc
            raise
        if refusal is not None:
            db.close()
            raise StoreError(refusal())
        if created:
            self._sync_folder()
        self._db = db

    # -- opening --------------------------------------------------------------------------------

    def _mv(self) -> str:
        """The shell command that moves the file (and a journal holding data) out of the way.

        A journal left beside a new file would be taken up by it, so it moves along; an empty
        one (a read-only open leaves an empty -wal) carries nothing.
        """
        moves = []
        for suffix in ("", "-wal", "-journal"):
            src = Path(f"{self.path}{suffix}")
            if suffix and not (src.exists() and src.stat().st_size > 0):
                continue
            dst = Path(f"{self.path}.broken{suffix}")
            moves.append(f"mv {shlex.quote(str(src))} {shlex.quote(str(dst))}")
        return " && ".join(moves)

    def _check_files(self) -> bool:
        """Make the folder and refuse what SQLite could not write; True when the file is new."""
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder {folder} for the game store ({exc.strerror}); "
                "create it with write access for this user or pick another folder with --data"
            ) from exc
        if self.path.exists() and not self.path.is_file():
            raise StoreError(
                f"the game store {self.path} is not a file; "
                "move it away or pick another folder with --data"
            )
        # WAL keeps two files beside the database, so the folder itself must be writable.
        if not os.access(folder, os.W_OK | os.X_OK):
            raise StoreError(
                f"cannot write the game store {self.path}: the folder {folder} is not "
                f"writable for this user; give it write access (SQLite keeps {self.path.name}-wal "
                f"and {self.path.name}-shm beside the database) or pick another folder with --data"
            )
        if not self.path.exists():
            return True
        if not os.access(self.path, os.R_OK | os.W_OK):
            raise StoreError(
                f"cannot write the game store {self.path}: the file is read-only for "
                "this user; give this user read and write access to it or pick another folder "
                "with --data"
            )
        return self.path.stat().st_size == 0

    def _connect(self, *, read_only: bool) -> sqlite3.Connection:
        target = f"{self.path.as_uri()}?mode={'ro' if read_only else 'rwc'}"
        try:
            # isolation_level=None: transactions are begun and committed explicitly, one per write.
            return sqlite3.connect(
                target, uri=True, timeout=5.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise self._failure(exc) from exc

    def _inspect(self) -> bool:
        """Check an existing file through a read-only connection, which changes nothing in it.

        A read-write connection would already checkpoint (and then delete) a write-ahead log that
        it finds beside a damaged or foreign file. False when only a writer can look: a hot
        journal left by a crash must be rolled back first.
        """
        db = self._connect(read_only=True)
        error: sqlite3.Error | None = None
        refusal: Callable[[], str] | None = None
        try:
            refusal = self._refusal(db)
        except sqlite3.Error as exc:
            error = exc
        finally:
            db.close()
        if error is not None:
            if getattr(error, "sqlite_errorname", "").startswith("SQLITE_READONLY"):
                return False
            raise self._failure(error) from error
        if refusal is not None:
            raise StoreError(refusal())
        return True

    def _refusal(self, db: sqlite3.Connection) -> Callable[[], str] | None:
        """Why the file is refused (the message is written after it is closed), or None."""
        problems = [str(row[0]) for row in db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            first = problems[0].replace("*** in database main ***", "").strip().splitlines()
            return lambda: self._damaged(f"the integrity check found: {first[0]}")
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        listed = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = {str(row[0]) for row in listed}
        if (version == 0 and tables) or (version >= 1 and not tables >= _TABLES):
            return lambda: (
                f"{self.path} is not a pipcam game store (it holds the tables "
                f"{', '.join(sorted(tables))}); pick another folder with --data or move it aside: "
                f"{self._mv()}"
            )
        if version > SCHEMA_VERSION:
            return lambda: (
                f"the game store {self.path} was written by a newer pipcam (schema "
                f"version {version}; this pipcam knows version {SCHEMA_VERSION}); upgrade pipcam, "
                f"or move it aside and start again: {self._mv()}"
            )
        if version < 0:
            return lambda: (
                f"the game store {self.path} has an unknown schema version {version} "
                f"(this pipcam knows version {SCHEMA_VERSION}); move it aside and start again: "
                f"{self._mv()}"
            )
        return None

    def _set_up(self, db: sqlite3.Connection) -> None:
        """WAL, full sync, foreign keys; the tables in a new file, an older file upgraded."""
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(
                f"the game store {self.path} cannot use write-ahead logging "
                f"(journal mode {mode}); pick a folder on a local disk with --data"
            )
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("BEGIN IMMEDIATE")
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            if version == 0:
                for statement in _SCHEMA:
                    db.execute(statement)
            elif version == 1:
                found = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'corrections'"
                if db.execute(found).fetchone():
                    for statement in _WIDEN_CORRECTIONS:
                        db.execute(statement)
            if version < SCHEMA_VERSION:
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute(_CORRECTIONS)
            db.execute(_CHECKS)
            db.execute(_MISSED)
            db.execute(_ASIDES)
            db.execute(_PLACED)
            db.execute(_MADE)
            db.execute(_DOUBTED)
            db.execute(_UNCLEAR)
            db.execute(_ABSENT)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _sync_folder(self) -> None:
        """Make the new file's folder entry durable (SQLite syncs its journals, not this)."""
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _damaged(self, reason: str) -> str:
        return (
            f"the game store {self.path} is damaged ({reason}); "
            f"move it aside and start again: {self._mv()}"
        )

    def _failure(self, exc: sqlite3.Error) -> StoreError:
        """A StoreError that says what an SQLite error means for the user and what to do."""
        name = getattr(exc, "sqlite_errorname", "")
        reason = str(exc)
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            return StoreError(Reason(self._damaged(reason), StoreProblem.STORE_DAMAGED))
        if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
            return StoreError(
                Reason(
                    f"cannot write the game store {self.path} ({reason}); give this user "
                    f"write access to it and to its folder, or pick another folder with --data",
                    StoreProblem.STORE_READ_ONLY,
                )
            )
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return StoreError(
                Reason(
                    f"the game store {self.path} is in use by another program ({reason}); "
                    "stop the other pipcam and try again",
                    StoreProblem.STORE_BUSY,
                )
            )
        if name.startswith("SQLITE_FULL"):
            return StoreError(
                Reason(
                    f"the disk of the game store {self.path} is full ({reason}); "
                    "free some space and try again",
                    StoreProblem.DISK_FULL,
                )
            )
        return StoreError(
            Reason(
                f"the game store {self.path} cannot be read or written ({reason}); "
                "check the disk (dmesg) and try again, or pick another folder with --data",
                StoreProblem.STORE_FAILED,
            )
        )

    # -- life cycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the file; closing twice is harmless."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextlib.contextmanager
    def _transaction(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        """One transaction under the lock; any SQLite failure becomes a StoreError."""
        with self._lock:
            db = self._db
            if db is None:
                raise StoreError(f"the game store {self.path} is closed")
            try:
                db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                yield db
                db.execute("COMMIT")
            except BaseException as exc:
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):  # the error that got here matters
                        db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise self._failure(exc) from exc
                raise

    def _need_game(self, db: sqlite3.Connection, game_id: int) -> str | None:
        """The game's finish time (None while it goes on); NoSuchGame if it is not stored."""
        row = db.execute("SELECT finished FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None:
            raise NoSuchGame(f"there is no game {game_id} in the game store {self.path}")
        return None if row[0] is None else str(row[0])

    # -- games and events -----------------------------------------------------------------------

    def new_game(self, header: dict[str, JSON]) -> int:
        """Store a new game from a transcript header and return its id; it is the current game."""
        parsed = parse_header(header)
        start(parsed)  # an unknown game or a bad option is refused before anything is stored
        now = _utc(self.clock())
        with self._transaction(write=True) as db:
            cursor = db.execute(
                "INSERT INTO games (game, header, started) VALUES (?, ?, ?)",
                (parsed.game, json.dumps(parsed.to_json(), ensure_ascii=False), now),
            )
            game_id = cursor.lastrowid
            assert game_id is not None
            db.executemany(
                "INSERT INTO players (game, seat, name) VALUES (?, ?, ?)",
                [(game_id, seat, name) for seat, name in enumerate(parsed.players)],
            )
            db.executemany(
                "INSERT INTO options (game, name, value) VALUES (?, ?, ?)",
                [(game_id, k, json.dumps(v)) for k, v in parsed.options.items()],
            )
        return game_id

    def append(
        self,
        game_id: int,
        kind: str,
        action: dict[str, JSON] | None,
        *,
        source: str,
        reading: int | None = None,
    ) -> int:
        """Log one event, committed before returning, and return its sequence number (1, 2, ...).

        ``kind`` is "action" (with a PROTOCOL.md action object), "undo" or "redo" (without one).
        An undo with nothing to undo or a redo with nothing undone is refused, so the log always
        replays. ``reading``: the stored reading whose dice made the action (:meth:`made`).
        """
        row = self._event_row(kind, action, source=source)
        now = _utc(self.clock())
        with self._transaction(write=True) as db:
            (seq,) = self._insert_events(db, game_id, [row], source=source, now=now)
            self._link(db, game_id, [row], [seq], [reading])
        return seq

    def replace_last(
        self,
        game_id: int,
        *actions: dict[str, JSON],
        undone: int = 1,
        source: str,
        reopen: bool = False,
        made: Sequence[int | None] = (),
    ) -> int:
        """Undo the last ``undone`` actions and log ``actions`` in their place, in one commit (a
        set-aside that grew as more dice were taken out; a set-aside and throw mended when a
        die that bounced out of the roll zone is thrown again; an earlier throw fixed, with
        the actions after it taken again); return the last new action's sequence number.
        ``reopen``: the game had ended and goes on again (the newest game only, as
        :meth:`undo_ending`). ``made``: the reading whose dice made each action (None: none),
        as :meth:`made` gives them back."""
        if undone < 1 or not actions:
            raise ValueError("a replacement undoes one action or more and logs one or more")
        if len(made) > len(actions):
            raise ValueError(f"{len(made)} readings named for {len(actions)} actions")
        rows = [self._event_row("undo", None, source=source)] * undone
        rows += [self._event_row("action", a, source=source) for a in actions]
        now = _utc(self.clock())
        with self._transaction(write=True) as db:
            if reopen:
                self._reopen(db, game_id)
            seqs = self._insert_events(db, game_id, rows, source=source, now=now)
            self._link(db, game_id, rows, seqs, [None] * undone + list(made))
        return seqs[-1]

    @staticmethod
    def _link(
        db: sqlite3.Connection,
        game_id: int,
        rows: Sequence[tuple[str, str | None]],
        seqs: Sequence[int],
        readings: Sequence[int | None],
    ) -> None:
        """Note, in the caller's transaction, which reading made each new action event."""
        for (kind, _), seq, reading in zip(rows, seqs, readings, strict=False):
            if kind == "action" and reading is not None:
                db.execute(
                    "INSERT OR REPLACE INTO made (game, seq, reading) VALUES (?, ?, ?)",
                    (game_id, seq, reading),
                )

    def made(self, game_id: int) -> list[int | None]:
        """For each action in effect in a game, oldest first (the history's actions), the
        reading whose dice made it, or None (typed, pressed, or stored before this was kept)."""
        with self._transaction(write=False) as db:
            self._need_game(db, game_id)
            rows = db.execute(
                "SELECT e.kind, m.reading FROM events e LEFT JOIN made m"
                " ON m.game = e.game AND m.seq = e.seq WHERE e.game = ? ORDER BY e.seq",
                (game_id,),
            ).fetchall()
        return in_effect((str(kind), None if r is None else int(r)) for kind, r in rows)

    def undo_ending(self, game_id: int, *, source: str) -> int:
        """Undo the action that ended a game, which goes on again: one step, committed.

        Only the newest game is taken up again (``GameFinished`` otherwise): a game given up
        for a new one stays as it was.
        """
        row = self._event_row("undo", None, source=source)
        now = _utc(self.clock())
        with self._transaction(write=True) as db:
            self._reopen(db, game_id)
            (seq,) = self._insert_events(db, game_id, [row], source=source, now=now)
        return seq

    def _reopen(self, db: sqlite3.Connection, game_id: int) -> None:
        """Mark the newest game unfinished again, inside the caller's transaction."""
        self._need_game(db, game_id)
        (newest,) = db.execute("SELECT MAX(id) FROM games").fetchone()
        if newest != game_id:
            raise GameFinished(
                f"game {game_id} of the game store {self.path} was followed by a new game;"
                " it stays as it ended"
            )
        db.execute("UPDATE games SET finished = NULL WHERE id = ?", (game_id,))

    @staticmethod
    def _event_row(
        kind: str, action: dict[str, JSON] | None, *, source: str
    ) -> tuple[str, str | None]:
        """An event checked before any transaction: its kind and the action as stored text."""
        if kind not in EVENT_KINDS:
            raise ValueError(f"an event is one of {', '.join(EVENT_KINDS)}; not {kind!r}")
        if kind == "action":
            if action is None:
                raise ValueError("an action event needs its action object, such as {'bank': True}")
            text: str | None = json.dumps(action_to_json(action_from_json(action)))
        elif action is not None:
            raise ValueError(f"an {kind} event carries no action, not {action!r}")
        else:
            text = None
        if not isinstance(source, str) or not source:
            raise ValueError(f"an event's source names where it came from, not {source!r}")
        return kind, text

    def _insert_events(
        self,
        db: sqlite3.Connection,
        game_id: int,
        rows: list[tuple[str, str | None]],
        *,
        source: str,
        now: str,
    ) -> list[int]:
        """Append checked events to a game's log inside the caller's transaction."""
        if self._need_game(db, game_id) is not None:
            raise GameFinished(
                f"game {game_id} of the game store {self.path} is finished; "
                "start a new game to go on playing"
            )
        kinds = [
            str(r[0])
            for r in db.execute("SELECT kind FROM events WHERE game = ? ORDER BY seq", (game_id,))
        ]
        seqs = []
        for kind, text in rows:
            if kind != "action":
                self._check_undo_redo(game_id, kinds, kind)
            seq = len(kinds) + 1
            db.execute(
                "INSERT INTO events (game, seq, kind, action, source, time) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (game_id, seq, kind, text, source, now),
            )
            kinds.append(kind)
            seqs.append(seq)
        return seqs

    @staticmethod
    def _check_undo_redo(game_id: int, kinds: list[str], kind: str) -> None:
        done = undone = 0
        for k in kinds:
            if k == "action":
                done, undone = done + 1, 0
            elif k == "undo":
                done, undone = done - 1, undone + 1
            else:
                done, undone = done + 1, undone - 1
        if kind == "undo" and done == 0:
            raise ValueError(f"nothing to undo in game {game_id}: no action is in effect")
        if kind == "redo" and undone == 0:
            raise ValueError(f"nothing to redo in game {game_id}: no action has been undone")

    def finish_game(self, game_id: int) -> None:
        """Mark a game finished (it is no longer resumed); finishing it again changes nothing."""
        now = _utc(self.clock())
        with self._transaction(write=True) as db:
            if self._need_game(db, game_id) is None:
                db.execute("UPDATE games SET finished = ? WHERE id = ?", (now, game_id))

    def _load(self, db: sqlite3.Connection, game_id: int) -> StoredGame:
        row = db.execute("SELECT header FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None:
            raise NoSuchGame(f"there is no game {game_id} in the game store {self.path}")
        events: list[tuple[str, dict[str, JSON] | None]] = [
            (str(kind), None if action is None else json.loads(action))
            for kind, action in db.execute(
                "SELECT kind, action FROM events WHERE game = ? ORDER BY seq", (game_id,)
            )
        ]
        return StoredGame(game_id, json.loads(row[0]), events)

    def current_game(self) -> StoredGame | None:
        """The most recently started game if it is unfinished (the one to resume), else None."""
        with self._transaction(write=False) as db:
            row = db.execute("SELECT id, finished FROM games ORDER BY id DESC LIMIT 1").fetchone()
            if row is None or row[1] is not None:
                return None
            return self._load(db, int(row[0]))

    def game(self, game_id: int) -> StoredGame:
        """Any stored game, finished or not (``NoSuchGame`` if there is none with that id)."""
        with self._transaction(write=False) as db:
            return self._load(db, game_id)

    def events(self, game_id: int) -> list[StoredEvent]:
        """A game's log in order, with each event's sequence number, source and time."""
        with self._transaction(write=False) as db:
            self._need_game(db, game_id)
            rows = db.execute(
                "SELECT seq, kind, action, source, time FROM events WHERE game = ? ORDER BY seq",
                (game_id,),
            ).fetchall()
        return [
            StoredEvent(int(seq), str(kind), None if a is None else json.loads(a), str(src), str(t))
            for seq, kind, a, src, t in rows
        ]

    def games(self) -> list[GameSummary]:
        """Every stored game, oldest first."""
        with self._transaction(write=False) as db:
            rows = db.execute(
                "SELECT g.id, g.game, g.started, g.finished, "
                "(SELECT count(*) FROM events e WHERE e.game = g.id) "
                "FROM games g ORDER BY g.id"
            ).fetchall()
            seats: dict[int, list[str]] = {}
            for game_id, name in db.execute("SELECT game, name FROM players ORDER BY game, seat"):
                seats.setdefault(int(game_id), []).append(str(name))
        return [
            GameSummary(
                id=int(gid),
                game=str(game),
                players=tuple(seats.get(int(gid), [])),
                started=str(started),
                finished=None if finished is None else str(finished),
                events=int(count),
            )
            for gid, game, started, finished, count in rows
        ]

    def transcript(self, game_id: int) -> str:
        """The game as a PROTOCOL.md transcript: its header and the actions in effect."""
        stored = self.game(game_id)
        history = replay_events(stored)
        return dump(history.game, parse_header(stored.header).players, history.actions)

    # -- readings -------------------------------------------------------------------------------

    def record_reading(
        self,
        game_id: int | None,
        dice: list[dict[str, JSON]],
        *,
        status: str,
        aside: list[dict[str, JSON]] | None = None,
    ) -> int:
        """Keep one reading of the tray (each die's value, confidence, status and box) and the
        dice it saw out of the roll zone (``aside``); its id."""
        _check_dice(dice)
        _check_dice(aside or [])
        text = json.dumps(dice)
        now = _utc(self.clock())
        with self._transaction(write=True) as db:
            if game_id is not None:
                self._need_game(db, game_id)
            cursor = db.execute(
                "INSERT INTO readings (game, time, status, dice) VALUES (?, ?, ?, ?)",
                (game_id, now, status, text),
            )
            reading_id = cursor.lastrowid
            assert reading_id is not None
            if aside:
                db.execute(
                    "INSERT INTO asides (reading, dice) VALUES (?, ?)",
                    (reading_id, json.dumps(aside)),
                )
        return reading_id

    def face_counts(self, game_id: int | None = None) -> dict[int, int]:
        """How often each face was read, over every die with a value (one game or all readings).

        Faces 1 to 6 are always present, so a chi-square test sees the faces never read too.
        """
        with self._transaction(write=False) as db:
            if game_id is None:
                rows = db.execute("SELECT dice FROM readings").fetchall()
            else:
                self._need_game(db, game_id)
                rows = db.execute("SELECT dice FROM readings WHERE game = ?", (game_id,)).fetchall()
        counts = dict.fromkeys(range(1, 7), 0)
        for (text,) in rows:
            for die in json.loads(text):
                value = die["value"]
                if value is not None:
                    counts[value] = counts.get(value, 0) + 1
        return counts

    def readings(self, after: int = 0, upto: int | None = None) -> list[StoredReading]:
        """Every reading with an id above ``after`` (and at most ``upto``), oldest first, each die
        as last corrected."""
        last = _LAST_ID if upto is None else upto
        with self._transaction(write=False) as db:
            rows = db.execute(
                "SELECT id, game, time, status, dice FROM readings WHERE id > ? AND id <= ? "
                "ORDER BY id",
                (after, last),
            ).fetchall()
            fixes = db.execute(
                "SELECT reading, die, value, source, CASE source WHEN 'camera' THEN replaced END "
                "FROM corrections WHERE reading > ? AND reading <= ? ORDER BY id",
                (after, last),
            ).fetchall()
        by_reading: dict[int, list[tuple[int, int]]] = {}
        by_hand: dict[int, list[tuple[int, int]]] = {}
        first_look: dict[int, dict[int, int | None]] = {}
        for reading, die, value, source, replaced in fixes:
            by_reading.setdefault(int(reading), []).append((int(die), int(value)))
            if source != "camera":  # the camera's second look (Table.look_again) is no person's
                by_hand.setdefault(int(reading), []).append((int(die), int(value)))
            elif replaced is not None:
                was = json.loads(replaced)[int(die)]["value"]
                first_look.setdefault(int(reading), {}).setdefault(int(die), was)
        out = []
        for rid, game, when, status, text in rows:
            mine = by_hand.get(int(rid), [])
            out.append(
                StoredReading(
                    int(rid),
                    None if game is None else int(game),
                    str(when),
                    str(status),
                    (dice := _corrected(json.loads(text), by_reading.get(int(rid), []))),
                    tuple(sorted({die for die, _ in mine if die < len(dice)})),
                    {die - len(dice): value for die, value in mine if die >= len(dice)},
                    first_look.get(int(rid), {}),
                )
            )
        return out

    # -- corrections ----------------------------------------------------------------------------

    def record_correction(
        self,
        reading_id: int,
        die: int,
        value: int,
        *,
        events: list[tuple[str, dict[str, JSON] | None]],
        source: str,
        reopen: bool = False,
    ) -> StoredCorrection:
        """Log that die ``die`` of a stored reading shows ``value`` (0: no die is there), with the
        events it caused. Dice are numbered as the reading has them in the roll zone, then on
        with those it saw out of it.

        The reading keeps the dice as the camera read them (``replaced``); the correction and its
        events (an undo of the misread roll, the corrected roll) are one transaction, so the log
        never holds half a correction. ``reopen``: the misread roll ended the game, which goes
        on again (the newest game only, as :meth:`undo_ending`).
        """
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 6:
            raise ValueError(f"a corrected die shows 1 to 6 (0: no die there), not {value!r}")
        rows = [self._event_row(kind, action, source=source) for kind, action in events]
        now = _utc(self.clock())
        with self._transaction(write=True) as db:
            game_id, _, dice = self._dice_now(db, reading_id)
            if isinstance(die, bool) or not isinstance(die, int) or not 0 <= die < len(dice):
                raise ValueError(
                    f"reading {reading_id} has {len(dice)} dice; there is no die {die!r}"
                )
            seqs: list[int] = []
            if rows:
                if game_id is None:
                    raise ValueError(f"reading {reading_id} belongs to no game; it changes no game")
                if reopen:
                    self._reopen(db, game_id)
                seqs = self._insert_events(db, game_id, rows, source=source, now=now)
                # The corrected reading's dice make its new actions, as the camera's did.
                self._link(db, game_id, rows, seqs, [reading_id] * len(rows))
            cursor = db.execute(
                "INSERT INTO corrections "
                "(reading, game, die, value, replaced, events, source, time) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (reading_id, game_id, die, value, json.dumps(dice), json.dumps(seqs), source, now),
            )
            if source != "camera":  # a person named the die: no doubt about it stands
                db.execute("DELETE FROM doubted WHERE reading = ? AND die = ?", (reading_id, die))
            correction_id = cursor.lastrowid
        assert correction_id is not None
        return StoredCorrection(
            correction_id, reading_id, game_id, die, value, dice, seqs, source, now
        )

    def _dice_now(
        self, db: sqlite3.Connection, reading_id: int
    ) -> tuple[int | None, int, list[dict[str, JSON]]]:
        """A stored reading's game, how many dice it saw in the roll zone, and all its dice as
        last corrected: the zone's, then those out of it (``LookupError`` if there is none)."""
        found = db.execute("SELECT game, dice FROM readings WHERE id = ?", (reading_id,)).fetchone()
        if found is None:
            raise LookupError(f"there is no reading {reading_id} in the game store {self.path}")
        earlier = db.execute(
            "SELECT die, value FROM corrections WHERE reading = ? ORDER BY id", (reading_id,)
        ).fetchall()
        out = db.execute("SELECT dice FROM asides WHERE reading = ?", (reading_id,)).fetchone()
        zone = json.loads(found[1])
        # The dice out of the roll zone are numbered after the zone's.
        dice = _corrected(zone + (json.loads(out[0]) if out else []), earlier)
        return None if found[0] is None else int(found[0]), len(zone), dice

    def dice(self, reading_id: int) -> tuple[list[dict[str, JSON]], list[dict[str, JSON]]]:
        """The dice of a stored reading as last corrected: those of the roll zone and those out
        of it (``LookupError`` if there is no such reading)."""
        with self._transaction(write=False) as db:
            _, zone, dice = self._dice_now(db, reading_id)
        return dice[:zone], dice[zone:]

    def corrections(self, game_id: int | None = None) -> list[StoredCorrection]:
        """The corrections of one game's readings (or of all readings), oldest first."""
        query = (
            "SELECT id, reading, game, die, value, replaced, events, source, time FROM corrections"
        )
        with self._transaction(write=False) as db:
            if game_id is None:
                rows = db.execute(f"{query} ORDER BY id").fetchall()
            else:
                self._need_game(db, game_id)
                rows = db.execute(f"{query} WHERE game = ? ORDER BY id", (game_id,)).fetchall()
        return [
            StoredCorrection(
                int(cid),
                int(reading),
                None if game is None else int(game),
                int(die),
                int(value),
                json.loads(replaced),
                json.loads(events),
                str(source),
                str(time),
            )
            for cid, reading, game, die, value, replaced, events, source, time in rows
        ]

    # -- checks ---------------------------------------------------------------------------------

    def record_check(self, reading_id: int, die: int, value: int, *, source: str) -> None:
        """Keep the players' answer that die ``die`` of a stored reading shows ``value`` (0: no
        die is there), replacing an earlier answer about it; no game changes.

        ``die`` counts the roll zone's dice first, then the dice set aside (as the photo's
        sidecar lists them); the caller, who can read that sidecar, checks it is one of them.
        """
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 6:
            raise ValueError(f"a die shows 1 to 6 (0: no die there), not {value!r}")
        # The answer settles a doubt a fix left about the die, and stands over "can't tell".
        self._say_of_die(
            "INSERT OR REPLACE INTO checks (reading, die, value, source, time) "
            "VALUES (?, ?, ?, ?, ?)",
            reading_id,
            die,
            value,
            source,
            clears=("doubted", "unclear"),
        )

    def record_unclear(self, reading_id: int, die: int, *, source: str) -> None:
        """Keep that the players could not tell from its photo what die ``die`` of a stored
        reading shows (numbered as :meth:`record_check` numbers it), replacing an answer about
        it; no game changes. Nothing is learnt of its face: the teach sheet asks no more, and
        the export keeps its read value out of training (``unclear``)."""
        # A doubt would keep the die on the sheet; its value is no label either way.
        self._say_of_die(
            "INSERT OR REPLACE INTO unclear (reading, die, source, time) VALUES (?, ?, ?, ?)",
            reading_id,
            die,
            source,
            clears=("checks", "doubted"),
        )

    def _say_of_die(
        self, sql: str, reading_id: int, die: int, *values: object, clears: Sequence[str]
    ) -> None:
        """Write what a person said of die ``die`` of a stored reading (``sql`` takes the
        reading, the die, ``values``, then the time) and delete what it replaces from the
        tables ``clears``, in one transaction; ``LookupError`` when there is no such reading."""
        if isinstance(die, bool) or not isinstance(die, int) or die < 0:
            raise ValueError(f"a die is counted from 0, not {die!r}")
        # ``clears`` are names of this module's own tables, never input.
        deletes = [
            (f"DELETE FROM {t} WHERE reading = ? AND die = ?", (reading_id, die)) for t in clears
        ]
        self._note_on_reading(sql, reading_id, die, *values, then=deletes)

    def unclear(self, after: int = 0, upto: int | None = None) -> dict[int, set[int]]:
        """The dice the players could not tell (:meth:`record_unclear`) of readings with an id
        above ``after`` (and at most ``upto``): reading id -> dice."""
        with self._transaction(write=False) as db:
            rows = db.execute(
                "SELECT reading, die FROM unclear WHERE reading > ? AND reading <= ?",
                (after, _LAST_ID if upto is None else upto),
            ).fetchall()
        return _dice_of_readings(rows)

    def _note_on_reading(
        self,
        sql: str,
        reading_id: int,
        *values: object,
        then: Sequence[tuple[str, tuple[object, ...]]] = (),
    ) -> None:
        """Write one row about a stored reading (``sql`` takes its id, ``values``, then the
        time), and run the statements ``then`` in the same transaction; ``LookupError`` when
        there is no such reading."""
        now = _utc(self.clock())
        with self._transaction(write=True) as db:
            if db.execute("SELECT 1 FROM readings WHERE id = ?", (reading_id,)).fetchone() is None:
                raise LookupError(f"there is no reading {reading_id} in the game store {self.path}")
            db.execute(sql, (reading_id, *values, now))
            for statement, parameters in then:
                db.execute(statement, parameters)

    def record_doubted(self, reading_id: int, die: int, *, source: str) -> None:
        """Keep that die ``die`` of a stored reading (numbered as a correction numbers it) may
        be misread: a fix of its throw said one of some dice was, not which; no game changes.
        The doubt stands over what was said of the die before, until a person's correction or
        answer (:meth:`record_correction`, :meth:`record_check`) names it again."""
        self._say_of_die(
            "INSERT OR REPLACE INTO doubted (reading, die, source, time) VALUES (?, ?, ?, ?)",
            reading_id,
            die,
            source,
            clears=(),
        )

    def doubted(self) -> dict[int, set[int]]:
        """The dice a fix said may be misread and nobody named since (:meth:`record_doubted`):
        reading id -> dice."""
        with self._transaction(write=False) as db:
            rows = db.execute("SELECT reading, die FROM doubted").fetchall()
        return _dice_of_readings(rows)

    def record_missed(self, reading_id: int, dice: int) -> None:
        """Keep that the camera missed ``dice`` dice of a stored reading (the players typed the
        throw); no game changes."""
        if isinstance(dice, bool) or not isinstance(dice, int) or dice < 1:
            raise ValueError(f"a reading misses at least 1 die, not {dice!r}")
        self._note_on_reading(
            "INSERT OR REPLACE INTO missed (reading, dice, time) VALUES (?, ?, ?)", reading_id, dice
        )

    def record_absent(self, reading_id: int, *, source: str) -> None:
        """Keep that one more of the dice the camera missed in a stored reading is not in its
        photo (the players said so on the teach sheet); no game changes."""
        self._note_on_reading(
            "INSERT INTO absent (reading, dice, source, time) VALUES (?, 1, ?, ?) "
            "ON CONFLICT (reading) DO UPDATE SET dice = dice + 1, source = excluded.source, "
            "time = excluded.time",
            reading_id,
            source,
        )

    def absent(self) -> dict[int, int]:
        """The missed dice the players said are not in the photo: reading id -> how many."""
        with self._transaction(write=False) as db:
            rows = db.execute("SELECT reading, dice FROM absent").fetchall()
        return {int(reading): int(dice) for reading, dice in rows}

    def missed(self) -> dict[int, int]:
        """The readings the camera missed dice of: reading id -> how many."""
        with self._transaction(write=False) as db:
            rows = db.execute("SELECT reading, dice FROM missed").fetchall()
        return {int(reading): int(dice) for reading, dice in rows}

    def record_placed(
        self, reading_id: int, die: int, value: int, box: Sequence[int], *, source: str
    ) -> None:
        """Keep a die the camera missed, pointed at in the photo of a stored reading: its number
        (after the reading's dice and those set aside), value and box in frame pixels."""
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
            raise ValueError(f"a die shows 1 to 6, not {value!r}")
        if isinstance(die, bool) or not isinstance(die, int) or die < 0:
            raise ValueError(f"a die is counted from 0, not {die!r}")
        corners = [int(v) for v in box]
        if len(corners) != 4 or corners[2] <= corners[0] or corners[3] <= corners[1]:
            raise ValueError(f"a box is [x0, y0, x1, y1] with x0 < x1 and y0 < y1, not {box!r}")
        self._note_on_reading(
            "INSERT OR REPLACE INTO placed (reading, die, value, box, source, time) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            reading_id,
            die,
            value,
            json.dumps(corners),
            source,
        )

    def placed(self) -> dict[int, dict[int, tuple[int, list[int]]]]:
        """The missed dice pointed at: reading id -> die -> (value, box)."""
        with self._transaction(write=False) as db:
            rows = db.execute("SELECT reading, die, value, box FROM placed").fetchall()
        out: dict[int, dict[int, tuple[int, list[int]]]] = {}
        for reading, die, value, box in rows:
            out.setdefault(int(reading), {})[int(die)] = (int(value), list(json.loads(box)))
        return out

    def revision(self) -> tuple[int, ...]:
        """The newest reading's id and how many corrections, answers, readings with missed
        dice, dice placed, dice doubted, dice not told and missed dice not in the photo are
        stored: it changes whenever one of them is added (what a cache of the teach sheet is
        keyed on)."""
        with self._transaction(write=False) as db:
            row = db.execute(
                "SELECT (SELECT coalesce(max(id), 0) FROM readings), "
                "(SELECT count(*) FROM corrections), (SELECT count(*) FROM checks), "
                "(SELECT count(*) FROM missed), (SELECT count(*) FROM placed), "
                "(SELECT count(*) FROM doubted), (SELECT count(*) FROM unclear), "
                "(SELECT coalesce(sum(dice), 0) FROM absent)"
            ).fetchone()
        return tuple(int(n) for n in row)

    def checks(self, after: int = 0, upto: int | None = None) -> dict[int, dict[int, int]]:
        """The answers about the dice of readings with an id above ``after`` (and at most
        ``upto``): reading id -> die -> value (0: no die)."""
        with self._transaction(write=False) as db:
            rows = db.execute(
                "SELECT reading, die, value FROM checks WHERE reading > ? AND reading <= ?",
                (after, _LAST_ID if upto is None else upto),
            ).fetchall()
        out: dict[int, dict[int, int]] = {}
        for reading, die, value in rows:
            out.setdefault(int(reading), {})[int(die)] = int(value)
        return out

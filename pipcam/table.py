"""The table: where actions from the camera, the buttons, the terminal and the phones meet.

Input flows one way. Every action goes through the engine's legal actions, is written to the
store (committed) and only then applied and announced to the LEDs and the phones, so an
acknowledged action is never lost. A reading that is not a legal outcome is not applied: the
table says what is wrong and waits for the dice to be fixed or the reading corrected.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from coach.report import Coach, coach_for, coach_problem
from pipcam.store import (
    CUT,
    HIDDEN,
    NO_DIE,
    DieLike,
    GameFinished,
    GameSummary,
    NoSuchGame,
    Store,
    StoreError,
    corrected_die,
    die_json,
    in_effect,
    replay_events,
)
from scoring.core import (
    JSON,
    Action,
    Bank,
    Forbidden,
    Game,
    Keep,
    Phase,
    Roll,
    Score,
    Stop,
    action_from_json,
    action_to_json,
)
from scoring.dice import contains, remove, sub_multisets
from scoring.errors import (
    IllegalAction,
    InvalidAction,
    Reason,
    Refusal,
    RefusalCode,
    refusal_json,
)
from scoring.history import History
from scoring.transcript import Header, check_new_players, dump, parse_header, start
from vision.detect import iou

log = logging.getLogger(__name__)


class ReadingLike(Protocol):
    """A reading of the tray (vision.reader.DiceReading)."""

    @property
    def status(self) -> str: ...
    @property
    def dice(self) -> Sequence[DieLike]: ...
    @property
    def set_aside(self) -> Sequence[DieLike]: ...


class TableRefusal(RefusalCode):
    """The table's own refusals and problems, which the phones word in their language."""

    STALE = "stale"
    """A change made on a screen that showed another version of the game."""
    NO_GAME = "no_game"
    """No game is being played."""
    NOTHING_TO_UNDO = "nothing_to_undo"
    NOTHING_TO_REDO = "nothing_to_redo"
    KEPT_AS_ENDED = "kept_as_ended"
    """The store keeps the game as it ended: it cannot be changed any more."""
    NO_READING = "no_reading"
    """No dice have settled yet: there is no reading to correct."""
    READING_BEFORE_GAME = "reading_before_game"
    """The last reading is of the game before this one."""
    GONE_ON = "gone_on"
    """The game has gone on since the reading to correct."""
    COACH_OFF = "coach_off"
    NOBODY_TO_MOVE = "nobody_to_move"
    NOTHING_TO_CONFIRM = "nothing_to_confirm"
    HOLD_AGAIN = "hold_again"
    """The confirm button held on an unfinished game: hold it again within ``seconds``."""
    ROLL_ZONE_COUNT = "roll_zone_count"
    """``read`` dice are in the roll zone but only ``n`` were to be thrown."""
    ROLL_ZONE_MISSING = "roll_zone_missing"
    """Only ``read`` dice are seen in the roll zone but ``n`` were to be thrown: some were not
    thrown, or one is hidden from the camera (under a card, a cup, a hand)."""
    LANDED_OUT = "landed_out"
    """``n`` dice of a throw of ``thrown`` (``dice``, their faces) were seen landing out of the
    roll zone. They are to be thrown into it again."""
    NOT_FOLLOWING = "not_following"
    """The dice in the roll zone (``dice``) do not follow from those on the table (``table``)."""
    DOUBTFUL = "doubtful"
    """``n`` dice of the reading lean on something or cannot be read."""
    COVERED = "covered"
    """``n`` dice of the reading are partly hidden (a card or a cup over them), and no other die
    is doubtful: what covers them is to be moved, not the dice thrown again."""
    OUT_OF_VIEW = "out_of_view"
    """``n`` dice of the reading lie where the edge of the camera's view cuts them, and no other
    die is doubtful: they are to be slid into view without turning them, not thrown again."""
    LEFT_LYING = "left_lying"
    """``still`` of the ``n`` dice to throw lie where they lay, showing the same faces."""
    WHICH_ASIDE = "which_aside"
    """``out`` dice left the roll zone while the others were thrown (``dice``, their faces), and
    which were set aside is not known: one of ``choices`` (lists of faces; ``more``: others),
    each the set-aside ``keeps`` (the same, with dice held before: Generał, Drápky)."""
    DICE_READ = "dice_read"
    """The dice read (``dice``) were refused for ``reason`` (``{"detail", "code", "params"}``)."""
    NO_SUCH_STEP = "no_such_step"
    """There is no step ``step`` to fix: the game has ``steps`` (numbered from 1)."""
    FIX_BREAKS = "fix_breaks"
    """With step ``step`` fixed, step ``at`` no longer follows the rules (``reason``)."""


MAX_CHOICES = 4  # set-asides a refusal lists when it cannot tell which dice went out
SAME_PLACE = 0.5  # box overlap (IoU) of a die that lies where it lay: a thrown die lands elsewhere
# A place a person said holds no die (a knob, a printed pip, a stain): what the camera reads
# there again, as it read it then, is left out of the next readings. A thing that never moves
# is boxed within a pixel or two; a die thrown there must also land on its box and show the
# same reading to be left out, and a value given to it brings the place back.
NO_DIE_PLACE = 0.7
NO_DIE_PLACES = 8  # the places remembered, newest first: a tray has a few such things at most


def unmoved(lying: Sequence[dict[str, JSON]], dice: Sequence[dict[str, JSON]]) -> int:
    """How many of ``dice`` lie where a die of ``lying`` lay, showing its face: dice that were
    not thrown. Each die that lay answers for one die at most.

    >>> a = {"value": 5, "box": [0, 0, 40, 40]}
    >>> unmoved([a], [{"value": 5, "box": [4, 2, 44, 42]}]), unmoved([a], [{**a, "value": 6}])
    (1, 0)
    """
    return len(dice) - len(moved(lying, dice))


def moved(
    lying: Sequence[dict[str, JSON]], dice: Sequence[dict[str, JSON]]
) -> list[dict[str, JSON]]:
    """The dice of ``dice`` that do not lie where a die of ``lying`` lay showing the same face
    (each die that lay answers for one die at most), in order.

    Dice that all lie one shift away from where they lay, each with its face, were not thrown:
    the tray was pushed (or the camera knocked) with them in it. A throw never moves two dice
    or more showing different faces by one shift keeping every face. (Dice of one face, or
    compared by place alone, could be so by chance: dice set aside in a row.)

    >>> a = {"value": 5, "box": [0, 0, 40, 40]}
    >>> moved([a], [{"value": 5, "box": [4, 2, 44, 42]}, {"value": 1, "box": [90, 0, 130, 40]}])
    [{'value': 1, 'box': [90, 0, 130, 40]}]
    >>> b = {"value": 2, "box": [100, 0, 140, 40]}
    >>> pushed = [{"value": 5, "box": [60, 30, 100, 70]}, {"value": 2, "box": [160, 30, 200, 70]}]
    >>> moved([a, b], pushed)
    []
    """
    found = _moved_by(lying, dice, (0.0, 0.0))
    faces = {d.get("value") for d in dice} - {None}
    if found and len(faces) >= 2 and len(dice) == len(lying):
        for shift in _shifts(lying, dice):
            if not _moved_by(lying, dice, shift):
                return []
    return found


def _moved_by(
    lying: Sequence[dict[str, JSON]], dice: Sequence[dict[str, JSON]], shift: tuple[float, float]
) -> list[dict[str, JSON]]:
    """:func:`moved` of ``lying`` moved by ``shift`` (pixels)."""
    dx, dy = shift
    left = [d for d in lying if d.get("value") is not None]
    found: list[dict[str, JSON]] = []
    for die in dice:
        for i, old in enumerate(left):
            x0, y0, x1, y1 = (float(v) for v in old["box"])
            box = (x0 + dx, y0 + dy, x1 + dx, y1 + dy)
            if old["value"] == die["value"] and iou(box, die["box"]) >= SAME_PLACE:
                del left[i]
                break
        else:
            found.append(die)
    return found


def _shifts(
    lying: Sequence[dict[str, JSON]], dice: Sequence[dict[str, JSON]]
) -> list[tuple[float, float]]:
    """The shifts that take a die of ``lying`` onto a die of ``dice`` with its face."""
    shifts = []
    for old in lying:
        for die in dice:
            if old.get("value") is not None and old["value"] == die["value"]:
                (a0, b0, a1, b1), (c0, d0, c1, d1) = old["box"], die["box"]
                shifts.append(((c0 + c1 - a0 - a1) / 2.0, (d0 + d1 - b0 - b1) / 2.0))
    return shifts


@dataclass
class TableView:
    """What the LEDs and the phones show besides the game: the last reading and any problem."""

    reading_status: str = "empty"
    dice_read: list[dict[str, JSON]] = field(default_factory=list)
    aside_read: list[dict[str, JSON]] = field(default_factory=list)  # out of the roll zone
    problem: str = ""  # a Reason when the phones can word it
    camera: str = "ok"
    # What the camera loop asks of the table's owner, by who asks: the light keeper ("dark",
    # "bright"), the tray follower ("tray_size") and the focus watch ("blurred"). Empty when all
    # is well.
    camera_notices: dict[str, str] = field(default_factory=dict)
    photos: int | None = None  # photos kept of the tray (pipcam.photos); None: none are kept
    photo_seq: int = 0  # photos kept since the table started: phones count the teach sheet anew
    tuned: str | None = None  # the day the model read with was tuned here; None: not tuned here
    seq: int = 0


@dataclass
class SettledReading:
    """The last settled reading and what it did to the game, so that a phone can correct it."""

    id: int
    game_id: int | None
    dice: list[dict[str, JSON]]
    before: int  # actions in the history when it was read
    state_before: Any
    actions: list[Action]  # what it became (nothing when it was refused)
    state_after: Any
    # The dice of the last reading that the game took (a roll, a set-aside) if no throw has
    # been entered since in the same turn (Table._lying): a die lying where it lay there,
    # showing the same face, was not thrown.
    lying: list[dict[str, JSON]] | None = None
    # The dice of a later reading that took no action and in which every die lay where it lay
    # here: some were taken out (1000's scoring dice, Na zakázaná čísla's forbidden ones), and a
    # throw is compared with those left, not with the places of the dice taken out.
    left: list[dict[str, JSON]] | None = None
    # The dice set aside (out of the roll zone) in this reading, and as ``lying`` and ``left``
    # for them: a die set aside in the same motion as a throw is one that moved out there.
    aside: list[dict[str, JSON]] = field(default_factory=list)
    lying_aside: list[dict[str, JSON]] | None = None
    left_aside: list[dict[str, JSON]] | None = None
    # The dice (in the roll zone and out of it) of the reading the game last took, when the
    # turn has passed since with no throw entered: the next player is gathering them.
    gone: list[dict[str, JSON]] | None = None
    gone_in_zone: int = 0  # how many of ``gone`` lay in the roll zone
    # The dice (numbered as ``correct`` numbers them) that a person set: the camera reading the
    # dice again leaves them as the players said.
    set_by_person: set[int] = field(default_factory=set)
    # Whether the camera saw a place (a box) change while the dice moved before this reading
    # (vision.settle.Touched); None when not known (a phone's reading).
    touched: Callable[[Sequence[float]], bool] | None = None

    @property
    def zone_now(self) -> list[dict[str, JSON]]:
        """The dice in the roll zone as they lie since this reading (``left`` once some were
        taken out)."""
        return self.dice if self.left is None else self.left

    @property
    def aside_now(self) -> list[dict[str, JSON]]:
        """The dice out of the roll zone as they lie since this reading."""
        return self.aside if self.left_aside is None else self.left_aside


@dataclass(frozen=True)
class Motion:
    """What moved since the reading the game last took, if no throw was entered since (faces
    only; a die moved within the roll zone, or within the area out of it, is in neither list
    of the two areas it did not leave)."""

    lay: list[int]  # the dice in the roll zone then
    still: int  # dice of the roll zone now that lie where a die lay then, with its face
    moved: list[int]  # the others of the roll zone now: thrown, or put there by hand
    out: list[int]  # dice newly out of the roll zone (set aside, held)
    back: list[int]  # dice no longer out of it (held dice put back into play)
    # Of ``still``, those whose place the camera saw untouched while the dice moved: surely
    # not thrown. The others were picked up, or a hand passed over them. None: not known.
    untouched: int | None = None


@dataclass(frozen=True)
class Step:
    """One action of the game in effect, with who took it and everyone's score after it."""

    player: str | None
    action: Action
    totals: tuple[int, ...]


Listener = Callable[[dict[str, JSON]], None]
CAMERA_NOTICES = frozenset({"dark", "bright", "tray_size", "blurred"})
"""What the camera loop may ask of the table's owner (``Table.camera_notice``); the phones word
each as ``camera.notice.NAME``. "dark", "bright": the light keeper at its limits
(vision.light); "tray_size": the tray follower (vision.calibrate); "blurred": the focus watch
(vision.focus)."""
EARLIER_GAMES = 20  # the earlier games phones list: an evening's, and the last one's before it
NEW_GAME_WINDOW = 5.0  # seconds in which a second hold of confirm abandons an unfinished game


class Table:
    """The current game with its history, the store behind it, and who is told of changes."""

    def __init__(
        self, store: Store, *, clock: Callable[[], float] = time.monotonic, coach: bool = False
    ) -> None:
        self.store = store
        self.clock = clock
        # The coach (pipcam run --coach): advice for the player to move, asked for on a phone.
        self.coach = coach
        self._coaches: dict[Any, Coach] = {}
        self._coach_lock = threading.Lock()  # one solve at a time; they share their tables
        self.lock = threading.RLock()
        self.history: History[Any] | None = None
        self.header: Header | None = None
        self.game_id: int | None = None
        self.view = TableView()
        self._listeners: list[Listener] = []
        self._new_game_asked = -NEW_GAME_WINDOW
        self.last_reading: SettledReading | None = None
        self._taken: SettledReading | None = None  # the last reading the game took actions from
        self._timeline: tuple[object, list[Step]] | None = None
        self._finished_counts: dict[int, dict[int, int]] = {}
        self._earlier: dict[int, dict[str, JSON] | None] = {}  # a game before the current one
        # Counts the changes of the game in play (a new game, an action, an undo, a redo, a
        # correction that changed the actions): a phone's change names the version it saw, and a
        # change made on an out-of-date screen (a double tap, another phone first) is refused.
        # It starts at a random number: a phone that stayed open across a restart must not find
        # its old version again on a game that has moved elsewhere (a stale change applied, an
        # old hint shown as current).
        self.version = secrets.randbelow(2**40)
        # The store's failure shown as the problem (a full disk), until a write succeeds again.
        self._store_problem = ""
        # What the last settled reading was refused for, until a reading that fits.
        self._reading_problem = ""
        # The places a person said hold no die, each as the camera read it there (NO_DIE_PLACE).
        self._no_die: list[dict[str, JSON]] = []

    def _check_seen(self, seen: int | None) -> None:
        """Refuse a change made on a screen that showed another version of the game."""
        if seen is not None and seen != self.version:
            raise IllegalAction(
                "the game has changed since your screen showed it (another phone, a button or"
                " the camera was first): look again, then try again",
                code=TableRefusal.STALE,
            )

    # -- games ----------------------------------------------------------------------------------

    def resume(self) -> bool:
        """Take up the unfinished game of the store, if there is one."""
        with self.lock:
            stored = self.store.current_game()
            if stored is None:
                return False
            try:
                self.history = replay_events(stored)
            except StoreError as exc:
                # A game these rules cannot replay (stored by another version, or by two tables
                # at once) must not stop the table for ever: it stays in the store, events and
                # all, marked finished, and a new game starts.
                log.error("%s; it stays in the store as it was, and a new game starts", exc)
                self.store.finish_game(stored.id)
                return False
            self.header = parse_header(stored.header)
            self.game_id = stored.id
            for fix in self.store.corrections(stored.id):
                if fix.source != "camera" and fix.die < len(fix.replaced):
                    self._said(fix.replaced[fix.die], fix.value)
            self.version += 1
            self._changed()
            return True

    def new_game(self, header_json: JSON, *, source: str = "table") -> dict[str, JSON]:
        """Start a game from a transcript header; a bad header is refused and changes nothing."""
        header = parse_header(header_json)
        check_new_players(header.players)
        history = start(header)  # validates game, players and options before anything is stored
        with self.lock:
            unfinished = (
                self.history is not None and self.history.game.outcome(self.history.state) is None
            )
            # The new game is stored first: if that fails, the old game goes on as it was.
            with self._storing():
                new_id = self.store.new_game(header.to_json())
            if self.game_id is not None and unfinished:
                self._finish(self.game_id)
            self.game_id = new_id
            self.history = history
            self.header = header
            self.version += 1
            self.view.problem = ""
            self._changed()
            return self.state_json()

    @property
    def game(self) -> Game[Any, Any]:
        """The engine of the current game."""
        return self._need().game

    def _need(self) -> History[Any]:
        if self.history is None:
            raise IllegalAction(
                "no game is being played: start one first", code=TableRefusal.NO_GAME
            )
        return self.history

    # -- actions --------------------------------------------------------------------------------

    def act(
        self, action: Action, *, source: str, seen: int | None = None, made: int | None = None
    ) -> dict[str, JSON]:
        """Apply one action: checked by the engine, stored, then applied and announced.

        ``seen``: the :attr:`version` the action was chosen on (a phone's), if it must still be
        the game's. ``made``: the stored reading whose dice made it (the camera's)."""
        with self.lock:
            self._check_seen(seen)
            history = self._need()
            game = history.game
            game.apply(history.state, action)  # raises IllegalAction; nothing stored or changed
            assert self.game_id is not None
            missed = 0 if source == "camera" else self._missed_by_camera(action, history)
            adopted = source != "camera" and self._adoptable(action, history)
            over = None if source == "camera" or adopted else self._typed_over(action, history)
            # The same throw, or one die otherwise: the players put a misread die right by undo
            # and typing rather than a tap on it. More dice otherwise may be another throw.
            retyped = over if over is not None and _one_die_at_most(over, action) else None
            if (adopted or retyped) and self.last_reading is not None:
                made = self.last_reading.id  # typed as the dice lie: that reading's throw
            with self._storing():
                self.store.append(
                    self.game_id, "action", action_to_json(action), source=source, reading=made
                )
            # The action is stored (acknowledged): what follows may fail, never undo it.
            history.push(action)
            self.version += 1
            self.view.problem = ""
            if adopted:
                self._adopt(action, history)
            if retyped is not None and self.last_reading is not None:
                self._take_retyped(self.last_reading, retyped, action, history, source=source)
            elif over is not None and self.last_reading is not None:
                # Two dice or more otherwise: misread, or thrown again unseen; not known which.
                self._doubt_suspects(
                    self.last_reading.id, self.last_reading.dice, over, action, source=source
                )
            if missed and self.last_reading is not None:
                reading_id = self.last_reading.id
                self._aside(lambda: self.store.record_missed(reading_id, missed))
            if game.outcome(history.state) is not None:
                self._finish(self.game_id)
            self._changed()
            return self.state_json()

    def _adoptable(self, action: Action, history: History[Any]) -> bool:
        """Whether ``action``, typed on a phone before it is taken, is the throw of the last
        settled reading (:meth:`_adopt`)."""
        last = self.last_reading
        if not isinstance(action, Roll) or last is None or last.actions:
            return False
        since = history.actions[last.before :]
        read = [d for d in last.dice if d["status"] != NO_DIE]
        return not (
            last.game_id != self.game_id
            or len(history) < last.before
            or any(isinstance(a, Roll) for a in since)
            or sorted(action.dice) != sorted(d["value"] for d in read if d["status"] == "ok")
            or any(d["status"] != "ok" for d in read)
        )

    def _adopt(self, action: Action, history: History[Any]) -> None:
        """A throw typed on a phone with the faces of the last settled reading, which the table
        refused (which dice were set aside, too many dice in the zone), is that reading's throw
        (:meth:`_adoptable`, asked before it was taken): the dice lie as it read them, so the
        next throw is told from dice left lying."""
        last = self.last_reading
        assert last is not None
        last.before = len(history) - 1
        last.state_before = history.state_after(last.before)
        last.actions = [action]
        last.state_after = history.state
        self._taken = last

    def _typed_over(self, action: Action, history: History[Any]) -> Roll | None:
        """The camera's throw that ``action``, typed on a phone, takes the place of: the last
        settled reading's throw, undone with nothing taken since. None when it is no such
        throw."""
        last = self.last_reading
        if not isinstance(action, Roll) or last is None or last.game_id != self.game_id:
            return None
        rolls = [i for i, a in enumerate(last.actions) if isinstance(a, Roll)]
        if len(rolls) != 1:
            return None
        (at,) = rolls
        old = last.actions[at]
        assert isinstance(old, Roll)
        if (
            len(history) != last.before + at
            or history.actions[last.before :] != last.actions[:at]
            or history.state_after(last.before) != last.state_before
        ):
            return None
        return old

    def _doubt_suspects(
        self,
        reading_id: int,
        dice: Sequence[dict[str, JSON]],
        old: Action,
        new: Action,
        *,
        source: str,
    ) -> None:
        """The dice of a reading whose throw ``old`` gave way to ``new`` without saying which
        die was misread (a fix, or a throw typed in place of it with two dice or more otherwise,
        which may be a throw made again unseen): each die showing a face ``new`` has not is no
        label as read (Store.doubted, :func:`_suspects`) until a person names it; the teach
        sheet asks those first."""
        suspects = _suspects(dice, old, new)

        def doubt() -> None:
            for die in suspects:
                self.store.record_doubted(reading_id, die, source=source)

        if suspects:
            self._aside(doubt)

    def _take_retyped(
        self,
        reading: SettledReading,
        old: Roll,
        action: Action,
        history: History[Any],
        *,
        source: str,
    ) -> None:
        """The throw typed in place of ``reading``'s (:meth:`_retyped`) is that reading's, as a
        correction of its misread die makes it: the die and the photo say what the players
        typed, and the next throw is told from the dice left lying."""
        at = reading.actions.index(old)
        reading.actions = [*reading.actions[:at], action]
        reading.state_after = history.state
        self._taken = reading
        if old != action:
            self._relabel(reading, old, action, source=source)

    def _missed_by_camera(self, action: Action, history: History[Any]) -> int:
        """How many more dice a throw typed in place of the last settled reading has than that
        reading saw (0 if it is not one): its photo shows them without a label."""
        last = self.last_reading
        if (
            not isinstance(action, Roll)
            or last is None
            or last.game_id != self.game_id
            or last.actions
            or len(history) != last.before
            or history.state != last.state_before
        ):
            return 0
        seen = sum(1 for d in last.dice if d["status"] != NO_DIE)
        return max(0, len(action.dice) - seen)

    def act_json(self, obj: JSON, *, source: str, seen: int | None = None) -> dict[str, JSON]:
        """Apply a PROTOCOL.md action object (``InvalidAction`` if it is malformed)."""
        return self.act(action_from_json(obj), source=source, seen=seen)

    def undo(self, *, source: str, seen: int | None = None) -> dict[str, JSON]:
        """Take back the last action (``IllegalAction`` when there is none)."""
        with self.lock:
            self._check_seen(seen)
            history = self._need()
            if not len(history):
                raise IllegalAction(
                    "nothing to undo: no action has been taken in this game",
                    code=TableRefusal.NOTHING_TO_UNDO,
                )
            assert self.game_id is not None
            if history.game.outcome(history.state) is not None:
                # A final throw typed wrong, a bank by mistake: the game goes on again.
                try:
                    with self._storing():
                        self.store.undo_ending(self.game_id, source=source)
                except GameFinished as exc:
                    raise IllegalAction(
                        f"cannot undo: {exc}", code=TableRefusal.KEPT_AS_ENDED
                    ) from exc
            else:
                self._append(self.game_id, "undo", None, source=source)
            history.pop()
            self.version += 1
            self.view.problem = ""
            self._changed()
            return self.state_json()

    def amend(
        self, index: int, action: Action, *, source: str, seen: int | None = None
    ) -> dict[str, JSON]:
        """Put ``action`` in place of the game's action ``index`` (from 0) and take every later
        one again: a throw misread or typed wrong, seen only turns later. Refused, with nothing
        changed, when a later action no longer follows the rules (which, and why); stored in
        one commit. A throw the camera read, fixed by one die, corrects that die of its photo.
        """
        return self._amend(index, action, source=source, seen=seen)

    def _amend(
        self,
        index: int,
        action: Action,
        *,
        source: str,
        seen: int | None,
        named: list[tuple[int, int]] | None = None,
    ) -> dict[str, JSON]:
        """:meth:`amend`; ``named``: the dice of the step's photo the fix is of (die, face), as
        a tap on the photo names them, instead of those the fix says (:func:`_misread`)."""
        with self.lock:
            self._check_seen(seen)
            history = self._need()
            steps = len(history)
            self._step(history, index)
            game = history.game
            later = _retaken(history, index, action)  # IllegalAction: nothing changed
            assert self.game_id is not None
            old = history.actions[index]
            maker = self._reading_of(history, index)
            ended = game.outcome(history.state) is not None
            try:
                with self._storing():
                    # Each step taken again stays the throw of the reading that made it; the
                    # fixed one too (its photo is that reading's).
                    made = self.store.made(self.game_id)[index:]
                    self.store.replace_last(
                        self.game_id,
                        *map(action_to_json, [action, *later]),
                        undone=steps - index,
                        source=source,
                        reopen=ended,
                        made=made,
                    )
            except GameFinished as exc:
                raise IllegalAction(
                    f"cannot fix step {index + 1}: the game is over and kept as it ended",
                    code=TableRefusal.KEPT_AS_ENDED,
                ) from exc
            for _ in range(steps - index):
                history.pop()
            for step in [action, *later]:
                history.push(step)
            self.version += 1
            self.view.problem = ""
            if maker is not None:  # its throw is now the fixed one, as a correction makes it
                maker.actions = history.actions[maker.before : maker.before + len(maker.actions)]
            for reading in {id(r): r for r in (self.last_reading, self._taken) if r}.values():
                self._restate(history, reading)
            if maker is not None:
                self._relabel(maker, old, action, source=source, named=named)
            elif made and made[0] is not None:
                self._relabel_stored(made[0], old, action, source=source, named=named)
            if game.outcome(history.state) is not None:
                self._finish(self.game_id)
            self._changed()
            return self.state_json()

    def step_dice(self, index: int) -> dict[str, JSON]:
        """The dice of the camera's reading that made step ``index`` (a throw), as the players
        left them, for a phone to show on its photo and fix one by a tap
        (:meth:`amend_die`); ``InvalidAction`` when no reading made it (typed, pressed)."""
        with self.lock:
            history = self._need()
            self._step(history, index)
            reading = self._made_by(index)
            zone, _ = self.store.dice(reading)
            return {"index": index, "reading": reading, "dice": list(self._in_doubt(reading, zone))}

    def _made_by(self, index: int) -> int:
        """The reading that made step ``index``; ``InvalidAction`` when none did."""
        assert self.game_id is not None
        with self._storing():
            made = self.store.made(self.game_id)
        reading = made[index] if index < len(made) else None
        if reading is None:
            raise InvalidAction(
                f"step {index + 1} was not read by the camera (typed, or a button): it has no"
                " photo; fix it with the throw it should have been"
            )
        return reading

    def amend_die(
        self, index: int, die: int, value: int, *, source: str, seen: int | None = None
    ) -> dict[str, JSON]:
        """Fix the throw of step ``index`` by one die of its photo: die ``die`` of the reading
        that made it (as :meth:`step_dice` lists them) showed ``value``. The throw is taken
        with that die's face changed and every later step again, as :meth:`amend`; the photo
        is labelled at that very die, where a typed fix can leave which die it was unknown
        (two dice showing the misread face)."""
        with self.lock:
            history = self._need()
            old = self._step(history, index)
            if not isinstance(old, Roll):
                raise InvalidAction(
                    f"step {index + 1} is no throw ({old}): only a throw is fixed by its dice"
                )
            reading = self._made_by(index)
            zone, _ = self.store.dice(reading)
            if isinstance(die, bool) or not isinstance(die, int) or not 0 <= die < len(zone):
                raise InvalidAction(
                    f"the photo of step {index + 1} has {len(zone)} dice in the roll zone"
                    f" (0 to {len(zone) - 1}); there is no die {die!r}"
                )
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
                raise InvalidAction(
                    f"a die of a throw shows 1 to 6, not {value!r} (a die that is not there is"
                    " fixed by typing the throw)"
                )
            was = zone[die]["value"]
            doubts = self._open_doubts(reading)
            if die not in doubts and was == value:
                return self.state_json()  # nothing to fix
            if (
                zone[die]["status"] == NO_DIE
                or not isinstance(was, int)
                or (die not in doubts and was not in old.dice)
            ):
                raise InvalidAction(
                    f"die {die + 1} of the photo of step {index + 1} is not one of its throw"
                    f" {' '.join(map(str, old.dice))}: fix it with the throw it should have been"
                )
            if die in doubts:
                # A fix said what was thrown, not which die showed what: the die's face as read
                # is not what the throw counts for it. The faces it counts for the dice in doubt
                # are those the others' leave.
                sure = Counter(
                    d["value"]
                    for i, d in enumerate(zone)
                    if i not in doubts and d["status"] != NO_DIE
                )
                left = Counter(old.dice) - sure
                if value in left:  # this tap says which: the throw stands, the photo is labelled
                    self._check_seen(seen)
                    self._settle_doubts(reading, zone, doubts, {die: value}, old, source=source)
                    self._changed()
                    return self.state_json()
                if len(left) != 1:
                    raise InvalidAction(
                        f"die {die + 1} of the photo of step {index + 1} was left in doubt by an"
                        f" earlier fix, and the throw may count it as any of"
                        f" {' '.join(map(str, sorted(left.elements())))}: fix it with the throw"
                        " it should have been"
                    )
                (was,) = left
            dice = list(old.dice)
            dice[dice.index(was)] = value
            return self._amend(index, Roll(dice), source=source, seen=seen, named=[(die, value)])

    def _open_doubts(self, reading: int) -> set[int]:
        """The dice of a stored reading that a fix left in doubt (:func:`_suspects`) and that
        nobody has named since, by a correction or on the teach sheet (Store.doubted)."""
        return self.store.doubted().get(reading, set())

    def _settle_doubts(
        self,
        reading: int,
        zone: list[dict[str, JSON]],
        doubts: set[int],
        said: dict[int, int],
        throw: Roll,
        *,
        source: str,
    ) -> None:
        """Label the dice in doubt that a person named (die -> face); when the faces the throw
        leaves for the others in doubt are all one face, they show it, and are labelled so."""
        sure = Counter(
            d["value"] for i, d in enumerate(zone) if i not in doubts and d["status"] != NO_DIE
        )
        rest = doubts - set(said)
        left = Counter(throw.dice) - sure - Counter(said.values())
        if rest and len(left) == 1 and left.total() == len(rest):
            (face,) = left
            said = {**said, **dict.fromkeys(rest, face)}
        with self._storing():
            for die, value in said.items():
                self.store.record_correction(reading, die, value, events=[], source=source)
        held = self.last_reading
        if held is not None and held.id == reading:  # the board shows its dice
            dice = [dict(d) for d in held.dice]
            for die, value in said.items():
                dice[die] = {**corrected_die(dice[die], value), "confidence": 1.0}
            if self.view.dice_read is held.dice:
                self.view.dice_read = dice
            held.dice = dice
            held.set_by_person.update(said)

    def choices(self, index: int) -> dict[str, JSON]:
        """What else step ``index`` could have been, for a phone to fix it by a tap: the other
        categories a written throw could have gone into (with the points each writes), the
        other set-asides of a throw, each one the later steps still follow (a category
        taken later by the same player trades places). A throw is typed instead: none."""
        with self.lock:
            history = self._need()
            taken = self._step(history, index)
            game = history.game
            before = history.state_after(index)
            player = game.to_move(before)
            kinds = _KINDS.get(type(taken), ())
            had = None if player is None else game.totals(before)[player]
            found: list[JSON] = []
            for action in game.legal_actions(before) if kinds else ():
                if not isinstance(action, kinds) or action == taken:
                    continue
                try:
                    _retaken(history, index, action)
                except IllegalAction:
                    continue  # a later step would no longer follow: not offered
                points = None  # a set-aside writes nothing yet
                if isinstance(action, Score) and player is not None and had is not None:
                    points = game.totals(game.apply(before, action))[player] - had
                found.append(
                    {"action": action_to_json(action), "text": str(action), "points": points}
                )
            return {"index": index, "action": action_to_json(taken), "choices": found}

    def _step(self, history: History[Any], index: int) -> Action:
        """Action ``index`` of the game; :class:`InvalidAction` (``no_such_step``) if none."""
        steps = len(history)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < steps:
            raise InvalidAction(
                f"there is no step {index + 1 if isinstance(index, int) else index!r} to"
                f" fix: the game has {steps} (numbered from 1)",
                code=TableRefusal.NO_SUCH_STEP,
                params={"step": index + 1 if isinstance(index, int) else 0, "steps": steps},
            )
        return history.actions[index]

    def amend_json(
        self, index: int, obj: JSON, *, source: str, seen: int | None = None
    ) -> dict[str, JSON]:
        """:meth:`amend` with a PROTOCOL.md action object (``InvalidAction`` if it is none)."""
        return self.amend(index, action_from_json(obj), source=source, seen=seen)

    def _reading_of(self, history: History[Any], index: int) -> SettledReading | None:
        """The reading still known to the table whose actions, in effect, hold action
        ``index``."""
        for reading in (self.last_reading, self._taken):
            if (
                reading is not None
                and reading.before <= index < reading.before + len(reading.actions)
                and self._in_effect(history, reading)
            ):
                return reading
        return None

    @staticmethod
    def _restate(history: History[Any], reading: SettledReading) -> None:
        """Bring the states a reading keeps up to date after an earlier action was fixed, if
        its actions still stand where they stood."""
        end = reading.before + len(reading.actions)
        if len(history) >= end and history.actions[reading.before : end] == reading.actions:
            reading.state_before = history.state_after(reading.before)
            reading.state_after = history.state_after(end)

    def _relabel(
        self,
        reading: SettledReading,
        old: Action,
        new: Action,
        *,
        source: str,
        named: list[tuple[int, int]] | None = None,
    ) -> None:
        """A throw the camera read, fixed: correct the dice of its reading that the fix names
        (``named``, or :func:`_misread`; no game changes), so its photo is labelled as the
        players said."""
        fixed = self._relabelled(reading.id, reading.dice, old, new, source=source, named=named)
        if fixed is None:
            return
        set_now, dice = fixed
        if self.view.dice_read is reading.dice:
            self.view.dice_read = dice  # the phones show the dice as the players left them
        reading.dice = dice
        reading.set_by_person.update(set_now)

    def _relabel_stored(
        self,
        reading_id: int,
        old: Action,
        new: Action,
        *,
        source: str,
        named: list[tuple[int, int]] | None = None,
    ) -> None:
        """:meth:`_relabel` for a reading the table no longer holds (turns ago, or before a
        restart), as the store keeps it."""
        try:
            zone, _ = self.store.dice(reading_id)
        except (StoreError, LookupError) as exc:
            log.warning("table: the photo of a fixed throw keeps its labels: %s", exc)
            return
        self._relabelled(reading_id, zone, old, new, source=source, named=named)

    def _relabelled(
        self,
        reading_id: int,
        dice: list[dict[str, JSON]],
        old: Action,
        new: Action,
        *,
        source: str,
        named: list[tuple[int, int]] | None = None,
    ) -> tuple[list[int], list[dict[str, JSON]]] | None:
        """The dice of a reading whose throw ``old`` was fixed to ``new`` that the fix names
        (:func:`_misread`), and the reading's dice with them corrected (those corrections
        stored); None when it names none: which die showed which face is not known."""
        named = _misread(dice, old, new) if named is None else named
        if not named:
            # Which die it was is not known: none of those it may be is a label as read.
            self._doubt_suspects(reading_id, dice, old, new, source=source)
            return None

        def write() -> None:
            for die, value in named:
                self.store.record_correction(reading_id, die, value, events=[], source=source)

        self._aside(write)
        fixed = [dict(d) for d in dice]
        for die, value in named:
            fixed[die] = {**corrected_die(fixed[die], value), "confidence": 1.0}
        return [die for die, _ in named], fixed

    def _append(self, game_id: int, kind: str, action: JSON, *, source: str) -> None:
        """Log an event; a game the store holds as finished refuses it with a reason."""
        try:
            with self._storing():
                self.store.append(game_id, kind, action, source=source)
        except GameFinished as exc:
            raise IllegalAction(
                f"cannot {kind}: the game is over and kept as it ended; start a new game",
                code=TableRefusal.KEPT_AS_ENDED,
            ) from exc

    def redo(self, *, source: str, seen: int | None = None) -> dict[str, JSON]:
        """Take the last undone action again (``IllegalAction`` when there is none)."""
        with self.lock:
            self._check_seen(seen)
            history = self._need()
            if not history.can_redo():
                raise IllegalAction(
                    "nothing to redo: no action has been undone since the last one",
                    code=TableRefusal.NOTHING_TO_REDO,
                )
            assert self.game_id is not None
            self._append(self.game_id, "redo", None, source=source)
            history.redo()
            self.version += 1
            self.view.problem = ""
            if history.game.outcome(history.state) is not None:
                self._finish(self.game_id)
            self._changed()
            return self.state_json()

    @contextlib.contextmanager
    def _storing(self) -> Iterator[None]:
        """A write to the store: a failure of the store itself (a full disk, a read-only or
        damaged file) is the table's problem, said on the phones and the attention LED, and
        raised; the next write that succeeds takes that problem back."""
        try:
            yield
        except (GameFinished, NoSuchGame):
            raise  # refusals of the game's log, not failures of the store
        except StoreError as exc:
            self._store_failed(exc)
            raise
        if self._store_problem:
            log.warning("the game store is written again")
            if self.view.problem == self._store_problem:
                self.view.problem = ""
            self._store_problem = ""

    def _store_failed(self, exc: StoreError) -> None:
        """Show the store's failure as the problem; logged once per new message."""
        with self.lock:
            message = exc.reason  # a full disk is worded by the phones
            if message != self._store_problem:
                log.error("%s", message)
            self._store_problem = message
            self.view.problem = message
            self._changed()

    def _aside(self, write: Callable[[], object]) -> None:
        """A write that follows a stored action (the action stands even if it fails): a failure
        is reported, not raised."""
        with contextlib.suppress(StoreError), self._storing():
            write()

    def _finish(self, game_id: int) -> None:
        """Mark a game finished in the store; a failure is reported, not raised (a game that
        replays to its end is finished whatever the store says)."""
        self._aside(lambda: self.store.finish_game(game_id))

    # -- the coach ------------------------------------------------------------------------------

    def coaches(self) -> bool:
        """Whether a phone may ask for advice now: the coach is on and knows the game."""
        with self.lock:
            if not self.coach or self.history is None:
                return False
            return coach_problem(self.history.game) is None

    def advice(self, *, seen: int | None = None) -> dict[str, JSON]:
        """The coach's advice for the player to move, with the game version it is for.

        Solving takes up to seconds (on a Pi, the first Generał table a minute, then it is kept
        on disk), so it runs outside the table's lock, on the frozen state it was asked for.
        """
        if not self.coach:
            raise IllegalAction(
                "the coach is off at this table: start it with pipcam run --coach"
                " (or coach = true in the configuration)",
                code=TableRefusal.COACH_OFF,
            )
        with self.lock:
            self._check_seen(seen)
            history = self._need()
            game, state, version = history.game, history.state, self.version
        if game.outcome(state) is not None:
            raise IllegalAction(
                "the game is over: there is nothing to advise", code=Refusal.GAME_OVER
            )
        if game.to_move(state) is None:
            raise IllegalAction(
                "nobody is to move: there is nothing to advise", code=TableRefusal.NOBODY_TO_MOVE
            )
        problem = coach_problem(game)
        if problem is not None:
            raise InvalidAction(problem)
        with self._coach_lock:
            coach = self._coaches.get(game)
            if coach is None:
                try:
                    coach = coach_for(game)
                except ValueError as exc:
                    raise InvalidAction(str(exc)) from exc
                self._coaches = {game: coach}  # one game at a time: the last one's tables go
            advice = coach.advise(state)
        out = advice.to_json()
        out["text"] = advice.text()
        out["version"] = version
        return out

    def suggestion(self) -> Action | None:
        """The engine's best option now, which the confirm button accepts.

        Jeopardy games: set aside the best reading; Generał and Drápky: write the category or
        figure worth most now (Drápky stops when no figure is made). Of boxes worth the same,
        the one harder to fill later: lower on the sheet, and chance (which takes any dice) last,
        so 6 6 6 6 5 goes to four of a kind, not three of a kind or chance; when nothing scores,
        the first box on the sheet is given up.
        """
        with self.lock:
            if self.history is None:
                return None
            game, state = self.history.game, self.history.state
            legal = [a for a in game.legal_actions(state) if not isinstance(a, Roll)]
            best_of = getattr(game, "table", None)
            keeps = [a for a in legal if isinstance(a, Keep)]
            if callable(best_of) and keeps:
                shown = game.describe(state).get("best", {}).get("scoring", [])
                best_keep = Keep(shown)
                return best_keep if best_keep in keeps else keeps[-1]
            scores = [a for a in legal if isinstance(a, Score)]
            if scores:
                preview = getattr(game, "preview", None)
                if callable(preview):
                    order = {name: i for i, name in enumerate(game.score_names)}

                    def rank(a: Score) -> tuple[int, bool, int]:
                        points = preview(state, a)
                        # Nothing scores: give up the first box on the sheet (ones), which costs
                        # least; otherwise of equal points the box lower on the sheet.
                        place = order.get(a.category, 0)
                        return (points, a.category != "chance", place if points else -place)

                    return max(scores, key=rank)
                return scores[0]
            if Stop() in legal:
                return Stop()
            return None

    def press(self, button: str, *, source: str = "button") -> dict[str, JSON] | None:
        """A button of the panel (or the keyboard standing in for it)."""
        try:
            if button == "undo":
                return self.undo(source=source)
            if button == "redo":
                return self.redo(source=source)
            if button == "bank":
                return self.act(Bank(), source=source)
            if button == "new_game":
                return self._new_game_button(source)
            if button in ("confirm", "keep"):
                action = self.suggestion()
                if action is None:
                    raise IllegalAction(
                        "nothing to confirm now", code=TableRefusal.NOTHING_TO_CONFIRM
                    )
                return self.act(action, source=source)
        except (IllegalAction, InvalidAction) as exc:
            self.report_problem(exc.as_reason())
            return None
        except StoreError:
            return None  # already the table's problem (_storing): phones and LED say it
        self.report_problem(f"unknown button {button!r}")
        return None

    def _new_game_button(self, source: str) -> dict[str, JSON] | None:
        """A new game with the same players and options; an unfinished one needs a second hold."""
        with self.lock:
            history = self._need()
            assert self.header is not None
            unfinished = history.game.outcome(history.state) is None and len(history) > 0
            now = self.clock()
            if unfinished and now - self._new_game_asked > NEW_GAME_WINDOW:
                self._new_game_asked = now
                self.report_problem(
                    Reason(
                        "the game is not over: hold confirm again within "
                        f"{NEW_GAME_WINDOW:.0f} s to abandon it and start a new one",
                        TableRefusal.HOLD_AGAIN,
                        {"seconds": round(NEW_GAME_WINDOW)},
                    )
                )
                return None
            self._new_game_asked = -NEW_GAME_WINDOW
            return self.new_game(self.header.to_json(), source=source)

    def report_problem(self, text: str) -> None:
        """Say what is wrong (attention LED, phones) without changing the game; a
        :class:`Reason` is worded by the phones in their language."""
        with self.lock:
            self.view.problem = text
            self._changed()

    # -- the camera -----------------------------------------------------------------------------

    def on_reading(
        self,
        reading: ReadingLike,
        *,
        settled_now: bool,
        touched: Callable[[Sequence[float]], bool] | None = None,
    ) -> int | None:
        """A reading of the tray; ``settled_now`` is true once per roll, when the dice come to rest.
        ``touched`` says whether the camera saw a place change while the dice moved before it.

        A settled reading becomes a roll when dice are to be thrown, or a keep when dice were
        taken out of the roll zone; anything else is reported, never guessed. Returns the stored
        reading's id when it was settled (and so stored), else None.
        """
        with self.lock:
            self.view.reading_status = reading.status
            self.view.dice_read = self._left_out([die_json(d) for d in reading.dice])
            self.view.aside_read = self._left_out([die_json(d) for d in reading.set_aside])
            if not settled_now:
                self._changed()
                return None
            with self._storing():  # a StoreError reaches the camera loop, which tries again
                reading_id = self.store.record_reading(
                    self.game_id,
                    self.view.dice_read,
                    status=reading.status,
                    aside=self.view.aside_read,
                )
            history = self.history
            taken = self._taken
            # How the dice lie since the reading the game last took: in this turn, or left by
            # the last one (no throw entered since either way).
            zone: list[dict[str, JSON]] = []
            side: list[dict[str, JSON]] = []
            lying = gone = False
            if taken is not None and history is not None:
                zone, side = taken.zone_now, taken.aside_now
                lying = self._lying(history, taken)
                gone = not lying and self._gone(history, taken)
            self.last_reading = SettledReading(
                id=reading_id,
                game_id=self.game_id,
                dice=self.view.dice_read,
                before=len(history) if history is not None else 0,
                state_before=history.state if history is not None else None,
                actions=[],
                state_after=history.state if history is not None else None,
                lying=zone if lying else None,
                aside=self.view.aside_read,
                lying_aside=side if lying else None,
                gone=[*zone, *side] if gone else None,
                gone_in_zone=len(zone),
                touched=touched,
            )
            if history is None:
                self._changed()
                return reading_id
            grown = self._grown_keep(history, self.last_reading)
            if grown is WAIT:
                self._changed()  # more dice are being taken out: nothing to say yet
                return reading_id
            if isinstance(grown, Keep):
                self._replace(history, [grown])
                return reading_id
            if taken is not None:
                mended = self._bounced_back(history, taken, self.last_reading)
                if mended is not None:
                    self._replace(history, mended, undone=len(taken.actions))
                    return reading_id
            actions, problem = self._meaning(self.view.dice_read, history.state, self.last_reading)
            if problem:
                self.report_problem(problem)
                self._reading_problem = problem
                return reading_id
            if self._reading_problem and self.view.problem == self._reading_problem:
                # The dice were put right (the last of the scoring dice taken out, a die that
                # leant thrown again): what an earlier reading said of them no longer holds.
                self.view.problem = ""
            self._reading_problem = ""
            if not actions:
                lying_then = self.last_reading.lying
                if taken is not None and lying_then is not None:
                    read = [d for d in self.view.dice_read if d["status"] != NO_DIE]
                    if unmoved(lying_then, read) == len(read):
                        taken.left = read
                        taken.left_aside = self.last_reading.aside
                self._changed()
                return reading_id
            try:
                for step in actions:
                    self.act(step, source="camera", made=reading_id)
                    self.last_reading.actions.append(step)
                    self._taken = self.last_reading
            except (IllegalAction, InvalidAction) as exc:
                values = sorted(int(d["value"]) for d in self.view.dice_read)
                self._reading_problem = Reason(
                    f"the dice read {' '.join(map(str, values))}: {exc}",
                    TableRefusal.DICE_READ,
                    {"dice": values, "reason": refusal_json(exc)},
                )
                self.report_problem(self._reading_problem)
            finally:
                self.last_reading.state_after = history.state
            return reading_id

    def _grown_keep(self, history: History[Any], reading: SettledReading) -> Keep | str | None:
        """The set-aside changed by dice taken out after it or put back into the roll zone (or
        both in one move), the others lying where they lay (dice taken out one by one with a
        pause between, or after the keep button; a player who thinks again, and puts a 5 back
        for a 1), if the rules allow it in place of the one taken; ``WAIT`` if they allow it
        only with more dice taken out (one 2 of three); else None. One set-aside is taken per
        throw."""
        if reading.lying is None or not len(history):
            return None
        keep = history.actions[-1]
        dice = [d for d in reading.dice if d["status"] != NO_DIE]
        if not isinstance(keep, Keep) or any(
            d["status"] != "ok" or d["value"] is None for d in dice
        ):
            return None
        before = history.state_after(len(history) - 1)
        game = history.game
        if game.to_move(before) != game.to_move(history.state):
            return None
        legal = game.legal_actions(before)
        back = [int(d["value"]) for d in moved(reading.lying, dice)]
        lay = [d for d in reading.lying if d["status"] != NO_DIE and d["value"] is not None]
        if back:
            # Dice put back among those lying still, with faces of the set-aside: it shrinks,
            # and grows by any taken out in the same move (a 5 put back for a 1).
            out = [int(d["value"]) for d in moved(dice, lay)]
            if len(dice) - len(back) != len(lay) - len(out) or not contains(keep.dice, back):
                return None
            if out and not self._swapped(reading, back, out, still=len(dice) - len(back)):
                return None
            changed = Keep([*remove(keep.dice, back), *out])
            if not changed.dice:
                return None
            if changed in legal:
                return changed
            return WAIT if out and _grows_into(changed, legal) else None
        values = [int(d["value"]) for d in dice]
        on_table = _on_table(game, before)
        if len(values) >= game.roll_size(history.state) or not contains(on_table, values):
            return None
        grown = Keep(remove(on_table, values))
        if not contains(grown.dice, keep.dice):
            return None
        if grown in legal:
            return grown
        return WAIT if _grows_into(grown, legal) else None

    def _bounced_back(
        self, history: History[Any], taken: SettledReading, reading: SettledReading
    ) -> list[Action] | None:
        """A set-aside (or hold) and throw taken from one motion, mended: the dice that left
        the area out of the roll zone since, as many as came into the zone, were dice of that
        throw that had bounced out among the set-aside, thrown again now (alone, the others
        lying where they lay, or with all the others). The set-aside without them and the
        throw of the dice now in the zone, if the rules allow them; else None. Needs a camera
        that sees out of the zone: in the zone alone, which die came back is not known."""
        if (
            reading.lying is None
            or len(taken.actions) != 2
            or len(history) != taken.before + 2
            or not reading.lying_aside
        ):
            return None
        keep, roll = taken.actions
        if not isinstance(keep, Keep) or not isinstance(roll, Roll):
            return None
        dice = [d for d in reading.dice if d["status"] != NO_DIE]
        if any(d["status"] != "ok" or d["value"] is None for d in dice):
            return None
        lay = [d for d in reading.lying if d["status"] != NO_DIE and d["value"] is not None]
        came = [int(d["value"]) for d in moved(lay, dice)]
        still = len(dice) - len(came)
        # Dice gone from the places they lay out of the zone, with the faces read there.
        left = moved(_places(reading.aside), _places(reading.lying_aside))
        gone = [
            int(d["value"])
            for d in reading.lying_aside
            if d["value"] is not None and any(d["box"] == g["box"] for g in left)
        ]
        if (
            not gone
            or moved(reading.lying_aside, reading.aside)  # dice taken out: a hand moved them
            or len(gone) != len(left)
            or len(dice) != len(lay) + len(gone)
            or still not in (0, len(lay))
            or not contains(keep.dice, gone)
        ):
            return None
        mended = Keep(remove(keep.dice, gone))
        if (
            still == len(lay)
            and sorted(came) == sorted(gone)
            and mended in history.game.legal_actions(history.state)
        ):
            return None  # held dice put back by hand, faces as they lay: a new hold (Generał)
        throw = Roll([int(d["value"]) for d in dice])
        if not still:
            # Held dice taken back and thrown with the others in one motion (Generał, Drápky):
            # a new hold and the next throw, where the rules allow them. A bounce is mended only
            # where they do not (no throw left; a set-aside is not taken back).
            try:
                history.game.apply(history.game.apply(history.state, mended), throw)
            except IllegalAction:
                pass
            else:
                return None
        # Nothing left set aside: the throw alone, or after a hold of nothing (Generał, Drápky).
        tries: list[list[Action]] = [[mended, throw]] if mended.dice else [[throw], [mended, throw]]
        for actions in tries:
            state = history.state_after(taken.before)
            try:
                for action in actions:
                    state = history.game.apply(state, action)
            except IllegalAction:
                continue
            return actions
        return None

    @staticmethod
    def _swapped(reading: SettledReading, back: list[int], out: list[int], *, still: int) -> bool:
        """Whether dice of the set-aside put back into the roll zone (``back``) while others
        were taken out (``out``) can be told from a throw of the dice in the zone with those
        faces. A camera that sees out of the zone saw as many dice arrive at new places there
        or leave old ones (one of the two, should it miss a die there; both when no die of the
        zone lies still). Places, not faces: a face misread there moves no die. In the zone
        alone it looks like a throw unless some dice lie still."""
        then, now = reading.lying_aside or [], reading.aside
        if not then and not now:
            return still > 0  # the camera sees the roll zone only
        then, now = _places(then), _places(now)
        arrived, left = len(moved(then, now)), len(moved(now, then))
        if not still:
            return arrived == len(out) and left == len(back)
        return arrived == len(out) or left == len(back)

    def _replace(self, history: History[Any], actions: list[Action], undone: int = 1) -> None:
        """Take ``actions`` in place of the game's last ``undone`` actions, stored in one commit:
        the actions of this reading (a set-aside grown or changed; a set-aside and throw mended
        when a die that bounced out of the roll zone is thrown again)."""
        assert self.game_id is not None
        assert self.last_reading is not None
        with self._storing():
            self.store.replace_last(
                self.game_id,
                *map(action_to_json, actions),
                undone=undone,
                source="camera",
                made=[self.last_reading.id] * len(actions),
            )
        for _ in range(undone):
            history.pop()
        for action in actions:
            history.push(action)
        self.version += 1
        last = self.last_reading
        last.before = len(history) - len(actions)
        last.state_before = history.state_after(last.before)
        last.actions = list(actions)
        last.state_after = history.state
        self._taken = last
        if self._reading_problem and self.view.problem == self._reading_problem:
            self.view.problem = ""
        self._reading_problem = ""
        self._changed()

    def _meaning(
        self, dice: list[dict[str, JSON]], state: Any, reading: SettledReading
    ) -> tuple[list[Action], str | None]:
        """What settled dice (``dice``: those of the roll zone in ``reading``, perhaps corrected)
        mean in ``state``: the actions, or the problem to report.

        ``reading.lying``: the dice of the reading the game last took, if no throw was entered
        since; then whether every die was thrown is known (a die lying where it lay was not), and
        the dice newly out of the roll zone are those set aside in the same motion.
        """
        lying = reading.lying
        dice = [d for d in dice if d["status"] != NO_DIE]  # a person said nothing is there
        doubtful = [d for d in dice if d["status"] != "ok" or d["value"] is None]
        if doubtful and all(d.get(CUT) for d in doubtful):
            # The camera's view ends across these dice (a tray larger than the view, no roll
            # zone set): nothing lies over them to move, but they can be slid into view.
            what = "; ".join(f"a die at {d['box']} is cut by the camera's edge" for d in doubtful)
            return [], Reason(
                f"{what}: slide it into the camera's view without turning it, or correct it on"
                " a phone",
                TableRefusal.OUT_OF_VIEW,
                {"n": len(doubtful)},
            )
        if doubtful and all(d.get(HIDDEN) for d in doubtful):
            # The camera saw something over these dice: moving it lets the camera read them
            # where they lie, while throwing them again would cost the throw.
            what = "; ".join(
                f"a die at {d['box']} is "
                + ("cut by the camera's edge" if d.get(CUT) else "partly hidden")
                for d in doubtful
            )
            return [], Reason(
                f"{what}: move what covers it or correct it on a phone",
                TableRefusal.COVERED,
                {"n": len(doubtful)},
            )
        if doubtful:
            words = {"cocked": "leans on something", "uncertain": "cannot be read"}
            what = "; ".join(
                f"a die at {d['box']} {words.get(str(d['status']), d['status'])}" for d in doubtful
            )
            return [], Reason(
                f"{what}: throw it again or correct it on a phone",
                TableRefusal.DOUBTFUL,
                {"n": len(doubtful)},
            )
        values = [int(d["value"]) for d in dice]
        motion = None
        if lying is not None:
            lay = [d for d in lying if d["status"] != NO_DIE and d["value"] is not None]
            now = [d for d in reading.aside if d["status"] == "ok" and d["value"] is not None]
            then = [d for d in reading.lying_aside or [] if d["value"] is not None]
            # Out of the zone, dice are paired by place, whatever their faces: the unpaired are
            # dice taken out there (``out``) or taken from there (``back``).
            pairs = _by_place(then, now)
            paired = {id(die) for _, die in pairs}
            out = Counter(int(d["value"]) for d in now if id(d) not in paired)
            kept = {i for i, _ in pairs}
            back = Counter(int(d["value"]) for i, d in enumerate(then) if i not in kept)
            # A die read with another face where one lay was put there in its place (a held 2
            # taken back into play, a 3 put where it lay) only if the roll zone shows it: the 2
            # came into it, the 3 left it. Else it is the same die misread (a die does not turn
            # over by itself), and no hold changed.
            shifted = moved(lay, dice)  # dice in the zone not where they lay
            came = Counter(int(d["value"]) for d in shifted)
            left = Counter(int(d["value"]) for d in moved(dice, lay))
            for i, die in pairs:
                was, read = int(then[i]["value"]), int(die["value"])
                if was != read and came[was] and left[read]:
                    came[was] -= 1
                    left[read] -= 1
                    out[read] += 1
                    back[was] += 1
            # Dice fewer than before that did not come into the zone were missed by the camera
            # (or went off the table): they were not put back into play.
            missed = len(lay) + len(then) - len(dice) - len(now)
            for face in list((back - out).elements())[: max(0, missed)]:
                back[face] -= 1
            touched = reading.touched
            untouched = None
            if touched is not None:
                # A thrown die can land where a die lay, showing its face; its place was touched
                # when it was picked up. One left lying, where no hand passed, was not thrown.
                untouched = unmoved([d for d in lay if not touched(d["box"])], dice)
            motion = Motion(
                lay=[int(d["value"]) for d in lay],
                still=len(dice) - len(shifted),
                moved=[int(d["value"]) for d in shifted],
                out=sorted((out - back).elements()),  # a die moved within the area is neither
                back=sorted((back - out).elements()),
                untouched=untouched,
            )
        if reading.gone is not None and self._need().game.roll_size(state):
            # Between turns: dice lying where the last turn left them, showing the same faces,
            # are being gathered (some picked up, those out of the zone pushed into it), not
            # thrown. One such die may be chance (a throw landing on an old place); two are not,
            # nor is one with the others showing the faces of the dice out of the zone (but for
            # one die, which the camera may have missed or misread there), nor every die out of
            # the zone pushed into it with its face.
            still = unmoved(reading.gone, dice)
            faces = Counter(int(d["value"]) for d in reading.gone if d["value"] is not None)
            extra, lacking = Counter(values) - faces, faces - Counter(values)
            pushed = (not extra and not lacking and (still or not reading.gone_in_zone)) or (
                still > 0 and extra.total() <= 1 and lacking.total() <= 1
            )
            if still >= 2 or (values and still == len(values)) or pushed:
                return [], None
        try:
            return self._action_from_dice(values, state, motion) or [], None
        except (IllegalAction, InvalidAction) as exc:
            return [], exc.as_reason()

    def correct(
        self, die: int, value: int, *, source: str = "phone", confidence: float = 1.0
    ) -> dict[str, JSON]:
        """Correct die ``die`` (an index into ``dice_read``) of the last settled reading to
        ``value``, or to 0: no die is there (something the camera took for one).

        The correction is stored with the reading it replaced. The corrected reading then means
        what a camera reading would: a refused roll now goes through, and a roll already taken
        from the misread dice is undone and the corrected roll applied, all in one stored step.
        That needs the misread's actions to be the last ones of the game (``IllegalAction``
        otherwise); a bad index or value is an ``InvalidAction``. ``confidence`` is how sure
        the one correcting is: a person, 1; the camera reading the die again, that reading's.
        """
        with self.lock:
            last = self.last_reading
            if last is None:
                raise IllegalAction(
                    "there is no reading to correct: no dice have settled yet",
                    code=TableRefusal.NO_READING,
                )
            if last.game_id != self.game_id:
                raise IllegalAction(
                    "there is no reading to correct: the last dice were read before this game "
                    "started; throw them again",
                    code=TableRefusal.READING_BEFORE_GAME,
                )
            # The dice of the roll zone, then those out of it (a set-aside or held die misread).
            n = len(last.dice) + len(last.aside)
            if isinstance(die, bool) or not isinstance(die, int) or not 0 <= die < n:
                out = f" ({len(last.aside)} of them out of the roll zone)" if last.aside else ""
                raise InvalidAction(
                    f"the last reading has {n} dice{out} (0 to {n - 1}); there is no die {die!r}"
                )
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 6:
                raise InvalidAction(f"a die shows 1 to 6, or 0 when no die is there, not {value!r}")
            dice = [dict(d) for d in last.dice]
            aside = [dict(d) for d in last.aside]
            where, k = (dice, die) if die < len(dice) else (aside, die - len(dice))
            as_read = where[k]
            # A person is sure; the camera reading the die again is as sure as that reading.
            where[k] = {**corrected_die(where[k], value), "confidence": confidence}
            history = self.history
            actions: list[Action] = []
            problem: str | None = None
            events: list[tuple[str, JSON]] = []
            reopen = False
            if history is not None:
                self._check_unmoved(history, last)
                actions, problem = self._meaning(
                    dice, last.state_before, replace(last, aside=aside)
                )
                state = last.state_before
                for step in actions:  # every step must apply before anything is stored
                    try:
                        state = history.game.apply(state, step)
                    except IllegalAction as exc:
                        actions, problem = [], exc.as_reason()
                        break
                if actions != last.actions:
                    # A misread roll that ended the game: the game goes on again if it must.
                    reopen = bool(last.actions) and history.game.outcome(history.state) is not None
                    events = [("undo", None)] * len(last.actions)
                    events += [("action", action_to_json(a)) for a in actions]
            try:
                with self._storing():
                    self.store.record_correction(
                        last.id, die, value, events=events, source=source, reopen=reopen
                    )
            except GameFinished as exc:
                raise IllegalAction(
                    "cannot correct the reading: the game is over and kept as it ended",
                    code=TableRefusal.KEPT_AS_ENDED,
                ) from exc
            if history is not None and events:
                for _ in last.actions:
                    history.pop()
                for step in actions:
                    history.push(step)
                last.actions = list(actions)
                last.state_after = history.state
                if actions:
                    self._taken = last
                self.version += 1
                if self.game_id is not None and history.game.outcome(history.state) is not None:
                    self._finish(self.game_id)
            if source != "camera":
                last.set_by_person.add(die)
                self._said(as_read, value)
            if self.view.dice_read is last.dice:
                self.view.dice_read = dice
            if self.view.aside_read is last.aside:
                self.view.aside_read = aside
            last.dice, last.aside = dice, aside
            self.view.problem = problem or ""
            self._changed()
            return self.state_json()

    def look_again(self, reading: ReadingLike) -> bool:
        """Whether ``reading`` is of the dice of the last settled reading, still lying where
        they lay, read again after the camera was set right: its light (``vision.light``; a
        roll read on a blown-out or dark picture may have misread a die or left it unread), or
        its roll zone (``vision.calibrate.TrayFollower``; dice thrown into a pushed tray's far
        part were taken for dice set aside). If so, the table makes of it what it can; if not
        (other dice, or dice elsewhere), the caller hands it over as a new roll.

        - The last reading was refused (or made nothing) and nothing has happened since: when
          this reading differs, it is taken instead, as dice that have just settled.
        - It made its moves, which are still the game's last: each die of the roll zone read
          surely (``ok``) as another value is corrected, as a phone would correct it, by the
          camera. Dice now split otherwise between the zone and out of it are left as they
          were taken (a phone can correct them).
        - The game has gone on since: correcting is then for the players.
        """
        with self.lock:
            last = self.last_reading
            history = self.history
            if last is None or last.game_id != self.game_id or history is None:
                return False
            again = self._left_out([die_json(d) for d in reading.dice])
            aside = self._left_out([die_json(d) for d in reading.set_aside])
            pairs = _same_dice(last.dice, again)
            if pairs is None and _same_dice([*last.dice, *last.aside], [*again, *aside]) is None:
                return False
            # The phones show the dice as last read, whatever a moment's motion said.
            self.view.reading_status = "settled"
            self.view.dice_read, self.view.aside_read = last.dice, last.aside
            self._changed()
            if len(history) != last.before + len(last.actions) or not self._in_effect(
                history, last
            ):
                return True
            if last.set_by_person:
                return True  # the players have set this reading; their word stands
            if not last.actions:
                if _seen(again) != _seen(last.dice) or _seen(aside) != _seen(last.aside):
                    log.info("camera: the dice read again: %s", _seen(again))
                    self.on_reading(reading, settled_now=True)
                return True
            for index, die in pairs or []:
                value, was = die["value"], last.dice[index]["value"]
                if die["status"] != "ok" or not isinstance(value, int) or value == was:
                    continue
                sure = die["confidence"]
                try:
                    self.correct(
                        index,
                        value,
                        source="camera",
                        confidence=float(sure) if isinstance(sure, int | float) else 0.0,
                    )
                except (IllegalAction, InvalidAction) as exc:
                    log.info("camera: die %d read again as %d, kept: %s", index, value, exc)
                    break
                log.info("camera: die %d read again: %s -> %d", index, was, value)
            return True

    def _said(self, die: dict[str, JSON], value: int) -> None:
        """Remember that a person said no die is where ``die`` was read (``value`` 0), or
        forget such a place once a person gave a die there a value."""
        self._no_die = [p for p in self._no_die if iou(p["box"], die["box"]) < NO_DIE_PLACE]
        if value == 0 and die["status"] != NO_DIE:
            self._no_die = [die, *self._no_die][:NO_DIE_PLACES]

    def marks(self, reading_id: int) -> tuple[list[dict[str, JSON]], list[dict[str, JSON]]] | None:
        """The dice of reading ``reading_id`` as the table holds them now (corrections made),
        those of the roll zone and those out of it; None once another reading is the last."""
        with self.lock:
            last = self.last_reading
            if last is None or last.id != reading_id:
                return None
            return list(last.dice), list(last.aside)

    def stored_marks(
        self, reading_id: int
    ) -> tuple[list[dict[str, JSON]], list[dict[str, JSON]]] | None:
        """The dice of any stored reading (an earlier throw's, for its photo) as the players left
        them: the roll zone's and those out of it; None when there is no such reading."""
        try:
            zone, aside = self.store.dice(reading_id)
        except LookupError:
            return None
        return self._in_doubt(reading_id, zone), aside

    def _in_doubt(self, reading: int, zone: list[dict[str, JSON]]) -> list[dict[str, JSON]]:
        """The dice of a reading's roll zone with those a fix left in doubt marked unsure
        (drawn so on its photo): their face is the camera's, which the fix put in question."""
        doubts = self._open_doubts(reading)
        return [{**d, "status": "uncertain"} if i in doubts else d for i, d in enumerate(zone)]

    def tray_moved(
        self, before: tuple[int, int, int, int], after: tuple[int, int, int, int]
    ) -> None:
        """The tray was pushed from ``before`` to ``after`` (frame pixels): the places said to
        hold no die that lay on it (a pip printed on the tray, a stain) go with it; those off
        it (a knob of the table) stay where they are."""
        dx = (after[0] + after[2] - before[0] - before[2]) // 2
        dy = (after[1] + after[3] - before[1] - before[3]) // 2
        with self.lock:
            moved = []
            for place in self._no_die:
                x0, y0, x1, y1 = _box(place)
                cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
                if before[0] <= cx <= before[2] and before[1] <= cy <= before[3]:
                    place = {**place, "box": [x0 + dx, y0 + dy, x1 + dx, y1 + dy]}
                moved.append(place)
            self._no_die = moved

    def _left_out(self, dice: list[dict[str, JSON]]) -> list[dict[str, JSON]]:
        """``dice`` with those read as before at a place said to hold no die marked so."""
        return [
            corrected_die(d, 0)
            if any(
                p["value"] == d["value"] and iou(p["box"], d["box"]) >= NO_DIE_PLACE
                for p in self._no_die
            )
            else d
            for d in dice
        ]

    def _in_effect(self, history: History[Any], reading: SettledReading) -> bool:
        """Whether the actions ``reading`` made are in effect, as it left the game (later
        actions may follow them)."""
        end = reading.before + len(reading.actions)
        return (
            reading.game_id == self.game_id
            and len(history) >= end
            and history.actions[reading.before : end] == reading.actions
            and history.state_after(end) == reading.state_after
        )

    def _lying(self, history: History[Any], reading: SettledReading) -> bool:
        """Whether the dice may still lie as ``reading`` read them: the actions it made are in
        effect, no throw has been entered since, and the same player is to move. A button or a
        phone moves no die, so the dice left in the roll zone after the keep button are not
        thrown either; the next player gathers every die, and a die of that throw landing on an
        old place with its old face is no reason to refuse it."""
        since = history.actions[reading.before + len(reading.actions) :]
        game = history.game
        return (
            self._in_effect(history, reading)
            and not any(isinstance(a, Roll) for a in since)
            and game.to_move(history.state) == game.to_move(reading.state_after)
        )

    def _gone(self, history: History[Any], reading: SettledReading) -> bool:
        """Whether the dice may lie as ``reading`` read them although the turn has passed: its
        actions are in effect and no throw has been entered since."""
        since = history.actions[reading.before + len(reading.actions) :]
        return self._in_effect(history, reading) and not any(isinstance(a, Roll) for a in since)

    def _check_unmoved(self, history: History[Any], last: SettledReading) -> None:
        """Refuse to correct a reading when the game has gone on since it was read."""
        if not self._in_effect(history, last) or len(history) != last.before + len(last.actions):
            made = " then ".join(map(str, last.actions)) or "nothing"
            raise IllegalAction(
                f"cannot correct the reading: the game has gone on since it was read (it made "
                f"{made}); undo back to it first",
                code=TableRefusal.GONE_ON,
            )

    def _action_from_dice(
        self, values: list[int], state: Any, motion: Motion | None = None
    ) -> list[Action] | None:
        """What a settled set of dice in the roll zone means in ``state``, or None if nothing.

        ``motion``: what moved since the reading the game last took (None: not known). A throw
        moves every die it throws, so dice that did not move are no throw (a die picked up and
        put back, one nudged), and the same faces thrown again are.
        """
        still = None if motion is None else motion.still
        game = self._need().game
        phase = game.phase(state)
        if phase is Phase.FINISHED:
            return None
        if phase is Phase.SETUP:
            # Na zakázaná čísla's forbidden numbers: two dice thrown (a double is refused by the
            # rules, and thrown again).
            return [Forbidden(values)] if values and still != len(values) else None
        n = game.roll_size(state)
        if n:
            if not values:
                return None
            if still == len(values):
                # No die moved: dice are being taken out (after the keep button, 1000's scoring
                # dice) or gathered up to be thrown with those out of the zone (hot dice). A
                # count that is wrong is said when the dice are thrown.
                return None
            if (
                motion is not None
                and len(values) < n
                and not still
                and not motion.back
                and len(motion.out) == n - len(values)
            ):
                # Every die in the zone was thrown, and as many as are missing arrived out of
                # it: they bounced out, and are thrown again (else the set-aside is unknown).
                raise IllegalAction(
                    f"{len(motion.out)} of the {n} dice thrown landed out of the roll zone "
                    f"({' '.join(map(str, motion.out))}): throw "
                    f"{'it' if len(motion.out) == 1 else 'them'} into the zone again, or type "
                    "the throw on a phone",
                    code=TableRefusal.LANDED_OUT,
                    params={"dice": motion.out, "n": len(motion.out), "thrown": n},
                )
            if len(values) > n:
                raise IllegalAction(
                    f"{len(values)} dice are in the roll zone but {n} were to be thrown; "
                    "take the others out, correct the reading, or type the throw on a phone",
                    code=TableRefusal.ROLL_ZONE_COUNT,
                    params={"read": len(values), "n": n},
                )
            if len(values) < n:
                # Too few: taking dice out would not help. A die left in a hand, or one the
                # camera cannot see (under a card: the reader drops most dice half covered).
                raise IllegalAction(
                    f"only {len(values)} dice are seen in the roll zone but {n} were to be"
                    " thrown; throw any left out, move whatever hides a die from the camera,"
                    " correct the reading, or type the throw on a phone",
                    code=TableRefusal.ROLL_ZONE_MISSING,
                    params={"read": len(values), "n": n},
                )
            if still == n:
                return None  # the dice as they lay, those that scored taken out (1000)
            if lying := _left_lying(motion):
                raise self._not_thrown(lying, n)
            return [Roll(values)]
        on_table = _on_table(game, state)
        same = sorted(values) == sorted(on_table)
        if motion is not None and contains(on_table, motion.lay):
            again = self._after_motion(values, state, on_table, motion)
            if again is not None:
                return again
        if same:
            return None  # the dice as they were thrown, or thrown again where no throw is
        if on_table and len(values) < len(on_table) and contains(on_table, values):
            keep = Keep(remove(on_table, values))
            legal = game.legal_actions(state)
            if still == len(values) and keep not in legal and _grows_into(keep, legal):
                return None  # one 2 of three taken out: the others are coming
            return [keep]
        if on_table:
            # Every die thrown again without holding any (Generał, Drápky), where it is not
            # known which dice lay in the roll zone.
            again = self._thrown_again(values, state, on_table, on_table)
            if again is not None:
                if lying := _left_lying(motion):
                    raise self._not_thrown(lying, len(values))
                return again
        raise IllegalAction(
            f"the dice in the roll zone ({' '.join(map(str, sorted(values)))}) do not follow from "
            f"the dice on the table ({' '.join(map(str, sorted(on_table)))}); "
            "set aside dice by taking them out of the roll zone",
            code=TableRefusal.NOT_FOLLOWING,
            params={"dice": sorted(values), "table": sorted(on_table)},
        )

    def _after_motion(
        self, values: list[int], state: Any, on_table: list[int], motion: Motion
    ) -> list[Action] | None:
        """The actions that the dice's motion since the reading the game last took shows, or
        None when the faces alone must tell (see :meth:`_action_from_dice`)."""
        game = self._need().game
        held = remove(on_table, motion.lay)  # out of the roll zone then (Generał, Drápky)
        if not contains(held, motion.back):
            # Dice set aside earlier in the turn gathered up again (hot dice): no hold changed.
            motion = replace(motion, back=[])
        if (
            motion.back
            and sorted(motion.moved) == motion.back
            and contains(motion.lay, motion.out)
            and motion.still == len(motion.lay) - len(motion.out)
        ):
            # Held dice put back into the zone by hand, showing their faces, and others taken
            # out: a new hold, no throw.
            keep = Keep([*remove(held, motion.back), *motion.out])
            return [keep] if keep in game.legal_actions(state) else None
        if motion.still or not values:
            return None
        # Every die in the roll zone moved: those that lay there were thrown again, holding
        # the others (those out of it), whatever faces came up (the same ones too).
        again = None if motion.back else self._thrown_again(values, state, on_table, motion.lay)
        if again is not None:
            return again
        return self._aside_and_thrown(values, state, on_table, motion)

    def _thrown_again(
        self, values: list[int], state: Any, on_table: list[int], lay: list[int]
    ) -> list[Action] | None:
        """Hold what is not in the roll zone and throw what lay there (Generał's third throw
        of the two dice its second threw), if the rules allow that here; else None."""
        if len(values) != len(lay) or not contains(on_table, lay):
            return None
        game = self._need().game
        hold = Keep(remove(on_table, lay))
        if hold not in game.legal_actions(state):
            return None
        return (
            [hold, Roll(values)] if game.roll_size(game.apply(state, hold)) == len(values) else None
        )

    def _aside_and_thrown(
        self, values: list[int], state: Any, on_table: list[int], motion: Motion
    ) -> list[Action] | None:
        """Dice taken out of the roll zone (and held ones put back) as the rest were thrown, in
        one motion (no reading in between): the set-aside or hold that leaves as many dice to
        throw as were thrown, then the throw. Which dice went out is what the camera saw arrive
        out of the zone, or the only set-aside the rules allow; else the table asks
        (``WHICH_ASIDE``). None when no set-aside leaves that many dice to throw."""
        held = remove(remove(on_table, motion.lay), motion.back)
        game = self._need().game
        legal = game.legal_actions(state)
        choices: list[tuple[Keep, tuple[int, ...]]] = []
        for out in sub_multisets(motion.lay):
            keep = Keep([*held, *out])
            if (
                (out or motion.back)
                and keep in legal
                and game.roll_size(game.apply(state, keep)) == len(values)
            ):
                choices.append((keep, out))
        seen = [keep for keep, out in choices if list(out) == motion.out]
        # Dice seen to arrive out of the zone that are no set-aside of these (a die that bounced
        # out of the zone, a face misread) make the only set-aside the rules allow a guess.
        if len(seen) == 1 or (len(choices) == 1 and not motion.out):
            return [(seen or [choices[0][0]])[0], Roll(values)]
        if not choices:
            return None
        outs = [list(out) for _, out in choices]
        shown = " or ".join(" ".join(map(str, out)) for out in outs[:MAX_CHOICES])
        more = " or another" if len(outs) > MAX_CHOICES else ""
        raise IllegalAction(
            f"{len(outs[0])} dice left the roll zone while {len(values)} were thrown, and "
            f"which were set aside is not known "
            f"({shown}{more}): enter the set-aside and the throw on a phone",
            code=TableRefusal.WHICH_ASIDE,
            params={
                "out": len(outs[0]),
                "dice": sorted(values),
                "choices": outs[:MAX_CHOICES],
                "keeps": [list(keep.dice) for keep, _ in choices[:MAX_CHOICES]],
                "more": len(outs) > MAX_CHOICES,
            },
        )

    @staticmethod
    def _not_thrown(still: int, n: int) -> IllegalAction:
        dice = "die lies" if still == 1 else "dice lie"
        return IllegalAction(
            f"{still} {dice} where {'it' if still == 1 else 'they'} lay, showing the same "
            f"{'face' if still == 1 else 'faces'}: that was no throw; throw all {n} dice",
            code=TableRefusal.LEFT_LYING,
            params={"still": still, "n": n},
        )

    def reading_in_play(self) -> int | None:
        """The stored id of the last settled reading, which a phone can still correct."""
        last = self.last_reading
        return None if last is None else last.id

    def camera_status(self, status: str) -> None:
        """The camera is "ok", "missing" or "failed" (unplugged mid-game: the table carries on),
        or "none": the table runs without one and the dice are typed."""
        with self.lock:
            if status != self.view.camera:
                self.view.camera = status
                self._changed()

    def camera_notice(self, who: str, notice: str) -> None:
        """``who`` (the light keeper, the tray follower, the focus watch) asks the table's owner
        to mend something at the table (``notice``: "dark", "bright", "tray_size", "blurred"),
        or no longer ("")."""
        if notice and notice not in CAMERA_NOTICES:
            raise ValueError(
                f"camera notice {notice!r} from {who!r} is none the phones can word; add it to"
                f" CAMERA_NOTICES with its words (camera.notice.{notice}) in web/static/i18n"
            )
        with self.lock:
            if self.view.camera_notices.get(who, "") != notice:
                self.view.camera_notices[who] = notice
                self._changed()

    def photos_kept(self, count: int) -> None:
        """The table keeps photos of the tray, ``count`` of them now (said at the start and after
        each photo): every phone says so, and counts the teach sheet's questions again."""
        with self.lock:
            self.view.photos = count
            self.view.photo_seq += 1
            self._changed()

    def model_in_use(self, tuned: str | None) -> None:
        """The face model read with was tuned on this table's photos on day ``tuned`` (ISO), or
        was not (None): every phone says so, since the players' corrections are what taught it."""
        with self.lock:
            if tuned != self.view.tuned:
                self.view.tuned = tuned
                self._changed()

    # -- views ----------------------------------------------------------------------------------

    def state_json(self) -> dict[str, JSON]:
        """The ``GET /api/state`` object: the replay fields, the dice last read, the problem."""
        with self.lock:
            base: dict[str, JSON]
            if self.history is None:
                base = {
                    "game": None,
                    "players": [],
                    "finished": False,
                    "winners": [],
                    "to_move": None,
                }
            else:
                base = self.history.game.state_json(self.history.state)
                base["actions"] = len(self.history)
                base["can_undo"] = len(self.history) > 0
                base["can_redo"] = self.history.can_redo()
                suggestion = self.suggestion()
                base["suggestion"] = action_to_json(suggestion) if suggestion else None
            problem = refusal_json(self.view.problem)
            base["table"] = {
                "reading": self.view.reading_status,
                "dice_read": self.view.dice_read,
                "aside_read": self.view.aside_read,
                "problem": problem["detail"],
                "problem_code": problem.get("code"),
                "problem_params": problem.get("params", {}),
                "camera": self.view.camera,
                "camera_notices": sorted(set(self.view.camera_notices.values()) - {""}),
                "photos": self.view.photos,
                "photo_seq": self.view.photo_seq,
                "tuned": self.view.tuned,
                "seq": self.view.seq,
                "game_id": self.game_id,
                "version": self.version,
                "coach": self.coaches(),
            }
            return base

    def timeline(self) -> list[Step]:
        """The actions in effect, replayed: who took each and the scores after it."""
        with self.lock:
            history = self._need()
            cached = self._timeline
            if cached is not None and cached[0] is history.state:
                return cached[1]
            game, state = history.game, history.root
            steps = []
            names = game.players(state)
            for action in history.actions:
                mover = game.to_move(state)
                state = game.apply(state, action)
                player = names[mover] if mover is not None else None
                steps.append(Step(player, action, game.totals(state)))
            # States are never reused by another stack, so the top state names the timeline.
            self._timeline = (history.state, steps)
            return steps

    def history_json(self) -> dict[str, JSON]:
        """The ``GET /api/history`` object: every action in effect, oldest first, in words.

        Without a game the list is empty.
        """
        with self.lock:
            history = self.history
            if history is None:
                return {"entries": [], "can_undo": False, "can_redo": False}
            steps = self.timeline()
            made: list[int | None] = []
            if self.game_id is not None:
                try:
                    made = self.store.made(self.game_id)
                except StoreError as exc:  # the history still shows, without its photos
                    log.warning("table: which reading made each step is not known: %s", exc)
            made += [None] * (len(steps) - len(made))
            entries: list[JSON] = [
                {
                    "index": i,
                    "player": step.player,
                    "action": action_to_json(step.action),
                    "text": str(step.action),
                    "reading": reading,
                }
                for i, (step, reading) in enumerate(zip(steps, made, strict=False))
            ]
            return {
                "entries": entries,
                "can_undo": len(history) > 0,
                "can_redo": history.can_redo(),
            }

    def score_series(self) -> dict[str, JSON]:
        """Everyone's score at the start (``points[0]``) and after each action k (``points[k]``).

        One point per action rather than per turn: every game has actions, while turns end
        differently in each (a bank, a written category, a placed stone). Without a game both
        lists are empty.
        """
        with self.lock:
            history = self.history
            if history is None:
                return {"players": [], "points": []}
            game = history.game
            start = list(game.totals(history.root))
            points: list[JSON] = [start, *(list(step.totals) for step in self.timeline())]
            return {"players": list(game.players(history.root)), "points": points}

    def face_counts(self) -> dict[int, int]:
        """How often each face came up in the rolls in effect of every game at this table.

        Rolls, not readings: the dice left in the roll zone after a keep are read again, and
        counting them twice would make fair dice look short of the faces that score.
        An undone (misread) roll is not counted; its corrected roll is.
        """
        with self.lock:
            counts = dict.fromkeys(range(1, 7), 0)
            for summary in self.store.games():
                if summary.id == self.game_id and self.history is not None:
                    rolls = [list(a.dice) for a in self.history.actions if isinstance(a, Roll)]
                    per_game = _faces(rolls)
                elif summary.id in self._finished_counts:
                    per_game = self._finished_counts[summary.id]
                else:
                    per_game = _faces(_rolls_in_effect(self.store.game(summary.id).events))
                    if summary.finished is not None:
                        self._finished_counts[summary.id] = per_game
                for face, n in per_game.items():
                    counts[face] = counts.get(face, 0) + n
            return counts

    def earlier_games(self, most: int = EARLIER_GAMES) -> list[dict[str, JSON]]:
        """The games played here before the current one, newest first, as ``GET /api/games``
        gives them: who played, their scores when it stopped, and the winners if it ended.

        A game abandoned before its first action is left out, as is one these rules cannot
        replay (stored by another version). So is the current game, even when it has ended.
        """
        with self.lock:
            found: list[dict[str, JSON]] = []
            for summary in reversed(self.store.games()):
                if len(found) >= most:
                    break
                if summary.id == self.game_id or summary.events == 0:
                    continue
                if summary.id not in self._earlier:
                    # Only the newest game can change (undo of its ending), and that one is the
                    # current game: any other, once seen, stays as it is.
                    self._earlier[summary.id] = self._earlier_json(summary)
                entry = self._earlier[summary.id]
                if entry is not None:
                    found.append(entry)
            return found

    def _earlier_json(self, summary: GameSummary) -> dict[str, JSON] | None:
        try:
            history = replay_events(self.store.game(summary.id))
        except StoreError as exc:
            log.warning("game %d is left out of the earlier games: %s", summary.id, exc)
            return None
        game, state = history.game, history.state
        names = game.players(state)
        out = game.outcome(state)
        return {
            "id": summary.id,
            "game": game.game_id,
            "started": summary.started,
            "finished": summary.finished,
            "ended": out is not None,
            "players": [
                {"name": n, "score": s} for n, s in zip(names, game.totals(state), strict=True)
            ],
            "winners": [names[i] for i in out.winners] if out else [],
            "ending": out.reason.to_json() if out else None,
            "actions": len(history),
        }

    def earlier_transcript(self, game_id: int) -> str:
        """A stored game's transcript; ``NoSuchGame`` (a ``LookupError``) when there is none
        with that id, or it cannot be replayed by these rules."""
        try:
            return self.store.transcript(game_id)
        except NoSuchGame as exc:
            raise NoSuchGame(f"there is no game {game_id} at this table") from exc
        except StoreError as exc:
            raise NoSuchGame(f"game {game_id} cannot be replayed here: {exc}") from exc

    def transcript(self) -> str:
        """The current game as a PROTOCOL.md transcript."""
        with self.lock:
            history = self._need()
            assert self.header is not None
            return dump(history.game, list(self.header.players), history.actions)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with the new state after every change; returns the unsubscriber."""
        with self.lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self.lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _changed(self) -> None:
        self.view.seq += 1
        state = self.state_json()
        for listener in list(self._listeners):
            try:
                listener(state)
            except Exception:  # one broken listener (a phone) must not stop the table
                continue


WAIT = "wait"  # Table._grown_keep: more dice are being taken out


def _by_place(
    lying: Sequence[dict[str, JSON]], dice: Sequence[dict[str, JSON]]
) -> list[tuple[int, dict[str, JSON]]]:
    """Each die of ``lying`` (by index) with the die of ``dice`` lying at its place (the best
    box overlap, at least ``SAME_PLACE``), whatever their faces; each die in one pair at most."""
    left = list(dice)
    pairs = []
    for index, old in enumerate(lying):
        match = max(left, key=lambda d: iou(old["box"], d["box"]), default=None)
        if match is not None and iou(old["box"], match["box"]) >= SAME_PLACE:
            left.remove(match)
            pairs.append((index, match))
    return pairs


_KINDS: dict[type, tuple[type, ...]] = {Score: (Score, Stop), Stop: (Score,), Keep: (Keep,)}
"""The steps a phone fixes by choosing, and what they may become: a figure written (or a turn
ended without one) into another figure; a set-aside into another. A throw is typed."""


def _left_lying(motion: Motion | None) -> int:
    """How many dice of a throw surely lay still: where a die lay, showing its face, with no
    touch seen there (without touches known, every die found so)."""
    if motion is None:
        return 0
    return motion.still if motion.untouched is None else motion.untouched


def _box(die: dict[str, JSON]) -> tuple[int, int, int, int]:
    """The box of a die of a reading (``die_json``), in frame pixels."""
    box = die["box"]
    assert isinstance(box, list | tuple)
    x0, y0, x1, y1 = (int(v) for v in box if isinstance(v, int | float))
    return x0, y0, x1, y1


def _retaken(history: History[Any], index: int, action: Action) -> list[Action]:
    """The steps after ``index`` as they are taken again with ``action`` in its place.

    What a fix means follows it: a set-aside (a hold) of the same turn that named a die by the
    face the fixed throw misread names it by its own; a later figure of the same player in the
    category the fix now takes goes into the one it left (the two written the wrong way round).
    :class:`IllegalAction` when ``action`` does not follow, or (``fix_breaks``) a later step.
    """
    game = history.game
    state = game.apply(history.state_after(index), action)
    player = game.to_move(history.state_after(index))
    swap = _one_die(history.actions[index], action)
    trade = _traded(history.actions[index], action)
    later = history.actions[index + 1 :]
    for at, step in enumerate(later, start=index + 2):
        try:
            if swap is not None and game.to_move(state) == player:
                step = _with_die(game, state, step, *swap)
            else:
                swap = None
            if trade is not None and game.to_move(state) == player and step == trade[0]:
                step = _or_instead(game, state, step, trade[1])
                trade = None
            state = game.apply(state, step)
        except IllegalAction as exc:
            raise IllegalAction(
                f"with step {index + 1} fixed, step {at} ({step}) no longer follows the"
                f" rules: {exc}; undo back to step {at} first, then fix step {index + 1}",
                code=TableRefusal.FIX_BREAKS,
                params={"step": index + 1, "at": at, "reason": refusal_json(exc)},
            ) from exc
        later[at - index - 2] = step
    return later


def _traded(old: Action, new: Action) -> tuple[Score, Score] | None:
    """The figure a fix now takes and the one it gave up, when one figure is fixed to another."""
    if isinstance(old, Score) and isinstance(new, Score):
        return new, old
    return None


def _or_instead(game: Game[Any, Any], state: Any, step: Action, instead: Action) -> Action:
    """``step`` as it stands when the rules take it; else ``instead``."""
    try:
        game.apply(state, step)
    except IllegalAction:
        return instead
    return step


def _faces_fixed(old: Action, new: Action) -> tuple[Counter[int], Counter[int]]:
    """The faces a fix of a throw from ``old`` to ``new`` took out and put in (none unless both
    are throws)."""
    if not isinstance(old, Roll) or not isinstance(new, Roll):
        return Counter(), Counter()
    return Counter(old.dice) - Counter(new.dice), Counter(new.dice) - Counter(old.dice)


def _misread(dice: Sequence[dict[str, JSON]], old: Action, new: Action) -> list[tuple[int, int]]:
    """The dice of a reading that a fix of its throw from ``old`` to ``new`` shows misread, each
    with the face it showed: the dice of every face the fix took out (each die of that face,
    so which ones is known), when the fix put one face in their place (2 2 fixed to 5 5, or one
    die). None otherwise (an empty list): which die showed which face is not known."""
    wrong, right = _faces_fixed(old, new)
    if not wrong or len(right) != 1:
        return []
    (shown,) = right
    found = [i for i, d in enumerate(dice) if d["status"] != NO_DIE and d["value"] in wrong]
    if Counter(dice[i]["value"] for i in found) != wrong:
        return []  # more dice show a face taken out than the fix took out: which, not known
    return [(i, shown) for i in found]


def _suspects(dice: Sequence[dict[str, JSON]], old: Action, new: Action) -> list[int]:
    """The dice of a reading that may be misread when a fix of its throw from ``old`` to
    ``new`` does not say which (:func:`_misread` names none): each die showing a face the fix
    took out."""
    wrong, _ = _faces_fixed(old, new)
    return [i for i, d in enumerate(dice) if d["status"] != NO_DIE and d["value"] in wrong]


def _one_die_at_most(old: Action, new: Action) -> bool:
    """Whether a throw typed in place of ``old`` is the same, or has one die otherwise."""
    return old == new or _one_die(old, new) is not None


def _one_die(old: Action, new: Action) -> tuple[int, int] | None:
    """The face misread and the face it showed, when a throw is fixed by one die."""
    wrong, right = _faces_fixed(old, new)
    if wrong.total() != 1 or right.total() != 1:
        return None
    (misread,), (shown,) = wrong, right
    return misread, shown


def _with_die(game: Game[Any, Any], state: Any, step: Action, misread: int, shown: int) -> Action:
    """``step`` as it stands when the rules take it; else, if it is a set-aside naming the
    misread face, that set-aside with the die's own face in its place."""
    if not isinstance(step, Keep) or misread not in step.dice:
        return step
    dice = list(step.dice)
    dice[dice.index(misread)] = shown
    return _or_instead(game, state, step, Keep(dice))


def _same_dice(
    before: Sequence[dict[str, JSON]], now: Sequence[dict[str, JSON]]
) -> list[tuple[int, dict[str, JSON]]] | None:
    """:func:`_by_place` when every die of ``before`` and of ``now`` has its pair, else None."""
    pairs = _by_place(before, now)
    return pairs if before and len(pairs) == len(before) == len(now) else None


def _seen(dice: Sequence[dict[str, JSON]]) -> list[tuple[str, int]]:
    """What a reading says of ``dice``, wherever they lie: each die's status and value."""
    return sorted(
        (str(d["status"]), d["value"] if isinstance(d["value"], int) else 0) for d in dice
    )


def _places(dice: Sequence[dict[str, JSON]]) -> list[dict[str, JSON]]:
    """``dice`` with one face for all, for :func:`moved` to compare by place alone."""
    return [{"value": 0, "box": d["box"]} for d in dice]


def _grows_into(keep: Keep, legal: Sequence[Action]) -> bool:
    """Whether a legal set-aside holds ``keep``'s dice and more."""
    return any(
        isinstance(a, Keep) and len(a.dice) > len(keep.dice) and contains(a.dice, keep.dice)
        for a in legal
    )


def _on_table(game: Game[Any, Any], state: Any) -> list[int]:
    """The dice of the last throw that are still in play (all five in Generał)."""
    said = game.describe(state)
    on_table = list(said.get("dice", []) or [])
    turn = said.get("turn")
    if not on_table and isinstance(turn, dict):
        on_table = list(turn.get("dice", []))
    return on_table


def _rolls_in_effect(events: list[tuple[str, dict[str, JSON] | None]]) -> list[list[int]]:
    """The dice of the rolls a stored log leaves in effect (undone ones dropped)."""
    return [list(a["roll"]) for a in in_effect(events) if a is not None and "roll" in a]


def _faces(rolls: list[list[int]]) -> dict[int, int]:
    """Faces 1 to 6 counted over some rolls."""
    counts = dict.fromkeys(range(1, 7), 0)
    for roll in rolls:
        for face in roll:
            counts[face] = counts.get(face, 0) + 1
    return counts

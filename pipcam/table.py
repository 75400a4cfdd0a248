"""The table: where actions from the camera, the buttons, the terminal and the phones meet.

Input flows one way. Every action goes through the engine's legal actions, is written to the
store (committed) and only then applied and announced to the LEDs and the phones, so an
acknowledged action is never lost. A reading that is not a legal outcome is not applied: the
table says what is wrong and waits for the dice to be fixed or the reading corrected.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pipcam.store import Store, replay_events
from scoring.core import (
    JSON,
    Action,
    Bank,
    Game,
    Keep,
    Phase,
    Roll,
    Score,
    Stop,
    action_from_json,
    action_to_json,
)
from scoring.dice import contains, remove
from scoring.errors import IllegalAction, InvalidAction
from scoring.history import History
from scoring.transcript import Header, dump, parse_header, start


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


class ReadingLike(Protocol):
    """A reading of the tray (vision.reader.DiceReading)."""

    @property
    def status(self) -> str: ...
    @property
    def dice(self) -> Sequence[DieLike]: ...


def die_json(die: DieLike) -> dict[str, JSON]:
    """A die of a reading as JSON (the phones and the store)."""
    return {
        "value": die.value,
        "confidence": round(float(die.confidence), 3),
        "status": die.status,
        "box": [int(v) for v in die.box],
    }


@dataclass
class TableView:
    """What the LEDs and the phones show besides the game: the last reading and any problem."""

    reading_status: str = "empty"
    dice_read: list[dict[str, JSON]] = field(default_factory=list)
    problem: str = ""
    camera: str = "ok"
    seq: int = 0


Listener = Callable[[dict[str, JSON]], None]
NEW_GAME_WINDOW = 5.0  # seconds in which a second hold of confirm abandons an unfinished game


class Table:
    """The current game with its history, the store behind it, and who is told of changes."""

    def __init__(self, store: Store, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.clock = clock
        self.lock = threading.RLock()
        self.history: History[Any] | None = None
        self.header: Header | None = None
        self.game_id: int | None = None
        self.view = TableView()
        self._listeners: list[Listener] = []
        self._new_game_asked = -NEW_GAME_WINDOW

    # -- games ----------------------------------------------------------------------------------

    def resume(self) -> bool:
        """Take up the unfinished game of the store, if there is one."""
        with self.lock:
            stored = self.store.current_game()
            if stored is None:
                return False
            self.history = replay_events(stored)
            self.header = parse_header(stored.header)
            self.game_id = stored.id
            self._changed()
            return True

    def new_game(self, header_json: JSON, *, source: str = "table") -> dict[str, JSON]:
        """Start a game from a transcript header; a bad header is refused and changes nothing."""
        header = parse_header(header_json)
        history = start(header)  # validates game, players and options before anything is stored
        with self.lock:
            unfinished = (
                self.history is not None and self.history.game.outcome(self.history.state) is None
            )
            if self.game_id is not None and unfinished:
                self.store.finish_game(self.game_id)
            self.game_id = self.store.new_game(header.to_json())
            self.history = history
            self.header = header
            self.view.problem = ""
            self._changed()
            return self.state_json()

    @property
    def game(self) -> Game[Any, Any]:
        """The engine of the current game."""
        return self._need().game

    def _need(self) -> History[Any]:
        if self.history is None:
            raise IllegalAction("no game is being played: start one first")
        return self.history

    # -- actions --------------------------------------------------------------------------------

    def act(self, action: Action, *, source: str) -> dict[str, JSON]:
        """Apply one action: checked by the engine, stored, then applied and announced."""
        with self.lock:
            history = self._need()
            game = history.game
            game.apply(history.state, action)  # raises IllegalAction; nothing stored or changed
            assert self.game_id is not None
            self.store.append(self.game_id, "action", action_to_json(action), source=source)
            history.push(action)
            self.view.problem = ""
            if game.outcome(history.state) is not None:
                self.store.finish_game(self.game_id)
            self._changed()
            return self.state_json()

    def act_json(self, obj: JSON, *, source: str) -> dict[str, JSON]:
        """Apply a PROTOCOL.md action object (``InvalidAction`` if it is malformed)."""
        return self.act(action_from_json(obj), source=source)

    def undo(self, *, source: str) -> dict[str, JSON]:
        """Take back the last action (``IllegalAction`` when there is none)."""
        with self.lock:
            history = self._need()
            if not len(history):
                raise IllegalAction("nothing to undo: no action has been taken in this game")
            assert self.game_id is not None
            self.store.append(self.game_id, "undo", None, source=source)
            history.pop()
            self.view.problem = ""
            self._changed()
            return self.state_json()

    def redo(self, *, source: str) -> dict[str, JSON]:
        """Take the last undone action again (``IllegalAction`` when there is none)."""
        with self.lock:
            history = self._need()
            if not history.can_redo():
                raise IllegalAction("nothing to redo: no action has been undone since the last one")
            assert self.game_id is not None
            self.store.append(self.game_id, "redo", None, source=source)
            history.redo()
            self._changed()
            return self.state_json()

    def suggestion(self) -> Action | None:
        """The engine's best option now, which the confirm button accepts.

        Jeopardy games: set aside the best reading; Generał and Drápky: write the category or
        figure worth most now (Drápky stops when no figure is made).
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
                    return max(scores, key=lambda a: preview(state, a))
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
                    raise IllegalAction("nothing to confirm now")
                return self.act(action, source=source)
        except (IllegalAction, InvalidAction) as exc:
            self.report_problem(str(exc))
            return None
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
                    "the game is not over: hold confirm again within "
                    f"{NEW_GAME_WINDOW:.0f} s to abandon it and start a new one"
                )
                return None
            self._new_game_asked = -NEW_GAME_WINDOW
            return self.new_game(self.header.to_json(), source=source)

    def report_problem(self, text: str) -> None:
        """Say what is wrong (attention LED, phones) without changing the game."""
        with self.lock:
            self.view.problem = text
            self._changed()

    # -- the camera -----------------------------------------------------------------------------

    def on_reading(self, reading: ReadingLike, *, settled_now: bool) -> None:
        """A reading of the tray; ``settled_now`` is true once per roll, when the dice come to rest.

        A settled reading becomes a roll when dice are to be thrown, or a keep when dice were
        taken out of the roll zone; anything else is reported, never guessed.
        """
        with self.lock:
            dice = list(reading.dice)
            self.view.reading_status = reading.status
            self.view.dice_read = [die_json(d) for d in dice]
            if settled_now:
                self.store.record_reading(self.game_id, self.view.dice_read, status=reading.status)
            if not settled_now or self.history is None:
                self._changed()
                return
            doubtful = [d for d in dice if d.status != "ok" or d.value is None]
            if doubtful:
                words = {"cocked": "leans on something", "uncertain": "cannot be read"}
                what = "; ".join(
                    f"a die at {list(d.box)} {words.get(d.status, d.status)}" for d in doubtful
                )
                self.report_problem(f"{what}: throw it again or correct it on a phone")
                return
            values = [int(d.value) for d in dice if d.value is not None]
            try:
                action = self._action_from_dice(values)
            except (IllegalAction, InvalidAction) as exc:
                self.report_problem(str(exc))
                return
            if action is None:
                self._changed()
                return
            try:
                for step in action:
                    self.act(step, source="camera")
            except (IllegalAction, InvalidAction) as exc:
                self.report_problem(f"the dice read {' '.join(map(str, sorted(values)))}: {exc}")

    def _action_from_dice(self, values: list[int]) -> list[Action] | None:
        """What a settled set of dice in the roll zone means now, or None if nothing changed."""
        history = self._need()
        game, state = history.game, history.state
        phase = game.phase(state)
        if phase is Phase.FINISHED:
            return None
        n = game.roll_size(state)
        if n:
            if not values:
                return None
            if len(values) != n:
                raise IllegalAction(
                    f"{len(values)} dice are in the roll zone but {n} were to be thrown; "
                    "take the others out or correct the reading"
                )
            return [Roll(values)]
        on_table = list(game.describe(state).get("dice", []) or [])
        if not on_table:
            turn = game.describe(state).get("turn")
            if isinstance(turn, dict):
                on_table = list(turn.get("dice", []))
        if sorted(values) == sorted(on_table):
            return None
        if on_table and len(values) < len(on_table) and contains(on_table, values):
            return [Keep(remove(on_table, values))]
        if on_table and len(values) == len(on_table) and Keep([]) in game.legal_actions(state):
            # Every die thrown again without holding any (Generał, Drápky).
            after = game.apply(state, Keep([]))
            if game.roll_size(after) == len(values):
                return [Keep([]), Roll(values)]
        raise IllegalAction(
            f"the dice in the roll zone ({' '.join(map(str, sorted(values)))}) do not follow from "
            f"the dice on the table ({' '.join(map(str, sorted(on_table)))}); "
            "set aside dice by taking them out of the roll zone"
        )

    def camera_status(self, status: str) -> None:
        """The camera is "ok", "missing" or "failed" (unplugged mid-game: the table carries on)."""
        with self.lock:
            if status != self.view.camera:
                self.view.camera = status
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
            base["table"] = {
                "reading": self.view.reading_status,
                "dice_read": self.view.dice_read,
                "problem": self.view.problem,
                "camera": self.view.camera,
                "seq": self.view.seq,
                "game_id": self.game_id,
            }
            return base

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

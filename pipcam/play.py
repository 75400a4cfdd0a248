"""``pipcam play``: a game at the terminal, where the table types each roll."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from scoring.core import (
    JSON,
    Action,
    Bank,
    Draw,
    Forbidden,
    Game,
    Keep,
    Pass,
    Phase,
    Place,
    Roll,
    Score,
    Stop,
)
from scoring.errors import IllegalAction, InvalidAction, ScoringError
from scoring.history import History
from scoring.transcript import TranscriptError, dump, replay

if TYPE_CHECKING:
    from coach.report import Coach

HELP = """\
Type what happened at the table:
  1 1 5 2 3 4      the dice just thrown (or the dice to keep, when dice are on the table)
  roll 1 1 5       a throw            keep 1 5      set dice aside / hold them
  bank (b)         end the turn and write the turn total ("pass" in 1000)
  score CATEGORY   write the dice into a category or figure (or just type its id)
  stop             end a Drápky turn without a figure
  forbidden 2 5    the forbidden numbers (Na zakázaná čísla)
  draw 045         the stone turned up; place 045 U(0,0) 1 lays it; pass if it fits nowhere
  undo (u), redo   take back or repeat the last action
  hint             the coach's best play, with what the others give up (Generał and
                   the 10 000 games); elsewhere the best reading or what is legal now
  help (?), quit (q)"""


def _digits(words: list[str]) -> list[int]:
    out: list[int] = []
    for word in words:
        for part in word.replace(",", " ").split():
            if not part.isdigit():
                raise InvalidAction(f"a die is a number from 1 to 6, not {part!r}")
            out.extend(int(c) for c in part)
    return out


def _is_dice(words: list[str]) -> bool:
    return bool(words) and all(w.replace(",", "").isdigit() for w in words)


def parse_command(text: str, game: Game[Any, Any], state: Any) -> Action | str:
    """An action from a typed line, or a meta command ("undo", "redo", "help", "quit", "hint")."""
    words = text.strip().split()
    if not words:
        return "show"
    head, rest = words[0].lower(), words[1:]
    meta = {
        "undo": "undo",
        "u": "undo",
        "redo": "redo",
        "help": "help",
        "?": "help",
        "h": "help",
        "quit": "quit",
        "q": "quit",
        "exit": "quit",
        "hint": "hint",
        "show": "show",
    }
    if head in meta and not rest:
        return meta[head]
    phase = game.phase(state)
    if _is_dice(words):
        if phase is Phase.DRAW:
            return Draw("".join(words))
        if game.roll_size(state):
            return Roll(_digits(words))
        if phase is Phase.SETUP:
            return Forbidden(_digits(words))
        return Keep(_digits(words))
    if head in ("roll", "r", "throw"):
        return Roll(_digits(rest))
    if head in ("keep", "k", "hold"):
        return Keep(_digits(rest) if rest and rest != ["nothing"] else [])
    if head in ("bank", "b", "record"):
        return Bank()
    if head in ("pass", "p"):
        return Pass() if phase in (Phase.PLACE, Phase.DRAW) else Bank()
    if head == "stop":
        return Stop()
    if head in ("score", "s", "write"):
        # "score chance 2", or as the list of legal actions shows it: "score chance (column 2)".
        named = [w.strip("()") for w in rest if w.strip("()").lower() not in ("", "column")]
        if len(named) == 1 or (len(named) == 2 and named[1].isdigit() and int(named[1]) > 0):
            column = int(named[1]) - 1 if len(named) == 2 else 0
            return Score(named[0].lower(), column)
    if head in ("forbidden", "f"):
        return Forbidden(_digits(rest))
    if head in ("draw", "d") and len(rest) == 1:
        return Draw(rest[0])
    if head == "place" and len(rest) == 3:
        # "place 045 U(0,0) 1", or as the list of legal actions shows it: "... r1".
        rotation = rest[2].lower().removeprefix("r")
        if rotation.lstrip("-").isdigit():
            return Place(rest[0], rest[1], int(rotation))
    if len(words) == 1 and head in game.score_names:
        # A category typed alone: the engine says why when it cannot be written now.
        return Score(head)
    raise InvalidAction(f"cannot read {text.strip()!r}; type help for what you can type")


def render(game: Game[Any, Any], state: Any) -> str:
    """The state as a few lines of text: scores, whose turn, the dice, what is legal."""
    info: dict[str, JSON] = game.state_json(state)
    lines: list[str] = []
    custom: Callable[[Any], str] | None = getattr(game, "render_text", None)
    if custom is not None:
        lines.append(custom(state))
    scores = "  ".join(f"{p['name']} {p['score']}" for p in info["players"])
    lines.append(f"{game.name} | {scores}")
    turn = info.get("turn")
    if isinstance(turn, dict) and "total" in turn:
        dice = " ".join(map(str, turn.get("dice", [])))
        where = f"on the table: {dice}" if dice else f"dice left {turn.get('dice_left')}"
        lines.append(f"turn total {turn['total']}, {where}")
    if info.get("last_event"):
        lines.append(str(info["last_event"]))
    if info["finished"]:
        winners = ", ".join(info["winners"])
        lines.append(f"Game over. Winner: {winners}." if winners else "Game over.")
        return "\n".join(lines)
    mover = info["to_move"]
    allowed = game.allowed_text(state)
    lines.append(f"{mover} to play: {allowed}")
    return "\n".join(lines)


class SaveFileError(ValueError):
    """A ``--save`` file that holds something this game must not overwrite."""


def saved_game(path: Path, game: Game[Any, Any], players: list[str]) -> History[Any] | None:
    """The game a ``--save`` file already holds, to go on with; None if there is no file.

    A file with another game (id, players or options) is refused, never overwritten: it may be
    the only record of an evening's game.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise SaveFileError(
            f"{path} is no transcript (not text); pick another --save FILE"
        ) from exc
    except OSError as exc:
        raise SaveFileError(
            f"cannot read {path} ({exc.strerror}); pick another --save FILE"
        ) from exc
    if not text.strip():
        return None
    try:
        history = replay(text.splitlines())
    except TranscriptError as exc:
        raise SaveFileError(
            f"{path} is no transcript this game can go on with ({exc}); pick another --save FILE"
        ) from exc
    theirs = history.game.players(history.root)
    saved = dump(history.game, theirs, [])
    if dump(game, players, []) != saved:
        header = json.loads(saved)
        options = [f"{k}={_option_text(v)}" for k, v in header["options"].items()]
        command = [f"pipcam play {header['game']} --players {' '.join(theirs)}"]
        command += [f"--option {o}" for o in options]
        with_options = f"; {', '.join(options)}" if options else ""
        raise SaveFileError(
            f"{path} holds another game ({header['game']}: {', '.join(theirs)}{with_options});"
            f" to go on with it: {' '.join(command)} --save {path}; or pick another --save FILE"
        )
    return history


def _option_text(value: JSON) -> str:
    """An option's value as ``--option name=VALUE`` takes it."""
    if isinstance(value, bool):
        return str(value).lower()
    return value if isinstance(value, str) else json.dumps(value)


class Terminal:
    """A game at the terminal: reads typed lines, applies them, shows the state, saves."""

    def __init__(
        self,
        game: Game[Any, Any],
        players: list[str],
        *,
        save: Path | None,
        history: History[Any] | None = None,
    ) -> None:
        self.game = game
        self.players = players
        self.save = save
        fresh = History(game, game.initial_state(players)) if history is None else history
        self.history: History[Any] = fresh
        self.unsaved = False  # the last save failed: the file lags behind the game
        self._coach: Coach | None | Literal[False] = None  # False: the coach knows not this game

    def _advice(self, state: Any) -> str | None:
        """The coach's advice for the player to move, or None where it has none."""
        if self._coach is None:
            from coach.report import coach_for  # the coach's solvers only when a hint is asked

            try:
                self._coach = coach_for(self.game)  # Generał's solver loads its table once
            except ValueError:
                self._coach = False
        if self._coach is False or self.game.to_move(state) is None:
            return None
        try:
            return self._coach.advise(state).text(most=4)
        except (ScoringError, ValueError):  # a state the coach does not cover: plain hint
            return None

    def save_now(self) -> None:
        """Write the transcript; :class:`SaveFileError` names the file and what to do."""
        try:
            self._save()
        except OSError as exc:
            raise SaveFileError(
                f"cannot save the transcript to {self.save} ({exc.strerror});"
                " pick another --save FILE"
            ) from exc

    def _save(self) -> None:
        """Write the transcript atomically, so a crash leaves the last complete version."""
        if self.save is None:
            return
        text = dump(self.game, self.players, self.history.actions)
        folder = self.save.parent if str(self.save.parent) else Path(".")
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{self.save.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.save)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def run(self, stdin: TextIO, stdout: TextIO) -> int:
        """Read lines until quit or end of input; return the exit status. The caller saves
        first (:meth:`save_now`), so a file that cannot be written is refused before play."""

        def say(text: str) -> None:
            stdout.write(text + "\n")
            stdout.flush()

        def save() -> None:
            # The game goes on when the disk fails: the next save that works writes it all.
            try:
                self.save_now()
            except SaveFileError as exc:
                say(f"! {exc}")
                self.unsaved = True
            else:
                self.unsaved = False

        say(render(self.game, self.history.state))
        for line in stdin:
            state = self.history.state
            try:
                command = parse_command(line, self.game, state)
            except InvalidAction as exc:
                say(f"! {exc}")
                continue
            if command == "quit":
                break
            if command == "help":
                say(HELP)
                continue
            if command == "hint":
                say(self._hint(state))
                continue
            if command == "undo":
                try:
                    say(f"undone: {self.history.pop()}")
                except IndexError as exc:
                    say(f"! {exc}")
                    continue
            elif command == "redo":
                try:
                    say(f"redone: {self.history.redo()}")
                except IndexError as exc:
                    say(f"! {exc}")
                    continue
            elif isinstance(command, str):
                pass
            else:
                try:
                    self.history.push(command)
                except (IllegalAction, InvalidAction) as exc:
                    say(f"! {exc}")
                    continue
            save()
            say(render(self.game, self.history.state))
        if self.save is not None and self.unsaved:
            say(f"! the last actions are not in {self.save}: it could not be written")
            return 1
        if self.save is not None:
            say(f"transcript saved to {self.save}")
        return 0

    def _hint(self, state: Any) -> str:
        advice = self._advice(state)
        if advice is not None:
            return advice
        info = self.game.describe(state)
        best = info.get("best")
        if best is not None:
            return "best reading: " + json.dumps(best)
        return "legal now: " + self.game.allowed_text(state)

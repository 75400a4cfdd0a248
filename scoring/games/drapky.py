"""Drápky / Figury (RULES §6.3): six dice, fourteen figures, unused throws carried as marks.

A turn has 3 throws plus the player's marks (čárky). After each throw the player may keep dice and
throw the rest again, record one figure the dice make, or stop; the throws left over become the
player's new marks. The game ends as soon as one player has recorded all fourteen figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from scoring.core import (
    JSON,
    Action,
    Ending,
    EndReason,
    Game,
    Keep,
    Outcome,
    Phase,
    Roll,
    Score,
    Stop,
    option,
)
from scoring.dice import Dice, contains, counts, dice, sub_multisets
from scoring.errors import InvalidAction, Reason, Refusal
from scoring.sheet import sheet_text

NUMBERS: tuple[str, ...] = ("ones", "twos", "threes", "fours", "fives", "sixes")
FIGURES: tuple[str, ...] = (
    *NUMBERS,
    "two_plus_three",
    "three_pairs",
    "two_triples",
    "pyramid",
    "poker",
    "hiroshima",
    "general",
    "straight",
)
"""The fourteen figures in sheet order (PROTOCOL.md ids) [AMBIG-C6]."""

N_DICE = 6
BASE_THROWS = 3
_INDEX = {f: i for i, f in enumerate(FIGURES)}
_FACE_WORDS = ("1s", "2s", "3s", "4s", "5s", "6s")

NEEDS: dict[str, str] = {
    **{f: f"it needs at least three {_FACE_WORDS[i]}" for i, f in enumerate(NUMBERS)},
    "two_plus_three": "it needs a pair and a triple of different faces",
    "three_pairs": "it needs three pairs of three different faces",
    "two_triples": "it needs two triples of different faces",
    "pyramid": ("it needs a triple, a pair and a single with triple > pair > single"),
    "poker": "it needs four dice of one face",
    "hiroshima": "it needs one 6 and five 1s",
    "general": "it needs all six dice equal",
    "straight": "it needs 1 2 3 4 5 6",
}
"""What each figure needs, in words, for refusals and help screens."""


@dataclass(frozen=True)
class DrapkyOptions:
    """Options of Drápky (RULES §6.3); the defaults are the recommended readings.

    * ``place_by``: how the players other than the finisher (always 1st) are placed when the game
      ends: ``"points"`` (recommended) ranks by points; ``"figures"`` ranks by the number of
      figures recorded, then by points. Equal players share the better place (1-2-2-4)
      [AMBIG-C7].
    * ``marks_cap``: ``None`` (the original text: no limit) or the most marks a player may carry
      into a turn (``on`` = 3); throws left over beyond the cap are lost.

    Fixed readings, not options: kept dice are released when the turn ends; one figure a turn;
    the game ends at once when a player records the 14th figure (the round is not finished).
    """

    place_by: Literal["points", "figures"] = option(
        "points",
        "how players other than the finisher are placed: by points, or by figures recorded "
        "(then by points); ties share the better place [AMBIG-C7]",
    )
    marks_cap: int | None = option(
        None, "most marks (carried throws) a player may hold; off = no limit", on=3, lowest=0
    )


def _check_figure(figure: str) -> None:
    if figure not in _INDEX:
        raise InvalidAction(f"unknown figure {figure!r}; the figures are: {', '.join(FIGURES)}")


def _six(values: Sequence[int]) -> Dice:
    out = dice(values)
    if len(out) != N_DICE:
        raise InvalidAction(f"Drápky scores six dice, not {len(out)} ({list(out)!r})")
    return out


def figure_points(values: Sequence[int], figure: str) -> int | None:
    """The points six dice make as a figure (RULES §6.3), or None when they do not make it.

    >>> figure_points([5, 5, 5, 4, 4, 3], "pyramid"), figure_points([4, 4, 4, 5, 5, 6], "pyramid")
    (26, None)
    >>> figure_points([2, 2, 3, 3, 3, 6], "two_plus_three")
    13
    """
    _check_figure(figure)
    d = _six(values)
    c = counts(d)
    index = _INDEX[figure]
    if index < 6:
        return c[index] * (index + 1) if c[index] >= 3 else None
    shape = sorted((n for n in c if n), reverse=True)
    if figure == "two_plus_three":
        made = [
            3 * a + 2 * b
            for a in range(1, 7)
            for b in range(1, 7)
            if a != b and c[a - 1] >= 3 and c[b - 1] >= 2
        ]
        return max(made, default=None)
    if figure == "three_pairs":
        return sum(d) if shape == [2, 2, 2] else None
    if figure == "two_triples":
        return sum(d) if shape == [3, 3] else None
    if figure == "pyramid":
        if shape != [3, 2, 1]:
            return None
        triple, pair, single = (c.index(n) + 1 for n in (3, 2, 1))
        return sum(d) if triple > pair > single else None
    if figure == "poker":
        return max((4 * (i + 1) for i, n in enumerate(c) if n >= 4), default=None)
    if figure == "hiroshima":
        return 11 if c == (5, 0, 0, 0, 0, 1) else None
    if figure == "general":
        return 6 * d[0] if shape == [6] else None
    return 21 if shape == [1] * 6 else None


def figures_made(values: Sequence[int]) -> dict[str, int]:
    """Every figure six dice make, with its points.

    >>> figures_made([4, 4, 4, 4, 2, 2])
    {'fours': 16, 'two_plus_three': 16, 'poker': 16}
    """
    out = {}
    for figure in FIGURES:
        points = figure_points(values, figure)
        if points is not None:
            out[figure] = points
    return out


def overall_score(results: Sequence[tuple[int, int]]) -> float:
    """The score over several games: mean points divided by mean place (higher is better).

    ``results`` holds one ``(points, place)`` pair per completed game [ORIG-4].

    >>> round(overall_score([(120, 1), (100, 2), (90, 3)]), 2)
    51.67
    """
    if not results:
        raise ValueError("the overall score needs at least one completed game")
    if any(place < 1 for _, place in results):
        raise ValueError(f"places start at 1: {list(results)!r}")
    mean_points = sum(p for p, _ in results) / len(results)
    mean_place = sum(pl for _, pl in results) / len(results)
    return mean_points / mean_place


def rank_places(keys: Sequence[tuple[int, ...]], finisher: int | None = None) -> tuple[int, ...]:
    """Competition ranking (1-2-2-4) by descending key; the finisher, if any, is 1st alone.

    >>> rank_places([(50,), (80,), (80,), (40,)], finisher=0)
    (1, 2, 2, 4)
    """
    order = [i for i in range(len(keys)) if i != finisher]
    places = [0] * len(keys)
    start = 1
    if finisher is not None:
        places[finisher] = 1
        start = 2
    for i in order:
        better = sum(1 for j in order if keys[j] > keys[i])
        places[i] = start + better
    return tuple(places)


Sheet = tuple[int | None, ...]
"""One player's figures: points per figure in ``FIGURES`` order, ``None`` while not recorded."""


@dataclass(frozen=True)
class DrapkyState:
    """Every player's figures and marks, whose turn it is and the dice of that turn."""

    players: tuple[str, ...]
    sheets: tuple[Sheet, ...]
    marks: tuple[int, ...]  # the throws each player carries into his next turn
    player: int = 0
    dice: Dice = ()  # the six dice after the turn's last throw; () before its first throw
    kept: Dice | None = None  # the dice held while the others are being thrown again
    used: int = 0  # throws made this turn
    finisher: int | None = None


def _dice_text(d: Sequence[int]) -> str:
    return " ".join(map(str, d)) if d else "none"


class Drapky(Game[DrapkyState, DrapkyOptions]):
    """Drápky / Figury: record all fourteen figures first; unused throws carry over as marks."""

    game_id = "drapky"
    name = "Drápky"
    aliases = ("figury",)
    options_type = DrapkyOptions
    score_names = FIGURES

    def initial_state(self, players: Sequence[str]) -> DrapkyState:
        """Empty sheets, no marks, the first seat to throw."""
        n = len(players)
        return DrapkyState(tuple(players), ((None,) * len(FIGURES),) * n, (0,) * n)

    # -- helpers ---------------------------------------------------------------------------------

    def score_all(self, values: Sequence[int]) -> dict[str, int]:
        """Every figure the dice make, with its points.

        >>> Drapky().score_all([6, 1, 1, 1, 1, 1])
        {'ones': 5, 'poker': 4, 'hiroshima': 11}
        """
        return figures_made(values)

    def available(self, state: DrapkyState) -> int:
        """Throws the player to move has this turn: 3 plus the marks carried in."""
        return BASE_THROWS + state.marks[state.player]

    def throws_left(self, state: DrapkyState) -> int:
        """Throws still to be made this turn."""
        return self.available(state) - state.used

    def places(self, state: DrapkyState) -> tuple[int, ...]:
        """Every player's place: the finisher 1st, the others by ``place_by`` (ties shared)."""
        points = self.totals(state)
        keys: list[tuple[int, ...]]
        if self.options.place_by == "figures":
            keys = [
                (sum(v is not None for v in sheet), pts)
                for sheet, pts in zip(state.sheets, points, strict=True)
            ]
        else:
            keys = [(pts,) for pts in points]
        return rank_places(keys, state.finisher)

    # -- the engine ------------------------------------------------------------------------------

    def phase(self, state: DrapkyState) -> Phase:
        if state.finisher is not None:
            return Phase.FINISHED
        if not state.dice or state.kept is not None:
            return Phase.ROLL
        return Phase.DECIDE

    def to_move(self, state: DrapkyState) -> int | None:
        return None if state.finisher is not None else state.player

    def players(self, state: DrapkyState) -> tuple[str, ...]:
        return state.players

    def totals(self, state: DrapkyState) -> tuple[int, ...]:
        return tuple(sum(v for v in sheet if v is not None) for sheet in state.sheets)

    def roll_size(self, state: DrapkyState) -> int:
        if self.phase(state) is not Phase.ROLL:
            return 0
        return N_DICE - len(state.kept or ())

    def _scorable(self, state: DrapkyState) -> dict[str, int]:
        sheet = state.sheets[state.player]
        return {f: p for f, p in figures_made(state.dice).items() if sheet[_INDEX[f]] is None}

    def legal_actions(self, state: DrapkyState) -> tuple[Action, ...]:
        phase = self.phase(state)
        if phase is Phase.FINISHED:
            return ()
        if phase is Phase.ROLL:
            return (*(Roll(d) for d, _ in self.roll_outcomes(state)), Stop())
        actions: list[Action] = [Score(f) for f in self._scorable(state)]
        if self.throws_left(state) > 0:
            actions.extend(Keep(k) for k in sub_multisets(state.dice) if len(k) < N_DICE)
        actions.append(Stop())
        return tuple(actions)

    def is_legal(self, state: DrapkyState, action: Action) -> bool:
        """As :meth:`legal_actions` says; a stop before a throw without listing every throw
        (replaying a game to fix an earlier step checks thousands of steps)."""
        if isinstance(action, Stop) and self.phase(state) is Phase.ROLL:
            return True
        return super().is_legal(state, action)

    def _end_turn(self, state: DrapkyState, sheet: Sheet) -> DrapkyState:
        p = state.player
        carried = self.throws_left(state)
        if self.options.marks_cap is not None:
            carried = min(carried, self.options.marks_cap)
        done = None not in sheet
        return replace(
            state,
            sheets=state.sheets[:p] + (sheet,) + state.sheets[p + 1 :],
            marks=state.marks[:p] + (carried,) + state.marks[p + 1 :],
            player=p if done else (p + 1) % len(state.players),
            dice=(),
            kept=None,
            used=0,
            finisher=p if done else None,
        )

    def _apply(self, state: DrapkyState, action: Action) -> DrapkyState:
        if isinstance(action, Roll):
            return replace(
                state,
                dice=tuple(sorted((state.kept or ()) + action.dice)),
                kept=None,
                used=state.used + 1,
            )
        if isinstance(action, Keep):
            return replace(state, kept=action.dice)
        sheet = state.sheets[state.player]
        if isinstance(action, Score):
            i = _INDEX[action.category]
            points = figure_points(state.dice, action.category)
            sheet = sheet[:i] + (points,) + sheet[i + 1 :]
        return self._end_turn(state, sheet)

    def outcome(self, state: DrapkyState) -> Outcome | None:
        if state.finisher is None:
            return None
        name = state.players[state.finisher]
        said = Ending(f"{name} recorded all 14 figures", EndReason.ALL_FIGURES, {"player": name})
        return Outcome((state.finisher,), self.totals(state), said)

    # -- refusals --------------------------------------------------------------------------------

    def _not_thrown(self, state: DrapkyState, action: Action) -> Reason:
        """Nothing thrown yet, or dice still to be thrown: nothing to hold or write."""
        if not state.dice:
            return Reason(
                f"cannot {action}: no dice have been thrown this turn", Refusal.NOT_THROWN
            )
        n = self.roll_size(state)
        return Reason(
            f"cannot {action}: throw the {'1 die' if n == 1 else f'{n} dice'} not kept first",
            Refusal.THROW_REST,
            {"n": n},
        )

    def explain_illegal(self, state: DrapkyState, action: Action) -> str:
        if isinstance(action, Score):
            _check_figure(action.category)
            if action.column:
                raise InvalidAction(
                    f"Drápky has one column of figures, not column {action.column + 1}"
                )
        phase = self.phase(state)
        if phase is Phase.FINISHED:
            return Reason(f"cannot {action}: the game is over", Refusal.GAME_OVER)
        left = self.throws_left(state)
        if isinstance(action, Roll):
            if phase is Phase.DECIDE:
                if left <= 0:
                    return Reason(
                        "cannot roll: no throws left this turn; score a figure or stop",
                        Refusal.NO_THROWS_LEFT_OR_STOP,
                    )
                return Reason(
                    "cannot roll now: keep the dice to hold first (keep nothing to throw all six "
                    "again), score a figure or stop",
                    Refusal.HOLD_FIRST_OR_STOP,
                    {"n": N_DICE},
                )
            return super().explain_illegal(state, action)
        if isinstance(action, Keep):
            if phase is Phase.ROLL:
                return self._not_thrown(state, action)
            if left <= 0:
                return Reason(
                    f"cannot {action}: no throws left this turn; score a figure or stop",
                    Refusal.NO_THROWS_LEFT_OR_STOP,
                )
            if not contains(state.dice, action.dice):
                return Reason(
                    f"cannot {action}: the dice showing are {_dice_text(state.dice)}",
                    Refusal.KEEP_NOT_SHOWING,
                    {"dice": list(action.dice), "shown": list(state.dice)},
                )
            return Reason(
                "cannot keep all six dice: keep at most five and throw the rest",
                Refusal.KEEP_ALL,
                {"n": N_DICE, "most": N_DICE - 1},
            )
        if isinstance(action, Score):
            figure = action.category
            if phase is Phase.ROLL:
                return self._not_thrown(state, action)
            written = state.sheets[state.player][_INDEX[figure]]
            if written is not None:
                return Reason(
                    f"cannot {action}: it is already recorded ({written})",
                    Refusal.ALREADY_RECORDED,
                    {"figure": figure, "written": written},
                )
            return Reason(
                f"cannot {action}: {NEEDS[figure]}; the dice {_dice_text(state.dice)} "
                "do not make one",
                Refusal.FIGURE_NOT_MADE,
                {"figure": figure, "dice": list(state.dice)},
            )
        return super().explain_illegal(state, action)

    # -- the JSON view ---------------------------------------------------------------------------

    def render_text(self, state: DrapkyState) -> str:
        """The figures for ``pipcam play``: per player, marks, and what the dice make now."""
        info = self.describe(state)
        cells = [sheet["figures"] for sheet in info["sheets"]]
        totals = [sheet["points"] for sheet in info["sheets"]]
        now = info["can_score"] or None
        text = sheet_text(FIGURES, state.players, cells, now=now, totals=totals)
        marks = "  ".join(f"{n} {m}" for n, m in zip(state.players, state.marks, strict=True))
        lines = [text, f"carried throws (marks): {marks}"]
        if state.dice:
            lines.append(
                f"dice: {' '.join(map(str, state.dice))} "
                f"(throw {state.used} of {self.available(state)})"
            )
        return "\n".join(lines)

    def describe(self, state: DrapkyState) -> dict[str, JSON]:
        places = self.places(state)
        return {
            "dice": list(state.dice),
            "kept": list(state.kept or ()),
            "throws_used": state.used,
            "throws_available": self.available(state),
            "marks": list(state.marks),
            "can_score": self._scorable(state) if self.phase(state) is Phase.DECIDE else {},
            "sheets": [
                {
                    "name": name,
                    "figures": {f: v for f, v in zip(FIGURES, sheet, strict=True) if v is not None},
                    "recorded": sum(v is not None for v in sheet),
                    "points": sum(v for v in sheet if v is not None),
                    "marks": marks,
                    "place": place,
                }
                for name, sheet, marks, place in zip(
                    state.players, state.sheets, state.marks, places, strict=True
                )
            ],
        }

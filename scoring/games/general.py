"""Generał (RULES §2): five dice, up to three throws a turn, thirteen boxes to fill.

A turn is a throw of all five dice, then up to two more throws of the dice not kept, then one box
written. The value of writing some dice in a box of a sheet column is computed by exactly one pure
function, :func:`write_value`, so the phone preview, the engine and an optimal-strategy solver all
agree on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple, TypeAlias

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
    option,
)
from scoring.dice import Dice, contains, counts, dice, sub_multisets
from scoring.errors import InvalidAction, Reason, Refusal
from scoring.sheet import sheet_text

CATEGORIES: tuple[str, ...] = (
    "ones",
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "three_of_a_kind",
    "four_of_a_kind",
    "full_house",
    "small_straight",
    "large_straight",
    "general",
    "chance",
)
"""The thirteen boxes of a sheet column, in sheet order (PROTOCOL.md ids)."""

UPPER: tuple[str, ...] = CATEGORIES[:6]
LOWER: tuple[str, ...] = CATEGORIES[6:]
UPPER_BONUS_THRESHOLD = 63
N_DICE = 5
MAX_THROWS = 3

# The joker writes a Generał in these boxes for their fixed value, whatever the dice.
_FIXED_VALUE = {"full_house": 25, "small_straight": 30, "large_straight": 40, "general": 50}
_INDEX = {c: i for i, c in enumerate(CATEGORIES)}

Column: TypeAlias = tuple[int | None, ...]
"""One sheet column: an entry per box in ``CATEGORIES`` order, ``None`` while the box is empty."""

EMPTY_COLUMN: Column = (None,) * len(CATEGORIES)


@dataclass(frozen=True)
class GeneralOptions:
    """Options of Generał (RULES §2.4); the defaults are the original text's rules.

    Each sheet column is scored on its own: bonuses, the joker and the Generał box that decides
    them all belong to the column the dice are written in.

    * ``upper_bonus``: ``None`` (off) or the bonus (``on`` = 35) a column earns once the sum of
      its upper boxes (Jedynki..Szóstki, as written, multiplier included) reaches 63.
    * ``extra_general_bonus``: ``None`` (off) or the bonus (``on`` = 100) for every Generał
      written in any box of a column whose Generał box already holds 50. A scratched Generał box
      (0) earns nothing. The bonus is not multiplied by ``first_roll_multiplier``.
    * ``general_joker``: what a Generał (five equal dice) may do when the column's Generał box is
      already filled, with 50 or with 0. While that box is empty the Generał is scored like any
      other dice.

      - ``"off"``: no joker; every box scores by its own condition (so, with
        ``full_requires_distinct``, Full and both straights score 0).
      - ``"forced"`` (also ``on``; RULES §2.4 wording, Hasbro's official Yahtzee joker): the
        Generał must go into the upper box of its face if that box is empty; otherwise into any
        empty lower box, which takes its full value (Full 25, Mały strit 30, Duży strit 40, the
        sum of the dice for 3/4 jednakowe and Szansa); only when every lower box is filled may it
        go into any empty upper box, for 0.
      - ``"free"`` (Verhoeff's free-choice joker): any empty box; upper boxes score as usual
        (the box of its face 5 × face, the others 0); lower boxes take their full value as above
        once the upper box of its face is filled, and before that score by their own condition
        (3/4 jednakowe and Szansa the sum, Full and the straights 0).
    * ``four_kind_exact``: 4 jednakowe needs exactly four equal dice (five equal score 0 there).
    * ``full_requires_distinct``: Full needs a triple and a pair of two different faces; when off
      a Generał also counts as Full (25) [AMBIG-G2].
    * ``columns``: 1, or 3 for the three-column sheet: every box is filled once per column,
      ``Score.column`` (0-2) picks the column, and the game ends when all 39 boxes are full.
    * ``first_roll_multiplier``: the box entry is multiplied by this when the dice are written
      after the turn's first throw (a "z ręki" table rule; 1 = off); joker values included.
    """

    upper_bonus: int | None = option(
        None,
        f"bonus when a column's upper boxes reach {UPPER_BONUS_THRESHOLD}",
        on=35,
        lowest=0,
    )
    extra_general_bonus: int | None = option(
        None,
        "bonus for every further Generał thrown while the column's Generał box holds 50 "
        "(not when it holds 0)",
        on=100,
    )
    general_joker: Literal["off", "forced", "free"] = option(
        "off",
        "a Generał thrown when the Generał box is full: forced = matching upper box if empty, "
        "else any lower box at full value, else an upper box for 0; free = any empty box, "
        "lower boxes at full value once the upper box of its face is filled",
        on="forced",
    )
    four_kind_exact: bool = option(
        default=False, doc="4 jednakowe needs exactly four equal dice (five equal score 0)"
    )
    full_requires_distinct: bool = option(
        default=True, doc="Full needs two different faces: five equal dice are no Full [AMBIG-G2]"
    )
    columns: Literal[1, 3] = option(1, "sheet columns; with 3 each box is filled once per column")
    first_roll_multiplier: int = option(
        1,
        "box value multiplied when the dice are written after the first throw of the turn",
        lowest=1,
    )


DEFAULT = GeneralOptions()


class Entry(NamedTuple):
    """What writing dice in a box gives: the box's entry and any extra Generał bonus earned."""

    points: int
    bonus: int = 0


def _check_category(category: str) -> None:
    if category not in _INDEX:
        raise InvalidAction(
            f"unknown category {category!r}; the categories are: {', '.join(CATEGORIES)}"
        )


def _five(values: Sequence[int]) -> Dice:
    out = dice(values)
    if len(out) != N_DICE:
        raise InvalidAction(f"Generał scores five dice, not {len(out)} ({list(out)!r})")
    return out


def _has_run(faces: set[int], length: int) -> bool:
    return any(set(range(lo, lo + length)) <= faces for lo in range(1, 8 - length))


def category_points(values: Sequence[int], category: str, options: GeneralOptions = DEFAULT) -> int:
    """The value of five dice in a box by its condition alone (RULES §2.3); 0 when unmet.

    No joker and no first-throw multiplier: those depend on the sheet, see :func:`write_value`.

    >>> category_points([1, 1, 1, 3, 5], "ones")
    3
    >>> category_points([2, 3, 4, 4, 4], "three_of_a_kind")
    17
    >>> category_points([3, 3, 3, 3, 3], "full_house")
    0
    >>> category_points([3, 3, 3, 3, 3], "full_house", GeneralOptions(full_requires_distinct=False))
    25
    """
    _check_category(category)
    d = _five(values)
    c = counts(d)
    most = max(c)
    index = _INDEX[category]
    if index < 6:
        return c[index] * (index + 1)
    faces = set(d)
    met = {
        "three_of_a_kind": most >= 3,
        "four_of_a_kind": most == 4 if options.four_kind_exact else most >= 4,
        "full_house": sorted(c)[-2:] == [2, 3]
        or (most == 5 and not options.full_requires_distinct),
        "small_straight": _has_run(faces, 4),
        "large_straight": _has_run(faces, 5),
        "general": most == 5,
        "chance": True,
    }[category]
    if not met:
        return 0
    return _FIXED_VALUE.get(category, sum(d))


def _joker_boxes(column: Column, d: Dice, options: GeneralOptions) -> tuple[str, ...] | None:
    """The boxes a Generał may go into by the joker rule, or None when the rule is not in play."""
    if options.general_joker == "off" or len(set(d)) != 1 or column[_INDEX["general"]] is None:
        return None
    empty = tuple(c for c in CATEGORIES if column[_INDEX[c]] is None)
    if options.general_joker == "free":
        return empty
    upper = UPPER[d[0] - 1]
    if column[_INDEX[upper]] is None:
        return (upper,)
    lower = tuple(c for c in empty if c in LOWER)
    return lower or empty


def write_value(
    column: Column,
    values: Sequence[int],
    category: str,
    options: GeneralOptions = DEFAULT,
    *,
    first_throw: bool = False,
) -> Entry | None:
    """What writing five dice in a box of a sheet column gives; None if the box cannot take them.

    A box cannot take the dice when it is filled, or when the forced joker sends a Generał
    elsewhere. The entry is the box value (``category_points``; with a joker in play the lower boxes
    take their full value: Full 25, small straight 30, large straight 40, the sums for the rest),
    times ``first_roll_multiplier`` when the dice are from the turn's first throw. The bonus is
    ``extra_general_bonus`` when the dice are a Generał and the column's Generał box holds 50.

    >>> sheet = (None,) * 11 + (50, None)
    >>> write_value(sheet, [6, 6, 6, 6, 6], "chance", GeneralOptions(extra_general_bonus=100))
    Entry(points=30, bonus=100)
    >>> free = GeneralOptions(general_joker="free")
    >>> write_value(sheet, [6, 6, 6, 6, 6], "full_house", free)
    Entry(points=0, bonus=0)
    >>> sixes_filled = (None,) * 5 + (24,) + (None,) * 5 + (50, None)
    >>> write_value(sixes_filled, [6, 6, 6, 6, 6], "full_house", free)
    Entry(points=25, bonus=0)
    >>> forced = GeneralOptions(general_joker="forced")
    >>> write_value(sheet, [6, 6, 6, 6, 6], "chance", forced) is None
    True
    """
    _check_category(category)
    d = _five(values)
    if len(column) != len(CATEGORIES):
        raise ValueError(f"a sheet column has {len(CATEGORIES)} boxes, not {len(column)}")
    if column[_INDEX[category]] is not None:
        return None
    joker = _joker_boxes(column, d, options)
    if joker is not None and category not in joker:
        return None
    # A Generał is a joker in the lower boxes only once the upper box of its face is filled:
    # Verhoeff's free choice allows any box before that, but scored by its own condition (Full
    # and the straights 0); the forced joker cannot reach a lower box before that anyway.
    upper_filled = column[_INDEX[UPPER[d[0] - 1]]] is not None
    if joker is not None and category in LOWER and upper_filled:
        points = _FIXED_VALUE.get(category, sum(d))
    else:
        points = category_points(d, category, options)
    if first_throw:
        points *= options.first_roll_multiplier
    bonus = 0
    if options.extra_general_bonus and len(set(d)) == 1 and column[_INDEX["general"]] == 50:
        bonus = options.extra_general_bonus
    return Entry(points, bonus)


def box_choices(
    column: Column,
    values: Sequence[int],
    options: GeneralOptions = DEFAULT,
    *,
    first_throw: bool = False,
) -> dict[str, Entry]:
    """Every box of a sheet column the dice may be written in now, with what each gives.

    >>> choices = box_choices((None,) * 13, [2, 3, 4, 5, 6])
    >>> choices["large_straight"], choices["small_straight"], choices["general"]
    (Entry(points=40, bonus=0), Entry(points=30, bonus=0), Entry(points=0, bonus=0))
    """
    out = {}
    for category in CATEGORIES:
        entry = write_value(column, values, category, options, first_throw=first_throw)
        if entry is not None:
            out[category] = entry
    return out


def upper_sum(column: Column) -> int:
    """The sum of the filled upper boxes (Jedynki..Szóstki) of a column.

    >>> upper_sum((3, 6, None, 8) + (None,) * 9)
    17
    """
    return sum(v for v in column[:6] if v is not None)


def column_total(column: Column, bonus: int = 0, options: GeneralOptions = DEFAULT) -> int:
    """A column's score: its entries, the upper bonus when enabled and earned, and Generał bonuses.

    >>> column = (3, 6, 12, 16, 10, 18, 17, 24, 25, 30, 40, 50, 19)
    >>> column_total(column), column_total(column, options=GeneralOptions(upper_bonus=35))
    (270, 305)
    """
    total = sum(v for v in column if v is not None) + bonus
    if options.upper_bonus is not None and upper_sum(column) >= UPPER_BONUS_THRESHOLD:
        total += options.upper_bonus
    return total


@dataclass(frozen=True)
class GeneralState:
    """Every sheet, whose turn it is and the dice of that turn."""

    players: tuple[str, ...]
    sheets: tuple[tuple[Column, ...], ...]  # [player][column]
    bonuses: tuple[tuple[int, ...], ...]  # extra Generał bonuses, [player][column]
    player: int = 0
    dice: Dice = ()  # the five dice after the turn's last throw; () before its first throw
    kept: Dice | None = None  # the dice held while the others are being thrown again
    throws: int = 0  # throws made this turn


def _dice_text(d: Sequence[int]) -> str:
    return " ".join(map(str, d)) if d else "none"


class General(Game[GeneralState, GeneralOptions]):
    """Generał: fill thirteen boxes (or 39 on a three-column sheet) with the best five dice."""

    game_id = "general"
    name = "Generał"
    aliases = ("generał", "kosci")
    options_type = GeneralOptions
    score_names = CATEGORIES
    min_players = 2  # RULES §2.1: 2+ players

    def initial_state(self, players: Sequence[str]) -> GeneralState:
        """Empty sheets, the first seat to throw."""
        n = len(players)
        cols = self.options.columns
        return GeneralState(
            tuple(players),
            tuple((EMPTY_COLUMN,) * cols for _ in range(n)),
            tuple((0,) * cols for _ in range(n)),
        )

    # -- pure helpers bound to these options ------------------------------------------------------

    def score_all(self, values: Sequence[int]) -> dict[str, int]:
        """Every category with what the dice score in it on an empty sheet (0 where unmet).

        >>> General().score_all([1, 1, 1, 3, 5])["ones"]
        3
        """
        return {c: category_points(values, c, self.options) for c in CATEGORIES}

    def column_totals(self, state: GeneralState, player: int) -> tuple[int, ...]:
        """One player's score per sheet column."""
        return tuple(
            column_total(col, bonus, self.options)
            for col, bonus in zip(state.sheets[player], state.bonuses[player], strict=True)
        )

    def _gains(self, state: GeneralState) -> list[JSON]:
        """Per column, what each box the dice may go into would add to the total now."""
        if self.phase(state) is not Phase.DECIDE:
            return []
        out: list[JSON] = []
        for i, choices in self._choices(state):
            column = state.sheets[state.player][i]
            bonus = state.bonuses[state.player][i]
            before = column_total(column, bonus, self.options)
            gains = {}
            for c, e in choices.items():
                k = _INDEX[c]
                after = column[:k] + (e.points,) + column[k + 1 :]
                gains[c] = column_total(after, bonus + e.bonus, self.options) - before
            out.append(gains)
        return out

    # -- the engine ------------------------------------------------------------------------------

    def _finished(self, state: GeneralState) -> bool:
        return all(None not in col for sheet in state.sheets for col in sheet)

    def phase(self, state: GeneralState) -> Phase:
        if self._finished(state):
            return Phase.FINISHED
        if not state.dice or state.kept is not None:
            return Phase.ROLL
        return Phase.DECIDE

    def to_move(self, state: GeneralState) -> int | None:
        return None if self._finished(state) else state.player

    def players(self, state: GeneralState) -> tuple[str, ...]:
        return state.players

    def totals(self, state: GeneralState) -> tuple[int, ...]:
        return tuple(sum(self.column_totals(state, p)) for p in range(len(state.players)))

    def roll_size(self, state: GeneralState) -> int:
        if self.phase(state) is not Phase.ROLL:
            return 0
        return N_DICE - len(state.kept or ())

    def _choices(self, state: GeneralState) -> list[tuple[int, dict[str, Entry]]]:
        """Per column, the boxes the current dice may be written in."""
        sheet = state.sheets[state.player]
        first = state.throws == 1
        return [
            (i, box_choices(col, state.dice, self.options, first_throw=first))
            for i, col in enumerate(sheet)
        ]

    def legal_actions(self, state: GeneralState) -> tuple[Action, ...]:
        phase = self.phase(state)
        if phase is Phase.FINISHED:
            return ()
        if phase is Phase.ROLL:
            return tuple(Roll(d) for d, _ in self.roll_outcomes(state))
        actions: list[Action] = [
            Score(c, i) for i, choices in self._choices(state) for c in choices
        ]
        if state.throws < MAX_THROWS:
            actions.extend(Keep(k) for k in sub_multisets(state.dice) if len(k) < N_DICE)
        return tuple(actions)

    def _apply(self, state: GeneralState, action: Action) -> GeneralState:
        if isinstance(action, Roll):
            return replace(
                state,
                dice=tuple(sorted((state.kept or ()) + action.dice)),
                kept=None,
                throws=state.throws + 1,
            )
        if isinstance(action, Keep):
            return replace(state, kept=action.dice)
        assert isinstance(action, Score)
        p, col = state.player, action.column
        column = state.sheets[p][col]
        entry = write_value(
            column, state.dice, action.category, self.options, first_throw=state.throws == 1
        )
        assert entry is not None
        i = _INDEX[action.category]
        new_column = column[:i] + (entry.points,) + column[i + 1 :]
        sheet = state.sheets[p][:col] + (new_column,) + state.sheets[p][col + 1 :]
        bonus = list(state.bonuses[p])
        bonus[col] += entry.bonus
        return replace(
            state,
            sheets=state.sheets[:p] + (sheet,) + state.sheets[p + 1 :],
            bonuses=state.bonuses[:p] + (tuple(bonus),) + state.bonuses[p + 1 :],
            player=(p + 1) % len(state.players),
            dice=(),
            kept=None,
            throws=0,
        )

    def outcome(self, state: GeneralState) -> Outcome | None:
        if not self._finished(state):
            return None
        totals = self.totals(state)
        best = max(totals)
        winners = tuple(i for i, t in enumerate(totals) if t == best)
        return Outcome(winners, totals, Ending("every box is filled", EndReason.LAST_ROUND))

    # -- refusals --------------------------------------------------------------------------------

    def _not_thrown(self, state: GeneralState, label: str) -> Reason:
        """Nothing thrown yet, or dice still to be thrown: nothing to hold or write."""
        if not state.dice:
            return Reason(f"cannot {label}: no dice have been thrown this turn", Refusal.NOT_THROWN)
        n = self.roll_size(state)
        return Reason(
            f"cannot {label}: throw the {'1 die' if n == 1 else f'{n} dice'} not kept first",
            Refusal.THROW_REST,
            {"n": n},
        )

    def _label(self, action: Score) -> str:
        if self.options.columns > 1:
            return f"score {action.category} in column {action.column + 1}"
        return f"score {action.category}"

    def explain_illegal(self, state: GeneralState, action: Action) -> str:
        if isinstance(action, Score):
            _check_category(action.category)
            if not 0 <= action.column < self.options.columns:
                raise InvalidAction(
                    f"there is no column {action.column + 1}: the sheet has "
                    f"{self.options.columns} column{'s' if self.options.columns > 1 else ''}"
                )
        phase = self.phase(state)
        if phase is Phase.FINISHED:
            return Reason(f"cannot {action}: the game is over", Refusal.GAME_OVER)
        no_throws = state.throws >= MAX_THROWS
        if isinstance(action, Roll):
            if phase is Phase.DECIDE:
                if no_throws:
                    return Reason(
                        "cannot roll: no throws left this turn; score a category",
                        Refusal.NO_THROWS_LEFT,
                    )
                return Reason(
                    "cannot roll now: keep the dice to hold first (keep nothing to throw all five "
                    "again), or score a category",
                    Refusal.HOLD_FIRST,
                    {"n": N_DICE},
                )
            return super().explain_illegal(state, action)
        if isinstance(action, Keep):
            if phase is Phase.ROLL:
                return self._not_thrown(state, str(action))
            if no_throws:
                return Reason(
                    f"cannot {action}: no throws left this turn; score a category",
                    Refusal.NO_THROWS_LEFT,
                )
            if not contains(state.dice, action.dice):
                return Reason(
                    f"cannot {action}: the dice showing are {_dice_text(state.dice)}",
                    Refusal.KEEP_NOT_SHOWING,
                    {"dice": list(action.dice), "shown": list(state.dice)},
                )
            return Reason(
                "cannot keep all five dice: keep at most four and throw the rest, "
                "or score a category",
                Refusal.KEEP_ALL_OR_SCORE,
                {"n": N_DICE, "most": N_DICE - 1},
            )
        if isinstance(action, Score):
            label = self._label(action)
            if phase is Phase.ROLL:
                return self._not_thrown(state, label)
            column = state.sheets[state.player][action.column]
            written = column[_INDEX[action.category]]
            if written is not None:
                return Reason(
                    f"cannot {label}: it is already written ({written})",
                    Refusal.ALREADY_WRITTEN,
                    {"box": action.category, "column": action.column + 1, "written": written},
                )
            joker = _joker_boxes(column, state.dice, self.options)
            assert joker is not None
            face = state.dice[0]
            upper = UPPER[face - 1]
            if joker == (upper,):
                return Reason(
                    f"cannot {label}: by the joker rule a Generał of {face}s goes into {upper} "
                    "while that box is empty",
                    Refusal.JOKER_UPPER,
                    {"face": face, "box": upper},
                )
            return Reason(
                f"cannot {label}: by the joker rule a Generał goes into an empty lower box "
                f"while there is one ({', '.join(joker)})",
                Refusal.JOKER_LOWER,
                {"boxes": list(joker)},
            )
        return super().explain_illegal(state, action)

    # -- the JSON view ---------------------------------------------------------------------------

    def render_text(self, state: GeneralState) -> str:
        """The sheet for ``pipcam play``: every box per player, and what the dice write now."""
        info = self.describe(state)
        parts = []
        for col in range(self.options.columns):
            cells = [sheet["columns"][col]["boxes"] for sheet in info["sheets"]]
            gains = info["can_score"][col] if info["can_score"] else None
            totals = [sheet["columns"][col]["total"] for sheet in info["sheets"]]
            title = f"column {col + 1}\n" if self.options.columns > 1 else ""
            parts.append(
                title + sheet_text(CATEGORIES, state.players, cells, now=gains, totals=totals)
            )
        if state.dice:
            kept = f", holding {' '.join(map(str, state.kept))}" if state.kept else ""
            shown = " ".join(map(str, state.dice))
            parts.append(f"dice: {shown} (throw {state.throws} of {MAX_THROWS}{kept})")
        return "\n".join(parts)

    def describe(self, state: GeneralState) -> dict[str, JSON]:
        sheets: list[JSON] = []
        for p, name in enumerate(state.players):
            columns: list[JSON] = []
            for col, bonus in zip(state.sheets[p], state.bonuses[p], strict=True):
                earned = upper_sum(col) >= UPPER_BONUS_THRESHOLD
                columns.append(
                    {
                        "boxes": dict(zip(CATEGORIES, col, strict=True)),
                        "upper_sum": upper_sum(col),
                        "upper_bonus": self.options.upper_bonus
                        if self.options.upper_bonus is not None and earned
                        else 0,
                        "general_bonus": bonus,
                        "total": column_total(col, bonus, self.options),
                    }
                )
            sheets.append(
                {"name": name, "columns": columns, "total": sum(self.column_totals(state, p))}
            )
        return {
            "dice": list(state.dice),
            "kept": list(state.kept or ()),
            "throws": state.throws,
            "throws_left": MAX_THROWS - state.throws,
            "sheets": sheets,
            "can_score": self._gains(state),
        }

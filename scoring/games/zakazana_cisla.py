"""Na zakázaná čísla (RULES §6.5): dice showing a forbidden number drop out, the rest score."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from scoring.core import (
    JSON,
    Action,
    Ending,
    EndReason,
    Forbidden,
    Game,
    Keep,
    Outcome,
    Phase,
    Roll,
    option,
)
from scoring.dice import Dice
from scoring.errors import Reason, Refusal

N_DICE = 6


@dataclass(frozen=True)
class ZakazanaCislaOptions:
    """Options of Na zakázaná čísla (RULES §6.5)."""

    rounds: int = option(
        1,
        "rounds played (every player one turn a round); the points of all rounds add up",
        lowest=1,
    )
    new_forbidden_each_round: bool = option(
        default=False,
        doc="with several rounds, throw new forbidden numbers before every round "
        "(the original text throws them once, at the start of the game)",
    )


def throw_points(roll: Sequence[int], forbidden: Sequence[int]) -> tuple[int, int]:
    """The pips a throw adds and how many of its dice are thrown again (RULES §6.5).

    >>> throw_points([1, 2, 3, 4, 5, 6], [2, 5])
    (14, 4)
    >>> throw_points([2, 5, 2, 5, 2, 2], [2, 5])
    (0, 0)
    """
    rest = [face for face in roll if face not in forbidden]
    return sum(rest), len(rest)


@dataclass(frozen=True)
class ZakazanaCislaState:
    """The forbidden numbers, whose turn it is, the dice still in play and the points so far."""

    players: tuple[str, ...]
    sheet: tuple[tuple[int, ...], ...]  # per player, the points of each finished turn
    forbidden: Dice = ()  # empty until the set-up throw (again before each round with that option)
    player: int = 0
    round: int = 0  # 0-based
    in_play: int = N_DICE
    turn_total: int = 0
    last: Dice = ()
    finished: bool = False


def _dice_word(n: int) -> str:
    return f"{n} die" if n == 1 else f"{n} dice"


class ZakazanaCisla(Game[ZakazanaCislaState, ZakazanaCislaOptions]):
    """Na zakázaná čísla: one turn each; throw until every die has shown a forbidden number."""

    game_id = "zakazana-cisla"
    name = "Na zakázaná čísla"
    aliases = ("forbidden",)
    options_type = ZakazanaCislaOptions

    def initial_state(self, players: Sequence[str]) -> ZakazanaCislaState:
        """No forbidden numbers yet, everyone at 0."""
        return ZakazanaCislaState(tuple(players), ((),) * len(players))

    def phase(self, state: ZakazanaCislaState) -> Phase:
        """Set-up until the forbidden numbers are known, then rolls until the last turn ends."""
        if state.finished:
            return Phase.FINISHED
        return Phase.SETUP if not state.forbidden else Phase.ROLL

    def to_move(self, state: ZakazanaCislaState) -> int | None:
        """The thrower; in set-up, the round's first player throws the forbidden numbers."""
        return None if state.finished else state.player

    def players(self, state: ZakazanaCislaState) -> tuple[str, ...]:
        """The players in seating order."""
        return state.players

    def totals(self, state: ZakazanaCislaState) -> tuple[int, ...]:
        """Every player's points, the turn under way included (a turn can lose nothing)."""
        return tuple(
            sum(turns) + (state.turn_total if p == state.player and not state.finished else 0)
            for p, turns in enumerate(state.sheet)
        )

    def roll_size(self, state: ZakazanaCislaState) -> int:
        """The dice still in play, when a roll is due."""
        return state.in_play if self.phase(state) is Phase.ROLL else 0

    def legal_actions(self, state: ZakazanaCislaState) -> tuple[Action, ...]:
        """Every pair of different faces in set-up; every result of the dice in play afterwards."""
        if self.phase(state) is Phase.SETUP:
            return tuple(Forbidden([a, b]) for a in range(1, 7) for b in range(a + 1, 7))
        return tuple(Roll(d) for d, _ in self.roll_outcomes(state))

    def _apply(self, state: ZakazanaCislaState, action: Action) -> ZakazanaCislaState:
        if isinstance(action, Forbidden):
            return replace(state, forbidden=action.numbers, in_play=N_DICE)
        assert isinstance(action, Roll)
        points, left = throw_points(action.dice, state.forbidden)
        state = replace(state, turn_total=state.turn_total + points, in_play=left, last=action.dice)
        return state if left else self._end_turn(state)

    def _end_turn(self, state: ZakazanaCislaState) -> ZakazanaCislaState:
        p = state.player
        sheet = tuple(
            turns + (state.turn_total,) if i == p else turns for i, turns in enumerate(state.sheet)
        )
        nxt = (p + 1) % len(state.players)
        rnd = state.round + (nxt == 0)
        finished = rnd >= self.options.rounds
        forbidden = state.forbidden
        if nxt == 0 and not finished and self.options.new_forbidden_each_round:
            forbidden = ()
        return replace(
            state,
            sheet=sheet,
            player=nxt,
            round=rnd,
            in_play=N_DICE,
            turn_total=0,
            forbidden=forbidden,
            finished=finished,
        )

    def outcome(self, state: ZakazanaCislaState) -> Outcome | None:
        """Highest total wins; equal totals share the win (RULES §6.5, C77)."""
        if not state.finished:
            return None
        totals = self.totals(state)
        best = max(totals)
        winners = tuple(p for p, t in enumerate(totals) if t == best)
        rounds = self.options.rounds
        said = f"highest score after {rounds} round{'s' * (rounds > 1)}"
        return Outcome(winners, totals, Ending(said, EndReason.LAST_ROUND))

    def explain_illegal(self, state: ZakazanaCislaState, action: Action) -> str:
        """Why an action is refused, in the table's words."""
        phase = self.phase(state)
        if phase is Phase.FINISHED:
            return super().explain_illegal(state, action)
        if isinstance(action, Forbidden):
            if phase is not Phase.SETUP:
                a, b = state.forbidden
                return Reason(
                    f"the forbidden numbers are already {a} and {b}; "
                    f"allowed: {self.allowed_text(state)}",
                    Refusal.FORBIDDEN_ALREADY,
                    {"a": a, "b": b, **self.allowed_params(state)},
                )
            if len(action.numbers) != 2:
                got = len(action.numbers)
                return Reason(
                    f"the forbidden numbers are thrown with two dice, not {got}",
                    Refusal.FORBIDDEN_TWO_DICE,
                    {"got": got},
                )
            return Reason(
                "the forbidden numbers must differ: a double is thrown again",
                Refusal.FORBIDDEN_DOUBLE,
            )
        if phase is Phase.SETUP:
            return Reason(
                f"cannot {action}: first throw two dice for the forbidden numbers "
                "(two different faces)",
                Refusal.FORBIDDEN_FIRST,
            )
        if isinstance(action, Roll):
            n, got = state.in_play, len(action.dice)
            return Reason(
                f"cannot roll {_dice_word(got)}: "
                f"{_dice_word(n)} {'is' if n == 1 else 'are'} still in play",
                Refusal.WRONG_DICE_COUNT,
                {"n": n, "got": got},
            )
        if isinstance(action, Keep):
            return Reason(
                f"cannot {action}: dice showing a forbidden number are put aside by themselves; "
                f"allowed: {self.allowed_text(state)}",
                Refusal.ASIDE_BY_THEMSELVES,
                self.allowed_params(state),
            )
        return super().explain_illegal(state, action)

    def describe(self, state: ZakazanaCislaState) -> dict[str, JSON]:
        """The forbidden numbers, the dice in play, the turn's points and every player's turns."""
        set_aside = [face for face in state.last if face in state.forbidden]
        return {
            "forbidden": list(state.forbidden),
            "dice_in_play": self.roll_size(state),
            "turn_total": state.turn_total,
            "last_roll": list(state.last),
            "set_aside": set_aside,
            "round": min(state.round + 1, self.options.rounds),
            "rounds": self.options.rounds,
            "scores": [
                {"name": name, "score": score, "turns": list(turns)}
                for name, score, turns in zip(
                    state.players, self.totals(state), state.sheet, strict=True
                )
            ],
        }

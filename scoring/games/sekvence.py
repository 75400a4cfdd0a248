"""Sekvence (RULES §6.4): six dice, one throw a turn, the run from 1 scores; first to 100 wins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from scoring.core import JSON, Action, Ending, EndReason, Game, Outcome, Phase, Roll, option
from scoring.dice import Dice
from scoring.errors import InvalidAction


@dataclass(frozen=True)
class SekvenceOptions:
    """Options of Sekvence (RULES §6.4)."""

    target: int = option(100, "first to reach this many points wins at once", lowest=1)
    three_ones_reset: bool = option(
        default=False,
        doc="a throw with three or more 1s scores nothing and wipes the thrower's points",
    )


def run_points(roll: Sequence[int]) -> int:
    """Points of a throw: 5 per face of the run 1-2-3-... beyond the 1 (RULES §6.4).

    >>> run_points([1, 2, 3, 5, 5, 6]), run_points([2, 3, 4, 5, 6, 6])
    (10, 0)
    """
    length = 0
    while length + 1 in roll:
        length += 1
    return 5 * (length - 1) if length >= 2 else 0


@dataclass(frozen=True)
class SekvenceState:
    """Scores, whose throw it is, and the last throw."""

    players: tuple[str, ...]
    scores: tuple[int, ...]
    player: int = 0
    last: Dice = ()
    winner: int | None = None


class Sekvence(Game[SekvenceState, SekvenceOptions]):
    """Sekvence: throw six dice once a turn; the run of faces from 1 scores."""

    game_id = "sekvence"
    name = "Sekvence"
    aliases = ()
    options_type = SekvenceOptions
    n_dice = 6

    def initial_state(self, players: Sequence[str]) -> SekvenceState:
        """Everyone at 0, the first seat to throw."""
        return SekvenceState(tuple(players), (0,) * len(players))

    def points(self, roll: Sequence[int]) -> int:
        """What a throw adds under these options (0 for a wiping throw of three 1s)."""
        if self.options.three_ones_reset and roll.count(1) >= 3:
            return 0
        return run_points(roll)

    def phase(self, state: SekvenceState) -> Phase:
        return Phase.FINISHED if state.winner is not None else Phase.ROLL

    def to_move(self, state: SekvenceState) -> int | None:
        return None if state.winner is not None else state.player

    def players(self, state: SekvenceState) -> tuple[str, ...]:
        return state.players

    def totals(self, state: SekvenceState) -> tuple[int, ...]:
        return state.scores

    def roll_size(self, state: SekvenceState) -> int:
        return 0 if state.winner is not None else self.n_dice

    def legal_actions(self, state: SekvenceState) -> tuple[Action, ...]:
        return tuple(Roll(d) for d, _ in self.roll_outcomes(state))

    def _apply(self, state: SekvenceState, action: Action) -> SekvenceState:
        assert isinstance(action, Roll)
        p = state.player
        scores = list(state.scores)
        if self.options.three_ones_reset and action.dice.count(1) >= 3:
            scores[p] = 0
        else:
            scores[p] += run_points(action.dice)
        winner = p if scores[p] >= self.options.target else None
        return replace(
            state,
            scores=tuple(scores),
            player=(p + 1) % len(state.players),
            last=action.dice,
            winner=winner,
        )

    def outcome(self, state: SekvenceState) -> Outcome | None:
        if state.winner is None:
            return None
        target = self.options.target
        name = state.players[state.winner]
        said = Ending(f"reached {target}", EndReason.TARGET, {"player": name, "target": target})
        return Outcome((state.winner,), state.scores, said)

    def score_roll(self, roll: Sequence[int]) -> dict[str, JSON]:
        """``pipcam score``: the points of one throw under these options."""
        if len(roll) != self.n_dice:
            raise InvalidAction(
                f"{self.name} throws all {self.n_dice} dice, not {len(roll)} ({list(roll)!r})"
            )
        return {"points": self.points(roll)}

    def describe(self, state: SekvenceState) -> dict[str, JSON]:
        return {"last_roll": list(state.last), "target": self.options.target}

"""The Czech 6-dice variant (RULES §6.2): doubling kinds, record from 350, confirm six dice."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from scoring.core import JSON, option
from scoring.dice import Dice
from scoring.errors import Reason, Refusal
from scoring.jeopardy import (
    CombinationTable,
    JeopardyGame,
    JeopardyState,
    Turn,
    doubling_kinds,
    end_at_target,
)


@dataclass(frozen=True)
class SestKostekOptions:
    """Options of the 6-dice variant (RULES §6.2)."""

    target: int = option(
        10000, "the first to reach this score wins at once (agreed per game)", lowest=1
    )
    min_record: int = option(350, "the smallest turn total that may be recorded", lowest=0)
    max_dice_left_to_record: int | None = option(
        None,
        "a turn may be recorded only with at most this many dice left (off: any) [AMBIG-C3]",
        lowest=0,
    )
    confirmation: Literal["single_throw", "hot_dice", "off"] = option(
        "single_throw",
        "when six scoring dice must be confirmed by one more throw of all six: after one throw "
        "of six that all scored, after any hot dice, or never [AMBIG-C4]",
    )
    three_pairs_allow_same: bool = option(
        default=True, doc="three pairs may repeat a face (2 2 2 2 5 5, six of a kind) [AMBIG-C5]"
    )
    straight_value: int = option(1500, "points for 1-2-3-4-5-6", lowest=0)
    three_pairs_value: int = option(1000, "points for three pairs", lowest=0)


SState = JeopardyState[None]


class SestKostek(JeopardyGame[None, SestKostekOptions]):
    """The 6-dice variant: kinds double per extra die, six scoring dice must be confirmed."""

    game_id = "sest-kostek"
    name = "Kostky: 6 kostek"
    aliases = ("six-dice",)
    options_type = SestKostekOptions
    n_dice = 6

    @cached_property
    def _table(self) -> CombinationTable:
        o = self.options
        kinds = doubling_kinds()
        return CombinationTable.build(
            singles={1: 100, 5: 50},
            kinds=kinds,
            straights=[((1, 2, 3, 4, 5, 6), o.straight_value)],
            three_pairs=o.three_pairs_value,
            three_pairs_allow_same=o.three_pairs_allow_same,
        )

    def table(self) -> CombinationTable:
        return self._table

    def initial_extra(self, n_players: int) -> None:
        return None

    def _must_roll_after(self, turn: Turn, kept: Dice) -> str:
        mode = self.options.confirmation
        all_scored = len(kept) == len(turn.dice)
        if mode == "single_throw" and all_scored and len(turn.dice) == self.n_dice:
            return Reason(
                "all six dice scored in one throw: confirm them with one more throw of all six",
                Refusal.CONFIRM_SIX,
            )
        if mode == "hot_dice" and all_scored:
            return Reason(
                "every die has scored: confirm with one more throw of all six", Refusal.CONFIRM_SIX
            )
        return ""

    def bank_refusal(self, state: SState, total: int, dice_left: int) -> str | None:
        o = self.options
        limit = o.max_dice_left_to_record
        if total < o.min_record:
            return Reason(f"at least {o.min_record} needed", Refusal.AT_LEAST, {"n": o.min_record})
        if limit is not None and dice_left > limit:
            return Reason(
                f"at most {limit} dice may be left to record; you have {dice_left}",
                Refusal.DICE_LEFT,
                {"most": limit, "left": dice_left},
            )
        return None

    def end_check(self, state: SState) -> SState:
        return end_at_target(state, self.options.target)

    def describe_extra(self, state: SState) -> dict[str, JSON]:
        return {"target": self.options.target, "must_confirm": bool(state.turn.must_roll)}

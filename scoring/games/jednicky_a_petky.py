"""Jedničky a pětky, the Czech 10 000 (RULES §6.1): record only at 400+ with at most 2 dice left."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from scoring.core import JSON, option
from scoring.errors import Reason, Refusal
from scoring.jeopardy import CombinationTable, JeopardyGame, JeopardyState, end_at_target


@dataclass(frozen=True)
class JednickyAPetkyOptions:
    """Options of Jedničky a pětky (RULES §6.1)."""

    target: int = option(10000, "the first to reach this score wins at once", lowest=1)
    min_record: int = option(400, "the smallest turn total that may be recorded", lowest=0)
    min_record_strict: bool = option(
        default=False, doc="the turn total must be more than min_record, not at least [AMBIG-C2]"
    )
    max_dice_left_to_record: int | None = option(
        2,
        "a turn may be recorded only with at most this many dice left to throw (off: any)",
        lowest=0,
    )
    three_pairs_allow_same: bool = option(
        default=True, doc="three pairs may repeat a face (2 2 2 2 5 5, six of a kind)"
    )
    straight_value: int = option(3000, "points for 1-2-3-4-5-6", lowest=0)
    three_pairs_value: int = option(1500, "points for three pairs", lowest=0)


CzechState = JeopardyState[None]


class JednickyAPetky(JeopardyGame[None, JednickyAPetkyOptions]):
    """Jedničky a pětky: six dice, triples at face × 100, the first to the target wins."""

    game_id = "jednicky-a-petky"
    name = "Jedničky a pětky"
    aliases = ("ones-and-fives",)
    options_type = JednickyAPetkyOptions
    n_dice = 6

    @cached_property
    def _table(self) -> CombinationTable:
        o = self.options
        return CombinationTable.build(
            singles={1: 100, 5: 50},
            kinds={(f, 3): 1000 if f == 1 else 100 * f for f in range(1, 7)},
            straights=[((1, 2, 3, 4, 5, 6), o.straight_value)],
            three_pairs=o.three_pairs_value,
            three_pairs_allow_same=o.three_pairs_allow_same,
        )

    def table(self) -> CombinationTable:
        return self._table

    def initial_extra(self, n_players: int) -> None:
        return None

    def bank_refusal(self, state: CzechState, total: int, dice_left: int) -> str | None:
        o = self.options
        too_low = total <= o.min_record if o.min_record_strict else total < o.min_record
        limit = o.max_dice_left_to_record
        too_many = limit is not None and dice_left > limit
        need = f"more than {o.min_record}" if o.min_record_strict else f"at least {o.min_record}"
        low = Refusal.MORE_THAN if o.min_record_strict else Refusal.AT_LEAST
        if too_low and too_many:
            # The two refusals in one sentence: the phones word each and join them.
            return Reason(
                f"{need} needed and at most {limit} dice left; you have {dice_left}",
                Refusal.NEED_AND_DICE_LEFT,
                {
                    "need": {"code": low.value, "params": {"n": o.min_record}},
                    "left": {
                        "code": Refusal.DICE_LEFT.value,
                        "params": {"most": limit, "left": dice_left},
                    },
                },
            )
        if too_low:
            return Reason(f"{need} needed", low, {"n": o.min_record})
        if too_many:
            return Reason(
                f"at most {limit} dice may be left to record; you have {dice_left}",
                Refusal.DICE_LEFT,
                {"most": limit, "left": dice_left},
            )
        return None

    def end_check(self, state: CzechState) -> CzechState:
        return end_at_target(state, self.options.target)

    def describe_extra(self, state: CzechState) -> dict[str, JSON]:
        return {"target": self.options.target}

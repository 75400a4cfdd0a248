"""Kymppitonni, the Finnish 10 000 (RULES §3): doubling kinds, the four-2s rule and the break."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

from scoring.core import JSON, Ending, EndReason, option
from scoring.dice import Dice
from scoring.errors import Reason, Refusal
from scoring.jeopardy import (
    CombinationTable,
    EventNote,
    JeopardyGame,
    JeopardyState,
    NoteKind,
    TurnEvent,
    doubling_kinds,
    highest,
)


@dataclass(frozen=True)
class KymppitonniOptions:
    """Options of Kymppitonni (RULES §3.6); the defaults are the original text's rules."""

    straight_value: int = option(1000, "points for 1-2-3-4-5-6 (Niemo's table: 2000)", lowest=0)
    three_pairs: int | None = option(2000, "points for three pairs, or off", on=2000, lowest=0)
    four_plus_pair: Literal["separate", "three_pairs"] = option(
        "separate",
        "3333+55 scores as four of a kind plus a pair (700) or as three pairs (2000) [AMBIG-K3]; "
        "six of a kind as three pairs follows the same choice",
    )
    four_twos_rule: bool = option(
        default=True, doc="a roll with four 2s ends the turn with 0 (nothing subtracted)"
    )
    four_twos_trigger: Literal["exactly_4", "at_least_4"] = option(
        "exactly_4", "how many 2s in one roll fire the four-2s rule [AMBIG-K2]"
    )
    four_twos_keeps_turn_total: bool = option(
        default=False, doc="the four-2s roll banks the turn total instead of losing it [AMBIG-K1]"
    )
    break_rule: bool = option(default=True, doc="the break (breikki) and its bonus (§3.4)")
    break_threshold: int = option(2000, "a banked turn of more than this is a break", lowest=0)
    break_bonus: int = option(
        1000, "paid once to the break holder when another player hits target", lowest=0
    )
    break_after_cancel: Literal["record", "any"] = option(
        "record",
        "after two equal breaks cancel, a new break must beat the cancelled value (record) "
        "or any break over the threshold counts again (any) [AMBIG-K4]",
    )
    equalizing_round: bool = option(
        default=True, doc="after someone reaches the target, the round is played to the end"
    )
    winner_rule: Literal["highest", "first_reacher"] = option(
        "highest", "who wins after the equalizing round [AMBIG-K6]"
    )
    first_roll_reset: bool = option(
        default=False, doc="a bust on the first roll of a turn wipes the banked score (nollaus)"
    )
    min_bank: int = option(0, "the smallest turn total that may be banked", lowest=0)
    entry_min: int = option(
        0, "the smallest turn total that may be banked while the score is 0", lowest=0
    )
    target: int = option(10000, "the score that ends the game", lowest=1)


@dataclass(frozen=True, slots=True)
class BreakState:
    """Who holds the break and for how much; who reached the target first."""

    holder: int | None = None
    value: int = 0
    bonus_given: bool = False
    trigger: int | None = None


KState = JeopardyState[BreakState]


class Kymppitonni(JeopardyGame[BreakState, KymppitonniOptions]):
    """Kymppitonni: the player sets aside any scoring dice and banks whenever he likes."""

    game_id = "kymppitonni"
    name = "Kymppitonni"
    aliases = ("10000-fi",)
    options_type = KymppitonniOptions
    presets = {"niemo": {"straight_value": 2000, "first_roll_reset": True}}
    n_dice = 6
    min_players = 2  # RULES §3.1: 2+ players

    @cached_property
    def _table(self) -> CombinationTable:
        o = self.options
        kinds = doubling_kinds()
        if o.four_twos_rule:
            # The rolls that fire the rule never reach a set-aside, and four 2s are worth nothing.
            del kinds[(2, 4)]
            if o.four_twos_trigger == "at_least_4":
                del kinds[(2, 5)], kinds[(2, 6)]
        return CombinationTable.build(
            singles={1: 100, 5: 50},
            kinds=kinds,
            straights=[((1, 2, 3, 4, 5, 6), o.straight_value)],
            three_pairs=o.three_pairs,
            three_pairs_allow_same=o.four_plus_pair == "three_pairs",
        )

    def table(self) -> CombinationTable:
        return self._table

    def initial_extra(self, n_players: int) -> BreakState:
        return BreakState()

    def _fires_four_twos(self, roll: Dice) -> bool:
        twos = roll.count(2)
        if self.options.four_twos_trigger == "at_least_4":
            return twos >= 4
        return twos == 4

    def turn_ender(self, roll: Sequence[int]) -> str | None:
        """Four 2s score nothing, whatever else the throw holds (RULES K10, K15)."""
        if not self.options.four_twos_rule or not self._fires_four_twos(tuple(roll)):
            return None
        total = "banked" if self.options.four_twos_keeps_turn_total else "lost"
        return f"four 2s: the turn passes, the turn's total so far {total}"

    def special_roll(self, state: KState, roll: Dice) -> KState | None:
        if self.turn_ender(roll) is None:
            return None
        name = state.players[state.turn.player]
        total = state.turn.total
        if self.options.four_twos_keeps_turn_total and total:
            banked = self.on_bank(state, total)
            event = TurnEvent("four_twos_banked", name, roll, points=total)
            return replace(banked, last_event=event.sentence(), event=event)
        event = TurnEvent("four_twos", name, roll, points=total)
        return replace(state, last_event=event.sentence(), event=event)

    def on_bust(self, state: KState, roll: Dice) -> KState:
        if self.options.first_roll_reset and state.turn.rolls == 1:
            p = state.turn.player
            scores = list(state.scores)
            scores[p] = 0
            return replace(state, scores=tuple(scores))
        return state

    def bank_refusal(self, state: KState, total: int, dice_left: int) -> str | None:
        o = self.options
        if total < o.min_bank:
            return Reason(f"at least {o.min_bank} needed", Refusal.AT_LEAST, {"n": o.min_bank})
        if state.scores[state.turn.player] == 0 and total < o.entry_min:
            return Reason(
                f"at least {o.entry_min} needed to get on the board",
                Refusal.ON_THE_BOARD,
                {"n": o.entry_min},
            )
        return None

    def on_bank(self, state: KState, total: int) -> KState:
        o = self.options
        p = state.turn.player
        scores = list(state.scores)
        scores[p] += total
        brk = state.extra
        name = state.players[p]
        notes: list[EventNote] = []
        if o.break_rule and total > o.break_threshold:
            brk, note = self._update_break(brk, p, total, state.players)
            if note is not None:
                notes.append(note)
        if scores[p] >= o.target and brk.trigger is None:
            brk = replace(brk, trigger=p)
            notes.append(
                EventNote.of(
                    NoteKind.REACHED, f"{name} reached {o.target}", player=name, target=o.target
                )
            )
            holder = brk.holder
            if o.break_rule and holder is not None and holder != p and not brk.bonus_given:
                scores[holder] += o.break_bonus
                brk = replace(brk, bonus_given=True)
                notes.append(
                    EventNote.of(
                        NoteKind.BREAK_BONUS,
                        f"break bonus {o.break_bonus} to {state.players[holder]}",
                        points=o.break_bonus,
                        player=state.players[holder],
                    )
                )
        banked = TurnEvent("bank", name, points=total, notes=tuple(notes))
        return replace(
            state, scores=tuple(scores), extra=brk, last_event=banked.sentence(), event=banked
        )

    def _update_break(
        self, brk: BreakState, p: int, total: int, names: tuple[str, ...]
    ) -> tuple[BreakState, EventNote | None]:
        """The break after player ``p`` banked ``total`` over the threshold (RULES §3.4)."""
        if total > brk.value or (self.options.break_after_cancel == "any" and brk.holder is None):
            held = EventNote.of(
                NoteKind.BREAK,
                f"{names[p]} holds the break ({total})",
                player=names[p],
                points=total,
            )
            return replace(brk, holder=p, value=total), held
        if total == brk.value and brk.holder is not None and brk.holder != p:
            cancel = EventNote.of(
                NoteKind.BREAKS_CANCEL,
                f"the breaks of {total} cancel: nobody holds it",
                points=total,
            )
            return replace(brk, holder=None), cancel
        return brk, None

    def end_check(self, state: KState) -> KState:
        o = self.options
        trigger = state.extra.trigger
        if trigger is None:
            return state
        last_seat = len(state.players) - 1
        if o.equalizing_round and state.turn.player != last_seat:
            return state
        if o.winner_rule == "first_reacher":
            winners: tuple[int, ...] = (trigger,)
        else:
            winners = highest(state.scores)
        name = state.players[trigger]
        code = EndReason.TARGET_ROUND if o.equalizing_round else EndReason.TARGET
        return replace(
            state,
            winners=winners,
            end_reason=Ending(
                f"{name} reached {o.target}", code, {"player": name, "target": o.target}
            ),
        )

    def sure_winners(self, state: KState) -> tuple[int, ...] | None:
        """With ``winner_rule = first_reacher`` the first to reach the target wins, whatever the
        equalizing turns bring (RULES §3.5, AMBIG-K6)."""
        trigger = state.extra.trigger
        if (
            state.winners is None
            and trigger is not None
            and self.options.winner_rule == "first_reacher"
        ):
            return (trigger,)
        return state.winners

    def describe_extra(self, state: KState) -> dict[str, JSON]:
        brk = state.extra
        return {
            "break": {
                "holder": state.players[brk.holder] if brk.holder is not None else None,
                "value": brk.value,
                "bonus_given": brk.bonus_given,
            },
            "target": self.options.target,
            "reached_target": state.players[brk.trigger] if brk.trigger is not None else None,
        }

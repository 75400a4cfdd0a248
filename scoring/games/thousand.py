"""The Russian dice game 1000 (RULES §4): opening, pits, dump truck, overtaking, barrel and bolts.

The scoring dice are set aside by themselves (the best reading of every roll); the player only
chooses to pass or to roll on. Every pass goes through the steps of RULES §4.4 in their order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

from scoring.core import JSON, Action, Bank, Ending, EndReason, option
from scoring.dice import Dice
from scoring.errors import InvalidOption, Reason, Refusal, Setup
from scoring.jeopardy import (
    CombinationTable,
    EventNote,
    JeopardyGame,
    JeopardyState,
    NoteKind,
    TurnEvent,
)

TARGET = 1000
"""The score the game is named after: reached from the barrel, it wins."""

Pit = tuple[int, int]
"""A pit as (bottom, top): a player inside must pass with at least ``top``."""

_STRAIGHTS: dict[str, tuple[int, int] | None] = {
    "125/250": (125, 250),
    "150/250": (150, 250),
    "off": None,
}


def parse_pits(text: str | None) -> tuple[Pit, ...]:
    """The pits of the ``pits`` option ("200-300,600-700"), sorted; ``InvalidOption`` if malformed.

    >>> parse_pits("600-700, 200-300")
    ((200, 300), (600, 700))
    >>> parse_pits(None)
    ()
    """
    if text is None or text.strip().lower() in ("", "off", "none"):
        return ()
    pits: list[Pit] = []
    for part in text.split(","):
        bottom, dash, top = part.strip().partition("-")
        if not dash or not bottom.strip().isdigit() or not top.strip().isdigit():
            raise InvalidOption(
                f"option pits takes ranges like 200-300,600-700 (or off), not {text!r}",
                code=Setup.OPTION_FORMAT,
                params={"option": "pits", "value": text, "example": "200-300,600-700"},
            )
        low, high = int(bottom), int(top)
        if low >= high:
            raise InvalidOption(
                f"option pits: the pit {part.strip()} must go from low to high",
                code=Setup.PIT_ORDER,
                params={"option": "pits", "pit": part.strip()},
            )
        pits.append((low, high))
    pits.sort()
    for (_, high), (low, _) in zip(pits, pits[1:], strict=False):
        if low < high:
            raise InvalidOption(
                f"option pits: the pits of {text!r} overlap",
                code=Setup.PITS_OVERLAP,
                params={"option": "pits", "value": text},
            )
    return tuple(pits)


@dataclass(frozen=True)
class ThousandOptions:
    """Options of 1000 (RULES §4.8); the defaults are the original text's rules."""

    open_min: int = option(50, "the turn total that opens the game (the first pass) [AMBIG-T1]")
    straights: Literal["125/250", "150/250", "off"] = option(
        "125/250", "points for the straights 1-2-3-4-5 / 2-3-4-5-6, or off"
    )
    pits: str | None = option(
        "200-300,600-700",
        "the pits as bottom-top ranges; a player in one must pass to at least its top [AMBIG-T2]",
    )
    pits_exclusive: bool = option(
        default=False, doc="a score on a pit's bottom (200, 600) is not yet in the pit"
    )
    dump_truck: int | None = option(
        555,
        "a pass that brings the score to exactly this wipes it to 0 (off: no dump truck)",
        on=555,
    )
    overtake_penalty: int = option(
        50, "taken from a player whose score another passes over (0: no overtaking penalty)"
    )
    barrel_at: int = option(880, "a pass to at least this score puts the player on the barrel")
    barrel_attempts: int = option(3, "burned turns on the barrel before the player falls off")
    barrel_fall_penalty: int = option(100, "taken from a player who falls off the barrel")
    third_fall: int | None = option(
        3, "the fall (counted per player) from which a fall wipes the whole score, or off", on=3
    )
    barrel_clamp: bool = option(
        default=True, doc="climbing sets the score to barrel_at (so 120 is needed) [AMBIG-T3]"
    )
    barrel_required: bool = option(
        default=True,
        doc="a pass to 1000 or more from below the barrel only climbs it (off: it wins)",
    )
    bolts_limit: int | None = option(3, "bolts (burned turns) that cost bolt_penalty, or off", on=3)
    bolt_penalty: int = option(100, "taken when a player's bolts reach bolts_limit")
    bolts_consecutive: bool = option(
        default=False, doc="every pass clears the bolts, so only bolts in a row count [AMBIG-T7]"
    )
    hot_dice_forced: bool = option(
        default=False, doc="when all five dice have scored they must be thrown again (no pass)"
    )
    exact_1000: bool = option(
        default=False, doc="a pass from the barrel to more than 1000 burns the turn"
    )
    score_floor: int | None = option(
        0, "penalties never take a score below this (off: scores may go negative) [AMBIG-T6]", on=0
    )
    five_of_a_kind_wins: bool = option(
        default=False, doc="five equal dice in one roll of all five win the game at once"
    )

    def check(self) -> None:
        """Refuse option values that make no game."""
        parse_pits(self.pits)
        if not 0 < self.barrel_at < TARGET:
            raise InvalidOption(
                f"option barrel_at must be between 1 and 999, not {self.barrel_at}",
                code=Setup.OPTION_BETWEEN,
                params={
                    "option": "barrel_at",
                    "least": 1,
                    "most": TARGET - 1,
                    "value": self.barrel_at,
                },
            )
        for name in ("barrel_attempts", "third_fall", "bolts_limit"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InvalidOption(
                    f"option {name} must be at least 1, not {value}",
                    code=Setup.OPTION_AT_LEAST,
                    params={"option": name, "least": 1, "value": value},
                )
        for name in ("open_min", "overtake_penalty", "barrel_fall_penalty", "bolt_penalty"):
            value = getattr(self, name)
            if value < 0:
                raise InvalidOption(
                    f"option {name} cannot be negative, not {value}",
                    code=Setup.OPTION_AT_LEAST,
                    params={"option": name, "least": 0, "value": value},
                )


@dataclass(frozen=True, slots=True)
class ThousandExtra:
    """Per-player flags of 1000 (one entry per seat), and the winner once someone has won.

    ``barrel_used`` counts the burned barrel turns of a player on the barrel. ``notes`` carries
    what a burned turn did (bolt, fall) until the engine has written its own event.
    """

    opened: tuple[bool, ...]
    bolts: tuple[int, ...]
    on_barrel: tuple[bool, ...]
    barrel_used: tuple[int, ...]
    falls: tuple[int, ...]
    winner: int | None = None
    notes: tuple[EventNote, ...] = ()


ThousandState = JeopardyState[ThousandExtra]


@dataclass(frozen=True, slots=True)
class _Fall:
    """A fall off the barrel: its English words and its numbers (no penalty: all is lost)."""

    text: str
    params: dict[str, int]

    @property
    def all_lost(self) -> bool:
        return "penalty" not in self.params


def _set(values: Sequence[int], index: int, value: int) -> tuple[int, ...]:
    out = list(values)
    out[index] = value
    return tuple(out)


def _flag(values: Sequence[bool], index: int, *, value: bool) -> tuple[bool, ...]:
    out = list(values)
    out[index] = value
    return tuple(out)


class Thousand(JeopardyGame[ThousandExtra, ThousandOptions]):
    """1000: the scoring dice are set aside by themselves; pass past every minimum; win at 1000."""

    game_id = "thousand"
    name = "Тысяча"
    aliases = ("1000", "tysiacha")
    options_type = ThousandOptions
    min_players = 2
    n_dice = 5
    auto_keep = True
    bank_word = "pass"

    # -- the table and the derived rules --------------------------------------------------------

    @cached_property
    def _table(self) -> CombinationTable:
        kinds: dict[tuple[int, int], int] = {}
        for face in range(1, 7):
            value = 10 if face == 1 else face  # RULES §4.2 closed form: a 1 counts as 10
            kinds.update({(face, 3): 10 * value, (face, 4): 20 * value, (face, 5): 100 * value})
        values = _STRAIGHTS[self.options.straights]
        straights: list[tuple[tuple[int, ...], int]] = []
        if values is not None:
            straights = [((1, 2, 3, 4, 5), values[0]), ((2, 3, 4, 5, 6), values[1])]
        return CombinationTable.build(singles={1: 10, 5: 5}, kinds=kinds, straights=straights)

    def table(self) -> CombinationTable:
        return self._table

    @cached_property
    def _pits(self) -> tuple[Pit, ...]:
        return parse_pits(self.options.pits)

    def pit(self, score: int) -> Pit | None:
        """The pit a score sits in, or None (RULES §4.3: 200 is in the pit 200-300, 300 is out)."""
        for low, high in self._pits:
            inside_bottom = score > low if self.options.pits_exclusive else score >= low
            if inside_bottom and score < high:
                return (low, high)
        return None

    def pass_minimum(self, state: ThousandState) -> int:
        """The smallest turn total the player to move may pass with (every minimum at once)."""
        p = state.turn.player
        score = state.scores[p]
        extra = state.extra
        need = 0 if extra.opened[p] else self.options.open_min
        pit = self.pit(score)
        if pit is not None:
            need = max(need, pit[1] - score)
        if extra.on_barrel[p]:
            need = max(need, TARGET - score)
        return need

    def _floor(self, score: int, penalty: int) -> int:
        """``score`` less ``penalty``, held at ``score_floor`` (a score below it stays as it is)."""
        floor = self.options.score_floor
        if floor is None:
            return score - penalty
        return max(min(score, floor), score - penalty)

    # -- hooks ----------------------------------------------------------------------------------

    def initial_extra(self, n_players: int) -> ThousandExtra:
        return ThousandExtra(
            opened=(False,) * n_players,
            bolts=(0,) * n_players,
            on_barrel=(False,) * n_players,
            barrel_used=(0,) * n_players,
            falls=(0,) * n_players,
        )

    def hot_dice_forced(self, state: ThousandState) -> bool:
        return self.options.hot_dice_forced

    def bank_refusal(self, state: ThousandState, total: int, dice_left: int) -> str | None:
        p = state.turn.player
        score = state.scores[p]
        need = self.options.open_min
        if not state.extra.opened[p] and total < need:
            return Reason(
                f"to open the game you need {need} in one turn; you have {total}",
                Refusal.OPEN,
                {"need": need, "have": total},
            )
        pit = self.pit(score)
        have = score + total
        if pit is not None and have < pit[1]:
            return Reason(
                f"in the pit {pit[0]}-{pit[1]} you need {pit[1]}; you would have {have}",
                Refusal.PIT,
                {"low": pit[0], "high": pit[1], "have": have},
            )
        if state.extra.on_barrel[p] and have < TARGET:
            return Reason(
                f"on the barrel you need {TARGET}; you would have {have}",
                Refusal.BARREL,
                {"need": TARGET, "have": have},
            )
        return None

    def special_roll(self, state: ThousandState, roll: Dice) -> ThousandState | None:
        if not self.options.five_of_a_kind_wins or len(roll) != 5 or len(set(roll)) != 1:
            return None
        p = state.turn.player
        name = state.players[p]
        event = TurnEvent("five_of_a_kind", name, roll)
        said = event.sentence()
        return replace(
            state,
            extra=replace(state.extra, winner=p),
            end_reason=Ending(said, EndReason.FIVE_OF_A_KIND, {"player": name, "face": roll[0]}),
            last_event=said,
            event=event,
        )

    def on_bank(self, state: ThousandState, total: int) -> ThousandState:
        o = self.options
        p = state.turn.player
        name = state.players[p]
        old = state.scores[p]
        new = old + total
        if new > TARGET and o.exact_1000 and (state.extra.on_barrel[p] or not o.barrel_required):
            # A burned turn records nothing, so it does not open the game either.
            burned = self._burn(state)
            over = TurnEvent(
                "pass_over", name, points=total, total=new, target=TARGET, notes=burned.extra.notes
            )
            return replace(
                burned,
                extra=replace(burned.extra, notes=()),
                last_event=over.sentence(),
                event=over,
            )
        # 1. Opening: kept for good, even after the dump truck.
        extra = replace(state.extra, opened=_flag(state.extra.opened, p, value=True))
        # 2. The win: from the barrel, or straight past it when the barrel is not required.
        if new >= TARGET and (extra.on_barrel[p] or not o.barrel_required):
            won = TurnEvent("pass_wins", name, points=total, total=new)
            return replace(
                state,
                scores=_set(state.scores, p, new),
                extra=replace(extra, winner=p),
                end_reason=Ending(
                    f"{name} reached {new}",
                    EndReason.BARREL if extra.on_barrel[p] else EndReason.PASSED,
                    {"player": name, "points": new},
                ),
                last_event=won.sentence(),
                event=won,
            )
        scores = list(state.scores)
        notes: list[EventNote] = []
        barrel = 0
        # 3. Climbing the barrel throws everyone else off it.
        if not extra.on_barrel[p] and new >= o.barrel_at:
            scores[p] = barrel = o.barrel_at if o.barrel_clamp else new
            extra = replace(
                extra,
                on_barrel=_flag(extra.on_barrel, p, value=True),
                barrel_used=_set(extra.barrel_used, p, 0),
            )
            for q in range(len(scores)):
                if q != p and extra.on_barrel[q]:
                    scores, extra, fall = self._fall(scores, extra, q)
                    kind = NoteKind.THROWN_OFF_ALL if fall.all_lost else NoteKind.THROWN_OFF
                    notes.append(
                        EventNote.of(
                            kind,
                            f"{state.players[q]} is thrown off the barrel: {fall.text}",
                            player=state.players[q],
                            **fall.params,
                        )
                    )
        else:
            # 4. and 5. Only a player who gains exactly the dump truck's score is dumped [AMBIG-T5].
            scores[p] = new
            if o.dump_truck is not None and new == o.dump_truck:
                scores[p] = 0
                notes.append(
                    EventNote.of(
                        NoteKind.DUMP_TRUCK, f"dump truck: {name} is back to 0", player=name
                    )
                )
        # 6. Overtaking is judged on the scores as they are after the climb and the dump.
        if o.overtake_penalty:
            for q in range(len(scores)):
                if q != p and old < scores[q] < scores[p]:
                    scores[q] = self._floor(scores[q], o.overtake_penalty)
                    notes.append(
                        EventNote.of(
                            NoteKind.OVERTAKEN,
                            f"{state.players[q]} is overtaken: -{o.overtake_penalty} ({scores[q]})",
                            player=state.players[q],
                            penalty=o.overtake_penalty,
                            score=scores[q],
                        )
                    )
        if o.bolts_consecutive:
            extra = replace(extra, bolts=_set(extra.bolts, p, 0))
        passed = TurnEvent(
            "pass", name, points=total, total=new, before=old, barrel=barrel, notes=tuple(notes)
        )
        return replace(
            state, scores=tuple(scores), extra=extra, last_event=passed.sentence(), event=passed
        )

    def on_bust(self, state: ThousandState, roll: Dice) -> ThousandState:
        return self._burn(state)

    def end_check(self, state: ThousandState) -> ThousandState:
        winner = state.extra.winner
        if winner is None or state.winners is not None:
            return state
        return replace(state, winners=(winner,))

    def _end_turn(self, state: ThousandState) -> ThousandState:
        # The engine writes its own event for a burned turn; the bolt or fall is added to it here.
        notes = state.extra.notes
        if notes and state.event is not None:
            event = replace(state.event, notes=state.event.notes + notes)
            state = replace(
                state,
                extra=replace(state.extra, notes=()),
                last_event=event.sentence(),
                event=event,
            )
        return super()._end_turn(state)

    def explain_illegal(self, state: ThousandState, action: Action) -> str:
        if state.winners is not None and isinstance(action, Bank):
            return Reason(f"cannot {self.bank_word}: the game is over", Refusal.GAME_OVER)
        return super().explain_illegal(state, action)

    # -- burning and falling --------------------------------------------------------------------

    def _burn(self, state: ThousandState) -> ThousandState:
        """A turn that records nothing: a barrel attempt, or a bolt unless exempt (RULES §4.6)."""
        o = self.options
        p = state.turn.player
        extra = state.extra
        scores = list(state.scores)
        if extra.on_barrel[p]:
            used = extra.barrel_used[p] + 1
            extra = replace(extra, barrel_used=_set(extra.barrel_used, p, used))
            attempts = o.barrel_attempts
            if used < attempts:
                note: EventNote | None = EventNote.of(
                    NoteKind.BARREL_TRY,
                    f"barrel attempt {used} of {attempts} used",
                    used=used,
                    attempts=attempts,
                )
            else:
                scores, extra, fall = self._fall(scores, extra, p)
                note = EventNote.of(
                    NoteKind.BARREL_OFF_ALL if fall.all_lost else NoteKind.BARREL_OFF,
                    f"all {attempts} barrel attempts used, off the barrel: {fall.text}",
                    attempts=attempts,
                    **fall.params,
                )
        elif not extra.opened[p] or self.pit(scores[p]) is not None or o.bolts_limit is None:
            note = None
        else:
            bolts = extra.bolts[p] + 1
            limit = o.bolts_limit
            if bolts < limit:
                note = EventNote.of(
                    NoteKind.BOLT, f"bolt {bolts} of {limit}", bolts=bolts, limit=limit
                )
            else:
                bolts = 0
                scores[p] = self._floor(scores[p], o.bolt_penalty)
                note = EventNote.of(
                    NoteKind.BOLT_PENALTY,
                    f"bolt {limit} of {limit}: -{o.bolt_penalty} ({scores[p]})",
                    limit=limit,
                    penalty=o.bolt_penalty,
                    score=scores[p],
                )
            extra = replace(extra, bolts=_set(extra.bolts, p, bolts))
        notes = (note,) if note is not None else ()
        return replace(state, scores=tuple(scores), extra=replace(extra, notes=notes))

    def _fall(
        self, scores: list[int], extra: ThousandExtra, q: int
    ) -> tuple[list[int], ThousandExtra, _Fall]:
        """Player ``q`` falls off the barrel: -100, or everything from the third fall on (§4.5)."""
        o = self.options
        falls = extra.falls[q] + 1
        scores = list(scores)
        if o.third_fall is not None and falls >= o.third_fall:
            scores[q] = 0
            what = _Fall(f"fall {falls}, the whole score is lost (0)", {"fall": falls})
        else:
            scores[q] = self._floor(scores[q], o.barrel_fall_penalty)
            penalty = o.barrel_fall_penalty
            what = _Fall(
                f"fall {falls}, -{penalty} ({scores[q]})",
                {"fall": falls, "penalty": penalty, "score": scores[q]},
            )
        extra = replace(
            extra,
            on_barrel=_flag(extra.on_barrel, q, value=False),
            barrel_used=_set(extra.barrel_used, q, 0),
            falls=_set(extra.falls, q, falls),
        )
        return scores, extra, what

    # -- views ----------------------------------------------------------------------------------

    def describe_extra(self, state: ThousandState) -> dict[str, JSON]:
        o = self.options
        extra = state.extra
        rows: list[JSON] = []
        for q, name in enumerate(state.players):
            pit = self.pit(state.scores[q])
            rows.append(
                {
                    "name": name,
                    "score": state.scores[q],
                    "opened": extra.opened[q],
                    "bolts": extra.bolts[q],
                    "on_barrel": extra.on_barrel[q],
                    "barrel_attempts_left": (
                        o.barrel_attempts - extra.barrel_used[q] if extra.on_barrel[q] else None
                    ),
                    "falls": extra.falls[q],
                    "pit": f"{pit[0]}-{pit[1]}" if pit else None,
                }
            )
        out: dict[str, JSON] = {"standing": rows, "barrel_at": o.barrel_at}
        if state.winners is None:
            out["pass_minimum"] = self.pass_minimum(state)
        return out

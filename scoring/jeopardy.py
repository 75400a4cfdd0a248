"""The shared engine of the four jeopardy games (RULES §1): combination tables and the turn.

A combination table lists every scoring group (a sub-multiset of one roll with its points). ``best``
and ``exact`` search every decomposition of a roll exhaustively (memoised on the count vector), so a
roll that can be read two ways always gets the better reading: no greedy priority list.

``JeopardyGame`` runs the roll / set aside / roll again or bank turn that the four games share; each
game is a subclass that supplies its table and the few hooks where its rules differ (who chooses the
scoring dice, when a bank is allowed, what a bank or a bust does to the scores, when the game ends).
"""

from __future__ import annotations

import itertools
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import ClassVar, Generic, TypeVar

from scoring.core import JSON, Action, Bank, Ending, EndReason, Game, Keep, Outcome, Phase, Roll
from scoring.dice import FACES, Counts, Dice, contains, counts, from_counts, sub_multisets
from scoring.errors import IllegalAction, InvalidAction, Reason, Refusal

# --------------------------------------------------------------------------------------------------
# Combination tables


@dataclass(frozen=True, slots=True)
class Group:
    """One scoring combination: which dice (as a count vector), its points and a name."""

    name: str
    counts: Counts
    points: int


@dataclass(frozen=True, slots=True)
class Reading:
    """A decomposition of dice into scoring groups: points, the dice used, the dice left over."""

    points: int
    groups: tuple[Group, ...]
    scoring: Dice
    rest: Dice

    def to_json(self) -> dict[str, JSON]:
        """The ``pipcam score`` object of a jeopardy roll."""
        return {
            "points": self.points,
            "scoring": list(self.scoring),
            "rest": list(self.rest),
            "groups": [{"name": g.name, "dice": list(from_counts(g.counts))} for g in self.groups],
        }


def _sub(a: Counts, b: Counts) -> Counts | None:
    out = tuple(x - y for x, y in zip(a, b, strict=True))
    return None if min(out) < 0 else out  # type: ignore[return-value]


def _kind_counts(face: int, n: int) -> Counts:
    return tuple(n if f == face else 0 for f in FACES)  # type: ignore[return-value]


@dataclass(frozen=True)
class CombinationTable:
    """Every scoring group of a game, built from the shapes of RULES §1.1.

    >>> t = CombinationTable.build(singles={1: 100, 5: 50}, kinds={(1, 3): 1000, (2, 3): 200})
    >>> t.best([1, 1, 1, 5, 2, 3]).points
    1050
    >>> t.exact([1, 5, 2]) is None
    True
    """

    groups: tuple[Group, ...]
    _best: dict[Counts, tuple[int, int, tuple[Group, ...]]] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )
    _exact: dict[Counts, tuple[int, tuple[Group, ...]] | None] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    @classmethod
    def build(
        cls,
        *,
        singles: Mapping[int, int],
        kinds: Mapping[tuple[int, int], int],
        straights: Sequence[tuple[Sequence[int], int]] = (),
        three_pairs: int | None = None,
        three_pairs_allow_same: bool = False,
    ) -> CombinationTable:
        """A table from singles {face: points}, kinds {(face, n): points}, straights and pairs."""
        groups: list[Group] = []
        for face, pts in sorted(singles.items()):
            groups.append(Group(f"single {face}", _kind_counts(face, 1), pts))
        for (face, n), pts in sorted(kinds.items()):
            groups.append(Group(f"{n} x {face}", _kind_counts(face, n), pts))
        for faces, pts in straights:
            groups.append(Group("straight " + "".join(map(str, faces)), counts(faces), pts))
        if three_pairs is not None:
            seen: set[Counts] = set()
            for combo in itertools.combinations_with_replacement(FACES, 3):
                c = counts(combo * 2)
                if c in seen:
                    continue
                if len(set(combo)) < 3 and not three_pairs_allow_same:
                    continue
                seen.add(c)
                groups.append(Group("three pairs", c, three_pairs))
        return cls(tuple(groups))

    def _best_counts(self, c: Counts) -> tuple[int, int, tuple[Group, ...]]:
        """(points, dice used, groups) of the best reading; ties prefer more dice (RULES §1.2)."""
        hit = self._best.get(c)
        if hit is not None:
            return hit
        result: tuple[int, int, tuple[Group, ...]] = (0, 0, ())
        for g in self.groups:
            rest = _sub(c, g.counts)
            if rest is None:
                continue
            pts, used, groups = self._best_counts(rest)
            cand = (pts + g.points, used + sum(g.counts), (g, *groups))
            if cand[:2] > result[:2]:
                result = cand
        self._best[c] = result
        return result

    def _exact_counts(self, c: Counts) -> tuple[int, tuple[Group, ...]] | None:
        """(points, groups) of the best reading that uses every die, or None if none does."""
        if not any(c):
            return (0, ())
        if c in self._exact:
            return self._exact[c]
        result: tuple[int, tuple[Group, ...]] | None = None
        for g in self.groups:
            rest = _sub(c, g.counts)
            if rest is None:
                continue
            sub = self._exact_counts(rest)
            if sub is not None and (result is None or sub[0] + g.points > result[0]):
                result = (sub[0] + g.points, (g, *sub[1]))
        self._exact[c] = result
        return result

    def best(self, roll: Sequence[int]) -> Reading:
        """The most points a roll can give, with the dice that give them (RULES §1.2 ``best``)."""
        c = counts(roll)
        pts, _, groups = self._best_counts(c)
        used = tuple(sum(g.counts[i] for g in groups) for i in range(6))
        rest = tuple(a - b for a, b in zip(c, used, strict=True))
        return Reading(pts, groups, from_counts(used), from_counts(rest))

    def exact(self, selection: Sequence[int]) -> Reading | None:
        """The value of a set-aside in which every die scores, else None (``exact``)."""
        hit = self._exact_counts(counts(selection))
        if hit is None:
            return None
        return Reading(hit[0], hit[1], tuple(sorted(selection)), ())

    def selections(self, roll: Sequence[int]) -> tuple[Dice, ...]:
        """Every legal set-aside of a roll: non-empty sub-multisets in which every die scores."""
        return tuple(s for s in sub_multisets(roll) if s and self.exact(s) is not None)


# --------------------------------------------------------------------------------------------------
# The turn


@dataclass(frozen=True, slots=True)
class Turn:
    """The running turn: whose it is, the points not yet written, the dice to throw or on the table.

    ``pool`` counts the dice left to throw; 0 after hot dice means all of them may be thrown again.
    ``dice`` is the roll on the table waiting to be set aside (empty in the ROLL phase).
    """

    player: int
    total: int = 0
    pool: int = 0
    dice: Dice = ()
    rolls: int = 0
    kept: tuple[Dice, ...] = ()  # what was set aside after each roll, for the phones
    must_roll: str = ""  # why banking is not allowed before the next throw (confirmation), or ""


X = TypeVar("X")
OptT = TypeVar("OptT")


EVENT_KINDS = (
    "roll",
    "keep",
    "bust",
    "bank",
    "pass",  # 1000's bank: the score before and after it
    "pass_over",  # 1000: a pass past 1000 when it must be exact burns the turn
    "pass_wins",  # 1000: a pass that wins
    "five_of_a_kind",  # 1000: five equal dice win at once (an option)
    "four_twos",  # Kymppitonni: four 2s end the turn with 0
    "four_twos_banked",  # Kymppitonni: four 2s end the turn, its total banked (an option)
)
"""Every kind of :class:`TurnEvent`; the phones word kind ``k`` by their key ``ev.k``."""


class NoteKind(StrEnum):
    """What a game's own rules add to an event; the phones word kind ``k`` by ``ev.note.k``."""

    BOLT = "bolt"  # 1000: a burned turn is a bolt, ``bolts`` of ``limit``
    BOLT_PENALTY = "bolt_penalty"  # 1000: the last bolt of ``limit`` costs ``penalty``
    BARREL_TRY = "barrel_try"  # 1000: barrel attempt ``used`` of ``attempts`` burned
    BARREL_OFF = "barrel_off"  # 1000: every attempt used, off the barrel: fall ``fall``
    BARREL_OFF_ALL = "barrel_off_all"  # the same, a fall that loses the whole score
    THROWN_OFF = "thrown_off"  # 1000: ``player`` is thrown off the barrel: fall ``fall``
    THROWN_OFF_ALL = "thrown_off_all"  # the same, a fall that loses the whole score
    DUMP_TRUCK = "dump_truck"  # 1000: ``player`` is back to 0
    OVERTAKEN = "overtaken"  # 1000: ``player`` is overtaken and loses ``penalty``
    BREAK = "break"  # Kymppitonni: ``player`` holds the break of ``points``
    BREAKS_CANCEL = "breaks_cancel"  # Kymppitonni: two breaks of ``points`` cancel
    REACHED = "reached"  # Kymppitonni: ``player`` reached ``target``
    BREAK_BONUS = "break_bonus"  # Kymppitonni: the break bonus ``points`` to ``player``


@dataclass(frozen=True, slots=True)
class EventNote:
    """What a game's own rule added to a turn's event (a bolt, the barrel, a break), as data:
    ``kind`` and ``params`` for the phones, ``text`` its English in ``last_event``."""

    kind: NoteKind
    text: str
    params: tuple[tuple[str, JSON], ...] = ()

    @classmethod
    def of(cls, kind: NoteKind, text: str, **params: JSON) -> EventNote:
        """A note with its params by name."""
        return cls(kind, text, tuple(params.items()))

    def to_json(self) -> dict[str, JSON]:
        """The note as the phones get it: its kind and params."""
        return {"kind": self.kind.value, **dict(self.params)}


@dataclass(frozen=True, slots=True)
class TurnEvent:
    """What a throw, a set-aside, a bust or a bank did, as data: a phone words it in its own
    language, and :meth:`sentence` is the engine's English ``last_event`` for it."""

    kind: str  # one of EVENT_KINDS
    player: str
    dice: Dice = ()
    # keep: what the set-aside scored; bust, four_twos: the turn total lost; bank, pass,
    # pass_over, pass_wins, four_twos_banked: the points banked (passed)
    points: int = 0
    total: int = 0  # keep: the turn total after it; pass, pass_over, pass_wins: the new score
    left: int = 0  # keep: the dice left to throw; 0 when every die scored
    again: int = 0  # keep: the dice thrown again when every die scored
    before: int = 0  # pass: the score before it
    barrel: int = 0  # pass: the score on the barrel it climbed (0: it did not)
    target: int = 0  # pass_over: the score a pass must not go past
    notes: tuple[EventNote, ...] = ()  # what the game's own rules added, in order

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise ValueError(f"unknown turn event {self.kind!r}; the kinds are {EVENT_KINDS}")

    def sentence(self) -> str:
        """The English sentence of ``last_event``: the event, then its notes."""
        return "; ".join([self._said(), *(note.text for note in self.notes)])

    def _said(self) -> str:
        faces = " ".join(map(str, self.dice))
        if self.kind == "roll":
            return f"{self.player} threw {faces}"
        if self.kind == "bust":
            lost = f", losing {self.points}" if self.points else ""
            return f"{self.player} threw {faces}: no combination{lost}"
        if self.kind == "keep":
            rest = (
                f"{self.left} {'die' if self.left == 1 else 'dice'} left"
                if self.left
                else f"every die scored, all {self.again} again"
            )
            aside = f"{self.player} set aside {faces} for {self.points}"
            return f"{aside}: turn total {self.total}, {rest}"
        if self.kind == "pass":
            climbed = f", on the barrel at {self.barrel}" if self.barrel else ""
            return f"{self.player} passed {self.points}: {self.before} -> {self.total}{climbed}"
        if self.kind == "pass_over":
            return (
                f"{self.player} passed {self.points}: {self.total} is over {self.target}, "
                "the turn burns"
            )
        if self.kind == "pass_wins":
            return f"{self.player} passed {self.points}: {self.total}, and wins"
        if self.kind == "five_of_a_kind":
            return f"{self.player} threw five {self.dice[0]}s and wins at once"
        if self.kind == "four_twos":
            lost = f", {self.points} lost" if self.points else ""
            return f"{self.player} threw four 2s: the turn passes with 0{lost}"
        if self.kind == "four_twos_banked":
            return f"{self.player} threw four 2s: the turn passes, {self.points} banked"
        return f"{self.player} banked {self.points}"

    def to_json(self) -> dict[str, JSON]:
        """The state's ``event`` object: the kind, the player, the numbers of that kind, and
        the notes when there are any."""
        out: dict[str, JSON] = {"kind": self.kind, "player": self.player}
        if self.kind not in ("bank", "pass", "pass_over", "pass_wins"):
            out["dice"] = list(self.dice)
        if self.kind == "keep":
            out.update(points=self.points, total=self.total, left=self.left, again=self.again)
        elif self.kind in ("bust", "four_twos"):
            out["lost"] = self.points
        elif self.kind in ("bank", "four_twos_banked"):
            out["points"] = self.points
        elif self.kind == "pass":
            out.update(points=self.points, before=self.before, after=self.total)
            if self.barrel:
                out["barrel"] = self.barrel
        elif self.kind in ("pass_over", "pass_wins"):
            out.update(points=self.points, after=self.total)
            if self.target:
                out["target"] = self.target
        if self.notes:
            out["notes"] = [note.to_json() for note in self.notes]
        return out


@dataclass(frozen=True, slots=True)
class JeopardyState(Generic[X]):
    """Scores, the turn, and the game-specific part ``extra`` (breaks, barrels, ...)."""

    players: tuple[str, ...]
    scores: tuple[int, ...]
    turn: Turn
    extra: X
    round: int = 1
    turns_taken: tuple[int, ...] = ()
    winners: tuple[int, ...] | None = None
    end_reason: str = ""
    last_event: str = ""
    # The plain event behind ``last_event``; a game's own words (a bolt, a break) outdate it.
    event: TurnEvent | None = None


class JeopardyGame(Game[JeopardyState[X], OptT], Generic[X, OptT]):
    """The roll / set aside / roll again or bank turn of RULES §1, with hooks for each game."""

    n_dice: ClassVar[int] = 6
    auto_keep: ClassVar[bool] = False  # Thousand: the best reading is set aside by itself
    bank_word: ClassVar[str] = "bank"

    # -- hooks ----------------------------------------------------------------------------------

    @abstractmethod
    def table(self) -> CombinationTable:
        """The combination table under these options."""

    @abstractmethod
    def initial_extra(self, n_players: int) -> X:
        """The game-specific state at the start."""

    def bank_refusal(self, state: JeopardyState[X], total: int, dice_left: int) -> str | None:
        """Why a bank of ``total`` with ``dice_left`` dice left is not allowed, or None."""
        return None

    def special_roll(self, state: JeopardyState[X], roll: Dice) -> JeopardyState[X] | None:
        """A roll that ends the turn by a special rule (four 2s), or None for the normal flow."""
        return None

    def turn_ender(self, roll: Sequence[int]) -> str | None:
        """How a throw that scores nothing by a special rule ends the turn (four 2s), or None;
        ``pipcam score`` says it, as ``special_roll`` applies it."""
        return None

    def on_bank(self, state: JeopardyState[X], total: int) -> JeopardyState[X]:
        """Write a banked turn total (the turn is then passed on by the engine)."""
        scores = list(state.scores)
        scores[state.turn.player] += total
        return replace(state, scores=tuple(scores))

    def on_bust(self, state: JeopardyState[X], roll: Dice) -> JeopardyState[X]:
        """What a roll with no combination does beyond losing the turn total."""
        return state

    def end_check(self, state: JeopardyState[X]) -> JeopardyState[X]:
        """Called after every finished turn: set ``winners`` when the game is over."""
        return state

    def sure_winners(self, state: JeopardyState[X]) -> tuple[int, ...] | None:
        """The seats that win whatever happens from here (the coach banks rather than risk it):
        the winners of a finished game; a game whose winner is settled before its last turns
        says so here."""
        return state.winners

    def hot_dice_forced(self, state: JeopardyState[X]) -> bool:
        """Whether a player with every die set aside must throw them all again."""
        return False

    # -- Game interface -------------------------------------------------------------------------

    def initial_state(self, players: Sequence[str]) -> JeopardyState[X]:
        """Everyone at 0, the first seat about to throw all the dice."""
        n = len(players)
        return JeopardyState(
            players=tuple(players),
            scores=(0,) * n,
            turn=Turn(player=0, pool=self.n_dice),
            extra=self.initial_extra(n),
            turns_taken=(0,) * n,
        )

    def players(self, state: JeopardyState[X]) -> tuple[str, ...]:
        return state.players

    def totals(self, state: JeopardyState[X]) -> tuple[int, ...]:
        return state.scores

    def phase(self, state: JeopardyState[X]) -> Phase:
        if state.winners is not None:
            return Phase.FINISHED
        return Phase.DECIDE if state.turn.dice else Phase.ROLL

    def to_move(self, state: JeopardyState[X]) -> int | None:
        return None if state.winners is not None else state.turn.player

    def outcome(self, state: JeopardyState[X]) -> Outcome | None:
        if state.winners is None:
            return None
        # The games set ``end_reason`` to an Ending as they set ``winners``.
        assert isinstance(state.end_reason, Ending)
        return Outcome(state.winners, state.scores, state.end_reason)

    def roll_size(self, state: JeopardyState[X]) -> int:
        if state.winners is not None or state.turn.dice:
            return 0
        return state.turn.pool or self.n_dice

    def dice_left(self, turn: Turn) -> int:
        """Dice left to throw, 0 after hot dice (the rules of recording speak of "dice left")."""
        return turn.pool

    def _projected_bank(self, state: JeopardyState[X]) -> tuple[int, int, str] | None:
        """(total, dice left, must_roll) if the player banked now, or None if nothing to bank."""
        turn = state.turn
        if turn.dice:
            # Banking with dice on the table sets aside their best reading first (one button press).
            reading = self.table().best(turn.dice)
            if reading.points == 0:
                return None
            left = len(reading.rest)
            return (turn.total + reading.points, left, self._must_roll_after(turn, reading.scoring))
        if turn.rolls == 0:
            return None
        return (turn.total, turn.pool, turn.must_roll)

    def _must_roll_after(self, turn: Turn, kept: Dice) -> str:
        """A reason the player must throw again after setting ``kept`` aside (or "")."""
        return ""

    def bank_problem(self, state: JeopardyState[X]) -> str | None:
        """Why banking is refused now, or None if it is allowed."""
        if state.winners is not None:
            return Reason("the game is over", Refusal.GAME_OVER)
        projected = self._projected_bank(state)
        if projected is None:
            return Reason("nothing to bank yet: throw the dice first", Refusal.NOTHING_TO_BANK)
        total, left, must_roll = projected
        if must_roll:
            return must_roll
        if left == 0 and self.hot_dice_forced(state):
            return Reason(
                f"every die has scored, so all {self.n_dice} must be thrown again",
                Refusal.ALL_AGAIN,
                {"n": self.n_dice},
            )
        return self.bank_refusal(state, total, left)

    def legal_actions(self, state: JeopardyState[X]) -> tuple[Action, ...]:
        if state.winners is not None:
            return ()
        actions: list[Action] = []
        n = self.roll_size(state)
        if n:
            actions.extend(Roll(d) for d, _ in self.roll_outcomes(state))
        elif not self.auto_keep:
            actions.extend(Keep(s) for s in self.table().selections(state.turn.dice))
        if self.bank_problem(state) is None:
            actions.append(Bank())
        return tuple(actions)

    def explain_illegal(self, state: JeopardyState[X], action: Action) -> str:
        if state.winners is not None:
            word = self.bank_word if isinstance(action, Bank) else str(action)
            return Reason(f"cannot {word}: the game is over", Refusal.GAME_OVER)
        turn = state.turn
        shown = " ".join(map(str, turn.dice))
        if isinstance(action, Bank):
            problem = self.bank_problem(state) or "not allowed now"
            projected = self._projected_bank(state)
            amount = f" {projected[0]}" if projected else ""
            text = f"cannot {self.bank_word}{amount}: {problem}"
            return problem.worded(text) if isinstance(problem, Reason) else text
        if isinstance(action, Keep):
            dice = list(action.dice)
            if self.auto_keep:
                return Reason(
                    "cannot keep: in this game the scoring dice are set aside by themselves",
                    Refusal.AUTO_KEEP,
                )
            if not turn.dice:
                n = self.roll_size(state)
                return Reason(
                    f"cannot {action}: no dice are on the table; roll {n} dice",
                    Refusal.NO_DICE_TO_KEEP,
                    {"n": n},
                )
            if not action.dice:
                return Reason(
                    "cannot keep nothing: set aside at least one scoring die", Refusal.KEEP_NOTHING
                )
            if not contains(turn.dice, action.dice):
                return Reason(
                    f"cannot {action}: the dice showing are {shown}",
                    Refusal.KEEP_NOT_SHOWING,
                    {"dice": dice, "shown": list(turn.dice)},
                )
            best = self.table().best(turn.dice)
            return Reason(
                f"cannot {action}: every die set aside must score; "
                f"the best set-aside of {shown} is {' '.join(map(str, best.scoring))} "
                f"for {best.points}",
                Refusal.KEEP_NOT_SCORING,
                {
                    "dice": dice,
                    "shown": list(turn.dice),
                    "best": list(best.scoring),
                    "points": best.points,
                },
            )
        if isinstance(action, Roll) and turn.dice:
            return Reason(
                f"cannot {action}: set aside scoring dice from {shown} first (or {self.bank_word})",
                Refusal.KEEP_FIRST,
                {"shown": list(turn.dice)},
            )
        return super().explain_illegal(state, action)

    def preview(self, state: JeopardyState[X], action: Action) -> int:
        """Points an action adds to the turn: a set-aside's value, or the whole turn on a bank.

        >>> from scoring.games.kymppitonni import Kymppitonni
        >>> game = Kymppitonni()
        >>> state = game.apply(game.initial_state(["Ann"]), Roll([1, 1, 5, 2, 3, 4]))
        >>> game.preview(state, Keep([1, 5])), game.preview(state, Bank())
        (150, 250)
        """
        if not self.is_legal(state, action):
            raise IllegalAction(self.explain_illegal(state, action))
        if isinstance(action, Keep):
            reading = self.table().exact(action.dice)
            return reading.points if reading else 0
        if isinstance(action, Bank):
            projected = self._projected_bank(state)
            return projected[0] if projected else 0
        return 0

    # -- applying -------------------------------------------------------------------------------

    def _apply(self, state: JeopardyState[X], action: Action) -> JeopardyState[X]:
        if isinstance(action, Roll):
            return self._roll(state, action.dice)
        if isinstance(action, Keep):
            return self._keep(state, action.dice)
        if isinstance(action, Bank):
            return self._bank(state)
        raise AssertionError(f"unexpected {action!r}")  # pragma: no cover

    def _roll(self, state: JeopardyState[X], roll: Dice) -> JeopardyState[X]:
        turn = replace(state.turn, rolls=state.turn.rolls + 1)
        state = replace(state, turn=turn)
        special = self.special_roll(state, roll)
        if special is not None:
            return self._end_turn(special)
        reading = self.table().best(roll)
        name = state.players[turn.player]
        if reading.points == 0:
            busted = self.on_bust(state, roll)
            bust = TurnEvent("bust", name, roll, points=turn.total)
            event = bust.sentence()
            if busted.last_event and busted.last_event != state.last_event:
                event += f"; {busted.last_event}"  # what the game added (a bolt, a fall)
            return self._end_turn(replace(busted, last_event=event, event=bust))
        # The confirmation throw (Czech 6-dice variant) has scored: banking is allowed again.
        state = replace(state, turn=replace(turn, dice=roll, must_roll=""))
        if self.auto_keep:
            return self._keep(state, reading.scoring)
        threw = TurnEvent("roll", name, roll)
        return replace(state, last_event=threw.sentence(), event=threw)

    def _keep(self, state: JeopardyState[X], kept: Dice) -> JeopardyState[X]:
        turn = state.turn
        reading = self.table().exact(kept)
        assert reading is not None  # legal_actions only offers scoring selections
        left = len(turn.dice) - len(kept)
        new_turn = replace(
            turn,
            total=turn.total + reading.points,
            pool=left,
            dice=(),
            kept=(*turn.kept, kept),
            must_roll=self._must_roll_after(turn, kept),
        )
        name = state.players[turn.player]
        aside = TurnEvent(
            "keep",
            name,
            kept,
            points=reading.points,
            total=new_turn.total,
            left=left,
            again=0 if left else self.n_dice,
        )
        return replace(state, turn=new_turn, last_event=aside.sentence(), event=aside)

    def _bank(self, state: JeopardyState[X]) -> JeopardyState[X]:
        if state.turn.dice:
            state = self._keep(state, self.table().best(state.turn.dice).scoring)
        total = state.turn.total
        name = state.players[state.turn.player]
        banked = self.on_bank(state, total)
        bank = TurnEvent("bank", name, points=total)
        if banked.event is not None and banked.event is not state.event:
            bank = banked.event  # the game's own (1000's pass)
        if not banked.last_event or banked.last_event == state.last_event:
            banked = replace(banked, last_event=bank.sentence())
        return self._end_turn(replace(banked, event=bank))

    def _end_turn(self, state: JeopardyState[X]) -> JeopardyState[X]:
        """Count the turn, check the end, and give the dice to the next player."""
        p = state.turn.player
        taken = list(state.turns_taken)
        taken[p] += 1
        state = replace(state, turns_taken=tuple(taken))
        state = self.end_check(state)
        if state.winners is not None:
            return replace(state, turn=replace(state.turn, dice=(), pool=0))
        n = len(state.players)
        nxt = (p + 1) % n
        return replace(
            state,
            turn=Turn(player=nxt, pool=self.n_dice),
            round=state.round + (1 if nxt == 0 else 0),
        )

    # -- views ----------------------------------------------------------------------------------

    def describe(self, state: JeopardyState[X]) -> dict[str, JSON]:
        turn = state.turn
        out: dict[str, JSON] = {
            "round": state.round,
            "turn": {
                "player": state.players[turn.player],
                "total": turn.total,
                "dice_left": self.dice_left(turn),
                "dice": list(turn.dice),
                "kept": [list(k) for k in turn.kept],
                "rolls": turn.rolls,
            },
            "last_event": state.last_event,
            "can_bank": self.bank_problem(state) is None,
        }
        # Only while the event says what last_event says: a game that wrote its own words, and
        # no event, would leave a phone's wording behind.
        if state.event is not None and state.event.sentence() == state.last_event:
            out["event"] = state.event.to_json()
        if turn.dice:
            out["best"] = self.table().best(turn.dice).to_json()
        if state.winners is not None:
            out["end_reason"] = state.end_reason
        out.update(self.describe_extra(state))
        return out

    def describe_extra(self, state: JeopardyState[X]) -> dict[str, JSON]:
        """Game-specific additions to ``describe`` (breaks, barrels, pits)."""
        return {}

    def score_roll(self, roll: Sequence[int]) -> dict[str, JSON]:
        """``pipcam score``: the best reading of a roll under these options."""
        if not 1 <= len(roll) <= self.n_dice:
            raise InvalidAction(
                f"{self.name} throws 1 to {self.n_dice} dice, not {len(roll)} ({list(roll)!r})"
            )
        ender = self.turn_ender(roll)
        if ender is not None:
            return {
                "points": 0,
                "scoring": [],
                "rest": sorted(roll),
                "groups": [],
                "ends_turn": ender,
            }
        reading = self.table().best(roll)
        out = reading.to_json()
        if not reading.points:
            out["ends_turn"] = "no combination: the turn ends, and its total is lost"
        return out


def doubling_kinds(max_n: int = 6) -> dict[tuple[int, int], int]:
    """Kinds worth 1000 for three 1s and face x 100 otherwise, doubling with each further die.

    >>> k = doubling_kinds()
    >>> k[(1, 3)], k[(3, 4)], k[(6, 6)]
    (1000, 600, 4800)
    """
    return {
        (face, n): (1000 if face == 1 else 100 * face) * 2 ** (n - 3)
        for face in range(1, 7)
        for n in range(3, max_n + 1)
    }


def end_at_target(state: JeopardyState[X], target: int) -> JeopardyState[X]:
    """The end of the Czech games: the player who has just reached the target wins at once."""
    p = state.turn.player
    if state.scores[p] >= target:
        name = state.players[p]
        return replace(
            state,
            winners=(p,),
            end_reason=Ending(
                f"{name} reached {target}", EndReason.TARGET, {"player": name, "target": target}
            ),
        )
    return state


def highest(scores: Sequence[int]) -> tuple[int, ...]:
    """The seats with the highest score (ties shared).

    >>> highest([300, 500, 500])
    (1, 2)
    """
    top = max(scores)
    return tuple(i for i, s in enumerate(scores) if s == top)

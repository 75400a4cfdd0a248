"""Bank or roll: the policy that maximises the expected points of a turn in the jeopardy games.

For ``kymppitonni``, ``thousand``, ``jednicky-a-petky`` and ``sest-kostek`` (any engine built on
``scoring.jeopardy.JeopardyGame``) a turn is a Markov decision process. Its state between throws is
``(T, n, f)``: the turn total ``T``, the dice left to throw ``n`` (0 after hot dice: all of them
are thrown next) and ``f``, whether a confirmation throw is due before banking. After a throw the
player picks a set-aside (or, in 1000, the engine picks it), and then banks or throws again. The
objective is the expected change of the player's own score from this turn, as the engine writes it:
a bust is worth what ``on_bust`` does (0, or a 1000 bolt penalty), a bank what ``on_bank`` does
(the turn total, less whatever the dump truck or the barrel clamp take in 1000).

Everything comes from the engine, so a house-rule option changes the advice by itself:

* the throws and their probabilities come from ``Game.roll_outcomes``; each throw is applied with
  ``Game.apply`` to see whether it ends the turn (a bust, the four-2s rule) and what it is worth;
* the set-asides of a scoring throw are the engine's legal ``Keep`` actions, applied to read the
  points, the dice left and the confirmation flag (``Turn.must_roll``); in 1000 the engine's own
  set-aside. These do not depend on the turn total (the tables score each throw on its own), so
  they are derived once per game;
* whether a bank is allowed is ``bank_problem`` of a constructed state at every ``(T, n, f)``,
  with the player's real scores and game-specific flags (minimums, 1000's opening, pits and
  barrel), and a bank is worth ``on_bank``'s change of the player's score at every ``T``;
* a throw that ends the turn is valued at three probe totals; when the three values differ it is
  valued at every total on the grid (the four-2s rule that keeps the turn total).

The turn total is unbounded, but every set-aside scores, so ``T`` only grows within a turn and the
process is a DAG in ``T``: one backward pass from a cap ``C`` gives the exact values below it, once
the values at and above ``C`` are known. They are not, so the pass is made twice, with a lower and
an upper bound at the cap. The lower bound is "bank now" where that is allowed (and the worst
terminal value elsewhere). The upper bound is ``T + W(m)``, where ``W(m)`` is the expected number
of points a player throwing ``m`` dice could still collect if busting cost nothing and he never
stopped. That is the fixed point of a contraction (every throw busts with a positive
probability); it is computed by value iteration started above it, so every iterate is still an
upper bound. By monotonicity of the Bellman operator the exact values lie between the two
passes everywhere. The gap at a queried state is the bound's slack times the chance of reaching
the cap, which falls geometrically with the distance to it; the cap is doubled until the gap at
the query is below ``TOLERANCE`` points. The advice is therefore exact to that tolerance, and the
advised choice is provably best whenever its value beats the next one by more than the gap.
(Every bank in these games is worth at most the turn total, which the upper bound relies on; the
solver checks it on the grid it builds.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from functools import cached_property, reduce
from typing import Any

import numpy as np
import numpy.typing as npt

from coach.advice import Advice, Choice, rank
from scoring.core import Action, Bank, Keep, Phase, Roll
from scoring.dice import Dice
from scoring.jeopardy import JeopardyGame, JeopardyState, Turn

AnyGame = JeopardyGame[Any, Any]
AnyState = JeopardyState[Any]
Floats = npt.NDArray[np.float64]
Bounds = tuple[float, float]

TOLERANCE = 1e-6
"""The largest gap (in points) allowed between the lower and upper bound at a queried state."""

OBJECTIVE = "expected points of the turn"
_PROBES = (1, 7, 41)  # grid multiples at which a turn-ending throw is valued (see the docstring)


@dataclass(frozen=True, slots=True)
class Move:
    """A set-aside after a scoring throw: the dice kept, their points and what it leaves."""

    kept: Dice
    points: int
    left: int
    confirm: bool


@dataclass(frozen=True, slots=True)
class _Banked:
    """A bank as the engine applies it: the points banked, the change of the player's score,
    whether it wins the game, and the engine's words for it."""

    amount: int
    gain: float
    wins: bool
    event: str


@dataclass(frozen=True, slots=True)
class RollRow:
    """One result of a throw with its probability; no moves means the throw ends the turn."""

    roll: Dice
    p: float
    moves: tuple[Move, ...]


_STATE_FIELDS = {f.name for f in fields(JeopardyState)}
assert {
    "players",
    "scores",
    "turn",
    "extra",
    "round",
    "turns_taken",
    "winners",
    "end_reason",
    "last_event",
    "event",
} == _STATE_FIELDS, "JeopardyState changed: update _fresh"


def _fresh(template: AnyState, *, total: int, pool: int, rolls: int, must_roll: str = "") -> Any:
    """The player's state with a turn at ``total`` and ``pool`` dice to throw, nothing showing."""
    turn = Turn(
        player=template.turn.player, total=total, pool=pool, rolls=rolls, must_roll=must_roll
    )
    # Built field by field: ``dataclasses.replace`` costs several times more, and the solver
    # builds one state per total and dice count for every situation it meets.
    return JeopardyState(
        players=template.players,
        scores=template.scores,
        turn=turn,
        extra=template.extra,
        round=template.round,
        turns_taken=template.turns_taken,
        winners=template.winners,
        end_reason=template.end_reason,
    )


def _ended(before: AnyState, after: AnyState) -> bool:
    p = before.turn.player
    return after.winners is not None or after.turns_taken[p] != before.turns_taken[p]


def _gain(before: AnyState, after: AnyState) -> float:
    p = before.turn.player
    return float(after.scores[p] - before.scores[p])


def _moves_after(game: AnyGame, state: AnyState, rolled: AnyState) -> tuple[Move, ...]:
    """The set-asides open after a scoring throw, read by applying them with the engine."""
    total = state.turn.total
    if game.auto_keep:  # the engine has set the scoring dice aside already
        turn = rolled.turn
        return (Move(turn.kept[-1], turn.total - total, turn.pool, bool(turn.must_roll)),)
    moves = []
    for action in game.legal_actions(rolled):
        if isinstance(action, Keep):
            # Legal by construction: ``apply`` would list every legal action again to check it,
            # which made deriving the set-asides of a game cost seconds on a Pi.
            turn = game._apply(rolled, action).turn
            moves.append(Move(action.dice, turn.total - total, turn.pool, bool(turn.must_roll)))
    return tuple(moves)


def derive_rows(game: AnyGame, template: AnyState) -> dict[int, tuple[RollRow, ...]]:
    """For each number of dice thrown, every result of the throw and the set-asides it allows."""
    n_dice = game.n_dice
    out: dict[int, tuple[RollRow, ...]] = {}
    for m in range(1, n_dice + 1):
        state = _fresh(template, total=0, pool=0 if m == n_dice else m, rolls=1)
        rows = []
        for roll, p in game.roll_outcomes(state):
            rolled = game.apply(state, Roll(roll))
            moves = () if _ended(state, rolled) else _moves_after(game, state, rolled)
            rows.append(RollRow(roll, p, moves))
        out[m] = tuple(rows)
    return out


def _merge_banks(
    choices: Sequence[tuple[Choice, Bounds, _Banked | None]],
) -> list[tuple[Choice, Bounds]]:
    """One choice per way the turn can be banked: choices that end it with the same bank (the
    same points banked, change of score and win) are one choice to the player.

    Banking with dice showing sets their best reading aside first, so "keep 1 1 5, then bank"
    is "bank 1750" pressed in two steps. The plainest stays (the bank itself, else the set-aside
    of fewest dice) and lists the others in ``same``; everything else is kept as it is.
    """
    out: list[tuple[Choice, Bounds]] = []
    where: dict[tuple[int, float, bool], int] = {}
    for choice, bounds, banked in choices:
        if banked is None:
            out.append((choice, bounds))
            continue
        key = (banked.amount, banked.gain, banked.wins)
        if key not in where:
            where[key] = len(out)
            out.append((choice, bounds))
            continue
        kept, kept_bounds = out[where[key]]
        if _plainer(choice, kept):
            choice, bounds, kept, kept_bounds = kept, kept_bounds, choice, bounds
        merged = replace(kept, same=(*kept.same, *choice.same, replace(choice, same=())))
        out[where[key]] = (merged, kept_bounds)
    return out


def _valued(choice: Choice, value: float) -> Choice:
    """The choice worth ``value``, and so is every way of making it (``same``)."""
    same = tuple(replace(c, value=value) for c in choice.same)
    return replace(choice, value=value, same=same)


def _plainer(a: Choice, b: Choice) -> bool:
    """Whether ``a`` says the same as ``b`` more plainly: a bank now, else fewer dice kept."""

    def size(c: Choice) -> int:
        first = c.actions[0] if c.actions else None
        return len(first.dice) if isinstance(first, Keep) else 0

    return size(a) < size(b)


def _prune(moves: Sequence[Move]) -> tuple[Move, ...]:
    """Per (dice left, confirmation) only the set-aside worth most: it leads to the same states."""
    best: dict[tuple[int, bool], Move] = {}
    for move in moves:
        key = (move.left, move.confirm)
        if key not in best or move.points > best[key].points:
            best[key] = move
    return tuple(best.values())


@dataclass(frozen=True)
class _Flat:
    """The scoring throws of ``m`` dice as flat arrays for the vectorised backward pass."""

    offset: npt.NDArray[np.intp]  # grid steps each move adds
    target: npt.NDArray[np.intp]  # state index (left * 2 + confirm) each move leads to
    starts: npt.NDArray[np.intp]  # first move of each scoring throw
    p: Floats  # probability of each scoring throw


@dataclass(frozen=True)
class _Rules:
    """The engine's bank rule, bank values and turn-ending values on the grid ``T = i * step``."""

    bankable: npt.NDArray[np.bool_]  # [i, state index]
    bank: Floats  # [i]
    ends: Floats  # [m, i]: the expected value of the turn-ending results of a throw of m dice
    worst: float  # the least any turn can end with (the lower bound where banking is refused)
    constant: Floats  # [m]: the part of ``ends`` that is the same at every total
    varying: tuple[tuple[int, float, Dice, int], ...]  # (m, p, roll, pool) valued at every total

    def key(self, size: int) -> tuple[bytes, ...]:
        """A fingerprint of the first ``size`` totals: equal rules share a solution."""
        return (
            self.bankable[:size].tobytes(),
            self.bank[:size].tobytes(),
            self.ends[:, :size].tobytes(),
            np.float64(self.worst).tobytes(),
        )


@dataclass(frozen=True)
class _Solution:
    """Lower and upper values of every state below the cap ``top`` (grid index)."""

    top: int
    value: Floats  # [bound, i, state index]
    roll: Floats  # [bound, i, m]

    # The policy reads the midpoint of the bounds many times; as nested lists, fastest.
    @cached_property
    def mid(self) -> list[list[float]]:
        """[i][state index] midpoint values."""
        return self.value.mean(axis=0).tolist()  # type: ignore[no-any-return]

    @cached_property
    def roll_mid(self) -> list[list[float]]:
        """[i][m] midpoint values of a throw of m dice."""
        return self.roll.mean(axis=0).tolist()  # type: ignore[no-any-return]


class JeopardyCoach:
    """The exact bank-or-roll advice for one jeopardy engine with its options.

    >>> from scoring.games.kymppitonni import Kymppitonni
    >>> game = Kymppitonni()
    >>> state = game.initial_state(["Ann", "Bob"])
    >>> state = game.apply(state, Roll([1, 1, 5, 2, 3, 4]))
    >>> JeopardyCoach(game).advise(state).best.label
    'keep 1 (100), then roll'
    """

    def __init__(self, game: AnyGame) -> None:
        self.game = game
        root = game.initial_state([f"p{i}" for i in range(max(2, game.min_players))])
        self._rows = derive_rows(game, root)
        self._pruned = {
            m: tuple(RollRow(r.roll, r.p, _prune(r.moves)) for r in rows)
            for m, rows in self._rows.items()
        }
        self._by_roll = {m: {r.roll: r for r in rows} for m, rows in self._pruned.items()}
        points = [mv.points for rows in self._rows.values() for r in rows for mv in r.moves]
        if not points or min(points) <= 0:
            raise ValueError(f"{game.game_id}: every set-aside must score for the turn to end")
        self.step = reduce(math.gcd, points)
        self.max_points = max(points)
        self._flat = {m: self._flatten(rows) for m, rows in self._pruned.items()}
        self._first = self._flatten(self._rows[game.n_dice])  # a turn's first throw, unpruned
        self._w = self._upper_gain()
        self._rules: dict[AnyState, _Rules] = {}
        self._solutions: dict[tuple[bytes, ...], _Solution] = {}
        self._memo: dict[AnyState, tuple[int, _Solution]] = {}
        confirms = any(mv.confirm for rows in self._rows.values() for r in rows for mv in r.moves)
        self._confirm_text = "confirmation throw due" if confirms else ""

    # -- the model ------------------------------------------------------------------------------

    def _m(self, left: int) -> int:
        """Dice thrown next with ``left`` dice left (hot dice: all of them)."""
        return left or self.game.n_dice

    def _flatten(self, rows: Sequence[RollRow]) -> _Flat:
        offset: list[int] = []
        target: list[int] = []
        starts: list[int] = []
        p: list[float] = []
        for row in rows:
            if not row.moves:
                continue
            starts.append(len(offset))
            p.append(row.p)
            for mv in row.moves:
                offset.append(mv.points // self.step)
                target.append(mv.left * 2 + int(mv.confirm))
        return _Flat(
            np.array(offset, dtype=np.intp),
            np.array(target, dtype=np.intp),
            np.array(starts, dtype=np.intp),
            np.array(p, dtype=np.float64),
        )

    def _upper_gain(self) -> Floats:
        """``W[m]``: the most points a player throwing m dice could expect to collect (above)."""
        n = self.game.n_dice
        bust = [sum(r.p for r in self._pruned[m] if not r.moves) for m in range(1, n + 1)]
        if min(bust) <= 0:
            raise ValueError(f"{self.game.game_id}: some throw never busts; no bound on a turn")
        w = np.full(n + 1, self.max_points / min(bust))
        w[0] = 0.0
        for _ in range(100_000):
            new = w.copy()
            for m in range(1, n + 1):
                flat = self._flat[m]
                gains = flat.offset * float(self.step) + w[[self._m(s // 2) for s in flat.target]]
                new[m] = float(np.maximum.reduceat(gains, flat.starts) @ flat.p)
            done = float(np.max(w - new)) < 1e-9
            w = new
            if done:
                break
        return w

    def _rules_for(self, template: AnyState, size: int) -> _Rules:
        """The bank rule and the values that end a turn, for this player, at ``size`` totals.

        A longer table for the same player extends the one already built (doubling its length).
        """
        old = self._rules.get(template)
        if old is not None and len(old.bank) >= size:
            return old
        start = 0 if old is None else len(old.bank)
        size = max(size, 2 * start)
        game, n, step = self.game, self.game.n_dice, self.step
        bankable = np.zeros((size - start, 2 * n), dtype=np.bool_)
        bank = np.zeros(size - start)
        for k, i in enumerate(range(start, size)):
            total = i * step
            # Without set-asides that ask for a confirmation throw, those states are never reached.
            for s in range(0, 2 * n, 1 if self._confirm_text else 2):
                flagged = _fresh(
                    template,
                    total=total,
                    pool=s // 2,
                    rolls=1,
                    must_roll=self._confirm_text if s % 2 else "",
                )
                bankable[k, s] = game.bank_problem(flagged) is None
            if bankable[k].any():
                state = _fresh(template, total=total, pool=1, rolls=1)
                bank[k] = _gain(state, game.on_bank(state, total))
        totals = np.arange(start, size, dtype=np.float64) * step
        if np.any(bankable.any(axis=1) & (bank > totals + 1e-9)):
            raise ValueError(f"{game.game_id}: a bank worth more than the turn total")
        if old is None:
            constant, varying, worst = self._turn_enders(template)
        else:
            constant, varying, worst = old.constant, old.varying, old.worst
        ends = np.repeat(constant[:, None], size - start, axis=1)
        for m, p, roll, pool in varying:
            every = [self._end_value(template, roll, pool, i * step) for i in range(start, size)]
            ends[m] += p * np.array(every)
            worst = min(worst, *every)
        worst = min(worst, float(bank.min(initial=0.0)))
        if old is not None:
            bankable = np.concatenate([old.bankable, bankable])
            bank = np.concatenate([old.bank, bank])
            ends = np.concatenate([old.ends, ends], axis=1)
        rules = _Rules(bankable, bank, ends, worst, constant, varying)
        self._rules[template] = rules
        return rules

    def _turn_enders(
        self, template: AnyState
    ) -> tuple[Floats, tuple[tuple[int, float, Dice, int], ...], float]:
        """The expected value of the throws that end the turn whose value is the same at every
        probed total (per number of dice), the others, and the least value seen."""
        n, step = self.game.n_dice, self.step
        constant = np.zeros(n + 1)
        varying: list[tuple[int, float, Dice, int]] = []
        worst = 0.0
        for m in range(1, n + 1):
            pool = 0 if m == n else m
            for row in self._rows[m]:
                if row.moves:
                    continue
                values = [self._end_value(template, row.roll, pool, k * step) for k in _PROBES]
                worst = min(worst, *values)
                if len(set(values)) == 1:
                    constant[m] += row.p * values[0]
                else:
                    varying.append((m, row.p, row.roll, pool))
        return constant, tuple(varying), worst

    def _end_value(self, template: AnyState, roll: Dice, pool: int, total: int) -> float:
        state = _fresh(template, total=total, pool=pool, rolls=1)
        return _gain(state, self.game.apply(state, Roll(roll)))

    def _solution(self, template: AnyState, top: int) -> _Solution:
        """The backward pass from the cap ``top`` for this player's situation (memoised)."""
        size = top + self._span1()
        rules = self._rules_for(template, size)
        key = (*rules.key(size), top.to_bytes(8, "little"))
        solution = self._solutions.get(key)
        if solution is None:
            solution = self._backward(rules, top, size)
            self._solutions[key] = solution
        return solution

    def _covering(self, template: AnyState, total: int) -> _Solution:
        """A solution exact to ``TOLERANCE`` at every state up to one throw past ``total``."""
        need = self._index(total) + self._span1()
        covered, memo = self._memo.get(template, (0, None))
        if memo is not None and need <= covered:
            return memo
        need = max(need, 2 * covered)  # a longer turn was asked for: leave room for the next
        span = self._span1()
        while True:
            solution = self._solution(template, need + span)
            gap = max(
                float(np.max(solution.value[1, :need] - solution.value[0, :need])),
                float(np.max(solution.roll[1, :need] - solution.roll[0, :need])),
            )
            if gap <= TOLERANCE:
                self._memo[template] = (need, solution)
                return solution
            span *= 2

    def _backward(self, rules: _Rules, top: int, size: int) -> _Solution:
        n, step = self.game.n_dice, self.step
        n_states = 2 * n
        m_of = np.array([self._m(s // 2) for s in range(n_states)], dtype=np.intp)
        value = np.zeros((2, size, n_states))
        roll = np.zeros((2, size, n + 1))
        totals = np.arange(size, dtype=np.float64) * step
        value[0, top:] = np.where(rules.bankable[top:size], rules.bank[top:size, None], rules.worst)
        value[1, top:] = totals[top:, None] + self._w[m_of][None, :]
        flats = [self._flat[m] for m in range(1, n + 1)]
        for i in range(top - 1, -1, -1):
            for m, flat in enumerate(flats, start=1):
                after = value[:, i + flat.offset, flat.target]
                best = np.maximum.reduceat(after, flat.starts, axis=1)
                roll[:, i, m] = best @ flat.p + rules.ends[m, i]
            rolled = roll[:, i, m_of]
            banked = np.where(rules.bankable[i], rules.bank[i], -np.inf)
            value[:, i] = np.maximum(rolled, banked[None, :])
        return _Solution(top, value, roll)

    # -- queries --------------------------------------------------------------------------------

    def _template(self, state: AnyState) -> AnyState:
        """The situation of the player to move: the state with the turn taken back to its start."""
        turn = Turn(player=state.turn.player, pool=self.game.n_dice)
        return replace(state, turn=turn, last_event="", event=None)

    def _index(self, total: int) -> int:
        if total % self.step:
            raise ValueError(
                f"a turn total of {self.game.game_id} is a multiple of {self.step}, not {total}"
            )
        return total // self.step

    def _state_value(self, sol: _Solution, total: int, left: int, *, confirm: bool) -> float:
        """The optimal expected points from between two throws (the mean of the two bounds)."""
        return sol.mid[self._index(total)][left * 2 + int(confirm)]

    def _state_bounds(self, sol: _Solution, total: int, left: int, *, confirm: bool) -> Bounds:
        i, s = self._index(total), left * 2 + int(confirm)
        return (float(sol.value[0, i, s]), float(sol.value[1, i, s]))

    def _roll_bounds(self, sol: _Solution, total: int, left: int) -> Bounds:
        i, m = self._index(total), self._m(left)
        return (float(sol.roll[0, i, m]), float(sol.roll[1, i, m]))

    def _roll_value(self, sol: _Solution, total: int, left: int) -> float:
        return sol.roll_mid[self._index(total)][self._m(left)]

    def _banked(self, state: AnyState) -> _Banked | None:
        """A bank now, applied by the engine once: what it writes and whether it wins; None
        when banking is not allowed."""
        if self.game.bank_problem(state) is not None:
            return None
        turn = state.turn
        amount = turn.total + (self.game.table().best(turn.dice).points if turn.dice else 0)
        after = self.game._apply(state, Bank())  # legal: no bank problem
        winners = self.game.sure_winners(after)
        # A bank that ends the game with the player to move a winner: no expected points of a
        # further throw are worth the risk of a bust.
        wins = winners is not None and turn.player in winners
        return _Banked(amount, _gain(state, after), wins, after.last_event)

    def _then(self, sol: _Solution, state: AnyState, banked: _Banked | None) -> str:
        """After a set-aside (``state``, whose bank is ``banked``), whether to bank or throw."""
        if banked is None:
            return "roll"
        turn = state.turn
        rolled = self._roll_value(sol, turn.total, turn.pool)
        return "bank" if banked.wins or banked.gain >= rolled else "roll"

    def choices(self, state: AnyState) -> tuple[Choice, ...]:
        """Every decision open to the player to move, with its value under optimal play after it.

        A ``Keep`` is valued with the best continuation after it (its ``then`` says bank or roll);
        ``Bank`` and the throw are valued as they are. A state in which a throw is forced (the
        start of a turn) has the single choice of throwing, valued at the turn's expectation.
        """
        return self._certified(state)[0]

    def _certified(self, state: AnyState) -> tuple[tuple[Choice, ...], float]:
        """The ranked choices and the largest half-gap of their bounds, at most ``TOLERANCE``."""
        if self.game.phase(state) is Phase.FINISHED:
            raise ValueError("the game is over: there is nothing to advise")
        template = self._template(state)
        span = self._span1()
        while True:
            sol = self._solution(template, self._index(state.turn.total) + span)
            bounded = self._bounded_choices(state, sol)
            gap = max(hi - lo for _, (lo, hi) in bounded)
            if gap <= TOLERANCE:
                chosen = [_valued(c, (lo + hi) / 2) for c, (lo, hi) in bounded]
                return rank(chosen), gap / 2
            span *= 2

    def _bounded_choices(self, state: AnyState, sol: _Solution) -> list[tuple[Choice, Bounds]]:
        game = self.game
        turn = state.turn
        out: list[tuple[Choice, Bounds, _Banked | None]] = []
        banked = self._banked(state)
        if banked is not None:
            label = f"{game.bank_word} {banked.amount}"
            bank = Choice(label, (Bank(),), banked.gain, wins=banked.wins)
            out.append((bank, (banked.gain, banked.gain), banked))
        if turn.dice:
            for action in game.legal_actions(state):
                if not isinstance(action, Keep):
                    continue
                after = game._apply(state, action)  # legal: listed by the engine
                t = after.turn
                kept = " ".join(map(str, action.dice))
                then_bank = self._banked(after)
                if then_bank is not None and then_bank.wins:
                    # Keep, then bank and win: worth what the bank writes, however much a
                    # further throw would add on average.
                    label = f"keep {kept} ({t.total - turn.total}), then bank"
                    choice = Choice(label, (action,), 0.0, "bank", wins=True)
                    out.append((choice, (then_bank.gain, then_bank.gain), then_bank))
                    continue
                bounds = self._state_bounds(sol, t.total, t.pool, confirm=bool(t.must_roll))
                then = self._then(sol, after, then_bank)
                label = f"keep {kept} ({t.total - turn.total}), then {then}"
                out.append(
                    (
                        Choice(label, (action,), 0.0, then),
                        bounds,
                        then_bank if then == "bank" else None,
                    )
                )
        elif turn.rolls == 0:
            bounds = self._start_bounds(state, sol)
            out.append((Choice(f"roll {game.n_dice} dice", (), 0.0), bounds, None))
        else:
            m = self._m(turn.pool)
            word = "die" if m == 1 else "dice"
            bounds = self._roll_bounds(sol, turn.total, turn.pool)
            out.append((Choice(f"roll {m} {word}", (), 0.0), bounds, None))
        return _merge_banks(out)

    def _start_bounds(self, state: AnyState, sol: _Solution) -> Bounds:
        """The expectation of a turn before its first throw, over every result of the throw.

        A scoring first throw offers the set-asides derived once per game (``_rows``: every one,
        not only those ``_prune`` keeps), valued on the solution in one vectorised step. A throw
        that ends the turn is applied to this very state by the engine, as what it costs may
        depend on the state (1000's bolts, Niemo's first-throw reset).
        """
        game, n = self.game, self.game.n_dice
        ends = 0.0
        for row in self._rows[n]:
            if not row.moves:
                ends += row.p * _gain(state, game.apply(state, Roll(row.roll)))
        flat = self._first
        after = sol.value[:, self._index(state.turn.total) + flat.offset, flat.target]
        low, high = np.maximum.reduceat(after, flat.starts, axis=1) @ flat.p
        return (float(low) + ends, float(high) + ends)

    def turn_value(self, state: AnyState) -> float:
        """The expected points of the rest of the turn under optimal play."""
        return self.choices(state)[0].value

    def advise(self, state: AnyState) -> Advice:
        """The ranked choices for the player to move, best first, with their expected points."""
        turn = state.turn
        name = state.players[turn.player]
        showing = f"dice {' '.join(map(str, turn.dice))}, " if turn.dice else ""
        m = self._m(turn.pool)
        left = "" if turn.dice else f"{m} {'die' if m == 1 else 'dice'} to throw"
        situation = f"turn total {turn.total}, {showing}{left}".rstrip(", ")
        notes: list[str] = []
        if turn.must_roll:
            notes.append(f"no bank yet: {turn.must_roll}")
        elif not turn.dice and turn.rolls and self.game.bank_problem(state):
            notes.append(f"no {self.game.bank_word} yet: {self.game.bank_problem(state)}")
        bank = self._bank_note(state)
        if bank:
            notes.append(bank)
        choices, error = self._certified(state)
        return Advice(
            game=self.game.game_id,
            player=name,
            situation=situation,
            objective=OBJECTIVE,
            choices=choices,
            error_bound=float(f"{error:.3g}"),
            notes=tuple(notes),
        )

    def _bank_note(self, state: AnyState) -> str:
        """Why a bank is worth other than the points banked (1000's dump truck, the barrel's
        clamp), in the engine's words; "" when it is worth what it banks."""
        banked = self._banked(state)
        if banked is None or banked.gain == banked.amount:
            return ""
        return f"{self.game.bank_word} {banked.amount} is worth {banked.gain:+.0f}: {banked.event}"

    def policy(self) -> Callable[[AnyState], Action]:
        """The advised action as a fast function of the state (for simulations and the table)."""
        game = self.game

        def act(state: AnyState) -> Action:
            turn = state.turn
            sol = self._covering(self._template(state), turn.total)
            if turn.dice:
                row = self._by_roll[len(turn.dice)][turn.dice]
                best = max(
                    row.moves,
                    key=lambda mv: self._state_value(
                        sol, turn.total + mv.points, mv.left, confirm=mv.confirm
                    ),
                )
                return Keep(best.kept)
            if turn.rolls and game.bank_problem(state) is None:
                bank = _gain(state, game.on_bank(state, turn.total))
                if bank >= self._roll_value(sol, turn.total, turn.pool):
                    return Bank()
                banked = self._banked(state)
                if banked is not None and banked.wins:
                    return Bank()
            return Roll(())  # a throw: the caller supplies the dice

        return act

    def _span1(self) -> int:
        return self.max_points // self.step + 1

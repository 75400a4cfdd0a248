"""The bank-or-roll coach: small cases solved by hand, house rules that change the advice, and
simulated turns in which the advised policy beats simple thresholds (run with -s for the margins).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from functools import cache

import pytest

from coach.jeopardy import TOLERANCE, JeopardyCoach
from scoring.core import Action, Bank, Keep, Phase, Roll
from scoring.games.jednicky_a_petky import JednickyAPetky
from scoring.games.kymppitonni import Kymppitonni, KymppitonniOptions
from scoring.games.sest_kostek import SestKostek, SestKostekOptions
from scoring.games.thousand import Thousand, ThousandOptions
from scoring.jeopardy import Turn
from tests.coach.support import AnyGame, Policy, State, threshold


@cache
def coach(game: AnyGame) -> JeopardyCoach:
    """One coach per engine (games with equal options are equal, so they share it)."""
    return JeopardyCoach(game)


def between(game: AnyGame, total: int, left: int, *, score: int = 0, must_roll: str = "") -> State:
    """The first player between two throws: ``total`` in hand, ``left`` dice to throw."""
    state = game.initial_state(["Ann", "Bob"])
    turn = Turn(player=0, total=total, pool=left, rolls=1, must_roll=must_roll)
    return replace(state, scores=(score, 0), turn=turn)


def thrown(game: AnyGame, total: int, roll: list[int], *, score: int = 0) -> State:
    """The state after ``roll`` is thrown with ``total`` in hand (all dice again if it is 6)."""
    n = 0 if total and len(roll) == game.n_dice else len(roll)
    before = replace(
        between(game, total, n, score=score), turn=Turn(0, total, n, rolls=int(total > 0))
    )
    return game.apply(before, Roll(roll))


def values(state: State, game: AnyGame) -> dict[str, float]:
    """The coach's value of every choice, by label."""
    return {c.label: c.value for c in coach(game).choices(state)}


# --------------------------------------------------------------------------------------------------
# Solved by hand


@pytest.mark.parametrize("total", [20000, 60000])
def test_one_die_left_far_above_every_threshold(total: int) -> None:
    """Kymppitonni, 1 die, turn total T so high that everyone banks after any throw.

    The die scores with a 1 (+100) or a 5 (+50), each 1/6, both hot dice (then banked); anything
    else busts. Roll EV = (1/6)(T + 100) + (1/6)(T + 50) = (2T + 150) / 6, less than T: bank.
    """
    game = Kymppitonni()
    got = values(between(game, total, 1), game)
    assert got["roll 1 die"] == pytest.approx((2 * total + 150) / 6, abs=TOLERANCE)
    assert coach(game).advise(between(game, total, 1)).best.label == f"bank {total}"


@pytest.mark.parametrize("game", [Kymppitonni(), JednickyAPetky()], ids=lambda g: g.game_id)
@pytest.mark.parametrize("total", [20000, 60000])
def test_two_dice_left_far_above_every_threshold(game: AnyGame, total: int) -> None:
    """Two dice, then bank. Of the 36 throws: 1 1 (1/36) keeps 200; 1 5 (2/36) 150; 5 5 (1/36)
    100; a 1 and a non-scorer (8/36) 100; a 5 and a non-scorer (8/36) 50; 16/36 bust.
    Roll EV = (20 T + 200 + 300 + 100 + 800 + 400) / 36 = (20 T + 1800) / 36. Both tables agree
    on two dice (no pairs score), and in Jedničky a pětky the bank is allowed with 2 dice left.
    """
    got = values(between(game, total, 2), game)
    assert got["roll 2 dice"] == pytest.approx((20 * total + 1800) / 36, abs=TOLERANCE)


def test_one_die_left_at_300_is_a_third_of_the_hot_dice_values() -> None:
    """Kymppitonni, 1 die, T = 300: roll EV = (1/3) · mean(V(400, hot dice), V(350, hot dice)).

    With six dice to throw a bank at 350-400 is far too early, so both hot-dice values are the
    six-dice throw's; the roll is worth it (a little) when their mean is above 900.
    """
    game = Kymppitonni()
    hot_400 = coach(game).turn_value(between(game, 400, 0))
    hot_350 = coach(game).turn_value(between(game, 350, 0))
    got = values(between(game, 300, 1), game)
    # Each value is exact to TOLERANCE; they may come from solutions with different caps.
    assert got["roll 1 die"] == pytest.approx((hot_400 + hot_350) / 6, abs=2 * TOLERANCE)
    assert values(between(game, 400, 0), game)["roll 6 dice"] == hot_400
    assert (hot_400 + hot_350) / 2 > 900
    assert coach(game).advise(between(game, 300, 1)).best.label == "roll 1 die"
    assert coach(game).advise(between(game, 350, 1)).best.label == "bank 350"


@pytest.mark.parametrize(
    ("clamp", "expected"),
    [(False, (2 * 3000 + 15) / 6), (True, 2 * 780 / 6)],
    ids=["no-clamp", "clamp"],
)
def test_thousand_one_die_far_above_the_threshold(clamp: bool, expected: float) -> None:
    """1000 at 100, 1 die, T = 3000: a 1 (+10) or a 5 (+5), each 1/6, then pass.

    Without the barrel clamp a pass is worth the turn total: roll EV = (2 T + 15) / 6. With it any
    pass from 100 past 880 only climbs the barrel (score 880, +780): roll EV = 2 · 780 / 6.
    """
    game = Thousand(ThousandOptions(barrel_clamp=clamp))
    state = _thousand_state(game, 3000, 1, score=100)
    assert values(state, game)["roll 1 die"] == pytest.approx(expected, abs=TOLERANCE)


def test_first_throw_advice_keeps_a_single_one() -> None:
    """The classic: from 1 1 5 2 3 4 at the start, set aside one 1 and throw five dice."""
    game = Kymppitonni()
    advice = coach(game).advise(thrown(game, 0, [1, 1, 5, 2, 3, 4]))
    assert advice.best.actions == (Keep([1]),)
    assert advice.best.then == "roll"
    assert advice.choices[-1].label == "bank 250"


def test_the_turn_value_is_the_mean_over_the_first_throw() -> None:
    """The expectation before the first throw is the probability-weighted best after it."""
    game = JednickyAPetky()
    start = game.initial_state(["Ann", "Bob"])
    expected = 0.0
    for roll, p in game.roll_outcomes(start):
        after = game.apply(start, Roll(roll))
        if game.phase(after) is Phase.DECIDE and after.turn.player == 0:
            expected += p * coach(game).turn_value(after)
    assert coach(game).turn_value(start) == pytest.approx(expected, abs=1e-6)


def test_the_advice_is_stable_when_the_cap_is_raised() -> None:
    """Solving far beyond a state (a cap 50 000 points higher) gives it the same values."""
    game = Kymppitonni()
    fresh = JeopardyCoach(game)
    low = {c.label: c.value for c in fresh.choices(between(game, 300, 1))}
    fresh.choices(between(game, 50000, 1))  # solves again with a much higher cap
    high = {c.label: c.value for c in fresh.choices(between(game, 300, 1))}
    assert high.keys() == low.keys()
    for label, value in low.items():
        assert high[label] == pytest.approx(value, abs=2 * TOLERANCE)


# --------------------------------------------------------------------------------------------------
# The rules that change the advice


@pytest.mark.parametrize(
    ("options", "advice"),
    [
        (KymppitonniOptions(), "bank 3000"),
        (KymppitonniOptions(four_twos_rule=False), "roll 5 dice"),
        (KymppitonniOptions(four_twos_keeps_turn_total=True), "roll 5 dice"),
    ],
    ids=["four-2s-rule", "no-four-2s-rule", "four-2s-keep-total"],
)
def test_four_twos_rule_changes_the_advice(options: KymppitonniOptions, advice: str) -> None:
    """5 dice left at 3000: losing the turn total to four 2s (1/6 of the dice) tips it to bank."""
    game = Kymppitonni(options)
    assert coach(game).advise(between(game, 3000, 5)).best.label == advice


def test_four_twos_rule_only_lowers_the_value_of_throwing() -> None:
    """The rule only turns scoring throws into lost turns, so no throw is worth more with it."""
    on, off = Kymppitonni(), Kymppitonni(KymppitonniOptions(four_twos_rule=False))
    for total in (50, 500, 2000):
        for left in range(4, 6):
            roll = f"roll {left} dice"
            assert (
                values(between(on, total, left), on)[roll]
                < values(between(off, total, left), off)[roll]
            )


def test_confirmation_forbids_the_bank_after_six_scoring_dice() -> None:
    """6-dice variant at 30 000, a straight thrown with six dice: without confirmation, bank 31 500;
    with it the six must be confirmed, and keeping them all (then throwing) is still best. (The
    target is out of reach, so that no bank wins the game and the points alone decide.)"""
    far = 10**6
    off = SestKostek(SestKostekOptions(confirmation="off", target=far))
    assert coach(off).advise(thrown(off, 30000, [1, 2, 3, 4, 5, 6])).best.label == "bank 31500"
    on = SestKostek(SestKostekOptions(target=far))
    advice = coach(on).advise(thrown(on, 30000, [1, 2, 3, 4, 5, 6]))
    assert "bank 31500" not in {c.label for c in advice.choices}
    assert advice.best.label == "keep 1 2 3 4 5 6 (1500), then roll"
    after = on.apply(thrown(on, 30000, [1, 2, 3, 4, 5, 6]), Keep([1, 2, 3, 4, 5, 6]))
    assert [c.label for c in coach(on).choices(after)] == ["roll 6 dice"]
    assert advice.expected < 31500


def test_jednicky_cannot_bank_with_three_dice() -> None:
    """Jedničky a pětky: 3+ dice left means no bank, whatever the total; 2 left at 400 may bank."""
    game = JednickyAPetky()
    assert [c.label for c in coach(game).choices(between(game, 5000, 3))] == ["roll 3 dice"]
    assert "bank 400" in values(between(game, 400, 2), game)


def test_minimum_bank_option_forces_a_throw() -> None:
    """Kymppitonni min_bank: 300 with 2 dice is a bank by default, a throw when 350 is needed."""
    plain = Kymppitonni()
    assert coach(plain).advise(between(plain, 300, 2)).best.label == "bank 300"
    strict = Kymppitonni(KymppitonniOptions(min_bank=350))
    assert [c.label for c in coach(strict).choices(between(strict, 300, 2))] == ["roll 2 dice"]


def _thousand_state(
    game: Thousand, total: int, left: int, *, score: int, opened: bool = True, barrel: bool = False
) -> State:
    state = between(game, total, left, score=score)
    extra = replace(state.extra, opened=(opened, True), on_barrel=(barrel, False))
    return replace(state, extra=extra)


@pytest.mark.parametrize(
    ("score", "opened", "barrel", "total", "left", "can_pass"),
    [
        (0, False, False, 45, 3, False),  # opening needs 50
        (0, False, False, 50, 3, True),
        (250, True, False, 45, 2, False),  # pit 200-300 needs 300
        (250, True, False, 50, 2, True),
        (880, True, True, 115, 2, False),  # the barrel needs 1000
        (880, True, True, 120, 2, True),
        (400, True, False, 5, 4, True),  # free: any total
    ],
)
def test_thousand_pass_minimums_follow_the_players_situation(
    score: int, opened: bool, barrel: bool, total: int, left: int, can_pass: bool
) -> None:
    """The pass is offered exactly when the engine allows it for this player's score and status."""
    game = Thousand()
    state = _thousand_state(game, total, left, score=score, opened=opened, barrel=barrel)
    labels = {c.label for c in coach(game).choices(state)}
    assert (f"pass {total}" in labels) is can_pass
    assert f"roll {left} dice" in labels


def test_thousand_dump_truck_turns_a_pass_into_a_throw() -> None:
    """At 480 a pass of 75 lands on 555 and the score goes to 0: the pass is worth -480."""
    game = Thousand()
    state = _thousand_state(game, 75, 1, score=480)
    got = values(state, game)
    assert got["pass 75"] == -480
    assert coach(game).advise(state).best.label == "roll 1 die"
    no_truck = Thousand(ThousandOptions(dump_truck=None))
    state = _thousand_state(no_truck, 75, 1, score=480)
    assert coach(no_truck).advise(state).best.label == "pass 75"


def test_thousand_barrel_win_is_passed_at_once() -> None:
    """On the barrel with 120 in hand (880 + 120 = 1000) the pass wins: 120, more than 2 dice."""
    game = Thousand()
    state = _thousand_state(game, 120, 2, score=880, barrel=True)
    advice = coach(game).advise(state)
    assert advice.best.label == "pass 120"
    assert advice.expected == 120


@pytest.mark.parametrize(
    ("game", "state_of"),
    [
        # 1000 on the barrel: 880 + 150 ends the game; five dice would add 17 on average.
        (Thousand(), lambda g: _thousand_state(g, 150, 0, score=880, barrel=True)),
        # Jedničky a pětky: 9800 + 450 reaches 10 000, and the game ends at once.
        (JednickyAPetky(), lambda g: between(g, 450, 0, score=9800)),
        (SestKostek(), lambda g: between(g, 400, 0, score=9800)),
        # Kymppitonni whose first to reach 10 000 wins, equalizing turns or not (RULES K6).
        (
            Kymppitonni(KymppitonniOptions(winner_rule="first_reacher")),
            lambda g: between(g, 400, 0, score=9800),
        ),
        (
            Kymppitonni(KymppitonniOptions(equalizing_round=False)),
            lambda g: between(g, 400, 0, score=9800),
        ),
    ],
)
def test_a_bank_that_wins_the_game_is_advised_over_more_expected_points(
    game: AnyGame, state_of: Callable[[AnyGame], State]
) -> None:
    """Hot dice are worth more points on average than the bank, but the bank wins outright."""
    state = state_of(game)
    advice = coach(game).advise(state)
    assert advice.best.actions == (Bank(),)
    assert advice.best.wins
    roll = advice.choices[1]
    assert not roll.wins
    assert roll.value > advice.best.value  # the points alone would say throw
    assert "it wins the game" in advice.text()
    winners = game.apply(state, Bank()).winners
    assert winners == (0,) or game.sure_winners(game.apply(state, Bank())) == (0,)
    assert coach(game).policy()(state) == Bank()


def test_a_bank_that_reaches_the_target_before_the_equalizing_round_is_no_sure_win() -> None:
    """Kymppitonni's default: the others still have their turns and the highest score wins, so
    reaching 10 000 is not a win and the points decide."""
    game = Kymppitonni()
    advice = coach(game).advise(between(game, 400, 0, score=9800))
    assert not any(c.wins for c in advice.choices)
    assert advice.best.label == "roll 6 dice"


def test_a_keep_after_which_the_bank_wins_says_bank() -> None:
    """Dice showing: every set-aside that makes the winning bank possible is 'then bank'."""
    game = Kymppitonni(KymppitonniOptions(winner_rule="first_reacher"))
    advice = coach(game).advise(thrown(game, 150, [1, 5, 2, 3], score=9800))
    by_label = {c.label: c for c in advice.choices}
    assert by_label["keep 1 (100), then bank"].wins
    assert by_label["keep 1 (100), then bank"].value == 250
    assert advice.best.wins


# --------------------------------------------------------------------------------------------------
# Ways of banking that come to the same are one choice

FIRST_REACHER = Kymppitonni(KymppitonniOptions(winner_rule="first_reacher"))
FAR_SEST = SestKostek(SestKostekOptions(target=10**6))


@pytest.mark.parametrize(
    ("game", "total", "roll", "score", "merged", "separate"),
    [
        # Banking sets 1 1 5 aside by itself; keeping fewer points and banking banks less.
        (
            Kymppitonni(),
            1500,
            [1, 1, 5, 2, 3, 4],
            0,
            {"bank 1750": ["keep 1 1 5 (250), then bank"]},
            ["keep 1 1 (200), then bank", "keep 1 5 (150), then bank"],
        ),
        # Two set-asides of 100 then a bank are one choice too: the one of fewer dice stays.
        (
            FAR_SEST,
            9500,
            [1, 5, 5, 2, 3],
            0,
            {
                "bank 9700": ["keep 1 5 5 (200), then bank"],
                "keep 1 (100), then bank": ["keep 5 5 (100), then bank"],
            },
            ["keep 1 5 (150), then bank", "keep 5 (50), then bank"],
        ),
        # Winning banks merge only when they bank the same: banking less also wins, but is other.
        (
            FIRST_REACHER,
            150,
            [1, 1, 5, 2, 3, 4],
            9800,
            {"bank 400": ["keep 1 1 5 (250), then bank"]},
            ["keep 1 1 (200), then bank", "keep 1 (100), then bank"],
        ),
        # Hot dice: keeping all six and throwing again is no bank, so it stays beside the bank.
        (
            Kymppitonni(),
            300,
            [1, 1, 1, 5, 5, 5],
            0,
            {},
            ["bank 1800", "keep 1 1 1 5 5 5 (1500), then roll"],
        ),
        # A straight must be confirmed: no bank now, nothing to merge.
        (
            FAR_SEST,
            30000,
            [1, 2, 3, 4, 5, 6],
            0,
            {},
            ["keep 1 2 3 4 5 6 (1500), then roll"],
        ),
    ],
    ids=["bank-and-keep-then-bank", "two-keeps-of-100", "winning-banks", "hot-dice", "confirm"],
)
def test_banks_that_come_to_the_same_are_one_choice(
    game: AnyGame,
    total: int,
    roll: list[int],
    score: int,
    merged: dict[str, list[str]],
    separate: list[str],
) -> None:
    """A set-aside then a bank that banks what another choice banks, with the same result, is
    listed under that choice (``same``), valued as it; a bank of other points is its own."""
    state = thrown(game, total, roll, score=score)
    advice = coach(game).advise(state)
    by_label = {c.label: c for c in advice.choices}
    assert {label: [m.label for m in c.same] for label, c in by_label.items() if c.same} == merged
    assert set(separate) <= by_label.keys()
    for label in merged:
        choice = by_label[label]
        assert all(m.value == choice.value and m.then == "bank" for m in choice.same)
        for way in choice.same:
            # The same points banked and the same scores as the choice it is merged into.
            banked = game.apply(game.apply(state, way.actions[0]), Bank())
            via = state
            for action in choice.actions:
                via = game.apply(via, action)
            if choice.then == "bank":
                via = game.apply(via, Bank())
            assert banked.scores == via.scores, way.label
    assert all(m.label not in by_label for c in advice.choices for m in c.same)
    assert "(-0.0)" not in advice.text()
    text = advice.text(most=len(advice.choices))
    for label, ways in merged.items():  # said under the choice they are merged into
        assert f"{label}" in text
        assert f"(the same: {', '.join(ways)})" in text


# --------------------------------------------------------------------------------------------------
# Simulation: the advised policy against simple thresholds, through the engine

TURNS = 20_000


def few_dice(game: AnyGame, most: int = 2) -> Policy:
    """Set aside the best reading; bank when allowed with 1 to ``most`` dice left (not hot)."""

    def act(state: State) -> Action:
        turn = state.turn
        if turn.dice:
            return Keep(game.table().best(turn.dice).scoring)
        if turn.rolls and 0 < turn.pool <= most and game.bank_problem(state) is None:
            return Bank()
        return Roll(())

    return act


CHECKED = 1000
"""Turns whose every action goes through ``Game.apply``'s legality check; after them the policy
is trusted and the engine's ``_apply`` saves the check (it recomputes every legal set-aside)."""


def simulate(game: AnyGame, start: State, policy: Policy, turns: int, seed: int) -> float:
    """The mean points of ``turns`` turns played by ``policy`` with seeded dice (via the engine)."""
    rng = random.Random(seed)
    p = start.turn.player
    total = 0
    for played in range(turns):
        apply = game.apply if played < CHECKED else game._apply
        state = start
        while state.turns_taken[p] == start.turns_taken[p] and state.winners is None:
            action = policy(state)
            if isinstance(action, Roll):
                n = game.roll_size(state)
                action = Roll([rng.randint(1, 6) for _ in range(n)])
            elif game.auto_keep and isinstance(action, Keep):
                raise AssertionError("1000 sets the dice aside itself")
            state = apply(state, action)
        total += state.scores[p] - start.scores[p]
    return total / turns


def opened_thousand_start() -> tuple[AnyGame, State]:
    """1000 for an opened player at 100 (no pit, no barrel): the plain bank-or-roll game."""
    game = Thousand()
    state = game.initial_state(["Ann", "Bob"])
    extra = replace(state.extra, opened=(True, True))
    return game, replace(state, scores=(100, 0), extra=extra)


CASES: dict[str, tuple[AnyGame | None, tuple[int, ...]]] = {
    "kymppitonni": (Kymppitonni(), (300, 350, 400, 500)),
    "jednicky-a-petky": (JednickyAPetky(), (400, 600)),
    "sest-kostek": (SestKostek(), (350, 500)),
    "thousand": (None, (30, 75)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_advised_policy_beats_simple_thresholds(name: str) -> None:
    """20 000 seeded turns per policy; the advised mean is also the coach's turn expectation."""
    game, limits = CASES[name]
    if game is None:
        game, start = opened_thousand_start()
    else:
        start = game.initial_state(["Ann", "Bob"])
    advised = simulate(game, start, coach(game).policy(), TURNS, seed=7)
    others = {f"bank at {t}": simulate(game, start, threshold(game, t), TURNS, 7) for t in limits}
    others["bank with <= 2 dice"] = simulate(game, start, few_dice(game), TURNS, 7)
    expected = coach(game).turn_value(start)
    print(f"\n{name}: advised {advised:.1f} per turn (exact expectation {expected:.1f})")
    for label, mean in others.items():
        print(f"  {label:22} {mean:8.1f}   margin {advised - mean:+7.1f}")
    assert all(advised > mean for mean in others.values())
    # 20 000 turns: the standard error is a few points; the simulation must agree with the model.
    assert advised == pytest.approx(expected, rel=0.05)

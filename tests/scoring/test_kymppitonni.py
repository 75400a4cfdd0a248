"""Kymppitonni (RULES §3): every test vector K01–K20, the break rule and the end of the game."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from scoring.core import Action, Bank, Keep, Phase, Roll
from scoring.errors import IllegalAction, InvalidOption
from scoring.games.kymppitonni import BreakState, KState, Kymppitonni

GAME = Kymppitonni()


def play(game: Kymppitonni, state: KState, *actions: Action) -> KState:
    """Apply actions in order."""
    for action in actions:
        state = game.apply(state, action)
    return state


def at(game: Kymppitonni, scores: list[int], player: int = 0, **extra: Any) -> KState:
    """A state mid-game: these banked scores, ``player`` about to throw six dice."""
    state = game.initial_state([f"P{i + 1}" for i in range(len(scores))])
    turn = replace(state.turn, player=player)
    return replace(state, scores=tuple(scores), turn=turn, extra=BreakState(**extra))


FILLER = [2, 3, 4, 6, 6]  # faces that never score together with one 1 or one 5


def bank_turn(game: Kymppitonni, state: KState, points: int) -> KState:
    """Bank exactly ``points`` (a multiple of 50) this turn with plain rolls of 1s and 5s."""
    rest = points
    while rest >= 1500:
        state = play(game, state, Roll([1, 1, 1, 5, 5, 5]), Keep([1, 1, 1, 5, 5, 5]))
        rest -= 1500
    while rest >= 50:
        face = 1 if rest >= 100 else 5
        n = game.roll_size(state)
        state = play(game, state, Roll([face] + FILLER[: n - 1]), Keep([face]))
        rest -= 100 if face == 1 else 50
    return game.apply(state, Bank())


@pytest.mark.parametrize(
    ("roll", "options", "expected"),
    [
        pytest.param([5], {}, 50, id="K01"),
        pytest.param([5, 5, 5], {}, 500, id="K02"),
        pytest.param([1], {}, 100, id="K03"),
        pytest.param([1, 1, 1], {}, 1000, id="K04"),
        pytest.param([2, 2, 2], {}, 200, id="K05-2"),
        pytest.param([3, 3, 3], {}, 300, id="K05-3"),
        pytest.param([4, 4, 4], {}, 400, id="K05-4"),
        pytest.param([6, 6, 6], {}, 600, id="K05-6"),
        pytest.param([5, 5, 5, 5], {}, 1000, id="K06-4"),
        pytest.param([5, 5, 5, 5, 5], {}, 2000, id="K06-5"),
        pytest.param([5, 5, 5, 5, 5, 5], {}, 4000, id="K06-6"),
        pytest.param([1, 1, 1, 1], {}, 2000, id="K07-4"),
        pytest.param([1, 1, 1, 1, 1], {}, 4000, id="K07-5"),
        pytest.param([1, 1, 1, 1, 1, 1], {}, 8000, id="K07-6"),
        pytest.param([1, 2, 3, 4, 5, 6], {}, 1000, id="K08"),
        pytest.param([1, 2, 3, 4, 5, 6], {"straight_value": 2000}, 2000, id="K08-2000"),
        pytest.param([2, 2, 4, 4, 5, 5], {}, 2000, id="K09"),
        pytest.param([3, 3, 3, 3, 5, 5], {}, 700, id="K11-separate"),
        pytest.param([3, 3, 3, 3, 5, 5], {"four_plus_pair": "three_pairs"}, 2000, id="K11-pairs"),
        pytest.param([6, 6, 6, 6, 6], {}, 2400, id="K12"),
        pytest.param([1, 1, 5, 2, 3, 4], {}, 250, id="K13"),
        pytest.param([2, 3, 4, 6, 6, 3], {}, 0, id="K14"),
        pytest.param([3, 3, 3, 3], {}, 600, id="derived-3333"),
        pytest.param([4, 4, 4, 4, 4, 4], {}, 3200, id="derived-444444"),
        pytest.param([2, 2, 2, 2, 2], {}, 800, id="derived-22222"),
        pytest.param([2, 2, 2, 2, 2, 2], {}, 1600, id="derived-222222"),
        pytest.param([2, 2, 2, 2, 1, 5], {"four_twos_rule": False}, 550, id="K15-rule-off"),
        pytest.param([2, 2, 2, 2, 1, 5], {}, 0, id="K15"),
        pytest.param([2, 2, 2, 2, 3, 6], {}, 0, id="K10"),
        pytest.param([2, 2, 2, 2, 2, 1], {"four_twos_trigger": "at_least_4"}, 0, id="AMBIG-K2"),
        pytest.param([2, 2, 4, 4, 5, 5], {"three_pairs": "off"}, 100, id="three-pairs-off"),
        pytest.param([3, 3, 3, 3, 3, 3], {}, 2400, id="six-kind-separate"),
    ],
)
def test_best_reading(roll: list[int], options: dict[str, Any], expected: int) -> None:
    """The best reading of a roll under the options."""
    assert Kymppitonni.from_json(options).score_roll(roll)["points"] == expected


def test_k13_player_may_take_less() -> None:
    """K13: the best is 250, but setting aside one 1 alone is legal too."""
    state = GAME.apply(GAME.initial_state(["A", "B"]), Roll([1, 1, 5, 2, 3, 4]))
    legal = GAME.legal_actions(state)
    assert Keep([1]) in legal
    assert Keep([1, 1, 5]) in legal
    assert Keep([1, 2]) not in legal
    after = GAME.apply(state, Keep([1]))
    assert (after.turn.total, GAME.roll_size(after)) == (100, 5)


@pytest.mark.parametrize(
    ("options", "turn_passes", "score_after"),
    [
        pytest.param({}, True, 700, id="K10-K15-default"),
        pytest.param({"four_twos_rule": False}, False, 700, id="rule-off"),
        pytest.param({"four_twos_keeps_turn_total": True}, True, 800, id="keeps-turn-total"),
    ],
)
def test_four_twos(options: dict[str, Any], turn_passes: bool, score_after: int) -> None:
    """K10/K15: four 2s end the turn with 0 although the 5 would score; nothing is subtracted."""
    game = Kymppitonni.from_json(options)
    state = play(game, at(game, [700, 0]), Roll([1, 2, 3, 4, 6, 6]), Keep([1]))
    state = game.apply(state, Roll([2, 2, 2, 2, 5]))
    assert (state.turn.player == 1) is turn_passes
    assert state.scores == (score_after, 0)
    if turn_passes:
        assert "four 2s" in state.last_event
    else:
        assert game.table().best(state.turn.dice).points == 450


def test_five_twos_are_not_four() -> None:
    """AMBIG-K2: five 2s double normally (800) unless the trigger is at_least_4."""
    state = GAME.apply(at(GAME, [0, 0]), Roll([2, 2, 2, 2, 2, 3]))
    assert Keep([2, 2, 2, 2, 2]) in GAME.legal_actions(state)
    assert Keep([2, 2, 2, 2]) not in GAME.legal_actions(state)  # four 2s are worth nothing
    strict = Kymppitonni.from_json({"four_twos_trigger": "at_least_4"})
    after = strict.apply(at(strict, [0, 0]), Roll([2, 2, 2, 2, 2, 3]))
    assert after.turn.player == 1


def test_k16_hot_dice_and_break() -> None:
    """K16: 1050, then 150 (hot dice), then three pairs 2000; bank 3200 and hold the break."""
    state = at(GAME, [0, 0])
    state = play(GAME, state, Roll([1, 1, 1, 5, 2, 3]), Keep([1, 1, 1, 5]))
    assert (state.turn.total, GAME.roll_size(state)) == (1050, 2)
    state = play(GAME, state, Roll([5, 1]), Keep([1, 5]))
    assert (state.turn.total, GAME.roll_size(state)) == (1200, 6)
    state = play(GAME, state, Roll([2, 2, 4, 4, 6, 6]), Keep([2, 2, 4, 4, 6, 6]))
    assert state.turn.total == 3200
    state = GAME.apply(state, Bank())
    assert state.scores == (3200, 0)
    assert (state.extra.holder, state.extra.value) == (0, 3200)


def test_k17_break_transfers() -> None:
    """K17: A 2300 holds, B 2600 takes it, C 2600 cancels, D 2100 nothing, E 2700 holds."""
    state = at(GAME, [0] * 5)
    holders = []
    for points in (2300, 2600, 2600, 2100, 2700):
        state = bank_turn(GAME, state, points)
        holders.append((state.extra.holder, state.extra.value))
    assert holders == [(0, 2300), (1, 2600), (None, 2600), (None, 2600), (4, 2700)]


def test_break_after_cancel_any() -> None:
    """AMBIG-K4 alternative: after a cancellation any break over the threshold counts again."""
    game = Kymppitonni.from_json({"break_after_cancel": "any"})
    state = at(game, [0, 0, 0, 0], holder=None, value=2600)
    state = bank_turn(game, state, 2100)
    assert (state.extra.holder, state.extra.value) == (0, 2100)


def test_break_equal_by_holder_changes_nothing() -> None:
    """A holder who banks his own break value again keeps it."""
    state = at(GAME, [0, 0], holder=0, value=2300)
    state = bank_turn(GAME, state, 2300)
    assert (state.extra.holder, state.extra.value) == (0, 2300)


@pytest.mark.parametrize(("c_banks", "winner"), [(600, "A"), (700, "C")])
def test_k18_break_bonus(c_banks: int, winner: str) -> None:
    """K18: A reaches 10 150, C (holder, 8 500) gets 1000; then C banks in the equalizing turns."""
    state = GAME.initial_state(["A", "B", "C"])
    state = replace(state, scores=(9150, 5000, 8500), extra=BreakState(holder=2, value=2500))
    state = bank_turn(GAME, state, 1000)
    assert state.scores == (10150, 5000, 9500)
    assert state.extra.bonus_given
    state = play(GAME, state, Roll([2, 3, 4, 6, 6, 3]))  # B busts
    assert GAME.outcome(state) is None
    state = bank_turn(GAME, state, c_banks)
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert [state.players[i] for i in outcome.winners] == [winner]


def test_k19_equalizing_round() -> None:
    """K19: P2 reaches the target; only P3 gets one more turn."""
    state = at(GAME, [500, 9550, 200], player=1)
    state = bank_turn(GAME, state, 500)
    assert state.scores[1] == 10050
    assert GAME.to_move(state) == 2
    state = bank_turn(GAME, state, 400)
    assert GAME.phase(state) is Phase.FINISHED
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.winners == (1,)
    assert state.turns_taken == (0, 1, 1)


def test_no_equalizing_round_ends_at_once() -> None:
    """equalizing_round=off: the game ends as soon as the target is reached."""
    game = Kymppitonni.from_json({"equalizing_round": False})
    state = bank_turn(game, at(game, [500, 9550, 200], player=1), 500)
    outcome = game.outcome(state)
    assert outcome is not None
    assert outcome.winners == (1,)


def test_first_reacher_wins() -> None:
    """winner_rule=first_reacher: the triggering player wins whatever follows."""
    game = Kymppitonni.from_json({"winner_rule": "first_reacher"})
    state = bank_turn(game, at(game, [500, 9550, 9900], player=1), 500)
    state = bank_turn(game, state, 1000)
    outcome = game.outcome(state)
    assert outcome is not None
    assert outcome.winners == (1,)
    assert state.scores == (500, 10050, 10900)


@pytest.mark.parametrize(("first", "expected"), [(True, 0), (False, 4300)])
def test_k20_first_roll_reset(first: bool, expected: int) -> None:
    """K20: with nollaus a bust on the turn's first roll wipes the score; later it does not."""
    game = Kymppitonni.from_json({"preset": "niemo"})
    state = at(game, [4300, 0])
    if not first:
        state = play(game, state, Roll([1, 2, 3, 4, 6, 6][:6]), Keep([1]))
        state = game.apply(state, Roll([2, 3, 4, 6, 6]))
    else:
        state = game.apply(state, Roll([2, 3, 4, 6, 6, 3]))
    assert state.scores[0] == expected
    assert state.turn.player == 1


def test_niemo_preset() -> None:
    """The niemo preset: straight 2000 and the reset rule; overrides win over the preset."""
    game = Kymppitonni.from_json({"preset": "niemo"})
    assert (game.options.straight_value, game.options.first_roll_reset) == (2000, True)
    game = Kymppitonni.from_json({"preset": "niemo", "straight_value": 1500})
    assert game.options.straight_value == 1500
    with pytest.raises(InvalidOption, match="unknown preset 'nemo'; the presets are: niemo"):
        Kymppitonni.from_json({"preset": "nemo"})


def test_min_bank_refused_with_reason() -> None:
    """min_bank: a bank below it is refused, and the state is unchanged."""
    game = Kymppitonni.from_json({"min_bank": 300})
    state = play(game, at(game, [0, 0]), Roll([1, 2, 3, 4, 6, 6]), Keep([1]))
    with pytest.raises(IllegalAction, match=r"^cannot bank 100: at least 300 needed$"):
        game.apply(state, Bank())
    assert Bank() not in game.legal_actions(state)


def test_entry_min() -> None:
    """entry_min applies only while the score is 0."""
    game = Kymppitonni.from_json({"entry_min": 500})
    state = play(game, at(game, [0, 100]), Roll([1, 2, 3, 4, 6, 6]), Keep([1]))
    assert "get on the board" in game.explain_illegal(state, Bank())
    state = play(game, at(game, [0, 100], player=1), Roll([1, 2, 3, 4, 6, 6]), Keep([1]))
    assert Bank() in game.legal_actions(state)


def test_bank_with_dice_on_the_table_takes_the_best() -> None:
    """One button press: banking with dice showing sets aside their best reading first."""
    state = GAME.apply(at(GAME, [0, 0]), Roll([1, 1, 5, 2, 3, 4]))
    state = GAME.apply(state, Bank())
    assert state.scores == (250, 0)


ROLLED = [Roll([1, 2, 3, 4, 6, 6])]


@pytest.mark.parametrize(
    ("before", "action", "message"),
    [
        pytest.param(
            [], Bank(), "cannot bank: nothing to bank yet: throw the dice first", id="no-roll"
        ),
        pytest.param(
            ROLLED,
            Roll([1, 2, 3, 4, 5, 6]),
            "cannot roll 1 2 3 4 5 6: set aside scoring dice from 1 2 3 4 6 6 first (or bank)",
            id="roll-before-keep",
        ),
        pytest.param(
            ROLLED,
            Keep([1, 6]),
            "cannot keep 1 6: every die set aside must score; "
            "the best set-aside of 1 2 3 4 6 6 is 1 for 100",
            id="keep-non-scoring",
        ),
        pytest.param(
            ROLLED, Keep([5]), "cannot keep 5: the dice showing are 1 2 3 4 6 6", id="keep-absent"
        ),
        pytest.param(
            [*ROLLED, Keep([1])],
            Roll([1, 2, 3]),
            "cannot roll 1 2 3: 5 dice are to be thrown, not 3",
            id="wrong-count",
        ),
    ],
)
def test_refused_actions(before: list[Action], action: Action, message: str) -> None:
    """A refused action says why, and the state is unchanged."""
    state = play(GAME, at(GAME, [0, 0]), *before)
    with pytest.raises(IllegalAction) as err:
        GAME.apply(state, action)
    assert str(err.value) == message
    assert play(GAME, at(GAME, [0, 0]), *before) == state


def test_the_plain_events_are_described_as_data() -> None:
    """A throw, a set-aside, a bank and a bust carry a structured ``event`` beside the English
    ``last_event`` (a phone words it in its own language); so do the game's own (four 2s)."""
    game = Kymppitonni()
    state = game.initial_state(["Ann", "Bob"])
    state = play(game, state, Roll([1, 1, 5, 2, 3, 4]))
    assert game.describe(state)["event"] == {
        "kind": "roll",
        "player": "Ann",
        "dice": [1, 1, 2, 3, 4, 5],
    }
    state = play(game, state, Keep([1, 1, 5]))
    view = game.describe(state)
    assert view["last_event"] == "Ann set aside 1 1 5 for 250: turn total 250, 3 dice left"
    assert view["event"] == {
        "kind": "keep",
        "player": "Ann",
        "dice": [1, 1, 5],
        "points": 250,
        "total": 250,
        "left": 3,
        "again": 0,
    }
    state = play(game, state, Roll([2, 3, 6]))
    view = game.describe(state)
    assert view["last_event"] == "Ann threw 2 3 6: no combination, losing 250"
    assert view["event"] == {"kind": "bust", "player": "Ann", "dice": [2, 3, 6], "lost": 250}
    state = play(game, state, Roll([1, 1, 1, 5, 5, 5]), Keep([1, 1, 1, 5, 5, 5]))
    view = game.describe(state)
    assert view["last_event"].endswith("every die scored, all 6 again")
    assert view["event"]["left"] == 0
    assert view["event"]["again"] == 6
    state = play(game, state, Bank())
    assert game.describe(state)["event"] == {"kind": "bank", "player": "Bob", "points": 1500}
    state = play(game, state, Roll([2, 2, 2, 2, 3, 4]))
    assert state.last_event == "Ann threw four 2s: the turn passes with 0"
    assert game.describe(state)["event"] == {
        "kind": "four_twos",
        "player": "Ann",
        "dice": [2, 2, 2, 2, 3, 4],
        "lost": 0,
    }
